//===- FitTransformsTest.cpp - the fit transforms on hand-built schedules -===//
//
// One small schedule per transform in lib/Fit (optimizer offload, weight
// streaming, reordering, micro-batch counts and choice,
// inference recompute), with the expected steps, host-home tensors and byte
// totals worked out by hand in the comments. Every transformed schedule must
// also pass the schedule verifier, so a transform cannot produce a schedule
// that liveness and placement would silently trust.
//
//===----------------------------------------------------------------------===//
#include "ScheduleBuilder.h"
#include "oomplan/Cost/DeviceProfile.h"
#include "oomplan/Fit/InferenceRecompute.h"
#include "oomplan/Fit/MemoryEstimate.h"
#include "oomplan/Fit/MicroBatch.h"
#include "oomplan/Fit/OptimizerOffload.h"
#include "oomplan/Fit/Reorder.h"
#include "oomplan/Fit/WeightStreaming.h"
#include "oomplan/Schedule/ScheduleVerifier.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {
struct Builder : test::ScheduleBuilder {
  Builder() { NumberNodes = true; }
};

std::string verifyMessage(const Schedule &S) {
  llvm::Error E = verifySchedule(S);
  return E ? llvm::toString(std::move(E)) : "";
}
} // namespace

// Tensors: p (weight, 64 B), x (input), y, g = grad(p), m and v (Adam
// state). Steps: 0 y = MatMul(x, p); 1 g = Backward(y); 2 Adam(p, g, m, v).
// The device optimizer step becomes, for its one parameter group:
//   Offload(g); HostAdam(host(g), host(p), m, v) on the host; Prefetch -> p.
// host(g) and host(p) are new tensors 6 and 7 (no master copy, so the host
// keeps its own copy of p); m and v become host-home.
TEST(OptimizerOffload, OneParameterBecomesOffloadHostUpdatePrefetch) {
  Builder B;
  TensorId P = B.tensor("p", 64, TensorKind::Weight);
  TensorId X = B.tensor("x", 32, TensorKind::GraphInput);
  TensorId Y = B.tensor("y", 16);
  TensorId G = B.tensor("grad(p)", 64, TensorKind::Gradient);
  TensorId M = B.tensor("m(p)", 64, TensorKind::OptimizerState);
  TensorId V = B.tensor("v(p)", 64, TensorKind::OptimizerState);
  B.step(StepKind::Compute, "MatMul", {X, P}, {Y});
  B.step(StepKind::Backward, "MatMulGrad", {Y, X}, {G});
  B.step(StepKind::Optimizer, "Adam", {P, G, M, V}, {});
  ASSERT_TRUE(hasOptimizerState(B.S));
  ASSERT_EQ(verifyMessage(B.S), "");

  Schedule Out = offloadOptimizerState(B.S);
  ASSERT_EQ(Out.Steps.size(), 5u);
  EXPECT_EQ(Out.Steps[2].Kind, StepKind::Offload);
  EXPECT_EQ(Out.Steps[2].Reads, std::vector<TensorId>{G});
  const Step &Host = Out.Steps[3];
  EXPECT_EQ(Host.Kind, StepKind::Optimizer);
  EXPECT_EQ(Host.Op, "HostAdam");
  EXPECT_TRUE(Host.OnHost);
  EXPECT_EQ(Host.Reads, (std::vector<TensorId>{6, 7, M, V}));
  EXPECT_EQ(Out.Steps[4].Kind, StepKind::Prefetch);
  EXPECT_EQ(Out.Steps[4].Writes, std::vector<TensorId>{P});
  ASSERT_EQ(Out.Tensors.size(), 8u);
  EXPECT_EQ(Out.Tensors[6].Name, "host(grad(p))");
  EXPECT_EQ(Out.Tensors[7].Name, "host(p)");
  for (TensorId T : {TensorId(6), TensorId(7), M, V})
    EXPECT_TRUE(Out.Tensors[T].HostHome) << Out.Tensors[T].Name;
  EXPECT_FALSE(Out.Tensors[P].HostHome);
  EXPECT_FALSE(hasOptimizerState(Out));
  EXPECT_EQ(verifyMessage(Out), "");
  // Host bytes: g, p, m, v copies on the host, 4 x 64 = 256.
  EstimateOptions Opts;
  EXPECT_EQ(estimateMemory(Out, Opts).HostBytes, 256u);
}

