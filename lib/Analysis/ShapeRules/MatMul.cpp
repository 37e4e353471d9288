//===- MatMul.cpp - rules for matrix products -----------------------------===//
//
// MatMul (numpy semantics: 1-D operands promoted and the added axis removed,
// batch dims broadcast), Gemm (transA/transB), MatMulInteger and
// QLinearMatMul (int32 / quantized outputs), ONNX Runtime's MatMulNBits
// and GroupQueryAttention, and Einsum.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <map>

using namespace oomplan;
using namespace oomplan::shapes;

namespace {

/// numpy matmul of shapes A and B.
llvm::Expected<std::vector<SymExpr>> matmulShape(const RuleContext &Ctx,
                                                 llvm::ArrayRef<SymExpr> A,
                                                 llvm::ArrayRef<SymExpr> B) {
  if (A.empty() || B.empty())
    return Ctx.error("MatMul operands must have rank >= 1");
  std::vector<SymExpr> AA = A.vec(), BB = B.vec();
  bool AVec = AA.size() == 1, BVec = BB.size() == 1;
  if (AVec)
    AA.insert(AA.begin(), SymExpr::constant(1));
  if (BVec)
    BB.push_back(SymExpr::constant(1));
  const SymExpr &KA = AA.back(), &KB = BB[BB.size() - 2];
  std::optional<int64_t> CA = KA.getConstant(), CB = KB.getConstant();
  if (CA && CB && *CA != *CB)
    return Ctx.error("inner dims differ: " + llvm::Twine(*CA) + " and " +
                     llvm::Twine(*CB));
  Ctx.require(DimConstraint::Kind::Equal, KA, KB, "inner dims of A and B");
  llvm::Expected<std::vector<SymExpr>> Batch =
      broadcastShapes(Ctx, llvm::ArrayRef<SymExpr>(AA).drop_back(2),
                      llvm::ArrayRef<SymExpr>(BB).drop_back(2));
  if (!Batch)
    return Batch.takeError();
  std::vector<SymExpr> Out = std::move(*Batch);
  if (!AVec)
    Out.push_back(AA[AA.size() - 2]);
  if (!BVec)
    Out.push_back(BB.back());
  return Out;
}

llvm::Error matmul(RuleContext &Ctx) {
  llvm::StringRef Op = Ctx.node().OpType;
  ElementType Type = Op == "MatMulInteger"   ? ElementType::Int32
                     : Op == "QLinearMatMul" ? Ctx.inType(7)
                                             : Ctx.inType(0);
  // QLinearMatMul: a, a_scale, a_zero_point, b, ...
  size_t BIndex = Op == "QLinearMatMul" ? 3 : 1;
  llvm::Expected<std::vector<SymExpr>> Out =
      matmulShape(Ctx, Ctx.inDims(0), Ctx.inDims(BIndex));
  if (!Out)
    return Out.takeError();
  Ctx.setOutput(0, Type, std::move(*Out));
  return llvm::Error::success();
}

llvm::Error gemm(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> A = Ctx.inDims(0), B = Ctx.inDims(1);
  if (A.size() != 2 || B.size() != 2)
    return Ctx.error("Gemm operands must be 2-D");
  bool TA = Ctx.node().getInt("transA", 0), TB = Ctx.node().getInt("transB", 0);
  const SymExpr &M = TA ? A[1] : A[0], &KA = TA ? A[0] : A[1];
  const SymExpr &KB = TB ? B[1] : B[0], &N = TB ? B[0] : B[1];
  std::optional<int64_t> CA = KA.getConstant(), CB = KB.getConstant();
  if (CA && CB && *CA != *CB)
    return Ctx.error("inner dims differ: " + llvm::Twine(*CA) + " and " +
                     llvm::Twine(*CB));
  Ctx.require(DimConstraint::Kind::Equal, KA, KB, "inner dims of A and B");
  // C broadcasts to [M, N] (unidirectionally): each trailing dim is 1 or
  // the output's.
  if (Ctx.numInputs() > 2 && Ctx.hasInput(2)) {
    llvm::ArrayRef<SymExpr> C = Ctx.inDims(2);
    const SymExpr *OutDims[2] = {&M, &N};
    if (C.size() > 2)
      return Ctx.error("C has rank " + llvm::Twine(C.size()) +
                       "; it must broadcast to [M, N]");
    for (size_t I = 0; I < C.size(); ++I) {
      std::optional<int64_t> D = C[I].getConstant(),
                             Want = OutDims[2 - C.size() + I]->getConstant();
      if (D && Want && *D != 1 && *D != *Want)
        return Ctx.error("C dim " + llvm::Twine(I) + " is " + llvm::Twine(*D) +
                         ", it must be 1 or " + llvm::Twine(*Want));
      Ctx.require(DimConstraint::Kind::Broadcast, C[I],
                  *OutDims[2 - C.size() + I], "C dim " + llvm::Twine(I));
    }
  }
  Ctx.setOutput(0, Ctx.inType(0), {M, N});
  return llvm::Error::success();
}

/// Einsum: labels from the equation; output given or implicit (labels seen
/// once, sorted). Ellipsis broadcasts.
llvm::Error einsum(RuleContext &Ctx) {
  std::string Eq = Ctx.node().getString("equation", "");
  Eq.erase(std::remove(Eq.begin(), Eq.end(), ' '), Eq.end());
  size_t Arrow = Eq.find("->");
  std::string Lhs = Eq.substr(0, Arrow);
  std::vector<std::string> Terms;
  for (size_t P = 0;;) {
    size_t C = Lhs.find(',', P);
    Terms.push_back(Lhs.substr(P, C == std::string::npos ? C : C - P));
    if (C == std::string::npos)
      break;
    P = C + 1;
  }
  if (Terms.size() != Ctx.numInputs())
    return Ctx.error("equation has " + llvm::Twine(Terms.size()) +
                     " operands, node has " + llvm::Twine(Ctx.numInputs()));
  // Each term: letters and at most one "..."; anything else would make the
  // axis walk below step past the operand's dims.
  auto WellFormed = [](llvm::StringRef T) {
    size_t Dots = T.find("...");
    return T.count('.') == (Dots == llvm::StringRef::npos ? 0u : 3u) &&
           llvm::all_of(T, [](char C) { return llvm::isAlpha(C) || C == '.'; });
  };
  for (const std::string &T : Terms)
    if (!WellFormed(T))
      return Ctx.error("malformed equation term '" + T +
                       "' (letters and at most one '...')");
  std::map<char, SymExpr> Size;
  std::map<char, int> Count;
  std::vector<SymExpr> Ellipsis;
  for (size_t I = 0; I < Terms.size(); ++I) {
    llvm::ArrayRef<SymExpr> D = Ctx.inDims(I);
    const std::string &T = Terms[I];
    size_t Dots = T.find("...");
    size_t Letters = T.size() - (Dots == std::string::npos ? 0 : 3);
    if (Letters > D.size())
      return Ctx.error("operand " + llvm::Twine(I) + " has too few dims");
    size_t EllRank = D.size() - Letters, Axis = 0;
    for (size_t K = 0; K < T.size(); ++K) {
      if (T[K] == '.') {
        llvm::Expected<std::vector<SymExpr>> E =
            broadcastShapes(Ctx, Ellipsis, D.slice(Axis, EllRank));
        if (!E)
          return E.takeError();
        Ellipsis = std::move(*E);
        Axis += EllRank;
        K += 2;
        continue;
      }
      SymExpr &S = Size[T[K]];
      if (Count[T[K]]) {
        std::optional<int64_t> A = S.getConstant(), B = D[Axis].getConstant();
        if (A && B && *A != *B && *A != 1 && *B != 1)
          return Ctx.error("label '" + std::string(1, T[K]) + "' is " +
                           llvm::Twine(*A) + " in one operand and " +
                           llvm::Twine(*B) + " in operand " + llvm::Twine(I));
      }
      S = Count[T[K]] ? broadcastDim(S, D[Axis]) : D[Axis];
      ++Count[T[K]];
      ++Axis;
    }
  }
  std::string OutTerm;
  if (Arrow != std::string::npos) {
    OutTerm = Eq.substr(Arrow + 2);
    if (!WellFormed(OutTerm))
      return Ctx.error("malformed equation output '" + OutTerm +
                       "' (letters and at most one '...')");
  } else {
    if (!Ellipsis.empty())
      OutTerm = "...";
    for (auto &[C, N] : Count)
      if (N == 1)
        OutTerm += C;
  }
  std::vector<SymExpr> Out;
  for (size_t K = 0; K < OutTerm.size(); ++K) {
    if (OutTerm[K] == '.') {
      Out.insert(Out.end(), Ellipsis.begin(), Ellipsis.end());
      K += 2;
      continue;
    }
    auto It = Size.find(OutTerm[K]);
    if (It == Size.end())
      return Ctx.error("output label '" + std::string(1, OutTerm[K]) +
                       "' is not in any operand");
    Out.push_back(It->second);
  }
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

/// Det: batch dims of a [..., M, M] input.
llvm::Error det(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> In = Ctx.inDims(0);
  if (In.size() < 2)
    return Ctx.error("input must have rank >= 2");
  Ctx.setOutput(0, Ctx.inType(0), In.drop_back(2).vec());
  return llvm::Error::success();
}

/// MatMulNBits (ONNX Runtime's, com.microsoft): A [..., K] times the
/// dequantized B^T, B [N, ceil(K / block_size), block_size * bits / 8]
/// (uint8, packed, any shape of that many bytes), one scale (and zero point)
/// per row and block:
/// [..., N] of A's type. The packed sizes are checked here, so that the
/// kernels can trust them and the weights' bytes are what the attributes
/// say.
llvm::Error matmulNBits(RuleContext &Ctx) {
  const Node &N = Ctx.node();
  const int64_t K = N.getInt("K", 0), NOut = N.getInt("N", 0),
                Bits = N.getInt("bits", 4), Block = N.getInt("block_size", 0);
  constexpr int64_t MaxDim = int64_t(1) << 40;
  if (K <= 0 || NOut <= 0 || K > MaxDim || NOut > MaxDim)
    return Ctx.error("attributes K and N must be positive (at most 2^40); "
                     "they are " +
                     llvm::Twine(K) + " and " + llvm::Twine(NOut));
  if (Bits != 2 && Bits != 4 && Bits != 8)
    return Ctx.error("bits " + llvm::Twine(Bits) + " is not 2, 4 or 8");
  if (Block < 16 || Block > (int64_t(1) << 20) || (Block & (Block - 1)))
    return Ctx.error("block_size " + llvm::Twine(Block) +
                     " is not a power of 2 from 16");
  const int64_t Blocks = (K + Block - 1) / Block, Blob = Block * Bits / 8;
  if (NOut > (int64_t(1) << 62) / Blocks / Blob)
    return Ctx.error("N * K is too large (" + llvm::Twine(NOut) + " * " +
                     llvm::Twine(K) + ")");
  if (Ctx.inType(1) != ElementType::UInt8)
    return Ctx.error("B must be uint8 (packed weights); it is " +
                     elementTypeName(Ctx.inType(1)));
  if (!isFloatingPoint(Ctx.inType(0)))
    return Ctx.error("A must be a float tensor; it is " +
                     elementTypeName(Ctx.inType(0)));
  // Scales and bias are of A's type (ONNX Runtime's T1).
  for (size_t I : {size_t(2), size_t(5)})
    if (Ctx.hasInput(I) && Ctx.inType(I) != Ctx.inType(0))
      return Ctx.error(std::string(I == 2 ? "scales" : "bias") + " must be " +
                       elementTypeName(Ctx.inType(0)).str() +
                       " like A; it is " +
                       elementTypeName(Ctx.inType(I)).str());
  // A known dim that differs from Want is an error; a symbolic one is
  // left to the kernel.
  auto Check = [&](const SymExpr &D, int64_t Want,
                   const llvm::Twine &What) -> llvm::Error {
    std::optional<int64_t> C = D.getConstant();
    if (C && *C != Want)
      return Ctx.error(What + " is " + llvm::Twine(*C) +
                       "; K, N, bits and "
                       "block_size make it " +
                       llvm::Twine(Want));
    return llvm::Error::success();
  };
  auto Count = [](llvm::ArrayRef<SymExpr> Dims) -> std::optional<int64_t> {
    int64_t P = 1;
    for (const SymExpr &D : Dims) {
      std::optional<int64_t> C = D.getConstant();
      if (!C || *C < 0 || (*C && P > (int64_t(1) << 62) / *C))
        return std::nullopt;
      P *= *C;
    }
    return P;
  };
  llvm::ArrayRef<SymExpr> A = Ctx.inDims(0);
  if (A.empty())
    return Ctx.error("A must have rank >= 1");
  if (llvm::Error E = Check(A.back(), K, "A's last dim"))
    return E;
  auto CheckCount = [&](size_t I, int64_t Want,
                        const char *What) -> llvm::Error {
    if (I >= Ctx.numInputs() || !Ctx.hasInput(I))
      return llvm::Error::success();
    std::optional<int64_t> C = Count(Ctx.inDims(I));
    if (C && *C != Want)
      return Ctx.error(llvm::Twine(What) + " has " + llvm::Twine(*C) +
                       " values; K, N and block_size make it " +
                       llvm::Twine(Want));
    return llvm::Error::success();
  };
  // B is [N, blocks, blob] as the quantizer writes it; ONNX Runtime reads
  // only its bytes in that order, so any shape of that count is taken.
  if (llvm::Error E = CheckCount(1, NOut * Blocks * Blob, "B"))
    return E;
  if (llvm::Error E = CheckCount(2, NOut * Blocks, "scales"))
    return E;
  if (Ctx.hasInput(3)) {
    // Zero points: packed like B (uint8, a row's padded to whole bytes),
    // or one per scale in the scales' type.
    bool Packed = Ctx.inType(3) == ElementType::UInt8;
    if (!Packed && Ctx.inType(3) != Ctx.inType(2))
      return Ctx.error("zero_points must be uint8 or the scales' type");
    int64_t Want = Packed ? NOut * ((Blocks * Bits + 7) / 8) : NOut * Blocks;
    if (llvm::Error E = CheckCount(3, Want, "zero_points"))
      return E;
  }
  if (Ctx.hasInput(4))
    return Ctx.unsupported("g_idx (act-order weights) is not supported");
  if (llvm::Error E = CheckCount(5, NOut, "bias"))
    return E;
  std::vector<SymExpr> Out = A.vec();
  Out.back() = SymExpr::constant(NOut);
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

/// GroupQueryAttention (ONNX Runtime's, com.microsoft): query [B, S, Hq*D]
/// (or Q, K and V packed: [B, S, (Hq + 2 Hkv) * D]), key and value
/// [B, S, Hkv*D], the KV cache [B, Hkv, P, D]; output [B, S, Hq*D],
/// present K and V [B, Hkv, max(P, total_sequence_length), D], as ONNX
/// Runtime sizes them (a cache longer than the total is written in place
/// of the past's length).
llvm::Error groupQueryAttention(RuleContext &Ctx) {
  const Node &N = Ctx.node();
  const int64_t Hq = N.getInt("num_heads", 0),
                Hkv = N.getInt("kv_num_heads", 0);
  if (Hq <= 0 || Hkv <= 0 || Hq % Hkv != 0 || Hq > (int64_t(1) << 20))
    return Ctx.error("num_heads (" + llvm::Twine(Hq) +
                     ") must be a positive multiple of kv_num_heads (" +
                     llvm::Twine(Hkv) + ")");
  // What oomplan's kernel does not compute is refused here, by name.
  static const char *const Inputs[] = {"query",
                                       "key",
                                       "value",
                                       "past_key",
                                       "past_value",
                                       "seqlens_k",
                                       "total_sequence_length",
                                       "cos_cache",
                                       "sin_cache",
                                       "position_ids",
                                       "attention_bias",
                                       "head_sink",
                                       "k_scale",
                                       "v_scale",
                                       "q_norm_weight",
                                       "k_norm_weight"};
  for (size_t I = 10; I < Ctx.numInputs(); ++I)
    if (Ctx.hasInput(I))
      return Ctx.unsupported(std::string("input ") + Inputs[I < 16 ? I : 15] +
                             " is not supported");
  if (!Ctx.hasOutput(1) || !Ctx.hasOutput(2))
    return Ctx.unsupported("present_key and present_value must be outputs "
                           "(oomplan's kernel keeps the keys there)");
  if (Ctx.hasOutput(3) || N.getInt("qk_output", 0) != 0)
    return Ctx.unsupported("output_qk is not supported");
  if (N.getInt("causal", 1) != 1)
    return Ctx.unsupported("causal=0 (bidirectional) is not supported");
  if (N.getInt("sliding_window_cache", 0) != 0)
    return Ctx.unsupported("sliding_window_cache=1 is not supported");
  for (const char *Q : {"k_quant_type", "v_quant_type"})
    if (N.getString(Q, "NONE") != "NONE")
      return Ctx.unsupported(std::string(Q) + " " + N.getString(Q, "") +
                             " (a quantized KV cache) is not supported");
  if (!Ctx.hasInput(5) || !Ctx.hasInput(6))
    return Ctx.error("seqlens_k and total_sequence_length (inputs 5 and 6) "
                     "are required");
  llvm::ArrayRef<SymExpr> Q = Ctx.inDims(0);
  if (Q.size() != 3)
    return Ctx.error("query must be 3-D [batch, sequence, hidden]");
  const bool Packed = !Ctx.hasInput(1);
  if (Packed == Ctx.hasInput(2))
    return Ctx.error("key and value must be given together (or neither, "
                     "for a packed query)");
  std::optional<int64_t> Hidden = Q[2].getConstant();
  if (!Hidden)
    return Ctx.unsupported("query's hidden size is not a known number");
  const int64_t Div = Packed ? Hq + 2 * Hkv : Hq;
  if (*Hidden <= 0 || *Hidden % Div != 0)
    return Ctx.error("query's hidden size " + llvm::Twine(*Hidden) +
                     " is not a multiple of " + llvm::Twine(Div) +
                     (Packed ? " (num_heads + 2 * kv_num_heads)" : ""));
  const int64_t D = *Hidden / Div;
  if (!Packed) {
    llvm::ArrayRef<SymExpr> K = Ctx.inDims(1), V = Ctx.inDims(2);
    for (llvm::ArrayRef<SymExpr> KV : {K, V}) {
      std::optional<int64_t> C =
          KV.size() == 3 ? KV[2].getConstant() : std::nullopt;
      if (KV.size() != 3 || (C && *C != Hkv * D))
        return Ctx.error("key and value must be [batch, sequence, " +
                         llvm::Twine(Hkv * D) + "]");
    }
  }
  if (Ctx.hasInput(3) != Ctx.hasInput(4))
    return Ctx.error("past_key and past_value must be given together");
  if (Ctx.hasInput(7) != Ctx.hasInput(8))
    return Ctx.error("cos_cache and sin_cache must be given together");
  if (N.getInt("do_rotary", 0) && !Ctx.hasInput(7))
    return Ctx.error("do_rotary=1 needs cos_cache and sin_cache");
  if (Ctx.hasInput(7)) {
    llvm::ArrayRef<SymExpr> C = Ctx.inDims(7);
    std::optional<int64_t> Half =
        C.size() == 2 ? C[1].getConstant() : std::nullopt;
    if (C.size() != 2 || (Half && (*Half <= 0 || 2 * *Half > D)))
      return Ctx.error("cos_cache must be [positions, at most head_size/2]");
  }
  // The cache's length: the past's, or the total sequence length when
  // longer (a value the shape pass follows from Shape(attention_mask)).
  const std::optional<std::vector<SymExpr>> &Total = Ctx.inValues(6);
  if (!Total || Total->size() != 1)
    return Ctx.unsupported("total_sequence_length is not a value the shape "
                           "analysis can follow (it comes from data)");
  SymExpr Len = (*Total)[0];
  if (Ctx.hasInput(3)) {
    llvm::ArrayRef<SymExpr> P = Ctx.inDims(3);
    if (P.size() != 4)
      return Ctx.error("past_key must be 4-D [batch, kv_num_heads, length, "
                       "head_size]");
    Len = SymExpr::max(P[2], Len);
  }
  Ctx.setOutput(0, Ctx.inType(0), {Q[0], Q[1], SymExpr::constant(Hq * D)});
  for (size_t O : {size_t(1), size_t(2)})
    Ctx.setOutput(O, Ctx.hasInput(3) ? Ctx.inType(3) : Ctx.inType(0),
                  {Q[0], SymExpr::constant(Hkv), Len, SymExpr::constant(D)});
  return llvm::Error::success();
}

/// OomplanMatMul: a MatMul or, with gemm=1, a Gemm; the bias and the
/// activation keep the product's shape (the fusion checks that the bias
/// broadcasts into it).
llvm::Error fusedMatMul(RuleContext &Ctx) {
  if (Ctx.node().getInt("gemm", 0))
    return gemm(Ctx);
  return matmul(Ctx);
}

/// OomplanAttention: softmax((Q K^T) * scale + bias) V, shaped as the two
/// products: [batch..., Sq, Dv], the batch dims of Q, K and V broadcast.
llvm::Error fusedAttention(RuleContext &Ctx) {
  if (Ctx.numInputs() < 3)
    return Ctx.error("needs inputs Q, K and V");
  llvm::ArrayRef<SymExpr> Q = Ctx.inDims(0), K = Ctx.inDims(1),
                          V = Ctx.inDims(2);
  if (Q.size() < 2 || K.size() < 2 || V.size() < 2)
    return Ctx.error("Q, K and V must have rank >= 2");
  // K^T as [..., D, Sk]: swap K's last two dims unless already transposed.
  std::vector<SymExpr> KT = K.vec();
  if (!Ctx.node().getInt("k_transposed", 0))
    std::swap(KT[KT.size() - 1], KT[KT.size() - 2]);
  llvm::Expected<std::vector<SymExpr>> Scores = matmulShape(Ctx, Q, KT);
  if (!Scores)
    return Scores.takeError();
  llvm::Expected<std::vector<SymExpr>> Out = matmulShape(Ctx, *Scores, V);
  if (!Out)
    return Out.takeError();
  // Output 1 (training only): one fp32 log-sum-exp per query row.
  if (Ctx.hasOutput(1))
    Ctx.setOutput(1, ElementType::Float,
                  llvm::ArrayRef<SymExpr>(*Out).drop_back().vec());
  Ctx.setOutput(0, Ctx.inType(0), std::move(*Out));
  return llvm::Error::success();
}

} // namespace

void shapes::addMatMulRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::FusedMatMul, fusedMatMul);
  F.add(ops::ShapeRuleId::FusedAttention, fusedAttention);
  F.add(ops::ShapeRuleId::MatMul, matmul);
  F.add(ops::ShapeRuleId::MatMulNBits, matmulNBits);
  F.add(ops::ShapeRuleId::GroupQueryAttention, groupQueryAttention);
  F.add(ops::ShapeRuleId::Gemm, gemm);
  F.add(ops::ShapeRuleId::Einsum, einsum);
  F.add(ops::ShapeRuleId::Det, det);
}
