//===- ReportTest.cpp - breakdown, peak, capacity, diagnosis, pictures ----===//
//
// A one-head attention block small enough to work out by hand, planned with
// alignment 1 so every size is its formula:
//   x  : float[batch,seq,4]   graph input        16*batch*seq bytes
//   xt = Transpose(x)         [batch,4,seq]      16*batch*seq   steps [0,2)
//   sc = MatMul(x, xt)        [batch,seq,seq]     4*batch*seq^2 steps [1,3)
//   p  = Softmax(sc)          [batch,seq,seq]     4*batch*seq^2 steps [2,4)
//   y  = MatMul(p, x)         [batch,seq,4]      16*batch*seq   graph output
// The arena peaks at step 2 (sc and p: 8*batch*seq^2) once seq >= 4, when it
// exceeds step 1 (xt and sc: 16*batch*seq + 4*batch*seq^2). The io region is
// x + y = 32*batch*seq. Total: batch * (32*seq + 8*seq^2) for seq >= 4.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Report.h"
#include "TestExpected.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Report/Formulas.h"
#include "oomplan/Report/Rescale.h"
#include "oomplan/Report/Timeline.h"
#include "oomplan/Transforms/InferencePrecision.h"
#include "gtest/gtest.h"

using namespace oomplan;
using namespace oomplan::report;

static const char *AttentionModel = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[batch,seq,4] x) => (float[batch,seq,4] y) {
  xt = Transpose<perm=[0,2,1]>(x)
  sc = MatMul(x, xt)
  p = Softmax<axis=-1>(sc)
  y = MatMul(p, x)
}
)";

// A budget of Capacity bytes of which Overhead go before the plan.
static Budget budget(uint64_t Capacity, uint64_t Overhead = 0) {
  Budget B;
  B.CapacityBytes = Capacity;
  B.OverheadBytes = Overhead;
  return B;
}

namespace {
struct Fixture : ::testing::Test {
  std::unique_ptr<Graph> G;
  ShapeInfo Shapes;
  PipelineOptions Opts;
  SymbolRoles Roles;

  void SetUp() override {
    auto Imported = importModelText(AttentionModel, "attention.onnxtxt");
    ASSERT_TRUE(bool(Imported)) << llvm::toString(Imported.takeError());
    G = std::move(*Imported);
    auto S = inferShapes(*G);
    ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
    Shapes = std::move(*S);
    Opts.Placement.AlignBytes = 1;
    Roles = findSymbolRoles(*G);
  }
  std::vector<std::optional<int64_t>> at(int64_t Batch, int64_t Seq) {
    std::vector<std::optional<int64_t>> B(Shapes.SymbolNames.size());
    B[G->findSymbol("batch")] = Batch;
    B[G->findSymbol("seq")] = Seq;
    return B;
  }
  PlanFn planFn() {
    return [this](llvm::ArrayRef<std::optional<int64_t>> B) {
      return planGraph(*G, Shapes, B, Opts);
    };
  }
  Plan plan(int64_t Batch, int64_t Seq) {
    auto P = planGraph(*G, Shapes, at(Batch, Seq), Opts);
    test::stopOnError(P, "P");
    return std::move(*P);
  }
};
} // namespace

TEST_F(Fixture, RolesAreFound) {
  ASSERT_EQ(Roles.Batch.size(), 1u);
  ASSERT_EQ(Roles.Seq.size(), 1u);
}

TEST_F(Fixture, BreakdownAddsUpWithOverhead) {
  // batch 2, seq 8: io 32*2*8 = 512; arena 8*2*64 = 1024; overhead 100.
  Plan P = plan(2, 8);
  auto B = at(2, 8);
  PlanContext C{*G, Shapes, B};
  Breakdown BD = computeBreakdown(P, C, 100);
  EXPECT_EQ(BD.bytes(MemoryClass::Weights), 0u);
  EXPECT_EQ(BD.bytes(MemoryClass::InputsOutputs), 512u);
  EXPECT_EQ(BD.bytes(MemoryClass::Activations), 1024u);
  EXPECT_EQ(BD.bytes(MemoryClass::Overhead), 100u);
  EXPECT_EQ(BD.TotalBytes, 1636u);
  EXPECT_EQ(BD.Rows[unsigned(MemoryClass::Activations)].Formula,
            "8*batch*seq^2");
  EXPECT_EQ(BD.Rows[unsigned(MemoryClass::InputsOutputs)].Formula,
            "32*batch*seq");
}

