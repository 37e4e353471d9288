//===- IncrementalShapesTest.cpp - the importer's prefix shape queries ----===//
//
// GraphBuilder::prefix and IncrementalShapeInference answer the importer's
// questions while it builds a graph. Both must give what a fresh
// snapshot() and inferShapes give, doing only the new nodes' work when the
// graph grew by appending, and all of it otherwise.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/IR/GraphBuilder.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {

NodeDesc node(const char *Op, std::vector<std::string> In,
              std::vector<std::string> Out) {
  NodeDesc N;
  N.OpType = Op;
  N.Inputs = std::move(In);
  N.Outputs = std::move(Out);
  return N;
}

GraphBuilder builder() {
  GraphBuilder B("m.onnx");
  ValueDesc X;
  X.Name = "x";
  X.Type = ElementType::Float;
  X.HasShape = true;
  X.Shape = {DeclaredDim::symbol(B.getOrAddSymbol("n")), DeclaredDim::fixed(4)};
  EXPECT_FALSE(static_cast<bool>(B.addInput(X)));
  return B;
}

/// "name:dims" for every value, with the dims as formulas.
std::string describe(const Graph &G, const ShapeInfo &S) {
  std::string Out;
  for (ValueId V = 0; V < G.Values.size(); ++V) {
    Out +=
        G.Values[V].Name + ":" + elementTypeName(S.Values[V].Type).str() + "[";
    for (const SymExpr &D : S.Values[V].Dims)
      Out += D.str(S.SymbolNames) + ",";
    Out += "] ";
  }
  return Out;
}

} // namespace

TEST(IncrementalShapes, PrefixGrowsLikeASnapshot) {
  GraphBuilder B = builder();
  B.addNode(node("Relu", {"x"}, {"a"}));
  auto P1 = B.prefix();
  ASSERT_TRUE(static_cast<bool>(P1));
  EXPECT_EQ((*P1)->Nodes.size(), 1u);
  B.addNode(node("Add", {"a", "x"}, {"b"}));
  B.addNode(node("Relu", {"b"}, {"c"}));
  auto P2 = B.prefix();
  ASSERT_TRUE(static_cast<bool>(P2));
  auto S = B.snapshot();
  ASSERT_TRUE(static_cast<bool>(S));
  const Graph &G = **P2, &Want = **S;
  ASSERT_EQ(G.Nodes.size(), Want.Nodes.size());
  ASSERT_EQ(G.Values.size(), Want.Values.size());
  for (ValueId V = 0; V < G.Values.size(); ++V) {
    EXPECT_EQ(G.Values[V].Name, Want.Values[V].Name);
    EXPECT_EQ(G.Values[V].Producer, Want.Values[V].Producer);
    EXPECT_EQ(G.Values[V].Users, Want.Values[V].Users);
  }
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    EXPECT_EQ(G.Nodes[N].Inputs, Want.Nodes[N].Inputs);
    EXPECT_EQ(G.Nodes[N].Outputs, Want.Nodes[N].Outputs);
  }
  // a is read by node 1; x by nodes 0 and 1.
  EXPECT_EQ(G.Values[G.findValue("a")].Users, std::vector<NodeId>{1});
  EXPECT_EQ(G.Values[G.findValue("x")].Users, (std::vector<NodeId>{0, 1}));
}

TEST(IncrementalShapes, OutOfOrderNodesAreOrderedAndErrorsReported) {
  GraphBuilder B = builder();
  B.addNode(node("Relu", {"x"}, {"a"}));
  ASSERT_TRUE(static_cast<bool>(B.prefix()));
  B.addNode(node("Relu", {"later"}, {"b"})); // reads a value made after it
  B.addNode(node("Relu", {"a"}, {"later"}));
  auto P = B.prefix();
  ASSERT_TRUE(static_cast<bool>(P));
  ASSERT_EQ((*P)->Nodes.size(), 3u);
  // Ordered as snapshot() orders: 'later' before its reader.
  EXPECT_EQ((*P)->Values[(*P)->Nodes[1].Outputs[0]].Name, "later");
  B.addNode(node("Relu", {"x"}, {"a"})); // 'a' again
  auto Bad = B.prefix();
  ASSERT_FALSE(static_cast<bool>(Bad));
  EXPECT_NE(llvm::toString(Bad.takeError()).find("already defined"),
            std::string::npos);
}

TEST(IncrementalShapes, InfersOnlyTheNewNodesAndAgreesWithAWholeRun) {
  GraphBuilder B = builder();
  B.addNode(node("Relu", {"x"}, {"a"}));
  B.addNode(node("Transpose", {"a"}, {"t"}));
  IncrementalShapeInference Inc;
  auto P1 = B.prefix();
  ASSERT_TRUE(static_cast<bool>(P1));
  auto S1 = Inc.infer(**P1);
  ASSERT_TRUE(static_cast<bool>(S1));
  EXPECT_EQ(Inc.lastNodesInferred(), 2u);
  B.addNode(node("MatMul", {"a", "t"}, {"m"})); // [n, 4] x [4, n]
  B.addNode(node("Shape", {"m"}, {"s"}));
  auto P2 = B.prefix();
  ASSERT_TRUE(static_cast<bool>(P2));
  auto S2 = Inc.infer(**P2);
  ASSERT_TRUE(static_cast<bool>(S2));
  EXPECT_EQ(Inc.lastNodesInferred(), 2u); // MatMul and Shape only
  auto Whole = inferShapes(**P2);
  ASSERT_TRUE(static_cast<bool>(Whole));
  EXPECT_EQ(describe(**P2, **S2), describe(**P2, *Whole));
  EXPECT_EQ(describe(**P2, **S2),
            "x:float[n,4,] a:float[n,4,] t:float[4,n,] m:float[n,n,] "
            "s:int64[2,] ");
  // Another graph is not an extension: all of it is inferred.
  GraphBuilder Other = builder();
  Other.addNode(node("Sigmoid", {"x"}, {"y"}));
  auto P3 = Other.prefix();
  ASSERT_TRUE(static_cast<bool>(P3));
  auto S3 = Inc.infer(**P3);
  ASSERT_TRUE(static_cast<bool>(S3));
  EXPECT_EQ(Inc.lastNodesInferred(), 1u);
  EXPECT_EQ(describe(**P3, **S3), "x:float[n,4,] y:float[n,4,] ");
}

TEST(IncrementalShapes, AFailedRunStartsOver) {
  GraphBuilder B = builder();
  ValueDesc Y;
  Y.Name = "y";
  Y.Type = ElementType::Float;
  Y.HasShape = true;
  Y.Shape = {DeclaredDim::fixed(2), DeclaredDim::fixed(3)};
  ASSERT_FALSE(static_cast<bool>(B.addInput(Y)));
  B.addNode(node("Relu", {"y"}, {"a"}));
  IncrementalShapeInference Inc;
  ASSERT_TRUE(static_cast<bool>(Inc.infer(**B.prefix())));
  B.addNode(node("MatMul", {"a", "a"}, {"bad"})); // [2, 3] x [2, 3]
  auto Bad = Inc.infer(**B.prefix());
  ASSERT_FALSE(static_cast<bool>(Bad));
  EXPECT_NE(llvm::toString(Bad.takeError()).find("MatMul"), std::string::npos);
  // The same prefix again fails again: nothing of the failed run is kept.
  auto Again = Inc.infer(**B.prefix());
  ASSERT_FALSE(static_cast<bool>(Again));
  llvm::consumeError(Again.takeError());
  EXPECT_EQ(Inc.lastNodesInferred(), 2u);
}
