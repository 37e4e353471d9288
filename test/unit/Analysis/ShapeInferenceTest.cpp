//===- ShapeInferenceTest.cpp - shape rules on small text models ----------===//
//
// Each case is a tiny ONNX text model whose output dims were worked out by
// hand; the helper prints "[d0, d1, ...]" for one value.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {

/// Dims of value Name after inference of Body (a graph in ONNX text), or the
/// error message.
std::string dimsOf(const std::string &Sig, const std::string &Body,
                   const std::string &Name) {
  std::string Text = "<ir_version: 8, opset_import: [\"\" : 17]>\ng " + Sig +
                     " {\n" + Body + "\n}\n";
  auto G = importModelText(Text, "test.onnxtxt");
  if (!G)
    return "import error: " + llvm::toString(G.takeError());
  auto S = inferShapes(**G);
  if (!S)
    return llvm::toString(S.takeError());
  const ValueShape &V = S->Values[(*G)->findValue(Name)];
  std::string Out = "[";
  for (size_t I = 0; I < V.Dims.size(); ++I)
    Out += (I ? ", " : "") + V.Dims[I].str(S->SymbolNames);
  return Out + "]";
}

TEST(ShapeInferenceTest, ReshapeZeroAndMinusOne) {
  // 0 copies the input dim; -1 takes the rest: 6*b*s / (b*2) = 3*s.
  EXPECT_EQ(dimsOf("(float[b,s,6] x) => (float[b,2,n] y)",
                   "t = Constant <value = int64[3] {0, 2, -1}> ()\n"
                   "y = Reshape(x, t)",
                   "y"),
            "[b, 2, 3*s]");
  // allowzero: 0 is a real zero-sized dim.
  EXPECT_EQ(dimsOf("(float[b,6] x) => (float[n,m] y)",
                   "t = Constant <value = int64[2] {0, 6}> ()\n"
                   "y = Reshape <allowzero = 1> (x, t)",
                   "y"),
            "[0, 6]");
}

TEST(ShapeInferenceTest, GemmAndMatMul) {
  EXPECT_EQ(dimsOf("(float[k,b] a, float[n,k] w) => (float[b,n] y)",
                   "y = Gemm <transA = 1, transB = 1> (a, w)", "y"),
            "[b, n]");
  // Batch dims broadcast; a 1-D right operand drops its axis.
  EXPECT_EQ(
      dimsOf("(float[b,1,s,64] a, float[12,64,s] w) => (float[b,12,s,s] y)",
             "y = MatMul(a, w)", "y"),
      "[b, 12, s, s]");
  EXPECT_EQ(dimsOf("(float[b,s,64] a, float[64] v) => (float[b,s] y)",
                   "y = MatMul(a, v)", "y"),
            "[b, s]");
  EXPECT_EQ(dimsOf("(float[b,3] a, float[4,5] w) => (float[b,5] y)",
                   "y = MatMul(a, w)", "y"),
            "test.onnxtxt: node #0 (MatMul): inner dims differ: 3 and 4");
}

TEST(ShapeInferenceTest, ConvAutoPad) {
  // SAME_LOWER: ceil(h/2); VALID with a 3-wide kernel: ceil((h-2)/2), which
  // is floor((h-1)/2) and canonically floor((h+1)/2) - 1.
  EXPECT_EQ(
      dimsOf("(float[1,3,h,10] x, float[4,3,3,3] w) => (float[1,4,p,q] y)",
             "y = Conv <auto_pad = \"SAME_LOWER\", strides = [2, 2]> (x, w)",
             "y"),
      "[1, 4, floor((h + 1)/2), 5]");
  EXPECT_EQ(
      dimsOf("(float[1,3,h,10] x, float[4,3,3,3] w) => (float[1,4,p,q] y)",
             "y = Conv <auto_pad = \"VALID\", strides = [2, 2]> (x, w)", "y"),
      "[1, 4, floor((h + 1)/2) - 1, 4]");
}

TEST(ShapeInferenceTest, ReduceAndArgMax) {
  EXPECT_EQ(dimsOf("(float[b,s,8] x) => (float[b,8] y)",
                   "a = Constant <value = int64[1] {-2}> ()\n"
                   "y = ReduceSum <keepdims = 0> (x, a)",
                   "y"),
            "[b, 8]");
  EXPECT_EQ(dimsOf("(float[b,s,8] x) => (int64[b,s,1] y)",
                   "y = ArgMax <axis = -1> (x)", "y"),
            "[b, s, 1]");
}

TEST(ShapeInferenceTest, UnnamedInputDimGetsItsOwnSymbol) {
  EXPECT_EQ(dimsOf("(float[?,4] x) => (float[?,4] y)", "y = Relu(x)", "y"),
            "[unk_x_0, 4]");
}

TEST(ShapeInferenceTest, ReshapeTargetFromDataIsAnError) {
  // The target comes from a float tensor's contents: not a shape value.
  EXPECT_EQ(dimsOf("(float[b,4] x, int64[2] t) => (float[n,m] y)",
                   "y = Reshape(x, t)", "y"),
            "test.onnxtxt: node #0 (Reshape): the target shape is computed "
            "from data this analysis cannot follow");
}

TEST(ShapeInferenceTest, BytesRoundUpAndUseTheElementWidth) {
  EXPECT_EQ(tensorBytes(ElementType::Float16,
                        {SymExpr::symbol(0), SymExpr::constant(3)})
                .str({"b"}),
            "6*b");
  EXPECT_EQ(tensorBytes(ElementType::Bool, {}).str({}), "1");
}

} // namespace