// Only weights that some step reads, with bytes, largest first (ties in id
// order): w2 (300 B), then w1 and w4 (100 B each); w3 is never read and w5
// is empty.
TEST(WeightStreaming, CandidatesAreReadWeightsLargestFirst) {
  Builder B;
  TensorId X = B.tensor("x", 8, TensorKind::GraphInput);
  TensorId W1 = B.tensor("w1", 100, TensorKind::Weight);
  TensorId W2 = B.tensor("w2", 300, TensorKind::Weight);
  B.tensor("w3", 500, TensorKind::Weight);
  TensorId W4 = B.tensor("w4", 100, TensorKind::Weight);
  TensorId W5 = B.tensor("w5", 0, TensorKind::Weight);
  TensorId Y = B.tensor("y", 8, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Gemm", {X, W1, W2, W4, W5}, {Y});
  EXPECT_EQ(streamableWeights(B.S), (std::vector<TensorId>{W2, W1, W4}));
}

// 40 steps: a0 = Relu(x), a_i = Relu(a_(i-1)), all 100 B; steps 2 and 30
// also read the weight w (1100 B). Uses more than max(40 / 8, 16) = 16 steps
// apart are two copies: w itself for step 2 and "w#2" (tensor 42) for step
// 30. Toy device: 1e9 B/s memory and host link, so a step costs its bytes
// in ns: 200 ns, 1300 ns with w; a copy 1100 ns. Start times: step i < 3
// at 200i ns, then 1700 + 200(i - 3) ns, so step 30 at 7100 ns. Copies are
// placed back from the last: w#2 must start by 7100 - 1100 = 6000 ns; the
// last step starting by then is 24 (5900 ns). w must end by step 2 (400 ns)
// and cannot: it is issued at step 0. Output: Prefetch w, steps 0-23,
// Prefetch w#2, steps 24-39 (42 steps); old step 2 is now 3 and reads w,
// old step 30 is now 32 and reads w#2.
TEST(WeightStreaming, SplitsDistantUsesAndIssuesCopiesJustInTime) {
  Builder B;
  TensorId W = B.tensor("w", 1100, TensorKind::Weight);
  TensorId X = B.tensor("x", 100, TensorKind::GraphInput);
  TensorId Prev = X;
  for (unsigned I = 0; I < 40; ++I) {
    TensorId A =
        B.tensor("a" + std::to_string(I), 100,
                 I == 39 ? TensorKind::GraphOutput : TensorKind::Activation);
    std::vector<TensorId> Reads{Prev};
    if (I == 2 || I == 30)
      Reads.push_back(W);
    B.step(StepKind::Compute, "Relu", Reads, {A}).Node = NoId;
    Prev = A;
  }
  ASSERT_EQ(streamableWeights(B.S), std::vector<TensorId>{W});
  auto Dev = parseDeviceJSON(R"({"name": "toy", "peak_fp32_tflops": 1,
      "mem_bandwidth_gbps": 1, "host_link_gbps": 1, "memory_gb": 1})",
                             "toy.json");
  ASSERT_TRUE(!!Dev) << llvm::toString(Dev.takeError());
  Graph G;
  CostModel Cost(G, {}, *Dev);
  ASSERT_DOUBLE_EQ(Cost.transferSeconds(1100), 1.1e-6);

  Schedule Out = streamWeights(B.S, {W}, Cost, UINT32_MAX);
  ASSERT_EQ(Out.Steps.size(), 42u);
  ASSERT_EQ(Out.Tensors.size(), 43u);
  EXPECT_EQ(Out.Tensors[42].Name, "w#2");
  for (TensorId T : {W, TensorId(42)}) {
    EXPECT_TRUE(Out.Tensors[T].HostHome);
    EXPECT_EQ(Out.Tensors[T].Kind, TensorKind::Activation);
  }
  EXPECT_EQ(Out.Steps[0].Kind, StepKind::Prefetch);
  EXPECT_EQ(Out.Steps[0].Writes, std::vector<TensorId>{W});
  EXPECT_EQ(Out.Steps[25].Kind, StepKind::Prefetch);
  EXPECT_EQ(Out.Steps[25].Writes, std::vector<TensorId>{42});
  EXPECT_EQ(Out.Steps[3].Reads[1], W);
  EXPECT_EQ(Out.Steps[32].Reads[1], 42u);
  EXPECT_EQ(verifyMessage(Out), "");
  // On the device: w [0, 4), w#2 [25, 33).
  Lifetimes L = computeLifetimes(Out, LivenessOptions());
  EXPECT_EQ(L.Buffers[L.BufferOf[W]].StartStep, 0u);
  EXPECT_EQ(L.Buffers[L.BufferOf[W]].EndStep, 4u);
  EXPECT_EQ(L.Buffers[L.BufferOf[42]].StartStep, 25u);
  EXPECT_EQ(L.Buffers[L.BufferOf[42]].EndStep, 33u);
}

