//===- ExecutorTest.cpp - the runtime on tiny graphs ------------*- C++ -*-===//
//
// Small models in ONNX text, planned by the pipeline, run by the executor on
// the CPU kernels (or on test kernels where a test must observe what the
// runtime passes). Expected values are worked out by hand in each comment.
// Covers: the values of a run, missing kernels, planned workspaces,
// poisoning, the unplanned mode, recompute steps, and streamed weights
// (host region and prefetch).
//
//===----------------------------------------------------------------------===//
#include "LoggingDevice.h"
#include "RuntimeTestModel.h"
#include "oomplan/Fit/InferenceRecompute.h"
#include "oomplan/Runtime/RandomInputs.h"
#include "oomplan/Support/Error.h"
#include <cmath>
#include <cstring>
#include <set>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::unit;

namespace {

// Chain (RuntimeTestModel.h): x = [1, -2, 3, -4] gives y = [1, 2, 3, 4].
TEST(Executor, RunsAChainToHandValues) {
  Model M(Chain);
  Plan P = M.plan(M.schedule(cpu()));
  RunInfo I = M.info(P);
  auto E = makeExec(M, P, I, cpu());
  setFloats(*E, M.G->findValue("x"), {1, -2, 3, -4});
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  EXPECT_EQ(floats(*E, M.G->findValue("y")), (std::vector<float>{1, 2, 3, 4}));
  // Every region's touched bytes, rounded to the alignment, are its size.
  for (const RegionUse &U : E->regionUse())
    EXPECT_EQ(U.HighWaterAligned, U.PlannedBytes) << regionName(U.R).str();
  // On the CPU the executor's clock times the steps.
  ASSERT_TRUE(E->lastStepsSeconds().has_value());
  EXPECT_GE(*E->lastStepsSeconds(), 0.0);
}

TEST(Executor, MissingKernelNamesNodeAndOp) {
  Model M(Chain);
  KernelTable Empty;
  Plan P = M.plan(M.schedule(Empty));
  RunInfo I = M.info(P);
  auto E = Executor::create(*M.G, P, I, Empty, ExecOptions());
  ASSERT_FALSE(E);
  llvm::Error Err = E.takeError();
  EXPECT_EQ(errorCategory(Err), ErrorCategory::Unsupported);
  EXPECT_NE(llvm::toString(std::move(Err))
                .find("node #0 (Neg): no CPU kernel for op Neg"),
            std::string::npos);
}

// A test kernel for Relu that needs 100 bytes of scratch: it records what
// the runtime gave it and fills the scratch, which the plan must hold.
void *SeenWorkspace = nullptr;
uint64_t SeenWorkspaceBytes = 0;
uint64_t reluScratch(const Node &, llvm::ArrayRef<TensorRef>,
                     llvm::ArrayRef<TensorRef>) {
  return 100;
}
llvm::Error reluWithScratch(const KernelContext &C) {
  SeenWorkspace = C.Workspace;
  SeenWorkspaceBytes = C.WorkspaceBytes;
  std::memset(C.Workspace, 0x5A, C.WorkspaceBytes);
  for (uint64_t I = 0; I < C.Inputs[0].numElements(); ++I)
    C.Outputs[0].data<float>()[I] =
        std::max(0.0f, C.Inputs[0].data<float>()[I]);
  return llvm::Error::success();
}

TEST(Executor, WorkspaceIsAPlannedArenaBuffer) {
  Model M(Chain);
  KernelTable K = cpu();
  K.set(ops::opCode(*ops::lookupOp("Relu")),
        Kernel{&reluWithScratch, &reluScratch, {}});
  Schedule S = M.schedule(K);
  // Step 1 (Relu) writes b and then its workspace: 100 bytes, uint8.
  ASSERT_EQ(S.Steps[1].Writes.size(), 2u);
  TensorId W = S.Steps[1].Writes[1];
  EXPECT_EQ(S.Tensors[W].SizeBytes, 100u);
  Plan P = M.plan(std::move(S));
  EXPECT_EQ(P.RegionOf[P.Life.BufferOf[W]], Region::Arena);
  RunInfo I = M.info(P);
  EXPECT_EQ(I.Workspace[1], W);
  auto E = makeExec(M, P, I, K);
  setFloats(*E, M.G->findValue("x"), {1, -2, 3, -4});
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  EXPECT_EQ(SeenWorkspace, E->tensor(W).Data);
  EXPECT_EQ(SeenWorkspaceBytes, 100u);
  EXPECT_EQ(floats(*E, M.G->findValue("y")), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Executor, PoisonOverwritesDeadBuffersOnly) {
  Model M(Chain);
  // No in-place writes: b and c keep buffers of their own.
  Plan P = M.plan(M.schedule(cpu()), /*InPlace=*/false);
  RunInfo I = M.info(P);
  ExecOptions O;
  O.Poison = true;
  auto E = makeExec(M, P, I, cpu(), O);
  setFloats(*E, M.G->findValue("x"), {1, -2, 3, -4});
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  EXPECT_EQ(floats(*E, M.G->findValue("y")), (std::vector<float>{1, 2, 3, 4}));
  // b dies at step 2 (its last reader); only y is written after that, in
  // the IO region, so b's arena bytes stay poisoned.
  TensorId B = M.G->findValue("b");
  ASSERT_EQ(P.RegionOf[P.Life.BufferOf[B]], Region::Arena);
  for (float F : floats(*E, B))
    EXPECT_TRUE(std::isnan(F));
}

TEST(Executor, UnplannedGivesTheSameBytes) {
  Model M(Chain);
  Plan P = M.plan(M.schedule(cpu()));
  RunInfo I = M.info(P);
  ExecOptions O;
  O.Unplanned = true;
  auto A = makeExec(M, P, I, cpu()), B = makeExec(M, P, I, cpu(), O);
  for (Executor *E : {A.get(), B.get()}) {
    setFloats(*E, M.G->findValue("x"), {0.5f, -1.25f, 7, -0.0f});
    ASSERT_FALSE(llvm::errorToBool(E->run()));
  }
  TensorId Y = M.G->findValue("y");
  EXPECT_EQ(std::memcmp(A->tensor(Y).Data, B->tensor(Y).Data, 16), 0);
  EXPECT_NE(A->tensor(Y).Data, B->tensor(Y).Data);
  EXPECT_TRUE(B->regionUse().empty());
}

TEST(Executor, RecomputeRewritesTheValueItReplaces) {
  Model M(Chain);
  Schedule S = M.schedule(cpu());
  InferenceRemat R;
  R.Value = M.G->findValue("a");
  R.Producer = 0;
  R.From = 3; // y's read of a gets the recomputed copy
  Schedule Re = applyInferenceRecompute(S, {R});
  ASSERT_EQ(Re.Steps.size(), 5u);
  ASSERT_EQ(Re.Steps[3].Kind, StepKind::Recompute);
  Plan P = M.plan(std::move(Re));
  RunInfo I = M.info(P);
  // The copy has no graph value; its dims come from Neg's output.
  TensorId Copy = P.Sched.Steps[3].Writes[0];
  EXPECT_EQ(P.Sched.Tensors[Copy].Value, NoId);
  EXPECT_EQ(I.Dims[Copy], (llvm::SmallVector<int64_t, 6>{4}));
  ExecOptions O;
  O.Poison = true; // a's first buffer is NaN once step 1 is done
  auto E = makeExec(M, P, I, cpu(), O);
  setFloats(*E, M.G->findValue("x"), {1, -2, 3, -4});
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  EXPECT_EQ(floats(*E, M.G->findValue("y")), (std::vector<float>{1, 2, 3, 4}));
}

// y = Neg(x) + w with the weight w streamed: its home in the host region,
// prefetched to the device by a step inserted after Neg.
const char *Streamed = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) <float[4] w = {1, 2, 3, 4}> {
  a = Neg(x)
  y = Add(a, w)
})";
Plan streamedPlan(const Model &M) {
  Schedule S = M.schedule(cpu());
  TensorId W = M.G->findValue("w");
  S.Tensors[W].HostHome = true;
  S.Tensors[W].Kind = TensorKind::Activation;
  Step Pre;
  Pre.Kind = StepKind::Prefetch;
  Pre.Op = "Prefetch";
  Pre.Writes = {W};
  S.Steps.insert(S.Steps.begin() + 1, Pre);
  return M.plan(std::move(S));
}

