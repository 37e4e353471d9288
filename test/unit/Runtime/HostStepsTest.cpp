//===- HostStepsTest.cpp - steps a device lacks run on the host ----------===//
//
// On a device the host cannot touch (the logging device: host memory
// underneath, hostVisible() false), a step whose op the device's kernel
// table lacks, and a step that reports a data-dependent size, run on the
// host with the CPU kernel (ExecOptions::HostSteps, HostSteps.cpp): inputs
// copied to the host, a synchronize, outputs copied back. Values are worked
// out by hand in each comment; the exact queue log shows where the copies
// and the wait go.
//
//===----------------------------------------------------------------------===//
#include "LoggingDevice.h"
#include "RuntimeTestModel.h"
#include "oomplan/Driver/Executable.h"
#include "oomplan/Runtime/RandomInputs.h"
#include "oomplan/Support/Error.h"
#include <map>
#include <tuple>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::unit;

namespace {

// The CPU's kernels without those of Missing: a device that lacks them.
KernelTable cpuWithout(std::initializer_list<const char *> Missing) {
  KernelTable T;
  for (const ops::OpInfo &Op : ops::allOps()) {
    if (llvm::any_of(Missing, [&](const char *M) {
          return llvm::StringRef(Op.Name) == M;
        }))
      continue;
    if (const auto &K = cpu().get(ops::opCode(Op)))
      T.set(ops::opCode(Op), *K);
  }
  return T;
}

// A run's queue log when one step (of one input and one output) runs on
// the host: x in and the copy queue's join (event 0: the plan has no
// events of its own), the steps' begin timer, the host step's d2h, sync
// and h2d, the join back (event 1), the end timer, y out, sync.
const std::vector<std::string> OneHostStepLog = {
    "h2d@compute",    "record0@compute", "wait0@copy",
    "timer0@compute", "d2h@compute",     "sync",
    "h2d@compute",    "record1@copy",    "wait1@compute",
    "timer1@compute", "d2h@compute",     "sync"};

// The device has no Relu: that one step reads a back to the host, waits
// for the device, runs the CPU's Relu and copies b to the device; the other
// steps run on the device with no copy (OneHostStepLog). Staging: a and b, 16
// bytes each, each on a 64-byte boundary: 128 bytes of host memory, and no
// device byte beyond the plan.
TEST(HostSteps, AnOpTheDeviceLacksRunsOnTheHost) {
  Model M(Chain);
  KernelTable Device = cpuWithout({"Relu"});
  Plan P = M.plan(M.schedule(Device));
  RunInfo I = M.info(P);
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  O.Poison = true;
  auto E = makeExec(M, P, I, Device, O);
  TensorId X = M.G->findValue("x"), Y = M.G->findValue("y");
  for (auto [In, Want] : {std::make_pair(std::vector<float>{1, -2, 3, -4},
                                         std::vector<float>{1, 2, 3, 4}),
                          std::make_pair(std::vector<float>{-1, -1, -1, -1},
                                         std::vector<float>{1, 1, 1, 1})}) {
    setFloats(*E, X, In);
    D.Log.clear();
    ASSERT_FALSE(llvm::errorToBool(E->run()));
    EXPECT_EQ(floats(*E, Y), Want);
    EXPECT_EQ(D.Log, OneHostStepLog);
  }
  DeviceUse U = E->deviceUse();
  ASSERT_EQ(U.HostOps.size(), 1u);
  EXPECT_EQ(U.HostOps[0].first, "Relu");
  EXPECT_EQ(U.HostOps[0].second, 1u);
  EXPECT_EQ(U.HostStagingBytes, 128u);
  EXPECT_EQ(U.AllocatedBytes, P.WeightBytes + P.IOBytes + P.ArenaBytes);
}

// A weight a host step reads is read on the host as loadWeights loaded
// it, not copied back from the device at each run: the device lacks
// MatMul, whose w (160 x 2 floats of 0.5, 1,280 bytes: above what the
// runtime keeps on the host for shape arithmetic) stays on the host. A
// run's log has one d2h in the host step (x), where a copy of w would make
// two. x all 1: y = 160 * 0.5 = 80 in every element; x all 2: 160.
TEST(HostSteps, AHostStepReadsItsWeightsOnTheHost) {
  std::string Text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 160] x) => (float[2, 2] y) <float[160, 2] w = {)";
  for (int K = 0; K < 320; ++K)
    Text += K ? ", 0.5" : "0.5";
  Text += R"(}> {
  y = MatMul(x, w)
})";
  Model M(Text.c_str());
  KernelTable Device = cpuWithout({"MatMul"});
  Plan P = M.plan(M.schedule(Device));
  RunInfo I = M.info(P);
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  auto E = makeExec(M, P, I, Device, O);
  TensorId X = M.G->findValue("x"), Y = M.G->findValue("y");
  for (float V : {1.0f, 2.0f}) {
    setFloats(*E, X, std::vector<float>(320, V));
    D.Log.clear();
    ASSERT_FALSE(llvm::errorToBool(E->run()));
    EXPECT_EQ(floats(*E, Y), std::vector<float>(4, 80 * V));
    EXPECT_EQ(D.Log, OneHostStepLog);
  }
  DeviceUse U = E->deviceUse();
  EXPECT_EQ(U.HostWeightBytes, 1280u);
  EXPECT_EQ(U.AllocatedBytes, P.WeightBytes + P.IOBytes + P.ArenaBytes);
}

