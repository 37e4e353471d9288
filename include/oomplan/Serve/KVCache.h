//===- KVCache.h - the KV cache a decoder graph keeps per token -*- C++ -*-===//
//
// An LLM server keeps every layer's keys and values for each token of each
// sequence it serves; how many bytes one token costs decides how many
// sequences fit. This reads it from the graph's attention blocks: the
// attention ops that take a cache (GroupQueryAttention, opset 23's
// Attention, com.microsoft MultiHeadAttention) by the width of their K and
// V inputs; attention written out as MatMul -> Softmax -> MatMul by the
// narrowest tensor on the way back from K (and V) to its projection, which
// is the one a cache would hold (before grouped-query heads are repeated,
// after a fused QKV projection is split). The cache inputs
// (past_key_values.*, past.*) check the result where the export has them.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SERVE_KVCACHE_H
#define OOMPLAN_SERVE_KVCACHE_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/IR/Graph.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace oomplan {
namespace serve {

/// One attention block's cache: keys and values, per token.
struct KVLayer {
  std::string Where;           ///< The node (or cache input) it was read at.
  uint64_t KElemsPerToken = 0; ///< Key elements per token (KV heads x size).
  uint64_t VElemsPerToken = 0; ///< Value elements per token.
  /// KV heads and head size where the op or the cache's shape says them
  /// (0: not known, only their product).
  uint64_t KVHeads = 0, HeadSize = 0;
  /// Tokens the layer attends back (a sliding window), when the export
  /// says so (GroupQueryAttention's local_window_size).
  std::optional<uint64_t> Window;
  /// The If branch the block runs in ("" outside any): a merged decoder
  /// (optimum's, with and without a cache) has a copy of every block in
  /// each branch, and one step runs one of them.
  std::string Branch;
};

/// Where the per-token figure came from.
enum class KVSource { AttentionOps, AttentionPattern, CacheInputs };

struct KVCacheLayout {
  KVSource Source = KVSource::AttentionOps;
  std::vector<KVLayer> Layers;
  /// The cache's element type in the export (the cache inputs', else the
  /// keys').
  ElementType Type = ElementType::Undefined;
  /// Per-token bytes of the cache inputs, when the export has them, and
  /// whether they agree with the attention blocks (an error when not).
  std::optional<uint64_t> CacheInputBytesPerToken;
  unsigned CacheInputs = 0;
  /// The symbols of the cache inputs' token axis ("past_sequence_length").
  std::vector<SymbolId> PastSymbols;
  /// Branches of an If whose blocks were alternatives (0 or 1: none); the
  /// widest branch's blocks are the Layers.
  unsigned Branches = 0;

  /// K and V elements of one token over all layers.
  uint64_t elementsPerToken() const;
  /// elementsPerToken x ElemBits / 8, rounded up: one token's cache bytes.
  uint64_t bytesPerToken(unsigned ElemBits) const;
  /// The layers' common window, when every layer has the same one.
  std::optional<uint64_t> window() const;
};

/// Reads the KV cache of G, whose symbols play Roles (findSymbolRoles).
/// Errors (naming the model and the node): no attention block, or blocks
/// whose width disagrees with the cache inputs.
llvm::Expected<KVCacheLayout>
findKVCache(const Graph &G, const ShapeInfo &Shapes, const SymbolRoles &Roles);

/// The symbols of the new tokens: the sequence role (Roles.Seq) without
/// the attention mask's length, which with a cache spans the cached tokens
/// too (total = past + new).
std::vector<SymbolId> tokenSymbols(const Graph &G, const SymbolRoles &Roles);

/// True for a graph input or output that is the KV cache (past_key_values.*,
/// present.*, an attention op's present outputs): the server's pool holds
/// it, not an engine step.
bool isCacheValue(const Graph &G, ValueId V);

/// "AttentionOps" -> the words the report uses.
const char *kvSourceName(KVSource S);

} // namespace serve
} // namespace oomplan

#endif
