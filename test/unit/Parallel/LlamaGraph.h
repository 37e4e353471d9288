//===- LlamaGraph.h - a Llama-shaped graph in memory ---------*- C++ -*-===//
//
// The weights of Llama-2 (Touvron et al. 2023) in the layer structure the
// planner finds: token embedding, L blocks of RMSNorm, q/k/v/o projections,
// RMSNorm, SwiGLU MLP (gate, up, down), a final RMSNorm and an untied LM
// head. Model states depend only on the weights and how each is split, so
// the ops between the weight readers are the simplest that keep the data
// flow (single-head attention, RMSNorm as a scale); built with GraphBuilder
// so the tests need no ONNX file and no Python. Weights are [in, out] so
// each projection is one MatMul.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TEST_UNIT_PARALLEL_LLAMAGRAPH_H
#define OOMPLAN_TEST_UNIT_PARALLEL_LLAMAGRAPH_H

#include "oomplan/IR/GraphBuilder.h"
#include <string>

namespace oomplan {
namespace test {

struct LlamaShape {
  int64_t Layers, Hidden, Ffn, Vocab;
};
/// Llama-2-7B: 32 layers, hidden 4096, MLP 11008, vocabulary 32000.
constexpr LlamaShape Llama7B{32, 4096, 11008, 32000};

class LlamaGraphBuilder {
public:
  explicit LlamaGraphBuilder(const LlamaShape &S) : S(S), B("llama.onnx") {}

  llvm::Expected<std::unique_ptr<Graph>> build() {
    SymbolId Batch = B.getOrAddSymbol("batch"), Seq = B.getOrAddSymbol("seq");
    ValueDesc Ids;
    Ids.Name = "input_ids";
    Ids.Type = ElementType::Int64;
    Ids.HasShape = true;
    Ids.Shape = {DeclaredDim::symbol(Batch), DeclaredDim::symbol(Seq)};
    if (llvm::Error E = B.addInput(Ids))
      return std::move(E);
    int64_t H = S.Hidden;
    std::string X =
        op("Gather", {weight("embed_tokens.weight", {S.Vocab, H}), "input_ids"},
           "embed");
    for (int64_t I = 0; I < S.Layers; ++I)
      X = layer(X, "layers." + std::to_string(I));
    X = op("Mul", {X, weight("norm.weight", {H})}, "norm");
    op("MatMul", {X, weight("lm_head.weight", {H, S.Vocab})}, "logits");
    ValueDesc Out;
    Out.Name = "logits";
    Out.Type = ElementType::Float;
    Out.HasShape = true;
    Out.Shape = {DeclaredDim::symbol(Batch), DeclaredDim::symbol(Seq),
                 DeclaredDim::fixed(S.Vocab)};
    B.addOutput(Out);
    B.setModelInfo("llama", 8, "LlamaGraph.h", {{"", 17}});
    if (Error)
      return std::move(Error);
    return B.finish();
  }

private:
  std::string layer(const std::string &X, const std::string &P) {
    int64_t H = S.Hidden, F = S.Ffn;
    std::string Y = op("Mul", {X, weight(P + ".input_layernorm.weight", {H})},
                       P + "/input_norm");
    std::string Q = linear(Y, P + ".self_attn.q_proj", H, H);
    std::string K = linear(Y, P + ".self_attn.k_proj", H, H);
    std::string V = linear(Y, P + ".self_attn.v_proj", H, H);
    std::string KT = op("Transpose", {K}, P + "/k_T", {{"perm", {0, 2, 1}}});
    std::string Sc = op("MatMul", {Q, KT}, P + "/scores");
    std::string Pr = op("Softmax", {Sc}, P + "/probs", {}, {{"axis", -1}});
    std::string Ctx = op("MatMul", {Pr, V}, P + "/context");
    std::string R1 =
        op("Add", {X, linear(Ctx, P + ".self_attn.o_proj", H, H)}, P + "/res1");
    Y = op("Mul", {R1, weight(P + ".post_attention_layernorm.weight", {H})},
           P + "/post_norm");
    std::string G = linear(Y, P + ".mlp.gate_proj", H, F);
    G = op("Mul", {G, op("Sigmoid", {G}, P + "/sigmoid")}, P + "/silu");
    std::string U = linear(Y, P + ".mlp.up_proj", H, F);
    std::string M = op("Mul", {G, U}, P + "/swiglu");
    return op("Add", {R1, linear(M, P + ".mlp.down_proj", F, H)}, P + "/res2");
  }

  std::string linear(const std::string &X, const std::string &P, int64_t In,
                     int64_t Out) {
    return op("MatMul", {X, weight(P + ".weight", {In, Out})}, P + "/MatMul");
  }

  std::string weight(const std::string &Name, std::vector<int64_t> Dims) {
    ValueDesc W;
    W.Name = Name;
    W.Type = ElementType::Float;
    W.HasShape = true;
    for (int64_t D : Dims)
      W.Shape.push_back(DeclaredDim::fixed(D));
    if (llvm::Error E = B.addWeight(W, nullptr, "")) {
      if (!Error)
        Error = std::move(E); // the first error is the one reported
      else
        llvm::consumeError(std::move(E));
    }
    return Name;
  }

  std::string
  op(const char *Op, std::vector<std::string> In, const std::string &Out,
     std::vector<std::pair<const char *, std::vector<int64_t>>> Ints = {},
     std::vector<std::pair<const char *, int64_t>> Int = {}) {
    NodeDesc N;
    N.Name = Out;
    N.OpType = Op;
    N.Inputs = std::move(In);
    N.Outputs = {Out};
    for (auto &[Name, Values] : Ints) {
      Attribute A;
      A.Name = Name;
      A.Kind = AttrKind::Ints;
      A.Ints = Values;
      N.Attrs.push_back(A);
    }
    for (auto &[Name, Value] : Int) {
      Attribute A;
      A.Name = Name;
      A.Kind = AttrKind::Int;
      A.I = Value;
      N.Attrs.push_back(A);
    }
    B.addNode(std::move(N));
    return Out;
  }

  LlamaShape S;
  GraphBuilder B;
  llvm::Error Error = llvm::Error::success();
};

} // namespace test
} // namespace oomplan

#endif