// y = Neg(x) + w with w = [1, 2, 3, 4]: for x = [1, 1, 1, 1], y = [0, 1, 2,
// 3]. w is streamed: its home is the host region, and a Prefetch before the
// Add copies it into the arena.
TEST(Executor, StreamedWeightIsPrefetchedFromItsHostHome) {
  Model M(Streamed);
  Plan P = streamedPlan(M);
  TensorId W = M.G->findValue("w");
  EXPECT_EQ(P.HostBytes, 256u); // 16 bytes, one aligned home
  EXPECT_EQ(P.WeightBytes, 0u);
  EXPECT_EQ(P.RegionOf[P.Life.BufferOf[W]], Region::Arena);
  RunInfo I = M.info(P);
  ExecOptions O;
  O.Poison = true;
  auto E = makeExec(M, P, I, cpu(), O);
  setFloats(*E, M.G->findValue("x"), {1, 1, 1, 1});
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  EXPECT_EQ(floats(*E, M.G->findValue("y")), (std::vector<float>{0, 1, 2, 3}));
  for (const RegionUse &U : E->regionUse())
    EXPECT_EQ(U.HighWaterAligned, U.PlannedBytes) << regionName(U.R).str();
}

// A test NonZero for a rank-1 input: writes the indices of the nonzero
// elements and reports their count as the actual dims [1, n]; Grow reports
// one more than the plan's upper bound allows.
bool Grow = false;
llvm::Error nonZero(const KernelContext &C) {
  if (!C.ActualDims)
    return C.unsupported("no actual dims given");
  int64_t N = 0;
  for (uint64_t I = 0; I < C.Inputs[0].numElements(); ++I)
    if (C.Inputs[0].data<float>()[I] != 0)
      C.Outputs[0].data<int64_t>()[N++] = int64_t(I);
  C.ActualDims[0] = {1, Grow ? C.Outputs[0].Dims[1] + 1 : N};
  return llvm::Error::success();
}

