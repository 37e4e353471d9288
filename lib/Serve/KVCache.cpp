//===- KVCache.cpp - the KV cache a decoder graph keeps per token ---------===//
//
// Per-token widths are measured, not parsed from names: a value's elements
// with the sequence symbols at 2 minus its elements with them at 1 (every
// other symbol at 1) is what one more token adds to it. That one rule reads
// a GroupQueryAttention's K input [batch, seq, kv_heads x head], an opset 23
// Attention's [batch, kv_heads, seq, head], and every tensor on the way back
// from an unfused attention's K to its projection.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Serve/KVCache.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::serve;

const char *serve::kvSourceName(KVSource S) {
  switch (S) {
  case KVSource::AttentionOps:
    return "attention ops' K and V inputs";
  case KVSource::AttentionPattern:
    return "K and V projections of the attention blocks";
  case KVSource::CacheInputs:
    return "cache inputs' shapes";
  }
  return "";
}

uint64_t KVCacheLayout::elementsPerToken() const {
  uint64_t E = 0;
  for (const KVLayer &L : Layers)
    E += L.KElemsPerToken + L.VElemsPerToken;
  return E;
}

uint64_t KVCacheLayout::bytesPerToken(unsigned ElemBits) const {
  return (elementsPerToken() * ElemBits + 7) / 8;
}

std::optional<uint64_t> KVCacheLayout::window() const {
  if (Layers.empty() || !Layers[0].Window)
    return std::nullopt;
  for (const KVLayer &L : Layers)
    if (L.Window != Layers[0].Window)
      return std::nullopt;
  return Layers[0].Window;
}

static bool isMask(const Value &V) {
  return StringRef(StringRef(V.Name).lower()).contains("mask");
}

std::vector<SymbolId> serve::tokenSymbols(const Graph &G,
                                          const SymbolRoles &Roles) {
  std::vector<SymbolId> Out;
  for (SymbolId S : Roles.Seq) {
    // Kept when some input other than a mask has it: input_ids' length.
    bool Used = false;
    for (ValueId V : G.Inputs) {
      const Value &Val = G.Values[V];
      if (isMask(Val) || !Val.HasDeclaredShape)
        continue;
      for (const DeclaredDim &D : Val.Shape)
        Used |= D.K == DeclaredDim::Kind::Symbol && D.Symbol == S;
    }
    if (Used)
      Out.push_back(S);
  }
  return Out;
}

namespace {
class Widths {
public:
  Widths(const Graph &G, const ShapeInfo &Shapes, const SymbolRoles &Roles)
      : G(G), Shapes(Shapes) {
    One.assign(Shapes.SymbolNames.size(), int64_t(1));
    Two = One;
    for (SymbolId S : tokenSymbols(G, Roles))
      if (S < Two.size())
        Two[S] = 2;
  }

  /// Elements one more token adds to V; 0 when V does not grow with the
  /// sequence or is not sized.
  uint64_t perToken(ValueId V) const {
    if (V == NoId || V >= Shapes.Values.size() || !Shapes.Values[V].Known)
      return 0;
    auto A = elements(V, One), B = elements(V, Two);
    return A && B && *B > *A ? *B - *A : 0;
  }

private:
  std::optional<uint64_t> elements(ValueId V,
                                   ArrayRef<std::optional<int64_t>> B) const {
    uint64_t E = 1;
    for (const SymExpr &D : Shapes.Values[V].Dims) {
      auto N = D.evaluate(B, Shapes.SymbolNames);
      if (!N) {
        consumeError(N.takeError());
        return std::nullopt;
      }
      if (*N < 0 || __builtin_mul_overflow(E, uint64_t(*N), &E))
        return std::nullopt;
    }
    return E;
  }

  const Graph &G;
  const ShapeInfo &Shapes;
  std::vector<std::optional<int64_t>> One, Two;
};
} // namespace

