//===- ContribAttention.cpp - ONNX Runtime's BERT ops as standard ops -----===//
//
// The transformer optimizer's attention ops, imported as standard-op bodies
// (ContribFunctions.cpp says why bodies): Attention (com.microsoft: the Q,
// K and V projections in one MatMul, a padding or raw mask, causal with a
// past) and MultiHeadAttention (Q, K and V as given, packed or cached),
// sharing one tail. The attention becomes the exporter's chain again
// (MatMul, Softmax, MatMul), which fusion makes an OomplanAttention, so an
// optimized BERT plans as the export it came from.
//
// ONNX Runtime's CPU kernel masks by adding mask_filter_value (-10000), not
// -inf: the bodies add the same (a row masked by both the mask and the
// causal frontier gets it twice, as the kernel's += does), so even a fully
// masked row gives ONNX Runtime's numbers. The bias terms are summed before
// they meet the scores (one Add, which the fusion takes as its bias).
//
//===----------------------------------------------------------------------===//
#include "Converter.h"
#include "FunctionBody.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::fn;

namespace {

/// X [B, L, Heads * Size] as [B, Heads, L, Size].
std::string heads(FunctionBody &B, const std::string &X, int64_t Heads,
                  int64_t Size, const std::string &Out) {
  B.ints(Out + "Shape", {0, 0, Heads, Size});
  B.op("Reshape", {X, Out + "Shape"}, Out + "Split");
  FunctionBody::setInts(B.add("Transpose", {Out + "Split"}, {Out}), "perm",
                        {0, 2, 1, 3});
  return Out;
}

} // namespace

llvm::Expected<FunctionBody>
Converter::contribAttentionBody(const onnx::NodeProto &N, int64_t Opset,
                                const std::string &Where) {
  if (intAttrOf(N, "do_rotary", 0) ||
      intAttrOf(N, "past_present_share_buffer", 0) || has(N, 6))
    return unsupported(Where + ": unsupported: Attention with do_rotary, "
                               "past_present_share_buffer or "
                               "past_sequence_length");
  const int64_t Heads = intAttrOf(N, "num_heads", 0);
  if (Heads <= 0)
    return err(Where + ": num_heads must be positive");
  std::string InFlat = resolve(N.input(0));
  ElementType T = typeOf(InFlat);
  if (!isFloatingPoint(T))
    return unsupported(Where +
                       ": unsupported: the input's float type is not "
                       "known when importing" +
                       prefixFailure());
  // Q, K and V widths: qkv_hidden_sizes, else a third of the weights' each.
  int64_t Dq = 0, Dk = 0, Dv = 0;
  if (const onnx::AttributeProto *A = attrOf(N, "qkv_hidden_sizes")) {
    if (A->ints_size() != 3)
      return err(Where + ": qkv_hidden_sizes must have 3 values");
    Dq = A->ints(0), Dk = A->ints(1), Dv = A->ints(2);
  } else {
    std::vector<int64_t> W = dimsOf(resolve(N.input(1)));
    if (W.size() != 2 || W[1] <= 0)
      return unsupported(Where +
                         ": unsupported: the weights' width is not "
                         "known when importing" +
                         prefixFailure());
    if (W[1] % 3 != 0)
      return err(Where + ": the weights' width " + llvm::Twine(W[1]) +
                 " is not 3 equal parts (give qkv_hidden_sizes)");
    Dq = Dk = Dv = W[1] / 3;
  }
  if (Dq <= 0 || Dk != Dq || Dv <= 0 || Dq % Heads != 0 || Dv % Heads != 0)
    return err(Where + ": hidden sizes " + llvm::Twine(Dq) + ", " +
               llvm::Twine(Dk) + ", " + llvm::Twine(Dv) +
               " are not equal Q and K widths divisible by " +
               llvm::Twine(Heads) + " heads");
  const int64_t Hq = Dq / Heads, Hv = Dv / Heads;
  llvm::Expected<int64_t> MaskRank = maskRank(N, 3, InFlat, Where);
  if (!MaskRank)
    return MaskRank.takeError();
  FunctionBody B("Attention", Opset,
                 formals({"input", "weights", "bias", "mask_index", "past",
                          "attention_bias"},
                         N.input_size(), [&](int I) { return has(N, I); }),
                 formals({"output", "present"}, N.output_size(),
                         [&](int I) { return hasOut(N, I); }));
  std::string QKV = B.op("MatMul", {"input", "weights"}, "QKV");
  if (has(N, 2))
    QKV = B.op("Add", {QKV, "bias"}, "QKVBias");
  B.slice(QKV, 0, Dq, -1, "Q");
  B.slice(QKV, Dq, Dq + Dk, -1, "K");
  B.slice(QKV, Dq + Dk, Dq + Dk + Dv, -1, "V");
  heads(B, "Q", Heads, Hq, "Q4");
  std::string K4 = heads(B, "K", Heads, Hq, "K4"),
              V4 = heads(B, "V", Heads, Hv, "V4");
  if (has(N, 4)) {
    // past [2, B, N, P, H]: its keys and values before the new ones.
    B.ints("PastK", {0}, /*Scalar=*/true);
    B.ints("PastV", {1}, /*Scalar=*/true);
    FunctionBody::setInt(B.add("Gather", {"past", "PastK"}, {"PastKeys"}),
                         "axis", 0);
    FunctionBody::setInt(B.add("Gather", {"past", "PastV"}, {"PastValues"}),
                         "axis", 0);
    FunctionBody::setInt(B.add("Concat", {"PastKeys", K4}, {"KAll"}), "axis",
                         2);
    FunctionBody::setInt(B.add("Concat", {"PastValues", V4}, {"VAll"}), "axis",
                         2);
    K4 = "KAll", V4 = "VAll";
  }
  if (hasOut(N, 1)) {
    B.unsqueeze(K4, {0}, "PresentK");
    B.unsqueeze(V4, {0}, "PresentV");
    FunctionBody::setInt(B.add("Concat", {"PresentK", "PresentV"}, {"present"}),
                         "axis", 0);
  }
  if (llvm::Error E = appendAttentionTail(
          B, N, Where,
          {"Q4", K4, V4, Hq, Dv, T, 3, *MaskRank,
           has(N, 5) ? "attention_bias" : "", "mask_index"}))
    return std::move(E);
  return B;
}