// With host steps off, the same plan is refused before anything is
// allocated, naming the node and op, as without the fallback.
TEST(HostSteps, OffRefusesTheMissingKernel) {
  Model M(Chain);
  KernelTable Device = cpuWithout({"Relu"});
  Plan P = M.plan(M.schedule(Device));
  RunInfo I = M.info(P);
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  O.HostSteps = false;
  auto E = Executor::create(*M.G, P, I, Device, O);
  ASSERT_FALSE(bool(E));
  llvm::Error Err = E.takeError();
  EXPECT_EQ(errorCategory(Err), ErrorCategory::Unsupported);
  EXPECT_NE(llvm::toString(std::move(Err))
                .find("node #1 (Relu): no LOGGING kernel for op Relu"),
            std::string::npos);
  EXPECT_TRUE(D.Regions.empty());
}

// A step the CPU has no kernel for either (a training optimizer) keeps
// the device's error.
TEST(HostSteps, NoKernelAnywhereIsTheDevicesError) {
  Model M(
      R"(<ir_version: 8, opset_import: ["" : 17, "ai.onnx.preview.training" : 1]>
g (float r, int64 t, float[2] x, float[2] gr, float[2] h) => (float[2] x_new, float[2] h_new) {
  x_new, h_new = ai.onnx.preview.training.Adagrad<decay_factor = 0.1, epsilon = 0.00001, norm_coefficient = 0.001>(r, t, x, gr, h)
})");
  KernelTable None;
  Plan P = M.plan(M.schedule(None));
  RunInfo I = M.info(P);
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  auto E = Executor::create(*M.G, P, I, None, O);
  ASSERT_FALSE(bool(E));
  EXPECT_NE(llvm::toString(E.takeError())
                .find("node #0 (Adagrad): no LOGGING kernel for op Adagrad"),
            std::string::npos);
}

// x's nonzero positions as floats, doubled: y = 2 * NonZero(x), [1, n].
const char *const NonZeroCast = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[1, ?] y) {
  nz = NonZero(x)
  c = Cast<to = 1>(nz)
  y = Add(c, c)
})";

