//===- GraphBuilderTest.cpp - graph checks and ordering -------------------===//
#include "oomplan/IR/GraphBuilder.h"
#include "gtest/gtest.h"

using namespace oomplan;

static NodeDesc node(const char *Op, std::vector<std::string> In,
                     std::vector<std::string> Out) {
  NodeDesc N;
  N.OpType = Op;
  N.Inputs = std::move(In);
  N.Outputs = std::move(Out);
  return N;
}

static std::string errorOf(GraphBuilder &B) {
  auto G = B.finish();
  if (G)
    return "";
  return llvm::toString(G.takeError());
}

TEST(GraphBuilder, ReordersIntoTopologicalOrderKeepingFileOrder) {
  GraphBuilder B("m.onnx");
  ValueDesc X;
  X.Name = "x";
  ASSERT_FALSE(static_cast<bool>(B.addInput(X)));
  B.addNode(node("Relu", {"b"}, {"c"})); // needs b, defined later
  B.addNode(node("Relu", {"x"}, {"a"}));
  B.addNode(node("Relu", {"a"}, {"b"}));
  ValueDesc C;
  C.Name = "c";
  B.addOutput(C);
  auto G = B.finish();
  ASSERT_TRUE(static_cast<bool>(G));
  ASSERT_EQ((*G)->Nodes.size(), 3u);
  EXPECT_EQ((*G)->Values[(*G)->Nodes[0].Outputs[0]].Name, "a");
  EXPECT_EQ((*G)->Values[(*G)->Nodes[1].Outputs[0]].Name, "b");
  EXPECT_EQ((*G)->Values[(*G)->Nodes[2].Outputs[0]].Name, "c");
  ValueId A = (*G)->findValue("a");
  EXPECT_EQ((*G)->Values[A].Producer, 0u);
  EXPECT_EQ((*G)->Values[A].Users, std::vector<NodeId>{1});
  EXPECT_TRUE((*G)->Values[(*G)->findValue("c")].IsGraphOutput);
}

TEST(GraphBuilder, RejectsUndefinedDuplicateAndCycle) {
  {
    GraphBuilder B("m.onnx");
    B.addNode(node("Relu", {"nope"}, {"y"}));
    EXPECT_EQ(errorOf(B), "m.onnx: node #0 (Relu): input 'nope' is not "
                          "defined by any node, graph input or initializer");
  }
  {
    GraphBuilder B("m.onnx");
    ValueDesc X;
    X.Name = "x";
    ASSERT_FALSE(static_cast<bool>(B.addInput(X)));
    B.addNode(node("Relu", {"x"}, {"y"}));
    B.addNode(node("Tanh", {"x"}, {"y"}));
    EXPECT_EQ(errorOf(B), "m.onnx: node #1 (Tanh): value 'y' is already "
                          "defined by node #0 (Relu)");
  }
  {
    GraphBuilder B("m.onnx");
    B.addNode(node("Relu", {"b"}, {"a"}));
    B.addNode(node("Relu", {"a"}, {"b"}));
    std::string E = errorOf(B);
    EXPECT_NE(E.find("the graph has a cycle through this node"),
              std::string::npos)
        << E;
  }
}

TEST(GraphBuilder, InitializerShadowsInputAndSymbolsAreInterned) {
  GraphBuilder B("m.onnx");
  EXPECT_EQ(B.getOrAddSymbol("batch"), 0u);
  EXPECT_EQ(B.getOrAddSymbol("seq"), 1u);
  EXPECT_EQ(B.getOrAddSymbol("batch"), 0u);
  ValueDesc W;
  W.Name = "w";
  ASSERT_FALSE(static_cast<bool>(B.addInput(W)));
  ASSERT_FALSE(static_cast<bool>(B.addWeight(W, nullptr, "")));
  auto G = B.finish();
  ASSERT_TRUE(static_cast<bool>(G));
  EXPECT_TRUE((*G)->Inputs.empty());
  EXPECT_EQ((*G)->Weights.size(), 1u);
  EXPECT_EQ((*G)->Symbols, (std::vector<std::string>{"batch", "seq"}));
}

// A guarded node (a flattened If's branch) waits for its condition as for
// an input: a Constant with no inputs is ordered after the node that makes
// the condition, the condition's users include it, and the default
// schedule lists the condition after the node's inputs.
TEST(GraphBuilder, GuardsOrderNodesAfterTheirConditions) {
  GraphBuilder B("m.onnx");
  ValueDesc X;
  X.Name = "x";
  ASSERT_FALSE(static_cast<bool>(B.addInput(X)));
  NodeDesc K = node("Constant", {}, {"k"});
  K.Guards = {{"c", true}};
  B.addNode(K); // first in the file, but guarded by c
  B.addNode(node("IsNaN", {"x"}, {"c"}));
  NodeDesc Missing = node("Relu", {"x"}, {"r"});
  ValueDesc KOut;
  KOut.Name = "k";
  B.addOutput(KOut);
  auto G = B.finish();
  ASSERT_TRUE(static_cast<bool>(G)) << llvm::toString(G.takeError());
  ASSERT_EQ((*G)->Nodes.size(), 2u);
  EXPECT_EQ((*G)->Nodes[0].OpType, "IsNaN");
  EXPECT_EQ((*G)->Nodes[1].OpType, "Constant");
  ValueId C = (*G)->findValue("c");
  ASSERT_EQ((*G)->Nodes[1].Guards.size(), 1u);
  EXPECT_EQ((*G)->Nodes[1].Guards[0].Cond, C);
  EXPECT_TRUE((*G)->Nodes[1].Guards[0].WhenTrue);
  EXPECT_EQ((*G)->Values[C].Users, std::vector<NodeId>{1});
  EXPECT_EQ((*G)->Nodes[1].reads(), std::vector<ValueId>{C});

  GraphBuilder B2("m.onnx");
  ASSERT_FALSE(static_cast<bool>(B2.addInput(X)));
  Missing.Guards = {{"nope", false}};
  B2.addNode(Missing);
  EXPECT_EQ(errorOf(B2), "m.onnx: node #0 (Relu): condition 'nope' is not "
                         "defined by any node, graph input or initializer");
}
