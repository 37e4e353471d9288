//===- OpTableTest.cpp - every op record decides every column -------------===//
//
// The op table is the one place that knows about op types, so a record that
// leaves a column undecided would silently fall back somewhere. These tests
// reject such a record, check that each layer's reading of the table agrees
// with it (Analysis's shape rules, Schedule's aliasing), and check facts
// worked out by hand from the ops' definitions.
//
//===----------------------------------------------------------------------===//
#include "oomplan/IR/OpTable.h"
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Cost/CostModel.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Schedule/Schedule.h"
#include "llvm/ADT/StringSet.h"
#include "gtest/gtest.h"

using namespace oomplan;
using namespace oomplan::ops;

namespace {
std::string joined(const std::vector<llvm::StringRef> &Names) {
  std::string S;
  for (llvm::StringRef N : Names)
    S += (S.empty() ? "" : ", ") + N.str();
  return S;
}
} // namespace

TEST(OpTable, EveryRecordDecidesEveryColumn) {
  for (const OpInfo &Op : allOps())
    EXPECT_TRUE(undecidedColumns(Op).empty())
        << Op.Name << " leaves undecided: " << joined(undecidedColumns(Op));
}

// The check above catches a record that stops early: a new elementwise op
// written with only its shape rule and aliasing.
TEST(OpTable, ARecordThatStopsEarlyIsUndecided) {
  OpInfo Partial{};
  Partial.Name = "Swish";
  Partial.Shape = ShapeRuleId::SameAsInput;
  Partial.Alias = AliasClass::InPlace;
  EXPECT_EQ(joined(undecidedColumns(Partial)), "grad, flops, bytes");
  OpInfo Unknowns = Partial;
  Unknowns.Grad.Class = GradClass::Unknown;
  EXPECT_EQ(joined(undecidedColumns(Unknowns)), "flops, bytes");
}

TEST(OpTable, NamesAreUniqueAndOpCodesDense) {
  llvm::StringSet<> Seen;
  for (const OpInfo &Op : allOps()) {
    EXPECT_TRUE(Seen.insert(Op.Name).second) << Op.Name << " twice";
    ASSERT_EQ(lookupOp(Op.Name), &Op) << Op.Name;
    EXPECT_EQ(&allOps()[opCode(Op)], &Op);
  }
  EXPECT_EQ(lookupOp("FlyingCarpet"), nullptr);
  EXPECT_EQ(lookupOp(""), nullptr);
  EXPECT_EQ(lookupOp("relu"), nullptr); // ONNX names are case-sensitive
}

// Analysis supplies a function for every shape rule a record names; the ops
// with a rule are exactly the records that are not Declared.
TEST(OpTable, AnalysisHasARuleForEveryRecordThatNamesOne) {
  size_t WithRule = 0;
  for (const OpInfo &Op : allOps()) {
    bool Declared = Op.Shape == ShapeRuleId::Declared;
    EXPECT_EQ(hasShapeRule(Op.Name), !Declared) << Op.Name;
    WithRule += !Declared;
  }
  EXPECT_EQ(numShapeRules(), WithRule);
  EXPECT_FALSE(hasShapeRule("FlyingCarpet"));
}

TEST(OpTable, ExplicitUnknownAndNotDifferentiable) {
  // Shape computations carry no gradient: written down, not defaulted.
  EXPECT_EQ(lookupOp("Shape")->Grad.Class, GradClass::NotDifferentiable);
  EXPECT_EQ(lookupOp("Equal")->Grad.Class, GradClass::NotDifferentiable);
  // No one has written LRN's backward yet: training warns and keeps all.
  EXPECT_EQ(lookupOp("LRN")->Grad.Class, GradClass::Unknown);
  // Top-k keeps its indices (output 1), not its input.
  EXPECT_EQ(lookupOp("TopK")->Grad.SaveOutputs, bit(1));
  EXPECT_EQ(lookupOp("TopK")->Grad.SaveAlways, 0u);
  // The recurrent layers keep their per-step states (an aux of their own).
  EXPECT_EQ(lookupOp("GRU")->Grad.Class, GradClass::Rule);
  EXPECT_EQ(lookupOp("LSTM")->Grad.Aux, AuxKind::RecurrentStates);
  // Gelu (opset 20) is elementwise and keeps its input for the backward.
  EXPECT_EQ(lookupOp("Gelu")->Shape, ShapeRuleId::SameAsInput);
  EXPECT_EQ(lookupOp("Gelu")->Grad.Class, GradClass::Rule);
  // TfIdfVectorizer's width is in attributes no rule reads: declared shapes.
  EXPECT_EQ(lookupOp("TfIdfVectorizer")->Shape, ShapeRuleId::Declared);
}

