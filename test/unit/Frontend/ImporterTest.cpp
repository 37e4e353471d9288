//===- ImporterTest.cpp - the ONNX frontend -------------------------------===//
#include "oomplan/Frontend/ONNXImporter.h"
#include "gtest/gtest.h"

using namespace oomplan;

static const char *Model = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[batch, seq, 8] x) => (float[batch, seq, 2, 4] y)
  <int64[3] shape = {0, 0, -1}, float[2] bias = {0.5, 1.5}>
{
  k = Constant <value = int64[2] {2, 4}> ()
  s = Shape(x)
  full = Concat <axis = 0> (shape, k)
  y = Reshape(x, full)
}
)";

TEST(Importer, TextModelKeepsSmallValuesAndSymbols) {
  auto G = importModelText(Model, "t.onnxtxt");
  ASSERT_TRUE(static_cast<bool>(G)) << llvm::toString(G.takeError());
  const Graph &Gr = **G;
  EXPECT_EQ(Gr.Symbols, (std::vector<std::string>{"batch", "seq"}));
  EXPECT_EQ(Gr.defaultOpset(), 17);
  ASSERT_EQ(Gr.Weights.size(), 2u);
  const Value &Shape = Gr.Values[Gr.findValue("shape")];
  EXPECT_EQ(Shape.Kind, ValueKind::Weight);
  ASSERT_TRUE(Shape.Data);
  EXPECT_EQ(Shape.Data->Ints, (std::vector<int64_t>{0, 0, -1}));
  const Value &Bias = Gr.Values[Gr.findValue("bias")];
  ASSERT_TRUE(Bias.Data);
  EXPECT_EQ(Bias.Data->Floats, (std::vector<double>{0.5, 1.5}));
  const Node &K = Gr.Nodes[0];
  EXPECT_EQ(K.OpType, "Constant");
  ASSERT_TRUE(K.attr("value"));
  EXPECT_EQ(K.attr("value")->T->Ints, (std::vector<int64_t>{2, 4}));
  const Node &Cat = Gr.Nodes[2];
  EXPECT_EQ(Cat.getInt("axis", -7), 0);
  const Value &X = Gr.Values[Gr.findValue("x")];
  ASSERT_EQ(X.Shape.size(), 3u);
  EXPECT_EQ(X.Shape[0].K, DeclaredDim::Kind::Symbol);
  EXPECT_EQ(X.Shape[2].Size, 8);
  const Value &Y = Gr.Values[Gr.findValue("y")];
  EXPECT_TRUE(Y.IsGraphOutput);
  EXPECT_EQ(Y.Type, ElementType::Float);
}

TEST(Importer, GarbageIsAnErrorNotACrash) {
  for (const char *Bytes : {"\x0f\xff\xfe\x07", "\x08", "hello world"}) {
    auto G = importModelBinary(Bytes, "bad.onnx");
    ASSERT_FALSE(static_cast<bool>(G));
    std::string E = llvm::toString(G.takeError());
    EXPECT_EQ(E.rfind("bad.onnx: ", 0), 0u) << E;
  }
  auto G = importModelBinary("", "empty.onnx");
  ASSERT_FALSE(static_cast<bool>(G));
  EXPECT_EQ(llvm::toString(G.takeError()),
            "empty.onnx: the file is empty, not an ONNX model");
}