// NonZero's output size depends on the data: planned at its upper bound
// [1, 4], reported by the kernel as [1, 2] for x = [0, 3, 0, 5].
TEST(Executor, DataDependentOutputTakesTheKernelsDims) {
  Model M(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (int64[1,?] y) {
  y = NonZero(x)
})");
  KernelTable K;
  K.set(ops::opCode(*ops::lookupOp("NonZero")), Kernel{&nonZero, nullptr, {}});
  Plan P = M.plan(M.schedule(K));
  RunInfo I = M.info(P);
  TensorId Y = M.G->findValue("y");
  EXPECT_TRUE(I.UpperBound[Y]);
  EXPECT_EQ(I.Dims[Y], (llvm::SmallVector<int64_t, 6>{1, 4}));
  auto E = makeExec(M, P, I, K);
  setFloats(*E, M.G->findValue("x"), {0, 3, 0, 5});
  Grow = false;
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  TensorRef R = E->tensor(Y);
  EXPECT_EQ(R.Dims, (llvm::SmallVector<int64_t, 6>{1, 2}));
  EXPECT_EQ(R.data<int64_t>()[0], 1);
  EXPECT_EQ(R.data<int64_t>()[1], 3);
  // Past the upper bound: an error, not an overrun.
  Grow = true;
  llvm::Error Err = E->run();
  ASSERT_TRUE(bool(Err));
  EXPECT_NE(
      llvm::toString(std::move(Err)).find("outside the planned upper bound"),
      std::string::npos);
}

} // namespace