TEST_F(Fixture, PeakListsScoresAsQuadratic) {
  Plan P = plan(2, 8);
  auto B = at(2, 8);
  PlanContext C{*G, Shapes, B};
  PeakReport Pk = computePeak(P, C, Roles.Seq);
  EXPECT_EQ(Pk.Step, 2u);
  ASSERT_EQ(Pk.Buffers.size(), 2u);
  EXPECT_EQ(Pk.LiveBytes, 1024u);
  // Both 4*batch*seq^2 = 512 bytes, entirely quadratic in seq.
  EXPECT_EQ(Pk.QuadraticBytes, 1024);
  EXPECT_TRUE(Pk.Buffers[0].SeqBySeq);
  EXPECT_EQ(Pk.Buffers[0].Formula.str(Shapes.SymbolNames), "4*batch*seq^2");
}

TEST_F(Fixture, QuadraticPartOfAMixedFormula) {
  // 3*seq^2 + 5*seq + 7 at seq = 10: the quadratic part is 300.
  SymExpr S = SymExpr::symbol(G->findSymbol("seq"));
  SymExpr F = SymExpr::constant(3) * S * S + SymExpr::constant(5) * S +
              SymExpr::constant(7);
  auto B = at(1, 10);
  PlanContext C{*G, Shapes, B};
  EXPECT_EQ(quadraticPart(F, C, Roles.Seq), 300);
}

TEST_F(Fixture, MaxBatchIsExact) {
  // At seq 8 the total is batch * (256 + 512) = 768 * batch: 7680 bytes
  // fit batch 10 exactly; 7679 only 9.
  auto R =
      findCapacity(planFn(), at(1, 8), Roles.Batch, "batch", budget(7680, 0));
  ASSERT_TRUE(bool(R));
  ASSERT_TRUE(R->Max.has_value());
  EXPECT_EQ(*R->Max, 10);
  EXPECT_EQ(R->BytesAtMax, 7680u);
  EXPECT_EQ(*R->BytesAbove, 8448u);
  auto R2 =
      findCapacity(planFn(), at(1, 8), Roles.Batch, "batch", budget(7679, 0));
  ASSERT_TRUE(bool(R2));
  EXPECT_EQ(*R2->Max, 9);
}

TEST_F(Fixture, MaxSeqIsExact) {
  // At batch 1: 32*seq + 8*seq^2; seq 100 needs 83200, seq 101 needs 84840.
  auto R = findCapacity(planFn(), at(1, 1), Roles.Seq, "seq", budget(83200, 0));
  ASSERT_TRUE(bool(R));
  EXPECT_EQ(*R->Max, 100);
  EXPECT_EQ(*R->BytesAbove, 84840u);
  // The overhead counts against the budget: 1 byte of it costs seq 100.
  auto R2 =
      findCapacity(planFn(), at(1, 1), Roles.Seq, "seq", budget(83200, 1));
  ASSERT_TRUE(bool(R2));
  EXPECT_EQ(*R2->Max, 99);
}

TEST(Capacity, CapAndNothingFits) {
  // A fake pipeline whose plan needs v bytes: everything up to the cap fits.
  std::vector<SymbolId> Syms{0};
  PlanFn Linear = [](llvm::ArrayRef<std::optional<int64_t>> B) {
    Plan P;
    P.WeightBytes = uint64_t(*B[0]);
    return llvm::Expected<Plan>(std::move(P));
  };
  std::vector<std::optional<int64_t>> Base{1};
  auto R = findCapacity(Linear, Base, Syms, "batch", budget(1000, 0), 64);
  ASSERT_TRUE(bool(R));
  EXPECT_TRUE(R->AtLeast);
  EXPECT_EQ(*R->Max, 64);
  // 300 bytes at 37 fit, 38 do not (300 = 37 + 263 overhead).
  auto R2 =
      findCapacity(Linear, Base, Syms, "batch", budget(300, 263), 1 << 20);
  ASSERT_TRUE(bool(R2));
  EXPECT_EQ(*R2->Max, 37);
  EXPECT_FALSE(R2->AtLeast);
  auto R3 = findCapacity(Linear, Base, Syms, "batch", budget(10, 10), 64);
  ASSERT_TRUE(bool(R3));
  EXPECT_FALSE(R3->Max.has_value());
  EXPECT_EQ(*R3->BytesAbove, 11u);
}

