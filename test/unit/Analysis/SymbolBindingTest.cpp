//===- SymbolBindingTest.cpp - roles and values of shipped models ---------===//
//
// The roles the driver reads once per request (Bindings::Roles), on the
// models in test/models. The dims come from the scripts that made them:
// utils/export/definitions.py (gpt_like: input_ids [batch, seq]; resnet50:
// input [batch, 3, 224, 224]) and utils/export/make_llm_graph.py
// (serve/tiny_gqa: input_ids [batch_size, sequence_length] and
// attention_mask [batch_size, total_sequence_length], both int64; each
// past_key_values.N.key/value [batch_size, kv, past_sequence_length, d]).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "gtest/gtest.h"

using namespace oomplan;

static std::unique_ptr<Graph> load(const char *File) {
  auto G = importModelFile(std::string(OOMPLAN_TEST_MODELS_DIR) + "/" + File);
  EXPECT_TRUE(bool(G)) << llvm::toString(G.takeError());
  return G ? std::move(*G) : nullptr;
}

static SymbolId symbol(const Graph &G, const char *Name) {
  SymbolId S = G.findSymbol(Name);
  EXPECT_NE(S, NoId) << Name;
  return S;
}

TEST(SymbolBinding, GPTLikeBatchAndSeq) {
  auto G = load("gpt_like.onnx");
  ASSERT_TRUE(G);
  BindingRequest R;
  R.Batch = 8;
  R.Seq = 512;
  auto B = bindSymbols(*G, findSymbolRoles(*G), R);
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  SymbolId Batch = symbol(*G, "batch"), Seq = symbol(*G, "seq");
  EXPECT_EQ(B->Roles.Batch, std::vector<SymbolId>{Batch});
  EXPECT_EQ(B->Roles.Seq, std::vector<SymbolId>{Seq});
  EXPECT_EQ(B->roleOf(Batch), SymbolRole::Batch);
  EXPECT_EQ(B->roleOf(Seq), SymbolRole::Sequence);
  EXPECT_EQ(B->Values[Batch], 8);
  EXPECT_EQ(B->Values[Seq], 512);
  EXPECT_EQ(B->Notes, (std::vector<std::string>{"--batch=8 binds 'batch'",
                                                "--seq=512 binds 'seq'"}));
}

TEST(SymbolBinding, ResNetHasNoSequence) {
  auto G = load("resnet50.onnx");
  ASSERT_TRUE(G);
  SymbolRoles Roles = findSymbolRoles(*G);
  EXPECT_EQ(Roles.Batch, std::vector<SymbolId>{symbol(*G, "batch")});
  EXPECT_TRUE(Roles.Seq.empty());
  // --seq on a model without one is refused, naming its symbols.
  BindingRequest R;
  R.Seq = 128;
  auto B = bindSymbols(*G, Roles, R);
  ASSERT_FALSE(bool(B));
  EXPECT_NE(llvm::toString(B.takeError())
                .find("--seq given, but the model has no symbolic sequence "
                      "dimension (its symbols: batch)"),
            std::string::npos);
}

TEST(SymbolBinding, DecoderWithCacheRoles) {
  auto G = load("serve/tiny_gqa.onnx");
  ASSERT_TRUE(G);
  SymbolId Batch = symbol(*G, "batch_size");
  SymbolId Seq = symbol(*G, "sequence_length");
  SymbolId Total = symbol(*G, "total_sequence_length");
  SymbolId Past = symbol(*G, "past_sequence_length");
  BindingRequest R;
  R.Batch = 4;
  R.Seq = 16;
  R.Named = {{"past_sequence_length", 100}};
  auto B = bindSymbols(*G, findSymbolRoles(*G), R);
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  // batch_size and sequence_length by name; total_sequence_length as the
  // second dim of an integer input (the mask's); the cache's past length is
  // neither, since the cache is not a token input and its axis 0 is the
  // batch.
  EXPECT_EQ(B->roleOf(Batch), SymbolRole::Batch);
  EXPECT_EQ(B->roleOf(Seq), SymbolRole::Sequence);
  EXPECT_EQ(B->roleOf(Total), SymbolRole::Sequence);
  EXPECT_EQ(B->roleOf(Past), SymbolRole::Other);
  EXPECT_EQ(B->Roles.Batch.size(), 1u);
  EXPECT_EQ(B->Roles.Seq.size(), 2u);
  // --seq binds every sequence symbol; --dim the one named.
  EXPECT_EQ(B->Values[Batch], 4);
  EXPECT_EQ(B->Values[Seq], 16);
  EXPECT_EQ(B->Values[Total], 16);
  EXPECT_EQ(B->Values[Past], 100);
  // The overload without roles finds the same ones.
  auto Again = bindSymbols(*G, R);
  ASSERT_TRUE(bool(Again));
  EXPECT_EQ(Again->Roles.Batch, B->Roles.Batch);
  EXPECT_EQ(Again->Roles.Seq, B->Roles.Seq);
}