TEST(OpTable, KnownFacts) {
  // Reshape's output is its input's bytes; Transpose's only for a weight
  // (PyTorch's weight.t()); Dropout's only in inference.
  EXPECT_EQ(lookupOp("Reshape")->Alias, AliasClass::View);
  EXPECT_EQ(lookupOp("Transpose")->Alias, AliasClass::ParamView);
  EXPECT_EQ(lookupOp("Dropout")->Alias, AliasClass::ViewInInference);
  // Relu may overwrite its input; Softmax (a reduction per row) may not.
  EXPECT_EQ(lookupOp("Relu")->Alias, AliasClass::InPlace);
  EXPECT_TRUE(isElementwiseOp("Relu"));
  EXPECT_FALSE(isElementwiseOp("Softmax"));
  // relu's backward reads its result, not its input.
  EXPECT_EQ(lookupOp("Relu")->Grad.SaveOutputs, bit(0));
  EXPECT_EQ(lookupOp("Relu")->Grad.SaveAlways, 0u);
  // matmul keeps both operands, each for the other's gradient.
  const GradRule &MM = lookupOp("MatMul")->Grad;
  EXPECT_EQ(MM.DiffInputs, bit(0) | bit(1));
  EXPECT_EQ(MM.SaveIfPartnerGrad, bit(0) | bit(1));
  // Products run at the tensor-core peak; Constant is resident.
  EXPECT_TRUE(isComputeIntensiveOp("Conv"));
  EXPECT_FALSE(isComputeIntensiveOp("Relu"));
  EXPECT_EQ(lookupOp("Constant")->Cost.Bytes, BytesClass::None);
  // Rematerialization keeps a generator's output instead of replaying it.
  EXPECT_TRUE(lookupOp("RandomNormal")->Cost.NeverRecompute);
  EXPECT_TRUE(lookupOp("Constant")->Cost.NeverRecompute);
  EXPECT_FALSE(lookupOp("Dropout")->Cost.NeverRecompute);
}

TEST(OpTable, KernelSlotIsPerBackend) {
  KernelTable<int> Cuda, Cpu;
  OpCode Relu = opCode(*lookupOp("Relu"));
  Cuda.set(Relu, 7);
  ASSERT_TRUE(Cuda.get(Relu).has_value());
  EXPECT_EQ(*Cuda.get(Relu), 7);
  EXPECT_FALSE(Cpu.get(Relu).has_value());
  EXPECT_FALSE(Cuda.get(opCode(*lookupOp("MatMul"))).has_value());
}

namespace {
std::string weights(const std::string &Decl, unsigned N) {
  std::string S = Decl + " = {";
  for (unsigned I = 0; I < N; ++I)
    S += I ? ", 0.5" : "0.5";
  return S + "}";
}
} // namespace

// Reshape is a view and Relu writes in place in the default schedule.
TEST(OpTable, ScheduleReadsAliasing) {
  auto G = importModelText(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[2,6] x) => (float[3,4] z) <int64[2] s = {3, 4}> {
  y = Reshape(x, s)
  z = Relu(y)
}
)",
                           "t.onnxtxt");
  ASSERT_TRUE(!!G) << llvm::toString(G.takeError());
  std::vector<uint64_t> Bytes((*G)->Values.size(), 48);
  Schedule S = makeDefaultSchedule(**G, Bytes);
  ASSERT_EQ(S.Steps.size(), 2u);
  EXPECT_EQ(S.Steps[0].ViewOf, 0);
  EXPECT_FALSE(S.Steps[0].MayWriteInPlace);
  EXPECT_EQ(S.Steps[1].ViewOf, -1);
  EXPECT_TRUE(S.Steps[1].MayWriteInPlace);
}

// Conv x[1,3,8,8] * W[4,3,3,3], no padding: out [1,4,6,6] = 144 elements,
// each a dot product of 3*3*3 = 27 multiply-adds: 2*144*27 = 7776 FLOPs.
// Grouped, strided, padded: x[2,4,9,9] * V[6,2,3,3], group 2, stride 2,
// pads 1: out side (9+2-3)/2+1 = 5, [2,6,5,5] = 300 elements, each
// 2*3*3 = 18 multiply-adds: 2*300*18 = 10800 FLOPs.
TEST(OpTable, ConvFlopsByHand) {
  auto G = importModelText(
      R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[1,3,8,8] x, float[2,4,9,9] u) => (float[1,4,6,6] y, float[2,6,5,5] g) <)" +
          weights("float[4,3,3,3] W", 108) + ", " +
          weights("float[6,2,3,3] V", 108) + R"(> {
  y = Conv(x, W)
  g = Conv<group=2, strides=[2,2], pads=[1,1,1,1]>(u, V)
}
)",
      "t.onnxtxt");
  ASSERT_TRUE(!!G) << llvm::toString(G.takeError());
  auto Shapes = inferShapes(**G);
  ASSERT_TRUE(!!Shapes) << llvm::toString(Shapes.takeError());
  ConcreteDims Dims = evaluateDims(**G, *Shapes, {});
  EXPECT_EQ(nodeFlops(**G, Dims, 0), 7776.0);
  EXPECT_EQ(nodeFlops(**G, Dims, 1), 10800.0);
}
