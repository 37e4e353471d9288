//===- FusionTest.cpp - the fusion transform's pattern matching -----------===//
//
// Positive cases in the exporters' spellings (nn.MultiheadAttention's
// pre-scaled Q and (1,2,0) transpose, a Where mask with Dropout, SiLU and
// GELU's tanh form as epilogues) and negative ones (an intermediate with a
// second reader, a softmax over another axis). Each checks the fused node's
// inputs and attributes, which the kernels rely on.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Transforms/Fusion.h"
#include "TestExpected.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/IR/FusedOps.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {
struct Fused {
  std::unique_ptr<Graph> In;
  FusedGraph Out;
  const Graph &g() const { return Out.G ? *Out.G : *In; }
  const Node *find(llvm::StringRef Op) const {
    for (const Node &N : g().Nodes)
      if (N.OpType == Op)
        return &N;
    return nullptr;
  }
  std::string input(const Node &N, size_t I) const {
    return N.input(I) == NoId ? "" : g().Values[N.input(I)].Name;
  }
};

Fused fuse(llvm::StringRef Text) {
  Fused F;
  auto G = importModelText(Text, "test.onnxtxt");
  test::stopOnError(G, "import");
  F.In = std::move(*G);
  auto S = inferShapes(*F.In);
  test::stopOnError(S, "shapes");
  auto R = fuseGraph(*F.In, *S, FusionOptions());
  test::stopOnError(R, "fuse");
  F.Out = std::move(*R);
  if (F.Out.G) { // the fused graph must infer too (re-inference)
    auto S2 = inferShapes(*F.Out.G);
    test::stopOnError(S2, "shapes of the fused graph");
  }
  return F;
}

// nn.MultiheadAttention as torch.onnx 1.13 writes it: Q / sqrt(d), K^T by a
// (1,2,0) transpose of [S, B*H, D], baddbmm's Mul by 1 and Add of the mask.
const char *MHA = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[S,B,8] q, float[S,B,8] k, float[B,S,8] v, float[S,S] bias) => (float[B,S,8] y) {
  c = Constant <value = float {2.0}> ()
  one = Constant <value = float {1.0}> ()
  qt = Transpose <perm = [1, 0, 2]> (q)
  qs = Div(qt, c)
  kt = Transpose <perm = [1, 2, 0]> (k)
  s = MatMul(qs, kt)
  s1 = Mul(s, one)
  m = Add(s1, bias)
  p = Softmax <axis = -1> (m)
  y = MatMul(p, v)
})";

TEST(FusionTest, MultiheadAttentionExport) {
  Fused F = fuse(MHA);
  EXPECT_EQ(F.Out.Stats.Attention, 1u);
  const Node *A = F.find(fused::AttentionOp);
  ASSERT_NE(A, nullptr);
  EXPECT_EQ(F.input(*A, 0), "qt"); // the Div folded into the scale
  EXPECT_EQ(F.input(*A, 1), "kt"); // not a swap of the last two axes
  EXPECT_EQ(F.input(*A, 2), "v");
  EXPECT_EQ(F.input(*A, 3), "bias");
  EXPECT_EQ(A->getInt("k_transposed", -1), 1);
  EXPECT_DOUBLE_EQ(A->getFloat("scale", 0), 0.5);
  EXPECT_EQ(F.find("Softmax"), nullptr);
  EXPECT_EQ(F.g().findValue("s"), NoId); // the scores are gone
}

const char *WhereMask = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[B,2,S,4] q, float[B,2,S,4] k, float[B,2,S,4] v, bool[1,1,S,S] mask) => (float[B,2,S,4] y) {
  c = Constant <value = float {8.0}> ()
  fill = Constant <value = float {-10000.0}> ()
  kt = Transpose <perm = [0, 1, 3, 2]> (k)
  s = MatMul(q, kt)
  sd = Div(s, c)
  w = Where(mask, fill, sd)
  p = Softmax <axis = 3> (w)
  pd = Dropout(p)
  y = MatMul(pd, v)
})";

