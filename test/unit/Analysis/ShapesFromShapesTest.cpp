//===- ShapesFromShapesTest.cpp - shape arithmetic of training exports ----===//
//
// Training exports (do_constant_folding=False) compute constants and pads
// in the graph: a Resize's scales as a Concat of Constants, F.pad's pads
// through Reshape [-1, 2] / Slice (step -1) / Transpose / Reshape, a rotary
// table sliced to seq and broadcast against seq. Each expected shape was
// worked out by hand.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {

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

TEST(ShapesFromShapesTest, ResizeScalesFromConcatOfConstants) {
  // scales = [1, 1] ++ [2, 2]: nearest upsampling by 2 of H and W.
  EXPECT_EQ(dimsOf("(float[b,3,5,7] x) => (float[n,c,h,w] y)",
                   "a = Constant <value = float[2] {1.0, 1.0}> ()\n"
                   "s = Constant <value = float[2] {2.0, 2.0}> ()\n"
                   "sc = Concat <axis = 0> (a, s)\n"
                   "y = Resize <mode = \"nearest\"> (x, , sc)",
                   "y"),
            "[b, 3, 10, 14]");
}

TEST(ShapesFromShapesTest, PadsThroughTwoDimSliceAndTranspose) {
  // F.pad(x, (0, 1, 0, 2)) as torch.onnx writes it: the pairs (last dim
  // first) padded with zeros to 8, reshaped to [4, 2], rows reversed, then
  // transposed and flattened: pads = [0, 0, 0, 0, 0, 0, 2, 1].
  EXPECT_EQ(
      dimsOf("(float[b,3,5,7] x) => (float[n,c,h,w] y)",
             "p = Constant <value = int64[4] {0, 1, 0, 2}> ()\n"
             "z = Constant <value = int64[4] {0, 0, 0, 0}> ()\n"
             "c = Concat <axis = 0> (p, z)\n"
             "s1 = Constant <value = int64[2] {-1, 2}> ()\n"
             "r = Reshape(c, s1)\n"
             "st = Constant <value = int64[1] {-1}> ()\n"
             "en = Constant <value = int64[1] {-9223372036854775807}> ()\n"
             "ax = Constant <value = int64[1] {0}> ()\n"
             "sp = Constant <value = int64[1] {-1}> ()\n"
             "sl = Slice(r, st, en, ax, sp)\n"
             "t = Transpose <perm = [1, 0]> (sl)\n"
             "s2 = Constant <value = int64[1] {-1}> ()\n"
             "pads = Reshape(t, s2)\n"
             "y = Pad(x, pads)",
             "y"),
      "[b, 3, 7, 8]");
}

TEST(ShapesFromShapesTest, SlicedTableBroadcastsToSeq) {
  // cos[:s] has min(s, 512) rows; broadcast against s rows it is s (a
  // broadcast of two different sizes would be invalid), so the Reshape
  // after it is an exact quotient: 8*b*s / (b*s) = 8.
  EXPECT_EQ(dimsOf("(float[b,s,8] x, float[512,8] cos) => (float[n,m] y)",
                   "st = Constant <value = int64[1] {0}> ()\n"
                   "sh = Shape(x)\n"
                   "i1 = Constant <value = int64[1] {1}> ()\n"
                   "en = Gather <axis = 0> (sh, i1)\n"
                   "c = Slice(cos, st, en, st)\n"
                   "m = Mul(x, c)\n"
                   "t = Constant <value = int64[2] {-1, 8}> ()\n"
                   "y = Reshape(m, t)",
                   "m"),
            "[b, s, 8]");
}

} // namespace