static bool isCacheInput(const Graph &G, ValueId V) {
  if (V == NoId || G.Values[V].Kind != ValueKind::GraphInput)
    return false;
  const Value &Val = G.Values[V];
  std::string L = StringRef(Val.Name).lower();
  return isFloatingPoint(Val.Type) && Val.HasDeclaredShape &&
         Val.Shape.size() >= 3 &&
         (StringRef(L).contains("past") || StringRef(L).contains("cache"));
}

bool serve::isCacheValue(const Graph &G, ValueId V) {
  if (isCacheInput(G, V))
    return true;
  if (V == NoId || !G.Values[V].IsGraphOutput)
    return false;
  const Value &Val = G.Values[V];
  if (!isFloatingPoint(Val.Type) && Val.Type != ElementType::Undefined)
    return false;
  std::string L = StringRef(Val.Name).lower();
  if (StringRef(L).contains("present"))
    return true;
  if (Val.Producer == NoId)
    return false;
  const Node &N = G.Nodes[Val.Producer];
  // An attention op's outputs after the first are its present K and V; a
  // Concat of a cache input with the new tokens is the present cache.
  if ((N.OpType == "GroupQueryAttention" || N.OpType == "Attention" ||
       N.OpType == "MultiHeadAttention") &&
      !N.Outputs.empty() && N.Outputs[0] != V)
    return true;
  return N.OpType == "Concat" &&
         any_of(N.Inputs, [&](ValueId In) { return isCacheInput(G, In); });
}

static bool isMatMulLike(StringRef Op) {
  return Op == "MatMul" || Op == "Gemm" || Op == "MatMulNBits" ||
         Op == "MatMulInteger" || Op == "FusedMatMul" ||
         Op == "QLinearMatMul" || Op == "MatMulIntegerToFloat";
}

// The narrowest per-token width on the way back from V (an attention's K or
// V operand) to the projection that made it: repeated grouped-query heads
// (Expand) are wider, a fused QKV projection before its Split is wider, the
// cache is neither. Elementwise ops follow the operand as wide as their
// output (rotary's x * cos, not cos); a Concat with a cache input follows
// the new tokens.
static uint64_t narrowestBack(const Graph &G, const Widths &W, ValueId V) {
  uint64_t Best = W.perToken(V);
  for (unsigned Hops = 0; Hops < 64 && V != NoId; ++Hops) {
    const Value &Val = G.Values[V];
    if (Val.Kind != ValueKind::NodeOutput || Val.Producer == NoId)
      break;
    const Node &N = G.Nodes[Val.Producer];
    StringRef Op = N.OpType;
    if (isMatMulLike(Op) || Op == "Conv")
      break;
    ValueId Next = NoId;
    if (Op == "Transpose" || Op == "Reshape" || Op == "Identity" ||
        Op == "Squeeze" || Op == "Unsqueeze" || Op == "Flatten" ||
        Op == "Cast" || Op == "Expand" || Op == "Tile" || Op == "Split" ||
        Op == "Slice") {
      Next = N.input(0);
    } else if (Op == "Add" || Op == "Mul" || Op == "Sub" || Op == "Div") {
      uint64_t Out = W.perToken(V);
      for (ValueId In : N.Inputs)
        if (In != NoId && W.perToken(In) == Out) {
          Next = In;
          break;
        }
    } else if (Op == "Concat") {
      std::vector<ValueId> New;
      bool Cache = false;
      for (ValueId In : N.Inputs) {
        if (isCacheInput(G, In))
          Cache = true;
        else if (W.perToken(In))
          New.push_back(In);
      }
      if (Cache && New.size() == 1)
        Next = New[0];
    }
    if (Next == NoId)
      break;
    V = Next;
    uint64_t PT = W.perToken(V);
    if (PT && (!Best || PT < Best))
      Best = PT;
  }
  return Best;
}