TEST(FusionTest, WhereMaskAndDropout) {
  Fused F = fuse(WhereMask);
  const Node *A = F.find(fused::AttentionOp);
  ASSERT_NE(A, nullptr);
  EXPECT_EQ(F.input(*A, 1), "k"); // the last-two-axes swap folded
  EXPECT_EQ(A->getInt("k_transposed", -1), 0);
  EXPECT_EQ(F.input(*A, 3), ""); // no bias
  EXPECT_EQ(F.input(*A, 4), "mask");
  EXPECT_DOUBLE_EQ(A->getFloat("scale", 0), 0.125);
  EXPECT_DOUBLE_EQ(A->getFloat("mask_fill", 0), -10000.0);
  EXPECT_EQ(A->getInt("mask_fill_where", -1), 1); // true -> fill
  EXPECT_EQ(F.find("Dropout"), nullptr);
}

TEST(FusionTest, ScoresWithASecondReaderStay) {
  std::string Text = WhereMask;
  // sd also feeds a ReduceMax that is a graph output.
  Text.replace(Text.find("=> (float[B,2,S,4] y)"), 21,
               "=> (float[B,2,S,4] y, float[B,2,S,1] mx)");
  Text.replace(Text.rfind('}'), 1, "  mx = ReduceMax <axes = [3]> (sd)\n}");
  Fused F = fuse(Text);
  EXPECT_EQ(F.Out.Stats.Attention, 0u);
  EXPECT_NE(F.find("Softmax"), nullptr);
}

TEST(FusionTest, SoftmaxOverAnotherAxisStays) {
  std::string Text = WhereMask;
  Text.replace(Text.find("axis = 3"), 8, "axis = 2");
  Fused F = fuse(Text);
  EXPECT_EQ(F.Out.Stats.Attention, 0u);
}

const char *Epilogues = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,8] x, float[8,8] w, float[8] b) => (float[N,8] y1, float[N,8] y2) {
  three = Constant <value = float {3.0}> ()
  k1 = Constant <value = float {0.044715}> ()
  k2 = Constant <value = float {0.7978845608}> ()
  one = Constant <value = float {1.0}> ()
  half = Constant <value = float {0.5}> ()
  h = MatMul(x, w)
  sg = Sigmoid(h)
  y1 = Mul(h, sg)
  g0 = MatMul(x, w)
  g1 = Add(g0, b)
  p3 = Pow(g1, three)
  t1 = Mul(p3, k1)
  t2 = Add(g1, t1)
  t3 = Mul(t2, k2)
  t4 = Tanh(t3)
  t5 = Add(t4, one)
  t6 = Mul(g1, half)
  y2 = Mul(t6, t5)
})";

TEST(FusionTest, SiLUAndTanhGeluEpilogues) {
  Fused F = fuse(Epilogues);
  EXPECT_EQ(F.Out.Stats.MatMul, 2u);
  std::vector<std::string> Acts;
  for (const Node &N : F.g().Nodes)
    if (N.OpType == fused::MatMulOp)
      Acts.push_back(N.getString("activation", "?") + ":" +
                     std::to_string(N.Inputs.size()));
  EXPECT_EQ(Acts, (std::vector<std::string>{"SiLU:2", "GeluTanh:3"}));
  EXPECT_EQ(F.g().Nodes.size(), 2u); // the Constants went too
}

TEST(FusionTest, ActivationInputWithASecondReaderStays) {
  std::string Text = Epilogues;
  // h is also returned: the SiLU cannot consume it.
  Text.replace(Text.find("float[N,8] y2)"), 14, "float[N,8] y2, float[N,8] h)");
  Fused F = fuse(Text);
  EXPECT_EQ(F.Out.Stats.MatMul, 1u); // only the GELU one
}

const char *ConvResidual = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N,4,8,8] x, float[4,4,1,1] w, float[N,4,8,8] r) => (float[N,4,8,8] y) {
  lo = Constant <value = float {0.0}> ()
  hi = Constant <value = float {6.0}> ()
  c = Conv(x, w)
  s = Add(r, c)
  y = Clip(s, lo, hi)
})";

TEST(FusionTest, ConvResidualClip) {
  Fused F = fuse(ConvResidual);
  const Node *C = F.find(fused::ConvOp);
  ASSERT_NE(C, nullptr);
  EXPECT_EQ(F.input(*C, 2), ""); // no conv bias
  EXPECT_EQ(F.input(*C, 3), "r");
  EXPECT_EQ(C->getString("activation", "?"), "Clip");
  EXPECT_DOUBLE_EQ(C->getFloat("activation_max", 0), 6.0);
  EXPECT_EQ(F.Out.Stats.ConvResidual, 1u);
}
} // namespace
