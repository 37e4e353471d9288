//===- ContribOps.cpp - the ONNX Runtime contrib ops oomplan reads --------===//
//
// Arity from ONNX Runtime's contrib schemas (docs/ContribOperators.md, and
// onnxruntime/core/graph/contrib_ops for SimplifiedLayerNormalization).
// How each is imported, and what of it oomplan refuses, is in
// docs/shapes.md ("ONNX Runtime's contrib ops").
//
//===----------------------------------------------------------------------===//
#include "ContribOps.h"

using namespace oomplan;

// Sorted by op.
static const NewerOpVersion Rows[] = {
    // The Q, K and V projections in one MatMul, then multi-head attention
    // with a padding or raw mask, causal with a past (the BERT and GPT-2
    // optimizer's).
    {"Attention", 1, 2, 7, 1, 2, nullptr, true},
    // X + bias + skip.
    {"BiasAdd", 1, 3, 3, 1, 1, nullptr, true},
    // Gelu(A + B), the erf form.
    {"BiasGelu", 1, 2, 2, 1, 1, nullptr, true},
    // Word, position and segment embeddings summed, LayerNormalization,
    // and the mask's lengths (BERT's input, the optimizer's).
    {"EmbedLayerNormalization", 1, 1, 9, 1, 3, nullptr, true},
    // The tanh approximation of Gelu, of X (+ bias).
    {"FastGelu", 1, 1, 2, 1, 1, nullptr, true},
    // alpha * op(A) * op(B), transposes by attribute.
    {"FusedMatMul", 1, 2, 2, 1, 1, nullptr, true},
    // Rows of blocked 2/4/8-bit weights, dequantized (an int4 embedding,
    // the GenAI builder's with tied embeddings). A node of its own, for the
    // same reason as MatMulNBits.
    {"GatherBlockQuantized", 1, 3, 4, 1, 1, nullptr},
    // The erf form of Gelu.
    {"Gelu", 1, 1, 1, 1, 1, nullptr, true},
    // Causal attention of grouped query heads with its KV cache, rotary
    // optional (the GenAI builder's). A node of its own: the cache's layout
    // and the positions come from seqlens_k's values at run time.
    {"GroupQueryAttention", 1, 1, 16, 1, 4, nullptr},
    // A * dequantize(B)^T (+ bias): B packed, 2, 4 or 8 bits per weight, in
    // blocks along K with a scale (and a zero point) each. A node of its
    // own: dequantized at import, the weights would count 8 times over.
    {"MatMulNBits", 1, 3, 6, 1, 1, nullptr},
    // Multi-head attention of projected (or packed, or cached 4-D) Q, K
    // and V, with a padding mask, a bias, a past (the optimizer's).
    {"MultiHeadAttention", 1, 1, 10, 1, 4, nullptr, true},
    // X * Sigmoid(alpha * X).
    {"QuickGelu", 1, 1, 1, 1, 1, nullptr, true},
    // Rotary position embedding from cos/sin caches (the optimizer's, next
    // to MultiHeadAttention).
    {"RotaryEmbedding", 1, 4, 4, 1, 1, nullptr, true},
    // RMS normalization (ONNX's RMSNormalization, and the inverse RMS).
    {"SimplifiedLayerNormalization", 1, 2, 2, 1, 2, nullptr, true},
    // LayerNormalization of input + skip (+ bias), the sum an output too.
    {"SkipLayerNormalization", 1, 3, 5, 1, 4, nullptr, true},
    // The same with RMS normalization (no beta).
    {"SkipSimplifiedLayerNormalization", 1, 3, 4, 1, 4, nullptr, true},
};

const NewerOpVersion *oomplan::contribOp(llvm::StringRef Domain,
                                         llvm::StringRef Op) {
  // ONNX Runtime registers SimplifiedLayerNormalization in the default
  // domain (ONNX has no op of that name); the rest are com.microsoft's,
  // where a SimplifiedLayerNormalization means the same.
  if (Domain.empty() ? Op != "SimplifiedLayerNormalization"
                     : Domain != ContribDomain)
    return nullptr;
  for (const NewerOpVersion &R : Rows)
    if (Op == R.Op)
      return &R;
  return nullptr;
}

std::string oomplan::contribOpNames() {
  std::string Out;
  for (const NewerOpVersion &R : Rows)
    Out += (Out.empty() ? "" : ", ") + std::string(R.Op);
  return Out;
}

llvm::ArrayRef<NewerOpVersion> oomplan::contribOps() { return Rows; }