TEST_F(Fixture, HalfPrecisionHalvesFloats) {
  // --precision=fp16 of an inference plan: every fp32 tensor halves, and
  // this graph has no op kept in fp32.
  Plan P = plan(2, 8); // 512 io + 1024 arena
  Schedule S = P.Sched;
  EXPECT_EQ(applyInferencePrecision(Shapes, ElementType::Float16, S), 0u);
  Lifetimes L = computeLifetimes(S, Opts.Liveness);
  auto H = buildPlan(std::move(S), std::move(L), Opts.Placement);
  ASSERT_TRUE(bool(H));
  EXPECT_EQ(H->IOBytes, 256u);
  EXPECT_EQ(H->ArenaBytes, 512u);
}

TEST_F(Fixture, DiagnosisRanksSequenceThenBatch) {
  // batch 8, seq 128: 8 * (4096 + 131072) = 1081344 bytes. Budget 665600 =
  // 8 * 83200: the longest seq at batch 8 is 100 (as above, times 8); the
  // largest batch at seq 128 is floor(665600 / 135168) = 4. The peak is all
  // seq x seq: sequence too long ranks first; batch 1, seq 1 (52 bytes) fits.
  Plan P = plan(8, 128);
  P.Limit = budget(665600);
  auto B = at(8, 128);
  PlanContext C{*G, Shapes, B};
  ReportOptions RO;
  RO.Limit = budget(665600);
  auto R = buildReport(P, C, Roles, planFn(), Opts, RO);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_FALSE(R->Fits);
  ASSERT_EQ(R->Findings.size(), 2u);
  EXPECT_EQ(R->Findings[0].Kind, Cause::SequenceTooLong);
  EXPECT_EQ(*R->Findings[0].Value, 100);
  EXPECT_EQ(R->Findings[0].Tensors.size(), 2u);
  EXPECT_EQ(R->Findings[1].Kind, Cause::BatchTooLarge);
  EXPECT_EQ(*R->Findings[1].Value, 4);
  // Remedies are sorted by bytes saved; placeholders last.
  ASSERT_GE(R->Remedies.size(), 2u);
  for (size_t I = 1; I < R->Remedies.size(); ++I) {
    if (R->Remedies[I].Planned) {
      EXPECT_GE(R->Remedies[I - 1].BytesSaved, R->Remedies[I].BytesSaved);
    }
  }
  EXPECT_FALSE(R->Remedies.back().Planned);
}

TEST_F(Fixture, ModelTooLargeWhenNothingFits) {
  // Even batch 1, seq 1 (32 + 20 = 52 bytes) exceeds a 40-byte budget.
  Plan P = plan(2, 8);
  auto B = at(2, 8);
  PlanContext C{*G, Shapes, B};
  ReportOptions RO;
  RO.Limit = budget(40);
  auto R = buildReport(P, C, Roles, planFn(), Opts, RO);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  ASSERT_FALSE(R->Findings.empty());
  EXPECT_EQ(R->Findings[0].Kind, Cause::ModelTooLarge);
}

TEST_F(Fixture, TimelineStacksClasses) {
  Plan P = plan(2, 8);
  std::vector<ClassBytes> Live = liveBytesByStep(P, 7);
  ASSERT_EQ(Live.size(), 4u);
  // Step 2: sc + p = 1024 activations; io 512 and overhead 7 throughout.
  EXPECT_EQ(Live[2][unsigned(MemoryClass::Activations)], 1024u);
  EXPECT_EQ(Live[0][unsigned(MemoryClass::InputsOutputs)], 512u);
  EXPECT_EQ(Live[3][unsigned(MemoryClass::Overhead)], 7u);
}