// The scores' MatMul behind a Softmax: through the scale, the mask (Add,
// Where) and casts, a few nodes at most; its operands are both activations.
static NodeId scoresMatMul(const Graph &G, ValueId V, unsigned Depth) {
  if (V == NoId || Depth > 6)
    return NoId;
  const Value &Val = G.Values[V];
  if (Val.Kind != ValueKind::NodeOutput || Val.Producer == NoId)
    return NoId;
  const Node &N = G.Nodes[Val.Producer];
  if (N.OpType == "MatMul") {
    for (ValueId In : N.Inputs)
      if (In == NoId || G.Values[In].Kind == ValueKind::Weight)
        return NoId;
    return Val.Producer;
  }
  if (N.OpType == "Cast" || N.OpType == "Mul" || N.OpType == "Div" ||
      N.OpType == "Add" || N.OpType == "Sub" || N.OpType == "Where" ||
      N.OpType == "Tanh")
    for (ValueId In : N.Inputs) {
      NodeId M = scoresMatMul(G, In, Depth + 1);
      if (M != NoId)
        return M;
    }
  return NoId;
}

// The MatMul that applies the probabilities P (its first operand), through
// casts and an inference Dropout.
static NodeId valuesMatMul(const Graph &G, ValueId P, unsigned Depth) {
  if (P == NoId || Depth > 3)
    return NoId;
  for (NodeId U : G.Values[P].Users) {
    const Node &N = G.Nodes[U];
    if (N.OpType == "MatMul" && N.input(0) == P)
      return U;
    if (N.OpType == "Cast" || N.OpType == "Dropout" || N.OpType == "Identity") {
      NodeId M =
          valuesMatMul(G, N.Outputs.empty() ? NoId : N.Outputs[0], Depth + 1);
      if (M != NoId)
        return M;
    }
  }
  return NoId;
}

// The guards of N as text: blocks with the same text run together.
static std::string branchOf(const Graph &G, NodeId N) {
  std::string Key;
  for (const Guard &Gd : G.Nodes[N].Guards)
    Key += std::to_string(Gd.Cond) + (Gd.WhenTrue ? "+" : "-") + ",";
  return Key;
}

// Keeps the blocks of one branch when they lie in several (a merged
// decoder's If): the branch whose blocks keep the most per token, so that
// the cache is never under-counted.
static void keepOneBranch(KVCacheLayout &Out) {
  std::vector<std::string> Keys;
  for (const KVLayer &L : Out.Layers)
    if (!is_contained(Keys, L.Branch))
      Keys.push_back(L.Branch);
  if (Keys.size() < 2)
    return;
  auto Elems = [&](const std::string &K) {
    uint64_t E = 0;
    for (const KVLayer &L : Out.Layers)
      if (L.Branch == K)
        E += L.KElemsPerToken + L.VElemsPerToken;
    return E;
  };
  std::string Best = Keys[0];
  for (const std::string &K : Keys)
    if (Elems(K) > Elems(Best))
      Best = K;
  Out.Branches = Keys.size();
  erase_if(Out.Layers, [&](const KVLayer &L) { return L.Branch != Best; });
}

static std::string nodeName(const Graph &G, NodeId N) {
  const Node &Nd = G.Nodes[N];
  return Nd.Name.empty() ? Nd.OpType + " #" + std::to_string(N)
                         : "'" + Nd.Name + "'";
}