llvm::Expected<FunctionBody>
Converter::multiHeadAttentionBody(const onnx::NodeProto &N, int64_t Opset,
                                  const std::string &Where) {
  // query, key, value, bias, key_padding_mask, attention_bias, past_key,
  // past_value (past_sequence_length, cache_indirection: refused); outputs
  // output, present_key, present_value (qk: refused).
  if (has(N, 8) || has(N, 9) || hasOut(N, 3))
    return unsupported(Where + ": unsupported: MultiHeadAttention with "
                               "past_sequence_length, cache_indirection or "
                               "the qk output");
  const int64_t Heads = intAttrOf(N, "num_heads", 0);
  if (Heads <= 0)
    return err(Where + ": num_heads must be positive");
  std::string QFlat = resolve(N.input(0));
  ElementType T = typeOf(QFlat);
  std::vector<int64_t> QDims = dimsOf(QFlat);
  std::vector<int64_t> KDims =
      has(N, 1) ? dimsOf(resolve(N.input(1))) : std::vector<int64_t>();
  std::vector<int64_t> VDims =
      has(N, 2) ? dimsOf(resolve(N.input(2))) : std::vector<int64_t>();
  if (!isFloatingPoint(T) || QDims.empty() || (has(N, 1) && KDims.empty()) ||
      (has(N, 2) && VDims.empty()))
    return unsupported(Where +
                       ": unsupported: the query's, key's or value's "
                       "rank or type is not known when importing" +
                       prefixFailure());
  // The forms: query [B, S, D] with key and value [B, L, D] (projections:
  // the bias applies) or [B, N, L, H] (a cross-attention cache: no bias);
  // key [B, L, N, 2, H] packing K and V; query [B, S, N, 3, H] packing all.
  const bool PackedQKV = QDims.size() == 5, PackedKV = KDims.size() == 5;
  const bool KV4 = KDims.size() == 4;
  if (PackedQKV ? (has(N, 1) || has(N, 2))
                : QDims.size() != 3 || !has(N, 1) ||
                      (PackedKV ? has(N, 2)
                                : !has(N, 2) || KDims.size() != VDims.size() ||
                                      (KDims.size() != 3 && !KV4)))
    return err(Where + ": query, key and value are not one of "
                       "MultiHeadAttention's forms (3-D query with 3-D or "
                       "4-D key and value, 5-D packed key and value, or a "
                       "5-D packed query)");
  if (has(N, 3) && (PackedQKV || PackedKV || KV4))
    return unsupported(Where + ": unsupported: a bias with packed or 4-D "
                               "inputs");
  if ((has(N, 6) || has(N, 7)) && KV4)
    return err(Where + ": past_key and past_value need 3-D key and value");
  if (has(N, 6) != has(N, 7))
    return err(Where + ": past_key and past_value must be given together");
  const int64_t Last = QDims.back(), KLast = KDims.empty() ? 0 : KDims.back();
  const int64_t H =
      PackedQKV || PackedKV
          ? (PackedQKV ? Last : KLast)
          : (QDims[2] > 0 && QDims[2] % Heads == 0 ? QDims[2] / Heads : -1);
  int64_t Hv = H;
  if (!PackedQKV && !PackedKV)
    Hv = KV4                                     ? VDims[3]
         : VDims[2] > 0 && VDims[2] % Heads == 0 ? VDims[2] / Heads
                                                 : -1;
  if (H <= 0 || Hv <= 0)
    return unsupported(Where +
                       ": unsupported: head sizes not known (or not "
                       "a multiple of num_heads) when importing" +
                       prefixFailure());
  llvm::Expected<int64_t> MaskRank = maskRank(N, 4, QFlat, Where);
  if (!MaskRank)
    return MaskRank.takeError();
  FunctionBody B("MultiHeadAttention", Opset,
                 formals({"query", "key", "value", "bias", "key_padding_mask",
                          "attention_bias", "past_key", "past_value"},
                         N.input_size(), [&](int I) { return has(N, I); }),
                 formals({"output", "present_key", "present_value"},
                         N.output_size(), [&](int I) { return hasOut(N, I); }));
  // Packed [., L, N, k, H]: slot I as [B, N, L, H].
  auto Unpack = [&](const std::string &X, int64_t Slot,
                    const std::string &Out) {
    B.slice(X, Slot, Slot + 1, 3, Out + "Slot");
    B.ints(Out + "Shape", {0, 0, Heads, H});
    B.op("Reshape", {Out + "Slot", Out + "Shape"}, Out + "BSNH");
    FunctionBody::setInts(B.add("Transpose", {Out + "BSNH"}, {Out}), "perm",
                          {0, 2, 1, 3});
    return Out;
  };
  std::string Q, K, V;
  if (PackedQKV) {
    Q = Unpack("query", 0, "Q4"), K = Unpack("query", 1, "K4"),
    V = Unpack("query", 2, "V4");
  } else {
    std::string QIn = "query", KIn = "key", VIn = "value";
    if (has(N, 3)) {
      const int64_t D = Heads * H, Dv = Heads * Hv;
      QIn = B.op("Add", {"query", B.slice("bias", 0, D, 0, "BiasQ")}, "QBias");
      KIn =
          B.op("Add", {"key", B.slice("bias", D, 2 * D, 0, "BiasK")}, "KBias");
      VIn =
          B.op("Add", {"value", B.slice("bias", 2 * D, 2 * D + Dv, 0, "BiasV")},
               "VBias");
    }
    Q = heads(B, QIn, Heads, H, "Q4");
    if (PackedKV) {
      K = Unpack("key", 0, "K4"), V = Unpack("key", 1, "V4");
    } else if (KV4) {
      K = "key", V = "value";
    } else {
      K = heads(B, KIn, Heads, H, "K4"), V = heads(B, VIn, Heads, Hv, "V4");
    }
  }
  if (has(N, 6)) {
    FunctionBody::setInt(B.add("Concat", {"past_key", K}, {"KAll"}), "axis", 2);
    FunctionBody::setInt(B.add("Concat", {"past_value", V}, {"VAll"}), "axis",
                         2);
    K = "KAll", V = "VAll";
  }
  if (hasOut(N, 1))
    B.op("Identity", {K}, "present_key");
  if (hasOut(N, 2))
    B.op("Identity", {V}, "present_value");
  if (llvm::Error E = appendAttentionTail(
          B, N, Where,
          {Q, K, V, H, Heads * Hv, T, 4, *MaskRank,
           has(N, 5) ? "attention_bias" : "", "key_padding_mask"}))
    return std::move(E);
  return B;
}

