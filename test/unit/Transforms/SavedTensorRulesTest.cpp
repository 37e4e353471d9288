//===- SavedTensorRulesTest.cpp - the saved-tensor table ------------------===//
//
// Training's reading of the op table's saved-tensor column: decided rows are
// found, Unknown and missing ops fall back; a few rows are checked against
// PyTorch's formulas they claim to follow.
//
//===----------------------------------------------------------------------===//
#include "SavedTensorRules.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "gtest/gtest.h"

using namespace oomplan::training;

TEST(SavedTensorRules, FindsEveryRowAndNothingElse) {
  EXPECT_GT(numSavedRules(), 60u);
  for (const char *Op : {"Abs", "Conv", "Dropout", "MatMul", "Relu", "Where"})
    EXPECT_NE(findSavedRule(Op), nullptr) << Op;
  EXPECT_EQ(findSavedRule("FlyingCarpet"), nullptr);
  EXPECT_EQ(findSavedRule(""), nullptr);
  EXPECT_EQ(fallbackSavedRule().SaveAlways, AllInputs);
}

TEST(SavedTensorRules, RowsFollowPyTorch) {
  // ReLU and Softmax keep their result, not their input.
  EXPECT_EQ(findSavedRule("Relu")->SaveOutputs, bit(0));
  EXPECT_EQ(findSavedRule("Relu")->SaveAlways, 0u);
  EXPECT_EQ(findSavedRule("Softmax")->SaveOutputs, bit(0));
  // Products keep an operand only for the other's gradient.
  EXPECT_EQ(findSavedRule("MatMul")->SaveIfPartnerGrad, bit(0) | bit(1));
  EXPECT_EQ(findSavedRule("Mul")->SaveAlways, 0u);
  // Add keeps nothing; its gradient is the incoming one.
  EXPECT_EQ(findSavedRule("Add")->SaveAlways, 0u);
  EXPECT_EQ(findSavedRule("Add")->GradViewInputs, bit(0) | bit(1));
  // Norms keep the input and statistics; running stats get no gradient.
  EXPECT_EQ(findSavedRule("BatchNormalization")->Aux, AuxKind::BatchNormStats);
  EXPECT_EQ(findSavedRule("BatchNormalization")->DiffInputs & bit(3), 0u);
  EXPECT_EQ(findSavedRule("LayerNormalization")->Aux, AuxKind::NormStats);
  EXPECT_EQ(findSavedRule("Dropout")->Aux, AuxKind::DropoutMask);
  EXPECT_EQ(findSavedRule("MaxPool")->Aux, AuxKind::PoolIndices);
  // Shape computations carry no gradient.
  EXPECT_EQ(findSavedRule("Shape")->DiffInputs, 0u);
}

namespace {
struct Parsed {
  std::unique_ptr<oomplan::Graph> G;
  oomplan::ShapeInfo Shapes;
};
Parsed parse(const std::string &Text) {
  Parsed P;
  auto G = oomplan::importModelText(Text, "rules.onnxtxt");
  EXPECT_TRUE(bool(G)) << llvm::toString(G.takeError());
  P.G = std::move(*G);
  auto S = oomplan::inferShapes(*P.G);
  EXPECT_TRUE(bool(S)) << llvm::toString(S.takeError());
  P.Shapes = std::move(*S);
  return P;
}
} // namespace