// Attention ops that take K and V as inputs (a cache beside them): their
// widths are the layer's cache per token.
static void fromAttentionOps(const Graph &G, const ShapeInfo &Shapes,
                             const Widths &W, KVCacheLayout &Out) {
  for (NodeId Id = 0; Id < G.Nodes.size(); ++Id) {
    const Node &N = G.Nodes[Id];
    // The importer keeps contrib ops by type alone (their domain is
    // dropped); com.microsoft's older Attention takes the packed QKV weight
    // as its second input, opset 23's takes K.
    bool GQA = N.OpType == "GroupQueryAttention";
    bool MHA = N.OpType == "MultiHeadAttention";
    bool A23 = N.OpType == "Attention" && N.input(1) != NoId &&
               G.Values[N.input(1)].Kind != ValueKind::Weight;
    if (!GQA && !MHA && !A23)
      continue;
    KVLayer L;
    L.Where = nodeName(G, Id);
    L.Branch = branchOf(G, Id);
    L.KElemsPerToken = W.perToken(N.input(1));
    L.VElemsPerToken = W.perToken(N.input(2));
    int64_t Heads = N.getInt("num_heads", N.getInt("q_num_heads", 0));
    int64_t KV = N.getInt("kv_num_heads", GQA ? 0 : Heads);
    if (GQA && N.input(1) == NoId && Heads > 0 && KV > 0) {
      // Packed QKV in the query input: (heads + 2 kv) x head per token.
      uint64_t Packed = W.perToken(N.input(0));
      uint64_t Head = Packed / uint64_t(Heads + 2 * KV);
      L.KElemsPerToken = L.VElemsPerToken = uint64_t(KV) * Head;
    }
    if (KV > 0 && L.KElemsPerToken % uint64_t(KV) == 0) {
      L.KVHeads = uint64_t(KV);
      L.HeadSize = L.KElemsPerToken / uint64_t(KV);
    }
    ValueId PastK = N.input(GQA ? 3 : MHA ? 6 : 4);
    // A 4-D key [batch, kv_heads, seq, head] says both.
    ValueId K = N.input(1) != NoId ? N.input(1) : PastK;
    if (K != NoId && K < Shapes.Values.size() &&
        Shapes.Values[K].Dims.size() == 4) {
      auto H = Shapes.Values[K].Dims[1].getConstant();
      auto D = Shapes.Values[K].Dims[3].getConstant();
      if (H && D && uint64_t(*H * *D) == L.KElemsPerToken) {
        L.KVHeads = uint64_t(*H);
        L.HeadSize = uint64_t(*D);
      }
    }
    int64_t Window = N.getInt("local_window_size", -1);
    if (GQA && Window > 0)
      L.Window = uint64_t(Window);
    if (Out.Type == ElementType::Undefined) {
      ValueId T = K != NoId ? K : N.input(0);
      if (T != NoId && T < Shapes.Values.size())
        Out.Type = Shapes.Values[T].Type;
    }
    Out.Layers.push_back(std::move(L));
  }
}

static void fromAttentionPattern(const Graph &G, const ShapeInfo &Shapes,
                                 const Widths &W, KVCacheLayout &Out) {
  for (NodeId Id = 0; Id < G.Nodes.size(); ++Id) {
    const Node &N = G.Nodes[Id];
    if (N.OpType != "Softmax" || N.Outputs.empty())
      continue;
    NodeId S = scoresMatMul(G, N.input(0), 0);
    NodeId P = valuesMatMul(G, N.Outputs[0], 0);
    if (S == NoId || P == NoId)
      continue;
    KVLayer L;
    L.Where = nodeName(G, Id);
    L.Branch = branchOf(G, Id);
    L.KElemsPerToken = narrowestBack(G, W, G.Nodes[S].input(1));
    L.VElemsPerToken = narrowestBack(G, W, G.Nodes[P].input(1));
    if (Out.Type == ElementType::Undefined && G.Nodes[P].input(1) != NoId)
      Out.Type = Shapes.Values[G.Nodes[P].input(1)].Type;
    Out.Layers.push_back(std::move(L));
  }
}