// The streamed-weight model of the test above on a device the host cannot
// touch. Schedule: 0 Neg, 1 Prefetch w, 2 Add. Expected: the weight w is
// staged (one h2d at load, then sync), its host home is plain host memory;
// x is copied in before the steps, and the copy queue waits for that
// (event 1); the prefetch runs on the copy queue and records event 0, which
// the Add waits for on the compute queue (it reads w); the copy out of y
// waits for the copy queue (event 2); the run ends with sync. The steps'
// timers (0 and 1) go after x's copy in and before y's copy out, so the
// steps' time is the device's between them (0.25 here), not the copies'.
// tensor() gives host mirrors, never device addresses. y = -x + w = [0, 1, 2,
// 3] as above.
TEST(Executor, DeviceThatHostCannotTouchStagesAndOrdersQueues) {
  Model M(Streamed);
  Plan P = streamedPlan(M);
  RunInfo I = M.info(P);
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  O.Poison = true;
  auto E = makeExec(M, P, I, cpu(), O);
  // Loading: nothing copied (w's bytes live in its pinned host home).
  EXPECT_EQ(D.Log, (std::vector<std::string>{"sync"}));
  D.Log.clear();
  TensorId X = M.G->findValue("x"), Y = M.G->findValue("y");
  EXPECT_FALSE(D.inRegion(E->tensor(X).Data));
  EXPECT_FALSE(D.inRegion(E->tensor(Y).Data));
  setFloats(*E, X, {1, 1, 1, 1});
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  EXPECT_EQ(D.Log, (std::vector<std::string>{
                       "h2d@compute", "record1@compute", "wait1@copy", // x in
                       "timer0@compute",                               // timing
                       "h2d@copy", "record0@copy", "wait0@compute", // prefetch
                       "record2@copy", "wait2@compute",             // join
                       "timer1@compute", "d2h@compute",             // y out
                       "sync"}));
  EXPECT_EQ(floats(*E, Y), (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ(E->lastStepsSeconds(), std::optional<double>(0.25));
  DeviceUse U = E->deviceUse();
  EXPECT_EQ(U.Device, "logging");
  EXPECT_EQ(U.AllocatedBytes, P.WeightBytes + P.IOBytes + P.ArenaBytes);
  EXPECT_EQ(U.HostBytes, P.HostBytes);
}

// A device whose kernels need aligned buffers (CUDA: 16 bytes) refuses a
// plan aligned to less before it allocates anything, rather than fail on
// the device with a sticky error; the same plan at that alignment runs.
TEST(Executor, RefusesAPlanAlignedBelowTheDevice) {
  Model M(Streamed);
  Plan P = streamedPlan(M);
  RunInfo I = M.info(P);
  LoggingDevice D;
  D.Alignment = P.AlignBytes * 2;
  ExecOptions O;
  O.Dev = &D;
  auto E = Executor::create(*M.G, P, I, cpu(), O);
  ASSERT_FALSE(bool(E));
  std::string Msg = llvm::toString(E.takeError());
  EXPECT_NE(Msg.find("the plan aligns buffers to " +
                     std::to_string(P.AlignBytes) +
                     " bytes; the logging device needs " +
                     std::to_string(D.Alignment)),
            std::string::npos)
      << Msg;
  EXPECT_TRUE(D.Regions.empty()); // nothing allocated
  D.Alignment = P.AlignBytes;
  auto Ok = Executor::create(*M.G, P, I, cpu(), O);
  EXPECT_TRUE(bool(Ok)) << llvm::toString(Ok.takeError());
}

// --profile on such a device: two timers per step on its queue, after its
// waits and after its work, and no wait for the device between steps; a
// step's time is between its two marks, so the Add is not charged for the
// prefetch it waits for. Timers: 0 and 1 the steps' begin and end, 2 + 2S
// and 3 + 2S around step S: Neg 2-3, the prefetch 4-5, Add 6-7, which the
// device's made-up clock makes 0.5, 0.75 and 1.0 s.
TEST(Executor, DeviceThatHostCannotTouchTimesEachStepWithTimers) {
  Model M(Streamed);
  Plan P = streamedPlan(M);
  RunInfo I = M.info(P);
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  O.Profile = true;
  auto E = makeExec(M, P, I, cpu(), O);
  EXPECT_EQ(D.Timers, 8u);
  D.Log.clear();
  setFloats(*E, M.G->findValue("x"), {1, 1, 1, 1});
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  EXPECT_EQ(D.Log,
            (std::vector<std::string>{
                "h2d@compute", "record1@compute", "wait1@copy", // x in
                "timer0@compute",                               // begin
                "timer2@compute", "timer3@compute",             // Neg
                "timer4@copy", "h2d@copy", "timer5@copy", "record0@copy",
                "wait0@compute", "timer6@compute", "timer7@compute", // Add
                "record2@copy", "wait2@compute", "timer1@compute",   // end
                "d2h@compute", "sync"}));
  EXPECT_EQ(floats(*E, M.G->findValue("y")), (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ(E->lastStepsSeconds(), std::optional<double>(0.25));
  std::vector<OpTime> Ops = E->opProfile();
  ASSERT_EQ(Ops.size(), 3u);
  EXPECT_EQ(Ops[0].Op, "Add");
  EXPECT_DOUBLE_EQ(Ops[0].Seconds, 1.0);
  EXPECT_EQ(Ops[1].Op, "(prefetch)");
  EXPECT_DOUBLE_EQ(Ops[1].Seconds, 0.75);
  EXPECT_EQ(Ops[2].Op, "Neg");
  EXPECT_DOUBLE_EQ(Ops[2].Seconds, 0.5);
  EXPECT_EQ(Ops[2].Calls, 1u);
}

// A weight in the weights region on such a device: staged through host
// memory and copied once at load (h2d, then sync), and the run reads it.
// y = x * w = [2, 4, 6, 8] for x = [2, 2, 2, 2], w = [1, 2, 3, 4].
TEST(Executor, DeviceThatHostCannotTouchGetsWeightsCopied) {
  Model M(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) <float[4] w = {1, 2, 3, 4}> {
  y = Mul(x, w)
})");
  Plan P = M.plan(M.schedule(cpu()));
  RunInfo I = M.info(P);
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  auto E = makeExec(M, P, I, cpu(), O);
  EXPECT_EQ(D.Log, (std::vector<std::string>{"h2d@compute", "sync"}));
  setFloats(*E, M.G->findValue("x"), {2, 2, 2, 2});
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  EXPECT_EQ(floats(*E, M.G->findValue("y")), (std::vector<float>{2, 4, 6, 8}));
}

// fillRandomWeight's ranges: a [4, 6] matrix within +-sqrt(6 / max(4, 6))
// = +-1, a vector in [0.5, 1.5); the same seed gives the same values, and
// another seed others.
TEST(RandomWeights, BoundsAndSeeds) {
  std::vector<float> M(24), V(5), M2(24), M3(24);
  auto Fill = [](std::vector<float> &D, llvm::ArrayRef<int64_t> Dims,
                 uint64_t Seed) {
    TensorRef T;
    T.Type = ElementType::Float;
    T.Dims.assign(Dims.begin(), Dims.end());
    T.Data = D.data();
    fillRandomWeight(T, Seed, 1);
  };
  Fill(M, {4, 6}, 9);
  Fill(V, {5}, 9);
  Fill(M2, {4, 6}, 9);
  Fill(M3, {4, 6}, 10);
  float Max = 0;
  for (float X : M)
    Max = std::max(Max, std::fabs(X));
  EXPECT_LE(Max, 1.0f);
  EXPECT_GT(Max, 0.5f); // 24 draws: the largest is near the bound
  for (float X : V) {
    EXPECT_GE(X, 0.5f);
    EXPECT_LT(X, 1.5f);
  }
  EXPECT_EQ(M, M2);
  EXPECT_NE(M, M3);
}

// 8-bit weights (a quantized model's) take every byte value, seeded; an
// int64 weight stays zero (an index table: a random index would be out of
// range).
TEST(RandomWeights, EightBitWeightsAreNotZero) {
  std::vector<int8_t> W(4096), W2(4096);
  std::vector<int64_t> Idx(16, 7);
  auto Fill = [](void *D, ElementType Type, int64_t N) {
    TensorRef T;
    T.Type = Type;
    T.Dims = {N};
    T.Data = D;
    fillRandomWeight(T, 5, 2);
  };
  Fill(W.data(), ElementType::Int8, 4096);
  Fill(W2.data(), ElementType::UInt8, 4096);
  Fill(Idx.data(), ElementType::Int64, 16);
  std::set<int> Seen(W.begin(), W.end());
  EXPECT_GT(Seen.size(), 250u); // 4096 draws of 256 values
  EXPECT_EQ(*Seen.begin(), -128);
  EXPECT_EQ(*Seen.rbegin(), 127);
  EXPECT_TRUE(std::equal(W.begin(), W.end(), W2.begin())); // same seed, bytes
  EXPECT_EQ(Idx, std::vector<int64_t>(16, 0));
}

// bert_like (test/models, random weights) at batch 2, seq 8 on the logging
// device with the CPU kernels: its shape arithmetic (about 600 Shape,
// Gather, Unsqueeze, Concat, Cast... steps on small int64 tensors) runs
// once on the host and is skipped by the run, and only the few results a
// kernel reads on the device are copied there (each a host-to-device copy
// on the compute queue). The outputs must be bit-identical to the host
// device's run, where every step runs in place.
TEST(Executor, ShapeArithmeticRunsOnTheHost) {
  api::Request R;
  R.ModelPath = OOMPLAN_TEST_MODELS_DIR "/bert_like.onnx";
  R.Batch = 2;
  R.Seq = 8;
  auto X = driver::planExecutable(R, cpu());
  oomplan::test::stopOnError(X, "plan");
  LoggingDevice D;
  auto Run = [&](Device *Dev, std::vector<std::vector<char>> &Outs) {
    ExecOptions O;
    O.Dev = Dev;
    auto E = Executor::create(*X->G, X->P, X->Info, cpu(), O);
    oomplan::test::stopOnError(E, "executor");
    ASSERT_FALSE(llvm::errorToBool((*E)->loadWeights(R.ModelPath, {}, 5)));
    D.Log.clear(); // count the run's copies only
    for (size_t I = 0; I < X->G->Inputs.size(); ++I) {
      TensorRef T = (*E)->tensor(X->G->Inputs[I]);
      fillRandomWeight(T, 3, I); // int64 inputs: zeros, valid token ids
      if (T.Type == ElementType::Int64)
        for (uint64_t K = 0; K < T.numElements(); ++K)
          T.data<int64_t>()[K] = int64_t(K % 7 + 1);
    }
    ASSERT_FALSE(llvm::errorToBool((*E)->run()));
    for (ValueId V : X->G->Outputs) {
      TensorRef T = (*E)->tensor(V);
      Outs.emplace_back(T.data<char>(), T.data<char>() + T.bytes());
    }
  };
  std::vector<std::vector<char>> Host, Logged;
  Run(nullptr, Host);
  Run(&D, Logged);
  ASSERT_EQ(Host.size(), 2u);
  EXPECT_EQ(Host, Logged);
  // Copies at the run: the inputs in (2), the outputs out (2), and the
  // host results a kernel reads on the device. Without host evaluation
  // there would be none of the latter, but about 600 kernel calls more;
  // count the uploads and check they are far fewer than the shape steps.
  size_t H2D = llvm::count(D.Log, "h2d@compute");
  size_t Shapes = 0;
  for (const Step &St : X->P.Sched.Steps)
    if (St.Node != NoId && (X->G->Nodes[St.Node].OpType == "Shape" ||
                            X->G->Nodes[St.Node].OpType == "Unsqueeze"))
      ++Shapes;
  EXPECT_GT(Shapes, 300u);
  EXPECT_LT(H2D, Shapes / 2);
}

// A device that records (as CUDA graphs): the first run goes step by step,
// the second records its steps and replays the recording, later runs only
// replay. Here recording runs the steps (host memory: nothing to defer),
// so the test sees the executor's calls: x = [1, 2, 3, 4] through Chain
// gives y = [1, 2, 3, 4] every time.
class RecordingDevice final : public Device {
public:
  LoggingDevice Inner;
  bool FailRecording = false;
  llvm::StringRef name() const override { return "recording"; }
  bool hostVisible() const override { return false; }
  llvm::Expected<void *> allocate(Region R, uint64_t B) override {
    return Inner.allocate(R, B);
  }
  void release(Region R, void *P) override { Inner.release(R, P); }
  llvm::Error copy(void *D, const void *S, uint64_t B, CopyKind K,
                   Queue Q) override {
    return Inner.copy(D, S, B, K, Q);
  }
  llvm::Error fill(void *D, uint64_t B, uint64_t P, unsigned W,
                   Queue Q) override {
    return Inner.fill(D, B, P, W, Q);
  }
  llvm::Expected<unsigned> createEvents(unsigned N) override {
    return Inner.createEvents(N);
  }
  llvm::Error record(unsigned E, Queue Q) override {
    return Inner.record(E, Q);
  }
  llvm::Error wait(unsigned E, Queue Q) override { return Inner.wait(E, Q); }
  llvm::Error synchronize() override { return Inner.synchronize(); }
  DeviceOverhead overhead() const override { return {}; }
  /// Free memory: a recording takes 4096 bytes of it, as a CUDA graph
  /// takes its own.
  uint64_t Free = uint64_t(1) << 30;
  std::optional<uint64_t> freeBytes() override { return Free; }
  bool canRecord() const override { return true; }
  llvm::Error beginRecording() override {
    Inner.Log.push_back("begin");
    Capturing = true;
    Captured.clear();
    return llvm::Error::success();
  }
  llvm::Expected<unsigned> endRecording() override {
    Inner.Log.push_back("end");
    Capturing = false;
    if (FailRecording)
      return llvm::make_error<llvm::StringError>(
          "a kernel waited", llvm::inconvertibleErrorCode());
    Free -= 4096;
    return 7u;
  }
  void dropRecording(unsigned Id) override {
    Inner.Log.push_back("drop" + std::to_string(Id));
  }
  llvm::Error replay(unsigned Id) override {
    Inner.Log.push_back("replay" + std::to_string(Id));
    if (TimesInRecording)
      for (unsigned T : Captured)
        At[T] = ++Clock;
    return llvm::Error::success();
  }
  /// Timers on a clock: a mark takes the next tick, and a time is the
  /// ticks between two marks, in ms. A mark made while recording is the
  /// recording's: each replay sets it anew, unless TimesInRecording is
  /// false (a device that cannot time inside a recording: such a timer
  /// keeps what an earlier run set).
  bool TimesInRecording = true;
  bool Capturing = false;
  uint64_t Clock = 0;
  std::vector<std::optional<uint64_t>> At;
  std::vector<unsigned> Captured;
  llvm::Expected<unsigned> createTimers(unsigned N) override {
    unsigned Base = unsigned(At.size());
    At.resize(Base + N);
    return Base;
  }
  llvm::Error mark(unsigned T, Queue) override {
    if (Capturing)
      Captured.push_back(T);
    else
      At[T] = ++Clock;
    return llvm::Error::success();
  }
  std::optional<double> secondsBetween(unsigned From, unsigned To) override {
    if (!At[From] || !At[To])
      return std::nullopt;
    return (double(*At[To]) - double(*At[From])) * 1e-3;
  }
};

// Three runs of Chain on E (x = [1, -2, 3, -4] gives y = [1, 2, 3, 4] each
// time): the device's log of each run.
static std::vector<std::vector<std::string>>
threeChainRuns(Model &M, Executor &E, RecordingDevice &D) {
  TensorId X = M.G->findValue("x"), Y = M.G->findValue("y");
  std::vector<std::vector<std::string>> Logs;
  for (int Run = 0; Run < 3; ++Run) {
    D.Inner.Log.clear();
    setFloats(E, X, {1, -2, 3, -4});
    EXPECT_FALSE(llvm::errorToBool(E.run()));
    EXPECT_EQ(floats(E, Y), (std::vector<float>{1, 2, 3, 4}));
    Logs.push_back(D.Inner.Log);
  }
  return Logs;
}

static bool logHas(const std::vector<std::string> &Log, const char *What) {
  return llvm::is_contained(Log, What);
}

TEST(Executor, SecondRunIsRecordedAndLaterRunsReplay) {
  for (bool Fail : {false, true}) {
    Model M(Chain);
    Plan P = M.plan(M.schedule(cpu()));
    RunInfo I = M.info(P);
    RecordingDevice D;
    D.FailRecording = Fail;
    ExecOptions O;
    O.Dev = &D;
    auto E = makeExec(M, P, I, cpu(), O);
    std::vector<std::vector<std::string>> Logs = threeChainRuns(M, *E, D);
    EXPECT_FALSE(logHas(Logs[0], "begin"));
    EXPECT_TRUE(logHas(Logs[1], "begin"));
    EXPECT_TRUE(logHas(Logs[1], "end"));
    EXPECT_EQ(logHas(Logs[1], "replay7"), !Fail);
    // Failed: no more attempts, every run step by step.
    EXPECT_FALSE(logHas(Logs[2], "begin"));
    EXPECT_EQ(logHas(Logs[2], "replay7"), !Fail);
    // The recording's memory is the later runs' drop, outside the plan.
    DeviceUse U = E->deviceUse();
    EXPECT_EQ(U.FirstRunDropBytes, std::optional<uint64_t>(0));
    EXPECT_EQ(U.LaterRunsDropBytes, std::optional<uint64_t>(Fail ? 0 : 4096));
    // The executor frees its recording when it goes.
    D.Inner.Log.clear();
    E.reset();
    EXPECT_EQ(logHas(D.Inner.Log, "drop7"), !Fail);
  }
}

// --profile with recording: the recording holds each step's timers, so
// every run is timed, replays included (on CUDA, external event record
// nodes: a step's device time without the host's launch gaps). Chain's
// four steps (Neg, Relu, Add, Sub) take one tick, 1 ms, each run on the
// device's clock, so after three runs each op has 3 calls and 3 ms. A
// device that does not set timers inside a recording leaves them before
// the run's begin mark: the recording run's times are dropped with the
// recording, and the third run goes step by step, timed (2 calls each, 2
// runs profiled: oomplan-run's means divide by these).
TEST(Executor, ProfileTimesTheReplayedSteps) {
  for (bool Times : {true, false}) {
    Model M(Chain);
    Plan P = M.plan(M.schedule(cpu()));
    RunInfo I = M.info(P);
    RecordingDevice D;
    D.TimesInRecording = Times;
    ExecOptions O;
    O.Dev = &D;
    O.Profile = true;
    auto E = makeExec(M, P, I, cpu(), O);
    std::vector<std::vector<std::string>> Logs = threeChainRuns(M, *E, D);
    EXPECT_TRUE(logHas(Logs[1], "begin")) << Times;
    EXPECT_TRUE(logHas(Logs[1], "replay7")) << Times;
    EXPECT_EQ(logHas(Logs[1], "drop7"), !Times);
    EXPECT_EQ(logHas(Logs[2], "replay7"), Times);
    EXPECT_FALSE(logHas(Logs[2], "begin"));
    EXPECT_EQ(E->profiledRuns(), Times ? 3u : 2u);
    std::vector<OpTime> Ops = E->opProfile();
    ASSERT_EQ(Ops.size(), 4u) << Times;
    for (const OpTime &T : Ops) {
      EXPECT_EQ(T.Calls, Times ? 3u : 2u) << T.Op;
      EXPECT_NEAR(T.Seconds, Times ? 3e-3 : 2e-3, 1e-12) << T.Op;
    }
    // The same per step, in the schedule's order: Neg, Relu, Add, Sub.
    std::vector<StepTime> Steps = E->stepProfile();
    ASSERT_EQ(Steps.size(), 4u) << Times;
    const char *Order[] = {"Neg", "Relu", "Add", "Sub"};
    for (unsigned S = 0; S < 4; ++S) {
      EXPECT_EQ(Steps[S].Index, P.Sched.Steps.size() - 4 + S);
      EXPECT_EQ(Steps[S].Op, Order[S]);
      EXPECT_EQ(Steps[S].Calls, Times ? 3u : 2u) << Order[S];
      EXPECT_NEAR(Steps[S].Seconds, Times ? 3e-3 : 2e-3, 1e-12) << Order[S];
    }
  }
}

// A flattened If (docs/shapes.md): y = sum(x) > 0 ? x * 2 : x * x[sum(x)].
// The CPU reads the condition in place and skips the branch not taken; a
// device the host cannot touch copies the condition back (d2h, then a wait
// for the device) before each guarded step. The else_branch indexes x by
// the sum, out of range whenever then_branch is taken (x[6]): the run fails
// if the branch not taken runs. Values by hand: for x = [-1, -2, 3, -4]
// the sum is -4, x[-4] = -1, so y = -x.
const char *DataIf = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) {
  s = ReduceSum<keepdims = 0>(x)
  zero = Constant<value = float {0}>()
  c = Greater(s, zero)
  y = If(c) <
    then_branch = g1 () => (float[4] t) { two = Constant<value = float {2}>()  t = Mul(x, two) },
    else_branch = g2 () => (float[4] e) {
      i = Cast<to = 7>(s)
      ax = Constant<value = int64[1] {0}>()
      i1 = Unsqueeze(i, ax)
      g = Gather<axis = 0>(x, i1)
      e = Mul(x, g)
    }
  >
})";

TEST(Executor, IfRunsTheTakenBranchOnEitherDevice) {
  Model M(DataIf);
  Plan P = M.plan(M.schedule(cpu()));
  RunInfo I = M.info(P);
  TensorId X = M.G->findValue("x"), Y = M.G->findValue("y");
  auto Check = [&](Executor &E) {
    setFloats(E, X, {1, -2, 3, 4}); // sum 6 > 0: x * 2
    ASSERT_FALSE(llvm::errorToBool(E.run()));
    EXPECT_EQ(floats(E, Y), (std::vector<float>{2, -4, 6, 8}));
    setFloats(E, X, {-1, -2, 3, -4}); // sum -4: -x
    ASSERT_FALSE(llvm::errorToBool(E.run()));
    EXPECT_EQ(floats(E, Y), (std::vector<float>{1, 2, -3, 4}));
  };
  Check(*makeExec(M, P, I, cpu()));
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  O.Poison = true;
  auto E = makeExec(M, P, I, cpu(), O);
  D.Log.clear();
  Check(*E);
  // Per run: seven guarded steps (two, t; i, ax, i1, g, e) each reading c
  // back and waiting, and y out.
  EXPECT_EQ(llvm::count(D.Log, "d2h@compute"), 2 * (7 + 1));
  EXPECT_EQ(llvm::count(D.Log, "sync"), 2 * (7 + 1));
}

// A condition known from shapes (x's dim 0 is 3, not 1): the branch not
// taken is planned at zero bytes, and its Squeeze, invalid for x, is never
// run, neither on the host (shape arithmetic) nor on the device; the
// condition is the host's value, so nothing is copied back for it.
const char *KnownIf = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3, 4] x) => (float[3, 4] y) {
  s = Shape(x)
  zero = Constant<value = int64 {0}>()
  one = Constant<value = int64 {1}>()
  d = Gather<axis = 0>(s, zero)
  c = Equal(d, one)
  y = If(c) <
    then_branch = g1 () => (float[3, 4] t) { ax = Constant<value = int64[1] {0}>()  q = Squeeze(x, ax)  t = Identity(x) },
    else_branch = g2 () => (float[3, 4] e) { e = Relu(x) }
  >
})";

