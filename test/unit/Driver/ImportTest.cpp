//===- ImportTest.cpp - the importer asks the shape pass for dims ---------===//
//
// SplitToSequence without a split makes as many tensors as its input's dim.
// When that input is computed (here h = x @ w, [batch, 4]), only the shape
// pass knows the 4: the frontend alone refuses the node, and with the
// driver's oracle (driver::importOptions) the import unrolls it. When the
// shapes before the node do not infer, the refusal says why.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Driver/Import.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {

const char *Split = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[batch,3] x) => (float[?,1] cat) <float[3,4] w = {1,0,0,1,0,1,0,1,0,0,1,1}> {
  h = MatMul(x, w)
  seq = SplitToSequence<axis = 1>(h)
  cat = ConcatFromSequence<axis = 0>(seq)
})";

size_t count(const Graph &G, llvm::StringRef Op) {
  size_t N = 0;
  for (const Node &Nd : G.Nodes)
    N += Nd.OpType == Op;
  return N;
}

TEST(ImportDims, SplitOfAComputedValueNeedsTheOracle) {
  auto Alone = importModelText(Split, "split.onnxtxt");
  ASSERT_FALSE(bool(Alone));
  EXPECT_NE(llvm::toString(Alone.takeError())
                .find("SplitToSequence without a constant 1-D 'split' makes "
                      "as many tensors as the input's dim, which is not a "
                      "constant when importing"),
            std::string::npos);
  auto G = importModelText(Split, "split.onnxtxt", driver::importOptions());
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  // One Split into the 4 pieces, one Concat of them.
  ASSERT_EQ(count(**G, "Split"), 1u);
  for (const Node &Nd : (*G)->Nodes) {
    if (Nd.OpType == "Split") {
      EXPECT_EQ(Nd.Outputs.size(), 4u);
    }
  }
  EXPECT_EQ(count(**G, "Concat"), 1u);
}

TEST(ImportDims, ARefusalQuotesThePrefixsShapeError) {
  // w is [2, 4]: the MatMul before the split cannot infer.
  const char *Bad = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[batch,3] x) => (float[?,1] cat) <float[2,4] w = {1,0,0,1,0,1,0,1}> {
  h = MatMul(x, w)
  seq = SplitToSequence<axis = 1>(h)
  cat = ConcatFromSequence<axis = 0>(seq)
})";
  auto G = importModelText(Bad, "bad.onnxtxt", driver::importOptions());
  ASSERT_FALSE(bool(G));
  std::string Msg = llvm::toString(G.takeError());
  EXPECT_NE(Msg.find("(the shapes of the graph before it do not infer: "),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("(MatMul)"), std::string::npos) << Msg;
  EXPECT_EQ(Msg.find("bad.onnxtxt"), 0u) << Msg;
  EXPECT_EQ(Msg.find("bad.onnxtxt", 1), std::string::npos)
      << "the file is named once: " << Msg;
}

// A Loop whose trip count is Gather(Shape(h), 1) on the computed h: the
// Shape is evaluated only when the Loop asks (a deferred recipe), with
// its symbolic batch dim unknown and dim 1 known.
TEST(ImportDims, TripCountFromTheShapeOfAComputedValue) {
  const char *Loop = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[batch,3] x) => (float c) <float[3,4] w = {1,0,0,1,0,1,0,1,0,0,1,1}> {
  h = MatMul(x, w)
  sh = Shape(h)
  one = Constant<value = int64 {1}>()
  m = Gather(sh, one)
  t = Constant<value = bool {1}>()
  c0 = Constant<value = float {0}>()
  c = Loop(m, t, c0) <
    body = b (int64 i, bool ci, float cc) => (bool co, float cn) {
      co = Identity(ci)
      inc = Constant<value = float {1}>()
      cn = Add(cc, inc)
    }
  >
})";
  auto Alone = importModelText(Loop, "loop.onnxtxt");
  ASSERT_FALSE(bool(Alone)) << "the frontend alone cannot know the count";
  llvm::consumeError(Alone.takeError());
  auto G = importModelText(Loop, "loop.onnxtxt", driver::importOptions());
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  EXPECT_EQ(count(**G, "Add"), 4u) << "four iterations";
  // Batch 0 (Gather index 0) is a symbol: that trip count stays unknown.
  std::string Sym = Loop;
  Sym.replace(Sym.find("int64 {1}"), 9, "int64 {0}");
  auto S = importModelText(Sym, "loop0.onnxtxt", driver::importOptions());
  ASSERT_FALSE(bool(S));
  EXPECT_NE(llvm::toString(S.takeError())
                .find("its trip count 'm' is not a "
                      "constant when importing"),
            std::string::npos);
}

// The recipes a count needs are evaluated with a stack of their own: a
// chain of 50,000 Identities between the Shape and the trip count (a
// crafted model) imports without exhausting the call stack.
TEST(ImportDims, ALongChainOfRecipesIsNotRecursion) {
  std::string Text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[batch,3] x) => (float c) <float[3,4] w = {1,0,0,1,0,1,0,1,0,0,1,1}> {
  h = MatMul(x, w)
  sh = Shape(h)
  one = Constant<value = int64 {1}>()
  m0 = Gather(sh, one)
)";
  const int N = 50000;
  for (int I = 1; I <= N; ++I)
    Text += "  m" + std::to_string(I) + " = Identity(m" +
            std::to_string(I - 1) + ")\n";
  Text += "  t = Constant<value = bool {1}>()\n"
          "  c0 = Constant<value = float {0}>()\n"
          "  c = Loop(m" +
          std::to_string(N) + R"(, t, c0) <
    body = b (int64 i, bool ci, float cc) => (bool co, float cn) {
      co = Identity(ci)
      inc = Constant<value = float {1}>()
      cn = Add(cc, inc)
    }
  >
})";
  auto G = importModelText(Text, "chain.onnxtxt", driver::importOptions());
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  EXPECT_EQ(count(**G, "Add"), 4u) << "four iterations";
}

} // namespace