// By hand: X is [T=5, N=3, I=4] (60 floats, 240 bytes, from a Transpose as
// PyTorch's batch_first export makes it), H = 8, two directions. States:
// 7 x 2 x 15 steps x 8 x 4 bytes = 6720; gate gradients 4 x 2 x 15 x 8 x 4
// = 3840; one extra copy of X (the other direction's) = 240. A tanh RNN keeps
// one hidden state a step: 1 x 2 x 15 x 8 x 4 = 960.
TEST(SavedTensorRules, RecurrentStatesByHand) {
  std::string Model = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,5,4] x, float[2,32,4] W, float[2,32,8] R, float[2,8,4] Wr, float[2,8,8] Rr) => (float[5,2,3,8] y, float[5,2,3,8] yr) {
  xt = Transpose<perm = [1, 0, 2]>(x)
  y, h, c = LSTM<hidden_size = 8, direction = "bidirectional">(xt, W, R)
  yr, hr = RNN<hidden_size = 8, direction = "bidirectional">(xt, Wr, Rr)
}
)";
  Parsed P = parse(Model);
  const oomplan::Node &L = P.G->Nodes[1], &N = P.G->Nodes[2];
  ASSERT_EQ(L.OpType, "LSTM");
  RecurrentSaved S = recurrentSaved(L, P.Shapes, 60, 240, "Transpose");
  EXPECT_EQ(S.StateBytes, 6720u);
  EXPECT_EQ(S.GateBytes, 3840u);
  EXPECT_EQ(S.InputCopyBytes, 240u);
  EXPECT_EQ(S.Directions, 2u);
  EXPECT_EQ(S.StepOutputBytes, 480u); // 15 steps x 8 x 4 B, one direction
  // A time-major X that no Transpose wrote: both directions read it as is.
  EXPECT_EQ(recurrentSaved(L, P.Shapes, 60, 240, "").InputCopyBytes, 0u);
  ASSERT_EQ(N.OpType, "RNN");
  EXPECT_EQ(recurrentSaved(N, P.Shapes, 60, 240, "Transpose").StateBytes, 960u);
}

// By hand: W is [Cout=8, 16, 3, 3, 3] (13,824 bytes); Y is [2, 8, 2, 4, 4]
// (2,048 bytes: 32 positions a sample). im2col of a sample = 16 x 27 x 32 x
// 4 = 55,296 bytes. Depth 2 under a kernel of depth 3 at batch 2: two of
// them and 8 x the weight = 221,184; at batch 1 one im2col; depth 3 or a
// 2-D conv: nothing.
TEST(SavedTensorRules, ShallowConv3DByHand) {
  std::string Model = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[B,16,D,4,4] x, float[8,16,3,3,3] w, float[2,16,4,4] x2, float[8,16,3,3] w2) => (float[B,8,D,4,4] y, float[2,8,4,4] y2) {
  y = Conv<pads = [1, 1, 1, 1, 1, 1]>(x, w)
  y2 = Conv<pads = [1, 1, 1, 1]>(x2, w2)
}
)";
  Parsed P = parse(Model);
  const oomplan::Node &C = P.G->Nodes[0];
  auto At = [&](int64_t B, int64_t D) {
    std::vector<std::optional<int64_t>> Bind(P.Shapes.SymbolNames.size());
    for (size_t I = 0; I < Bind.size(); ++I)
      Bind[I] = P.Shapes.SymbolNames[I] == "B" ? B : D;
    uint64_t OutBytes = uint64_t(B) * 8 * D * 16 * 4;
    return shallowConv3DScratch(C, P.Shapes, Bind, 13824, OutBytes, 4);
  };
  EXPECT_EQ(At(2, 2), 221184u);
  EXPECT_EQ(At(1, 2), 55296u);
  EXPECT_EQ(At(2, 3), 0u);
  EXPECT_EQ(shallowConv3DScratch(P.G->Nodes[1], P.Shapes, {}, 4608, 1024, 4),
            0u);
  // Unbound depth: the costly case (never too little).
  EXPECT_GT(shallowConv3DScratch(C, P.Shapes, {}, 13824, 4096, 4), 0u);
  // Held in 16 bits (mixed precision): the same positions, half the bytes
  // of output and weight, so half the im2col: 27,648 x 2 + 8 x 6,912.
  std::vector<std::optional<int64_t>> Bind(P.Shapes.SymbolNames.size(), 2);
  EXPECT_EQ(shallowConv3DScratch(C, P.Shapes, Bind, 6912, 1024, 2), 110592u);
}