TEST(Executor, IfWithAKnownConditionSkipsTheOtherBranch) {
  Model M(KnownIf);
  EXPECT_TRUE(neverRuns(M.Shapes, M.G->Values[M.G->findValue("q")].Producer));
  Plan P = M.plan(M.schedule(cpu()));
  RunInfo I = M.info(P);
  TensorId X = M.G->findValue("x"), Y = M.G->findValue("y");
  std::vector<float> In = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12};
  std::vector<float> Relu = {1, 0, 3, 0, 5, 0, 7, 0, 9, 0, 11, 0};
  {
    auto E = makeExec(M, P, I, cpu());
    setFloats(*E, X, In);
    ASSERT_FALSE(llvm::errorToBool(E->run()));
    EXPECT_EQ(floats(*E, Y), Relu);
  }
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  auto E = makeExec(M, P, I, cpu(), O);
  setFloats(*E, X, In);
  D.Log.clear();
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  EXPECT_EQ(floats(*E, Y), Relu);
  EXPECT_EQ(llvm::count(D.Log, "d2h@compute"), 1); // y out only
}

// The kernel table is the backend of planExecutable: a Request that also
// names one (oomplan's --backend, which adds that backend's estimated
// library workspaces for a planner without kernels) must not count
// workspaces twice. resnet50's convolutions get cuDNN workspace estimates
// under --backend=cuda; with the CPU kernels the plan must be the same as
// without it.
TEST(Executor, PlanExecutableTakesTheBackendFromItsKernels) {
  api::Request R;
  R.ModelPath = OOMPLAN_TEST_MODELS_DIR "/resnet50.onnx";
  R.Batch = 1;
  auto Plain = driver::planExecutable(R, cpu());
  oomplan::test::stopOnError(Plain, "plan");
  R.Backend = "cuda";
  auto Named = driver::planExecutable(R, cpu());
  oomplan::test::stopOnError(Named, "plan with --backend=cuda");
  EXPECT_EQ(Named->P.ArenaBytes, Plain->P.ArenaBytes);
  EXPECT_EQ(Named->P.Sched.Steps.size(), Plain->P.Sched.Steps.size());
  EXPECT_EQ(Named->P.Sched.Tensors.size(), Plain->P.Sched.Tensors.size());
}