// NonZero's size is read by later steps (Cast, Add): on a device the host
// cannot touch, NonZero runs on the host (although the device table has
// it), so its count is known before Cast and Add are queued with their
// dims. x = [0, 3, 0, 5]: nz = [[1, 3]], c = [[1, 3]], y = [[2, 6]];
// x = [7, 7, 7, 0]: y = [[0, 2, 4]]; x = [0, 0, 0, 0]: y is [1, 0]. The
// same values as on the host device.
TEST(HostSteps, DataDependentSizesAreReportedOnTheHost) {
  Model M(NonZeroCast);
  api::Request R;
  R.ModelPath = M.Path;
  auto X = driver::planExecutable(R, cpu());
  oomplan::test::stopOnError(X, "plan");
  TensorId C = X->G->findValue("c"), In = X->G->findValue("x"),
           Y = X->G->findValue("y");
  ASSERT_FALSE(X->Info.SymbolicDims[C].empty()); // read by Add: dynamic
  struct Case {
    std::vector<float> In;
    std::vector<float> Want;
  };
  std::vector<Case> Cases = {
      {{0, 3, 0, 5}, {2, 6}}, {{7, 7, 7, 0}, {0, 2, 4}}, {{0, 0, 0, 0}, {}}};
  LoggingDevice D;
  for (Device *Dev : {(Device *)nullptr, (Device *)&D}) {
    ExecOptions O;
    O.Dev = Dev;
    O.Poison = true;
    auto E = Executor::create(*X->G, X->P, X->Info, cpu(), O);
    oomplan::test::stopOnError(E, "executor");
    for (const Case &K : Cases) {
      setFloats(**E, In, K.In);
      ASSERT_FALSE(llvm::errorToBool((*E)->run()));
      TensorRef Out = (*E)->tensor(Y);
      EXPECT_EQ(Out.Dims,
                (llvm::SmallVector<int64_t, 6>{1, int64_t(K.Want.size())}));
      EXPECT_EQ(floats(**E, Y), K.Want);
    }
    DeviceUse U = (*E)->deviceUse();
    if (Dev) {
      ASSERT_EQ(U.HostOps.size(), 1u);
      EXPECT_EQ(U.HostOps[0].first, "NonZero");
    } else {
      EXPECT_TRUE(U.HostOps.empty()); // the host's device: no host steps
    }
  }
  // Off: such a plan cannot run on that device, and says why.
  ExecOptions O;
  O.Dev = &D;
  O.HostSteps = false;
  auto E = Executor::create(*X->G, X->P, X->Info, cpu(), O);
  ASSERT_FALSE(bool(E));
  EXPECT_NE(llvm::toString(E.takeError())
                .find("(NonZero): its output has a data-dependent size that "
                      "later steps read, and host steps are off"),
            std::string::npos);
}

// A device kernel that reads the size back itself (Kernel::ReportsSizes,
// as CUDA's NonZero) runs on the device: the same model and cases as
// above, on the logging device with the CPU's NonZero so marked (it writes
// the dims from the host memory underneath). No host step, and no copy to
// the host before NonZero: a run's log is x in, the steps, y out. With
// host steps off the plan still runs: nothing needs the host.
TEST(HostSteps, AKernelThatReportsItsSizeRunsOnTheDevice) {
  Model M(NonZeroCast);
  api::Request R;
  R.ModelPath = M.Path;
  KernelTable Device = cpuWithout({});
  Kernel NZ = *Device.get(ops::opCode(*ops::lookupOp("NonZero")));
  NZ.ReportsSizes = true;
  Device.set(ops::opCode(*ops::lookupOp("NonZero")), NZ);
  auto X = driver::planExecutable(R, Device);
  oomplan::test::stopOnError(X, "plan");
  TensorId In = X->G->findValue("x"), Y = X->G->findValue("y");
  std::vector<std::pair<std::vector<float>, std::vector<float>>> Cases = {
      {{0, 3, 0, 5}, {2, 6}}, {{7, 7, 7, 0}, {0, 2, 4}}, {{0, 0, 0, 0}, {}}};
  for (bool HostSteps : {true, false}) {
    LoggingDevice D;
    ExecOptions O;
    O.Dev = &D;
    O.Poison = true;
    O.HostSteps = HostSteps;
    auto E = Executor::create(*X->G, X->P, X->Info, Device, O);
    oomplan::test::stopOnError(E, "executor");
    for (const auto &[Xs, Want] : Cases) {
      setFloats(**E, In, Xs);
      D.Log.clear();
      ASSERT_FALSE(llvm::errorToBool((*E)->run()));
      EXPECT_EQ((*E)->tensor(Y).Dims,
                (llvm::SmallVector<int64_t, 6>{1, int64_t(Want.size())}));
      EXPECT_EQ(floats(**E, Y), Want);
      EXPECT_EQ(llvm::count(D.Log, "d2h@compute"), 1) // y out only
          << llvm::join(D.Log, " ");
    }
    EXPECT_TRUE((*E)->deviceUse().HostOps.empty());
  }
}

