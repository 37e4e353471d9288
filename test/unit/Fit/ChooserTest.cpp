//===- ChooserTest.cpp - the chooser against sqrt(n) on a synthetic chain -===//
//
// A 12-layer chain t_i = Tanh(t_{i-1} @ W_i) trained with Adam. At every
// budget where Chen's sqrt(n) checkpointing fits, the chooser must fit with
// no more predicted overhead (it may pick sqrt(n) itself), far less at 0.9
// of the peak; every schedule it returns must be well formed (each read
// written before, or resident) and place and verify (buildPlan verifies).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/Chooser.h"
#include "TestExpected.h"
#include "oomplan/Fit/ActivationOffload.h"
#include "oomplan/Fit/Recompute.h"
#include "oomplan/Fit/RematChooser.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Transforms/Training.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {
constexpr unsigned Layers = 12;

std::string chainModel() {
  std::string W = " = {";
  for (unsigned I = 0; I < 256; ++I)
    W += I ? ", 0.5" : "0.5";
  W += "}";
  std::string T = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
                  "chain (float[N,16] t0) => (float[N,16] t" +
                  std::to_string(Layers) + ") <";
  for (unsigned I = 1; I <= Layers; ++I)
    T += (I > 1 ? ", " : "") + std::string("float[16,16] W") +
         std::to_string(I) + W;
  T += "> {\n";
  for (unsigned I = 1; I <= Layers; ++I) {
    std::string S = std::to_string(I), P = std::to_string(I - 1);
    T += "  m" + S + " = MatMul(t" + P + ", W" + S + ")\n";
    T += "  t" + S + " = Tanh(m" + S + ")\n";
  }
  return T + "}\n";
}

struct Fixture {
  std::unique_ptr<Graph> G;
  ShapeInfo Shapes;
  Schedule S;
  std::unique_ptr<CostModel> Cost;
};

Fixture build() {
  Fixture F;
  auto G = importModelText(chainModel(), "chain.onnxtxt");
  test::stopOnError(G, "G");
  F.G = std::move(*G);
  auto Shapes = inferShapes(*F.G);
  test::stopOnError(Shapes, "Shapes");
  F.Shapes = std::move(*Shapes);
  std::vector<std::optional<int64_t>> Bind(F.Shapes.SymbolNames.size(), 64);
  auto Bytes = evaluateValueBytes(*F.G, F.Shapes, Bind);
  test::stopOnError(Bytes, "Bytes");
  std::vector<std::string> Warnings;
  auto S =
      makeTrainingSchedule(*F.G, F.Shapes, *Bytes, TrainingOptions(), Warnings);
  test::stopOnError(S, "S");
  F.S = std::move(*S);
  auto Dev = findDevice("H100-SXM");
  test::stopOnError(Dev, "Dev");
  F.Cost = std::make_unique<CostModel>(*F.G, evaluateDims(*F.G, F.Shapes, Bind),
                                       *Dev);
  return F;
}

// Every read is of a tensor written by an earlier step, or one that exists
// before the step starts (weights, inputs, optimizer state), or a host-home
// tensor a step on the host reads (it exists in host memory).
void expectWellFormed(const Schedule &S) {
  std::vector<bool> Written(S.Tensors.size(), false);
  for (TensorId T = 0; T < S.Tensors.size(); ++T) {
    TensorKind K = S.Tensors[T].Kind;
    Written[T] = K == TensorKind::Weight || K == TensorKind::Constant ||
                 K == TensorKind::GraphInput || K == TensorKind::OptimizerState;
  }
  for (size_t I = 0; I < S.Steps.size(); ++I) {
    for (TensorId R : S.Steps[I].Reads)
      EXPECT_TRUE(Written[R] || (S.Steps[I].OnHost && S.Tensors[R].HostHome))
          << "step " << I << " reads " << S.Tensors[R].Name
          << " before it is written";
    for (TensorId W : S.Steps[I].Writes)
      Written[W] = true;
  }
}

FitResult fit(const Fixture &F, uint64_t Budget, RematMode Mode) {
  FitOptions O;
  O.BudgetBytes = Budget;
  O.Remat = Mode;
  O.Estimate.AlignBytes = 1;
  auto R = fitSchedule(F.S, *F.Cost, O);
  if (!R) {
    ADD_FAILURE() << llvm::toString(R.takeError());
    return FitResult();
  }
  return std::move(*R);
}

// buildPlan verifies the placement; with alignment 1 the estimate's lower
// bound is what placement must reach at least.
void expectPlaces(const FitResult &R) {
  expectWellFormed(R.Sched);
  PlanOptions PO;
  PO.AlignBytes = 1;
  auto P = buildPlan(R.Sched, computeLifetimes(R.Sched, {}), PO);
  ASSERT_TRUE(!!P) << llvm::toString(P.takeError());
  EXPECT_GE(P->totalBytes(), R.Mem.totalBytes());
  EXPECT_EQ(P->ArenaLowerBound, R.Mem.ArenaPeak);
}
} // namespace