// A kernel's roomy workspace (Kernel::RoomyWorkspace) is planned only where
// the arena stays as small as with the plain one. The convolution is 576
// deep (64 channels, 3x3, 512 outputs: 1.2 MB of weights) on a 5x5 output
// map for 2 images, so the CPU kernel asks for every image's columns and
// their product, (576 + 512) x 2 x 25 floats = 217,600 bytes, where its
// plain im2col workspace is one image's columns, 576 x 25 floats = 57,600
// bytes. Alone,
// the workspace is the whole arena and the plain one is kept; beside a
// 1.8 MB intermediate that is the arena's peak, the roomy one fits in its
// shadow and is taken, the arena unchanged.
namespace {
uint64_t convWorkspaceOf(const driver::Executable &X) {
  for (size_t S = 0; S < X.P.Sched.Steps.size(); ++S) {
    const Step &St = X.P.Sched.Steps[S];
    if (St.Node != NoId && X.G->Nodes[St.Node].OpType == "Conv" &&
        X.Info.Workspace[S] != NoId)
      return X.P.Sched.Tensors[X.Info.Workspace[S]].SizeBytes;
  }
  return 0;
}
} // namespace

TEST(Executor, RoomyWorkspaceOnlyWhereTheArenaDoesNotGrow) {
  Model Alone(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,64,9,9] x, float[512,64,3,3] w) => (float[2,512,5,5] y) {
  y = Conv <strides = [2, 2], pads = [1, 1, 1, 1]> (x, w)
})");
  api::Request R;
  R.ModelPath = Alone.Path;
  auto X = driver::planExecutable(R, cpu());
  oomplan::test::stopOnError(X, "plan alone");
  EXPECT_EQ(convWorkspaceOf(*X), 57600u);
  EXPECT_EQ(X->P.ArenaBytes, 57600u);

  Model Beside(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,64,9,9] x, float[512,64,3,3] w, float[2,64,60,60] z)
  => (float[2,512,5,5] y, float[2,64,60,60] u) {
  a = Relu(z)
  u = Neg(a)
  y = Conv <strides = [2, 2], pads = [1, 1, 1, 1]> (x, w)
})");
  R.ModelPath = Beside.Path;
  auto Y = driver::planExecutable(R, cpu());
  oomplan::test::stopOnError(Y, "plan beside");
  EXPECT_EQ(convWorkspaceOf(*Y), 217600u);
  EXPECT_EQ(Y->P.ArenaBytes, 2u * 64 * 60 * 60 * 4); // a, the peak
}