llvm::Expected<int64_t> Converter::maskRank(const onnx::NodeProto &N,
                                            int MaskInput,
                                            const std::string &InFlat,
                                            const std::string &Where) {
  // Raw [B, T] or [B, S, T] (0 masks), or right-padding lengths [B]; ONNX
  // Runtime's other 1-D forms ([2B], [3B + 2]) and 4-D masks are refused.
  if (!has(N, MaskInput))
    return 0;
  std::vector<int64_t> M = dimsOf(resolve(N.input(MaskInput)));
  const int64_t Rank = int64_t(M.size());
  // A 1-D mask is read as lengths unless its size and the batch are both
  // known and differ (a symbolic batch: EmbedLayerNormalization's
  // mask_index, [B]; a [2B] mask there would not broadcast against the
  // scores of any batch but 1).
  std::vector<int64_t> X = dimsOf(InFlat);
  if (Rank == 1 && !X.empty() && X[0] > 0 && M[0] > 0 && M[0] != X[0])
    return unsupported(Where + ": unsupported: a 1-D mask of " +
                       llvm::Twine(M[0]) + " values for a batch of " +
                       llvm::Twine(X[0]) + " (ONNX Runtime's start/end forms)");
  if (Rank != 1 && Rank != 2 && Rank != 3)
    return unsupported(Where + ": unsupported: a mask of rank " +
                       (Rank ? llvm::Twine(Rank) : llvm::Twine("unknown")));
  return Rank;
}