// Two branches from input x (8 B): a1 = f(x) 1000 B, b1 = g(x) 1000 B,
// a2 = h(a1) 10 B, b2 = k(b1) 10 B, out = Add(a2, b2); out and x are I/O,
// outside the arena. A value is live from its write through its last read,
// so a step holds its reads and its writes. Given order, arena bytes per
// step: 1000, 2000, 2010 (a1, b1, a2), 1020, 20: peak 2010 (alignment 1).
// Running a2 right after a1 lets a1 die first: order 0, 2, 1, 3, 4, bytes
// 1000, 1010, 1010, 1020 (a2, b1, b2), 20: peak 1020.
TEST(Reorder, RunsTheFreeingStepFirst) {
  Builder B;
  TensorId X = B.tensor("x", 8, TensorKind::GraphInput);
  TensorId A1 = B.tensor("a1", 1000);
  TensorId B1 = B.tensor("b1", 1000);
  TensorId A2 = B.tensor("a2", 10);
  TensorId B2 = B.tensor("b2", 10);
  TensorId Out = B.tensor("out", 10, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Relu", {X}, {A1});
  B.step(StepKind::Compute, "Tanh", {X}, {B1});
  B.step(StepKind::Compute, "ReduceSum", {A1}, {A2});
  B.step(StepKind::Compute, "ReduceMax", {B1}, {B2});
  B.step(StepKind::Compute, "Add", {A2, B2}, {Out});
  EstimateOptions Opts;
  Opts.AlignBytes = 1;
  EXPECT_EQ(estimateMemory(B.S, Opts).ArenaPeak, 2010u);

  Schedule R = reorderForMemory(B.S, Opts);
  std::vector<NodeId> Order;
  for (const Step &St : R.Steps)
    Order.push_back(St.Node);
  EXPECT_EQ(Order, (std::vector<NodeId>{0, 2, 1, 3, 4}));
  EXPECT_EQ(estimateMemory(R, Opts).ArenaPeak, 1020u);
  EXPECT_EQ(verifyMessage(R), "");
}

// A ready step's score changes when another step runs: a (1000 B) is read
// by x1 (writes 600 B) and y (writes 600 B); z (700 B) reads x1. Given
// order a, x1, z, y, out, arena bytes peak at z: a + x1 + z = 2300. The
// greedy order: after a, x1 and y tie at +600 (x1 first, by index); once x1
// has run, y holds a's last read (600 - 1000 = -400) and beats z
// (700 - 600 = +100), so a, x1, y, z, out: peak a + x1 + y = 2200. A
// scheduler that kept y's score from when it became ready (+600) would
// pick z and keep the given order.
TEST(Reorder, RescoresAReadyStepWhenItsReadBecomesTheLast) {
  Builder B;
  TensorId X = B.tensor("x", 8, TensorKind::GraphInput);
  TensorId A = B.tensor("a", 1000);
  TensorId X1 = B.tensor("x1", 600);
  TensorId Z = B.tensor("z", 700);
  TensorId Y = B.tensor("y", 600);
  TensorId Out = B.tensor("out", 1, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Relu", {X}, {A});
  B.step(StepKind::Compute, "Tanh", {A}, {X1});
  B.step(StepKind::Compute, "Exp", {X1}, {Z});
  B.step(StepKind::Compute, "Neg", {A}, {Y});
  B.step(StepKind::Compute, "Add", {Y, Z}, {Out});
  EstimateOptions Opts;
  Opts.AlignBytes = 1;
  EXPECT_EQ(estimateMemory(B.S, Opts).ArenaPeak, 2300u);
  Schedule R = reorderForMemory(B.S, Opts, /*Tries=*/0);
  std::vector<NodeId> Order;
  for (const Step &St : R.Steps)
    Order.push_back(St.Node);
  EXPECT_EQ(Order, (std::vector<NodeId>{0, 1, 3, 2, 4}));
  EXPECT_EQ(estimateMemory(R, Opts).ArenaPeak, 2200u);
  EXPECT_EQ(verifyMessage(R), "");
}

// 2, 4, 8, ... while they divide the batch: 24 = 2^3 x 3 gives 2, 4, 8.
TEST(MicroBatch, CountsArePowersOfTwoDividingTheBatch) {
  EXPECT_EQ(microBatchCounts(24), (std::vector<unsigned>{2, 4, 8}));
  EXPECT_EQ(microBatchCounts(16), (std::vector<unsigned>{2, 4, 8, 16}));
  EXPECT_TRUE(microBatchCounts(7).empty());
  EXPECT_TRUE(microBatchCounts(1).empty());
}

namespace {
MicroBatchFit fit(unsigned K, double Pass, double Once, bool Fits,
                  const char *Strategy) {
  MicroBatchFit F;
  F.K = K;
  F.R.Time.TotalSeconds = Pass;
  F.R.Fits = Fits;
  F.R.Strategy = Strategy;
  F.Placed = Fits;
  F.OnceSeconds = Once;
  return F;
}
} // namespace

// Batch 8; the whole batch does not fit. K = 2: pass 6 s, update 1 s:
// 2 x 6 - 1 = 11 s, fits with recompute. K = 4: 4 x 2.5 - 3 x 1 = 7 s,
// fits untransformed, so the search stops there (K = 8 is never asked).
TEST(MicroBatch, ChoosesTheCheapestAndStopsAtTheFirstUntransformed) {
  MicroBatchFit Whole = fit(1, 10, 1, false, "none");
  std::vector<unsigned> Asked;
  auto Best = chooseMicroBatches(8, Whole, [&](unsigned K) {
    Asked.push_back(K);
    if (K == 2)
      return std::optional<MicroBatchFit>(fit(2, 6, 1, true, "recompute"));
    if (K == 4)
      return std::optional<MicroBatchFit>(fit(4, 2.5, 1, true, "none"));
    return std::optional<MicroBatchFit>(fit(K, 0.1, 0, true, "none"));
  });
  ASSERT_TRUE(Best.has_value());
  EXPECT_EQ(Best->K, 4u);
  EXPECT_DOUBLE_EQ(Best->totalSeconds(), 7.0);
  EXPECT_EQ(Asked, (std::vector<unsigned>{2, 4}));
}

// When the whole batch fits in 10 s, a split must beat it: K = 2 costs
// 2 x 6 - 0 = 12 s, so there is no answer.
TEST(MicroBatch, NoSplitWhenTheWholeBatchIsCheaper) {
  MicroBatchFit Whole = fit(1, 10, 0, true, "none");
  auto Best = chooseMicroBatches(2, Whole, [&](unsigned K) {
    return std::optional<MicroBatchFit>(fit(K, 6, 0, true, "none"));
  });
  EXPECT_FALSE(Best.has_value());
}

// Inference: w (weight) -> step 0: mask = Relu(w) 400 B, read at step 1
// and again at step 5; steps 2-4 are a chain of other work. The longest gap
// is 1 -> 5, so the candidate is mask, From 5, Span 4, 400 B. Applying it
// inserts "recompute(mask)" = Relu(w) before the old step 5 (new step 5),
// and the old step 5 reads the copy (tensor 8).
TEST(InferenceRecompute, RecomputesTheLongLivedMaskBeforeItsLateRead) {
  Builder B;
  TensorId W = B.tensor("w", 400, TensorKind::Weight);
  TensorId X = B.tensor("x", 40, TensorKind::GraphInput);
  TensorId Mask = B.tensor("mask", 400);
  TensorId A = B.tensor("a", 40);
  TensorId Bt = B.tensor("b", 40);
  TensorId C = B.tensor("c", 40);
  TensorId D = B.tensor("d", 40);
  TensorId Y = B.tensor("y", 40, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Relu", {W}, {Mask});
  B.step(StepKind::Compute, "Add", {X, Mask}, {A});
  B.step(StepKind::Compute, "Tanh", {A}, {Bt});
  B.step(StepKind::Compute, "Sigmoid", {Bt}, {C});
  B.step(StepKind::Compute, "Neg", {C}, {D});
  B.step(StepKind::Compute, "Add", {D, Mask}, {Y});
  std::vector<double> Secs(B.S.Steps.size(), 1e-6);

  auto Cands = inferenceRematCandidates(B.S, Secs, false);
  ASSERT_EQ(Cands.size(), 1u);
  EXPECT_EQ(Cands[0].Value, Mask);
  EXPECT_EQ(Cands[0].Producer, 0u);
  EXPECT_EQ(Cands[0].From, 5u);
  EXPECT_EQ(Cands[0].Span, 4u);
  EXPECT_EQ(Cands[0].Bytes, 400u);

  Schedule Out = applyInferenceRecompute(B.S, Cands);
  ASSERT_EQ(Out.Steps.size(), 7u);
  ASSERT_EQ(Out.Tensors.size(), 9u);
  EXPECT_EQ(Out.Tensors[8].Name, "recompute(mask)");
  EXPECT_EQ(Out.Steps[5].Kind, StepKind::Recompute);
  EXPECT_EQ(Out.Steps[5].Reads, std::vector<TensorId>{W});
  EXPECT_EQ(Out.Steps[5].Writes, std::vector<TensorId>{8});
  EXPECT_EQ(Out.Steps[6].Reads, (std::vector<TensorId>{D, 8}));
  EXPECT_EQ(verifyMessage(Out), "");
  // mask now lives [0, 2) (last read at step 1) instead of [0, 7), and
  // its copy [5, 7): written at step 5, last read at step 6.
  Lifetimes L = computeLifetimes(Out, LivenessOptions());
  const LiveBuffer &Orig = L.Buffers[L.BufferOf[Mask]];
  EXPECT_EQ(Orig.StartStep, 0u);
  EXPECT_EQ(Orig.EndStep, 2u);
  const LiveBuffer &Copy = L.Buffers[L.BufferOf[8]];
  EXPECT_EQ(Copy.StartStep, 5u);
  EXPECT_EQ(Copy.EndStep, 7u);
}