// The cache inputs: per token, the product of their fixed dims (the batch
// and the past length are their symbols). [batch, kv_heads, past, head] or
// GPT-2's [2, batch, heads, past, head] alike.
static Error fromCacheInputs(const Graph &G, const SymbolRoles &Roles,
                             KVCacheLayout &Out, uint64_t &Bits,
                             std::string &FirstCache) {
  uint64_t Total = 0;
  for (ValueId V : G.Inputs) {
    if (!isCacheInput(G, V))
      continue;
    const Value &Val = G.Values[V];
    uint64_t E = 1;
    unsigned Symbolic = 0;
    for (const DeclaredDim &D : Val.Shape) {
      if (D.K == DeclaredDim::Kind::Static) {
        E *= uint64_t(std::max<int64_t>(D.Size, 0));
        continue;
      }
      if (D.K == DeclaredDim::Kind::Symbol &&
          is_contained(Roles.Batch, D.Symbol))
        continue;
      ++Symbolic;
      if (D.K == DeclaredDim::Kind::Symbol &&
          !is_contained(Out.PastSymbols, D.Symbol))
        Out.PastSymbols.push_back(D.Symbol);
    }
    if (Symbolic != 1)
      return makeUnsupportedError(
          G.SourcePath + ": cache input '" + Val.Name +
          "' has no single symbolic length axis besides the batch; bind its "
          "other dims in the export");
    Total += E;
    if (FirstCache.empty())
      FirstCache = Val.Name;
    Bits = elementBits(Val.Type);
    if (Out.Type == ElementType::Undefined)
      Out.Type = Val.Type;
    ++Out.CacheInputs;
  }
  if (Out.CacheInputs)
    Out.CacheInputBytesPerToken = (Total * Bits + 7) / 8;
  if (Out.CacheInputs && Out.Layers.empty()) {
    // Only the cache says it: a layer per key/value pair.
    Out.Source = KVSource::CacheInputs;
    KVLayer L;
    L.Where = "cache inputs";
    L.KElemsPerToken = Total / 2;
    L.VElemsPerToken = Total - Total / 2;
    Out.Layers.push_back(L);
  }
  return Error::success();
}

Expected<KVCacheLayout> serve::findKVCache(const Graph &G,
                                           const ShapeInfo &Shapes,
                                           const SymbolRoles &Roles) {
  Widths W(G, Shapes, Roles);
  KVCacheLayout Out;
  fromAttentionOps(G, Shapes, W, Out);
  if (Out.Layers.empty()) {
    Out.Source = KVSource::AttentionPattern;
    fromAttentionPattern(G, Shapes, W, Out);
  }
  keepOneBranch(Out);
  for (const KVLayer &L : Out.Layers)
    if (!L.KElemsPerToken || !L.VElemsPerToken)
      return makeUnsupportedError(
          G.SourcePath + ": attention block at " + L.Where +
          ": its keys or values do not grow with the sequence symbol (" +
          "--seq's), so their width per token is unknown");
  uint64_t Bits = 0;
  std::string FirstCache;
  ElementType FromOps = Out.Type;
  if (Error E = fromCacheInputs(G, Roles, Out, Bits, FirstCache))
    return std::move(E);
  if (Out.Layers.empty())
    return makeUnsupportedError(
        G.SourcePath +
        ": no attention block found (no GroupQueryAttention, Attention or "
        "MultiHeadAttention op, no MatMul -> Softmax -> MatMul, no "
        "past_key_values inputs): --serve needs a decoder");
  if (Out.Source != KVSource::CacheInputs && Out.CacheInputBytesPerToken) {
    uint64_t FromBlocks = Out.bytesPerToken(Bits);
    if (FromBlocks != *Out.CacheInputBytesPerToken)
      return makeInputError(
          G.SourcePath + ": the " + Twine(Out.Layers.size()) +
          " attention blocks keep " + Twine(FromBlocks) +
          " bytes per token (the first, at " + Out.Layers[0].Where + ", " +
          Twine(Out.Layers[0].KElemsPerToken) + " key and " +
          Twine(Out.Layers[0].VElemsPerToken) + " value elements), but the " +
          Twine(Out.CacheInputs) + " cache inputs hold " +
          Twine(*Out.CacheInputBytesPerToken) + " (the first, '" + FirstCache +
          "')");
  }
  if (FromOps != ElementType::Undefined && !Out.CacheInputs)
    Out.Type = FromOps;
  return Out;
}