llvm::Error Converter::appendAttentionTail(FunctionBody &B,
                                           const onnx::NodeProto &N,
                                           const std::string &Where,
                                           const AttentionTail &A) {
  const std::string &K4 = A.K, &V4 = A.V;
  const ElementType T = A.Type;
  const int64_t MaskRank = A.MaskRank;
  FunctionBody::setInts(B.add("Transpose", {K4}, {"KT"}), "perm", {0, 1, 3, 2});
  B.op("MatMul", {A.Q, "KT"}, "QK");
  float Scale = floatAttrOf(N, "scale", 0.0f);
  if (Scale == 0.0f)
    Scale = 1.0f / std::sqrt(float(A.HeadSize));
  B.scalar("Scale", Scale, T);
  std::string Scores = B.op("Mul", {"QK", "Scale"}, "Scores");
  const float Filter = floatAttrOf(N, "mask_filter_value", -10000.0f);
  std::vector<std::string> Biases;
  if (MaskRank != 0 || intAttrOf(N, "unidirectional", 0)) {
    B.scalar("Zero", 0.0f, T);
    B.scalar("Filter", Filter, T);
  }
  if (MaskRank == 1) {
    // Key j of row b counts when j < mask_index[b].
    B.dim(K4, 2, "TotalLen");
    B.range("TotalLen", "KeyPos");
    FunctionBody::setInt(B.add("Cast", {A.MaskName}, {"Lengths"}), "to",
                         int64_t(ElementType::Int64));
    B.unsqueeze("Lengths", {1}, "Lengths2D");
    B.op("Less", {"KeyPos", "Lengths2D"}, "Keep");
  } else if (MaskRank != 0) {
    ElementType M = typeOf(resolve(N.input(A.MaskInput)));
    if (M == ElementType::Undefined)
      return unsupported(Where +
                         ": unsupported: the mask's type is not "
                         "known when importing" +
                         prefixFailure());
    B.ints("ZeroMask", {0});
    FunctionBody::setInt(B.add("Cast", {"ZeroMask"}, {"ZeroMaskT"}), "to",
                         int64_t(M));
    B.op("Greater", {A.MaskName, "ZeroMaskT"}, "Keep");
  }
  if (MaskRank != 0) {
    B.op("Where", {"Keep", "Zero", "Filter"}, "MaskBias");
    B.unsqueeze("MaskBias",
                MaskRank == 3 ? std::vector<int64_t>{1}
                              : std::vector<int64_t>{1, 2},
                "MaskBias4D");
    Biases.push_back("MaskBias4D");
  }
  if (intAttrOf(N, "unidirectional", 0)) {
    // Query i (after P = T - S past positions) sees keys j <= i + P.
    B.dim(K4, 2, "CausalT");
    B.dim(A.Q, 2, "CausalS");
    B.range("CausalT", "CausalKeys");
    B.range("CausalS", "CausalQueries");
    B.op("Sub", {"CausalT", "CausalS"}, "CausalPast");
    B.ints("CausalOne", {1});
    B.op("Add", {"CausalPast", "CausalOne"}, "CausalPastPlusOne");
    B.unsqueeze("CausalQueries", {1}, "CausalRows");
    B.op("Add", {"CausalRows", "CausalPastPlusOne"}, "CausalLimit");
    B.op("Less", {"CausalKeys", "CausalLimit"}, "CausalKeep");
    B.op("Where", {"CausalKeep", "Zero", "Filter"}, "CausalBias");
    Biases.push_back("CausalBias");
  }
  if (!A.Bias.empty())
    Biases.push_back(A.Bias);
  // The bias terms summed first, then added once: the chain the fusion
  // makes an OomplanAttention (with its one bias) stays whole, and the
  // summed bias ([B, 1, S, T] at most) is smaller than the scores.
  if (!Biases.empty()) {
    std::string Bias = Biases[0];
    for (size_t I = 1; I < Biases.size(); ++I)
      Bias = B.op("Add", {Bias, Biases[I]}, "Bias" + std::to_string(I));
    Scores = B.op("Add", {Scores, Bias}, "ScoresBiased");
  }
  FunctionBody::setInt(B.add("Softmax", {Scores}, {"Probs"}), "axis", -1);
  B.op("MatMul", {"Probs", V4}, "Context");
  FunctionBody::setInts(B.add("Transpose", {"Context"}, {"ContextBSNH"}),
                        "perm", {0, 2, 1, 3});
  B.ints("OutShape", {0, 0, A.OutWidth});
  B.op("Reshape", {"ContextBSNH", "OutShape"}, "output");
  return llvm::Error::success();
}