// A data-dependent graph output nothing reads (TopK with a run-time k:
// RunInfo::UpperBound) is sized by its step's kernel: on a device the host
// cannot touch that step runs on the host although the device's table has
// TopK, and the outputs take the dims it reports. x = [3, 1, 4, 1, 5, 9]:
// k = 2 gives v = [9, 5], i = [5, 4]; k = 4 gives v = [9, 5, 4, 3], i = [5,
// 4, 2, 0].
TEST(HostSteps, ARunTimeKIsReportedOnTheHost) {
  Model M(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[6] x, int64[1] k) => (float[?] v, int64[?] i) {
  v, i = TopK<axis = 0>(x, k)
})");
  Plan P = M.plan(M.schedule(cpu()));
  RunInfo I = M.info(P);
  TensorId V = M.G->findValue("v"), Ix = M.G->findValue("i");
  ASSERT_TRUE(I.UpperBound[V]);
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  auto E = makeExec(M, P, I, cpu(), O);
  setFloats(*E, M.G->findValue("x"), {3, 1, 4, 1, 5, 9});
  for (auto [K, WantV, WantI] :
       {std::make_tuple(2, std::vector<float>{9, 5},
                        std::vector<int64_t>{5, 4}),
        std::make_tuple(4, std::vector<float>{9, 5, 4, 3},
                        std::vector<int64_t>{5, 4, 2, 0})}) {
    E->tensor(M.G->findValue("k")).data<int64_t>()[0] = K;
    ASSERT_FALSE(llvm::errorToBool(E->run()));
    EXPECT_EQ(floats(*E, V), WantV);
    TensorRef R = E->tensor(Ix);
    EXPECT_EQ(std::vector<int64_t>(R.data<int64_t>(),
                                   R.data<int64_t>() + R.numElements()),
              WantI);
  }
  DeviceUse U = E->deviceUse();
  ASSERT_EQ(U.HostOps.size(), 1u);
  EXPECT_EQ(U.HostOps[0].first, "TopK");
}

// A host step whose operands are all empty (NonZero of a 0-element x): it
// runs, reports dims [1, 0], and needs no staging bytes (the buffer is
// still made, so that an empty operand's Data is not null: a kernel would
// read null as an omitted input).
TEST(HostSteps, EmptyOperandsStayPresent) {
  Model M(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[0] x) => (int64[1,?] y) {
  y = NonZero(x)
})");
  Plan P = M.plan(M.schedule(cpu()));
  RunInfo I = M.info(P);
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  auto E = makeExec(M, P, I, cpu(), O);
  llvm::Error Err = E->run();
  ASSERT_FALSE(bool(Err)) << llvm::toString(std::move(Err));
  EXPECT_EQ(E->tensor(M.G->findValue("y")).Dims,
            (llvm::SmallVector<int64_t, 6>{1, 0}));
  EXPECT_EQ(E->deviceUse().HostOps.size(), 1u);
  EXPECT_EQ(E->deviceUse().HostStagingBytes, 0u);
}