// Two levels of larger workspaces (Kernel::RoomierWorkspace): a 3x3
// convolution at stride 1 on a 7x7 map, 64 -> 512 channels, 5 images. Its
// plain workspace is one image's im2col columns, 576 x 49 floats =
// 112,896 bytes; its roomy one the batched path's (its weights are 1.18
// MB), (576 + 512) x 5 x 49 floats = 1,066,240; its roomier one
// Winograd's, U (16 x 512 x 64 floats, 2,097,152 bytes) and two slots of
// 16 x (64 + 512) x 64 floats (2,359,296 each) for its 80 tiles'
// two blocks: 6,815,744. Alone, the plain one is kept; beside an
// intermediate of 1,280,000 bytes the roomier one would raise the arena
// and the roomy one is taken; beside one of 7,372,800, the roomier one.
TEST(Executor, RoomierWorkspaceOnlyWhereTheArenaDoesNotGrow) {
  auto Plan = [](int64_t Side) {
    std::string Text =
        R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[5,64,7,7] x, float[512,64,3,3] w, float[2,64,SIDE,SIDE] z)
  => (float[5,512,7,7] y, float[2,64,SIDE,SIDE] u) {
  a = Relu(z)
  u = Neg(a)
  y = Conv <pads = [1, 1, 1, 1]> (x, w)
})";
    for (size_t At; (At = Text.find("SIDE")) != std::string::npos;)
      Text.replace(At, 4, std::to_string(Side));
    Model M(Text.c_str());
    api::Request R;
    R.ModelPath = M.Path;
    auto X = driver::planExecutable(R, cpu());
    oomplan::test::stopOnError(X, "plan");
    return std::make_pair(convWorkspaceOf(*X), X->P.ArenaBytes);
  };
  EXPECT_EQ(Plan(2), std::make_pair(uint64_t(112896), uint64_t(112896)));
  EXPECT_EQ(Plan(50), std::make_pair(uint64_t(1066240), uint64_t(1280000)));
  EXPECT_EQ(Plan(120), std::make_pair(uint64_t(6815744), uint64_t(7372800)));
}
