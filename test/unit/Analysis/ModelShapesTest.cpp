//===- ModelShapesTest.cpp - shapes of the real exported models -----------===//
//
// The bar from ARCHITECTURE.md §2: every value of the four exported models
// (eval and training exports) gets dims that are formulas of batch and seq,
// with no unknowns, no upper bounds and no created symbols.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {

struct ModelCase {
  const char *File;
  const char *Output;      ///< A graph output to check.
  const char *OutputShape; ///< Its expected dims.
  const char *OutputBytes; ///< Its expected bytes formula.
};

class ModelShapesTest : public ::testing::TestWithParam<ModelCase> {};

std::string dims(const ValueShape &V, const ShapeInfo &S) {
  std::string Out = "[";
  for (size_t I = 0; I < V.Dims.size(); ++I)
    Out += (I ? ", " : "") + V.Dims[I].str(S.SymbolNames);
  return Out + "]";
}

TEST_P(ModelShapesTest, EveryValueIsAFormulaOfTheModelSymbols) {
  const ModelCase &C = GetParam();
  std::string Path = std::string(OOMPLAN_TEST_MODELS_DIR) + "/" + C.File;
  auto G = importModelFile(Path);
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  auto S = inferShapes(**G);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  size_t Resolved = 0, Total = 0;
  for (ValueId Id = 0; Id < (*G)->Values.size(); ++Id) {
    const ValueShape &V = S->Values[Id];
    ++Total;
    bool Ok = V.Known && !V.UpperBound && !V.Bytes.isPoisoned();
    for (const SymExpr &D : V.Dims) {
      llvm::SmallVector<SymbolId, 4> Syms;
      D.collectSymbols(Syms);
      for (SymbolId Sym : Syms)
        Ok &= Sym < (*G)->Symbols.size();
      Ok &= !D.isPoisoned() && D.isKnownNonNegative();
    }
    Resolved += Ok;
    EXPECT_TRUE(Ok) << (*G)->Values[Id].Name << ": " << dims(V, *S);
  }
  EXPECT_TRUE(S->Warnings.empty()) << S->Warnings.front();
  std::printf("[ shapes   ] %s: %zu/%zu values resolved\n", C.File, Resolved,
              Total);
  ValueId Out = (*G)->findValue(C.Output);
  ASSERT_NE(Out, NoId);
  EXPECT_EQ(dims(S->Values[Out], *S), C.OutputShape);
  EXPECT_EQ(S->Values[Out].Bytes.str(S->SymbolNames), C.OutputBytes);
}

const ModelCase Cases[] = {
    {"resnet50.onnx", "output", "[batch, 1000]", "4000*batch"},
    {"mobilenet_v2.onnx", "output", "[batch, 1000]", "4000*batch"},
    {"bert_like.onnx", "last_hidden_state", "[batch, seq, 768]",
     "3072*batch*seq"},
    {"gpt_like.onnx", "logits", "[batch, seq, 50257]", "201028*batch*seq"},
    {"train/resnet50.onnx", "output", "[batch, 1000]", "4000*batch"},
    {"train/mobilenet_v2.onnx", "output", "[batch, 1000]", "4000*batch"},
    {"train/bert_like.onnx", "pooler_output", "[batch, 768]", "3072*batch"},
    {"train/gpt_like.onnx", "logits", "[batch, seq, 50257]",
     "201028*batch*seq"},
};

INSTANTIATE_TEST_SUITE_P(Models, ModelShapesTest, ::testing::ValuesIn(Cases),
                         [](const auto &Info) {
                           std::string N = Info.param.File;
                           for (char &Ch : N)
                             if (!isalnum(static_cast<unsigned char>(Ch)))
                               Ch = '_';
                           return N;
                         });

} // namespace