// A half step on the host runs as on the CPU: the CPU's LayerNormalization
// takes float, so it runs on float copies of its half operands, converted
// by the CPU's Cast, in the host step's scratch (not the device's).
// Staging, sized when the executor is made, before any value is known:
// h, sc, b and n (12 or 6 bytes each, 64 with their boundary; at the run sc
// and b are host values, computed from constants, and are not copied), and
// the float copies of h, sc, b and n (each rounded to 256 bytes:
// HalfInFloat.h), 1280 bytes. The output is bit-identical to the host device's
// run. Row 0, [0.5, -1, 2]: mean 0.5, variance 1.5, so (x - 0.5) / sqrt(1.5) *
// [1, 2, 0.5] = [0, -2.449, 0.612].
TEST(HostSteps, AHalfStepWidensOnTheHost) {
  Model M(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] x) => (float[2, 3] y) {
  h = Cast<to = 10>(x)
  scf = Constant<value = float[3] {1, 2, 0.5}>()
  bf = Constant<value = float[3] {0, 0, 0}>()
  sc = Cast<to = 10>(scf)
  b = Cast<to = 10>(bf)
  n = LayerNormalization<axis = 1, epsilon = 0.0>(h, sc, b)
  y = Cast<to = 1>(n)
})");
  KernelTable Lacking = cpuWithout({"LayerNormalization"});
  TensorId X = M.G->findValue("x"), Y = M.G->findValue("y");
  std::vector<float> In = {0.5f, -1, 2, 3, 3, -0.25f};
  auto Run = [&](const KernelTable &K, Device *Dev, uint64_t *Staging) {
    Plan P = M.plan(M.schedule(K));
    RunInfo I = M.info(P);
    ExecOptions O;
    O.Dev = Dev;
    auto E = makeExec(M, P, I, K, O);
    setFloats(*E, X, In);
    EXPECT_FALSE(llvm::errorToBool(E->run()));
    if (Staging)
      *Staging = E->deviceUse().HostStagingBytes;
    return floats(*E, Y);
  };
  LoggingDevice D;
  uint64_t Staging = 0;
  std::vector<float> Host = Run(cpu(), nullptr, nullptr);
  EXPECT_EQ(Run(Lacking, &D, &Staging), Host);
  EXPECT_EQ(Staging, 1280u);
  EXPECT_NEAR(Host[0], 0.0f, 1e-3);
  EXPECT_NEAR(Host[1], -2.449f, 3e-3);
  EXPECT_NEAR(Host[2], 0.612f, 1e-3);
}