TEST(Chooser, NeverWorseThanSqrtN) {
  Fixture F = build();
  FitResult Base = fit(F, UINT64_MAX, RematMode::None);
  ASSERT_TRUE(Base.Fits);
  uint64_t Peak = Base.Mem.totalBytes();
  FitResult Sqrt = fit(F, UINT64_MAX, RematMode::Sqrt);
  ASSERT_TRUE(Sqrt.Fits);
  expectPlaces(Sqrt);
  uint64_t SqrtBytes = Sqrt.Mem.totalBytes();
  ASSERT_LT(SqrtBytes, Peak) << "sqrt(n) should save memory on a chain";
  std::vector<uint64_t> Budgets = {SqrtBytes};
  for (double Fr : {0.95, 0.9, 0.8, 0.7, 0.6, 0.5})
    Budgets.push_back(static_cast<uint64_t>(static_cast<double>(Peak) * Fr));
  for (uint64_t B : Budgets) {
    SCOPED_TRACE("budget " + std::to_string(B));
    FitResult Ours = fit(F, B, RematMode::Auto);
    if (SqrtBytes <= B) {
      ASSERT_TRUE(Ours.Fits);
      EXPECT_LE(Ours.overheadSeconds(), Sqrt.overheadSeconds() * (1 + 1e-9));
    }
    if (Ours.Fits) {
      EXPECT_LE(Ours.Mem.totalBytes(), B);
      expectPlaces(Ours);
    }
  }
  // At 0.9P recomputing a few Tanh/MatMul pairs is enough: far cheaper than
  // recomputing the whole forward pass. (At 0.8P of this chain, where model
  // state is half the peak, only segment recompute reaches: the chooser
  // then returns sqrt(n) itself.)
  FitResult At09 = fit(F, static_cast<uint64_t>(Peak * 0.9), RematMode::Auto);
  ASSERT_TRUE(At09.Fits);
  EXPECT_LT(At09.overheadSeconds(), Sqrt.overheadSeconds() / 2);
}

// sqrt(n) on the chain: n = the forward steps that keep bytes (12 Tanh, the
// MatMuls keep their inputs, which the Tanh steps wrote), so ceil(sqrt(12))
// = 4 segments and 3 cuts; everything else recomputable is recomputed.
TEST(Chooser, SqrtCheckpointsKeepFewTensors) {
  Fixture F = build();
  std::vector<bool> M = sqrtCheckpoints(F.S);
  size_t End = forwardEnd(F.S);
  unsigned Kept = 0;
  for (size_t I = 0; I < End; ++I)
    Kept += isRecomputable(F.S, I) && !M[I];
  EXPECT_EQ(Kept, 3u);
}

// When nothing fits, the result says so and reports the smallest total.
TEST(Chooser, NothingFits) {
  Fixture F = build();
  FitResult R = fit(F, 1, RematMode::Auto);
  EXPECT_FALSE(R.Fits);
  EXPECT_GT(R.SmallestBytes, 1u);
  EXPECT_NE(R.Why.find("the smallest plan found"), std::string::npos);
}

// Offloading every saved activation, each prefetched just before its reader
// (no look-ahead): the schedule stays well formed, places and verifies, and
// the device holds less than without it; the host holds what was offloaded.
TEST(ActivationOffload, EverythingOneAtATime) {
  Fixture F = build();
  std::vector<TensorId> A = offloadableActivations(F.S);
  ASSERT_FALSE(A.empty());
  Schedule S = offloadActivations(F.S, A, *F.Cost, /*MaxAhead=*/0);
  expectWellFormed(S);
  EstimateOptions EO;
  EO.AlignBytes = 1;
  MemoryEstimate Before = estimateMemory(F.S, EO),
                 After = estimateMemory(S, EO);
  EXPECT_LT(After.ArenaPeak, Before.ArenaPeak);
  uint64_t Offloaded = 0;
  for (TensorId T : A)
    Offloaded += F.S.Tensors[T].SizeBytes;
  EXPECT_EQ(After.HostBytes, Offloaded);
  PlanOptions PO;
  PO.AlignBytes = 1;
  auto P = buildPlan(S, computeLifetimes(S, {}), PO);
  ASSERT_TRUE(!!P) << llvm::toString(P.takeError());
  // The copies cost time: the simulated run is longer.
  EXPECT_GT(simulate(S, *F.Cost).TotalSeconds,
            simulate(F.S, *F.Cost).TotalSeconds);
}