// bert_like (test/models, random weights) at batch 2, seq 8 on a device
// without Gather, LayerNormalization and Where: its embeddings, every
// LayerNormalization and every attention mask's Where run on the host
// between device steps, with --poison on. The outputs must be bit-identical to
// the host device's run (the same CPU kernels, the same order), and the device
// allocations the plan's regions.
TEST(HostSteps, BertLikeInterleavesHostAndDeviceSteps) {
  KernelTable Lacking = cpuWithout({"Gather", "LayerNormalization", "Where"});
  api::Request R;
  R.ModelPath = OOMPLAN_TEST_MODELS_DIR "/bert_like.onnx";
  R.Batch = 2;
  R.Seq = 8;
  auto Run = [&](const KernelTable &K, Device *Dev,
                 std::vector<std::vector<char>> &Outs, DeviceUse &U) {
    auto X = driver::planExecutable(R, K);
    oomplan::test::stopOnError(X, "plan");
    ExecOptions O;
    O.Dev = Dev;
    O.Poison = true;
    auto E = Executor::create(*X->G, X->P, X->Info, K, O);
    oomplan::test::stopOnError(E, "executor");
    ASSERT_FALSE(llvm::errorToBool((*E)->loadWeights(R.ModelPath, {}, 5)));
    for (size_t I = 0; I < X->G->Inputs.size(); ++I) {
      TensorRef T = (*E)->tensor(X->G->Inputs[I]);
      fillRandomWeight(T, 3, I);
      if (T.Type == ElementType::Int64) // token ids and a mask
        for (uint64_t J = 0; J < T.numElements(); ++J)
          T.data<int64_t>()[J] = int64_t(J % 7 + 1);
    }
    ASSERT_FALSE(llvm::errorToBool((*E)->run()));
    for (ValueId V : X->G->Outputs) {
      TensorRef T = (*E)->tensor(V);
      Outs.emplace_back(T.data<char>(), T.data<char>() + T.bytes());
    }
    U = (*E)->deviceUse();
    EXPECT_EQ(U.AllocatedBytes,
              X->P.WeightBytes + X->P.IOBytes + X->P.ArenaBytes);
  };
  std::vector<std::vector<char>> Host, Logged;
  DeviceUse HU, LU;
  Run(cpu(), nullptr, Host, HU);
  LoggingDevice D;
  Run(Lacking, &D, Logged, LU);
  ASSERT_EQ(Host.size(), 2u);
  EXPECT_EQ(Host, Logged);
  std::map<std::string, unsigned> Ops(LU.HostOps.begin(), LU.HostOps.end());
  // Every one of the model's 25 LayerNormalizations (each on a [2, 8, d]
  // activation); of its 24 Wheres and 101 Gathers, those of shape
  // arithmetic are computed once on the host before the run
  // (HostShapes.cpp) and are not host steps, the masks' and embeddings'
  // are.
  EXPECT_EQ(Ops["LayerNormalization"], 25u);
  EXPECT_GT(Ops["Where"], 0u);
  EXPECT_LT(Ops["Where"], 24u);
  EXPECT_GT(Ops["Gather"], 0u);
  EXPECT_LT(Ops["Gather"], 101u);
  EXPECT_EQ(Ops.size(), 3u);
  EXPECT_GT(LU.HostStagingBytes, 0u);
}

// A kernel that refuses a node (Kernel::Refuses: what a device's library
// cannot express) is known when the executor is made: on the host device
// the plan is refused with the reason, before anything is allocated; on a
// device the host cannot touch that step runs as a host step. Here the
// device's Relu refuses inputs of 4 elements: the Chain's b = Relu(a) runs
// on the host, and y = [1, 2, 3, 4] for x = [1, -2, 3, -4] as above.
std::string refusesFour(const Node &, llvm::ArrayRef<TensorRef> In,
                        llvm::ArrayRef<TensorRef>) {
  return In[0].numElements() == 4 ? "four elements" : "";
}

TEST(HostSteps, ANodeTheKernelRefusesRunsOnTheHost) {
  Model M(Chain);
  KernelTable Device = cpuWithout({});
  ops::OpCode ReluCode = ops::opCode(*ops::lookupOp("Relu"));
  Kernel Relu = *Device.get(ReluCode);
  Relu.Refuses = &refusesFour;
  Device.set(ReluCode, Relu);
  Plan P = M.plan(M.schedule(Device));
  RunInfo I = M.info(P);
  auto OnHost = Executor::create(*M.G, P, I, Device, ExecOptions());
  ASSERT_FALSE(bool(OnHost));
  EXPECT_NE(llvm::toString(OnHost.takeError())
                .find("node #1 (Relu): the CPU kernel for Relu cannot run "
                      "it: four elements"),
            std::string::npos);
  LoggingDevice D;
  ExecOptions O;
  O.Dev = &D;
  auto E = makeExec(M, P, I, Device, O);
  setFloats(*E, M.G->findValue("x"), {1, -2, 3, -4});
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  EXPECT_EQ(floats(*E, M.G->findValue("y")), (std::vector<float>{1, 2, 3, 4}));
  DeviceUse U = E->deviceUse();
  ASSERT_EQ(U.HostOps.size(), 1u);
  EXPECT_EQ(U.HostOps[0].first, "Relu");
}

} // namespace
