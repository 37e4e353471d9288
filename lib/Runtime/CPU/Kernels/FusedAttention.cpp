//===- FusedAttention.cpp - CPU kernel: OomplanAttention, online softmax --===//
//
// softmax((Q K^T) * scale + Bias, masked) V without the Sq x Sk scores: the
// flash-attention tiling. A task is one batch index and a block of Br query
// rows; it walks the keys Bc at a time, computes the Br x Bc score tile with
// one GEMM, and keeps per row the running max m, the running sum l of
// exp(s - m) and an accumulator of exp(s - m) V, rescaling both by
// exp(m_old - m_new) when the max grows. The output is the accumulator
// divided by l. The workspace (fused::attentionWorkspaceBytes, the planner
// counts the same bytes) holds AttentionMaxWorkers slots of one tile, one
// accumulator and the two row vectors; tasks are dealt to slots, never to
// threads, so the plan does not depend on the machine. A fully masked row
// gets 0/0 = NaN, as the unfused Softmax gives.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include "FastMath.h"
#include "FusedKernels.h"
#include "Gemm.h"
#include "TensorUtil.h"
#include "oomplan/IR/FusedOps.h"
#include <cmath>
#include <limits>
#include <vector>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// One operand seen from the output's batch: the element offset of its
/// matrix for each batch index, and (Bias, Mask) its row and column strides.
struct Operand {
  const void *Data = nullptr;
  std::vector<int64_t> BatchOff;
  int64_t RowStride = 0, ColStride = 0;
};

/// Everything one run needs, checked once.
struct Attention {
  int64_t Batch = 1, Sq = 0, Sk = 0, D = 0, Dv = 0;
  bool KTransposed = false, FillWhere = true;
  float Scale = 1, Fill = -std::numeric_limits<float>::infinity();
  Operand Q, K, V, Bias, Mask;
  float *Y = nullptr;
};

/// The element strides of T right-aligned to Target (numpy broadcasting:
/// 0 on an axis T lacks or has as 1). False when a dim is neither 1 nor
/// Target's.
bool broadcastStrides(const TensorRef &T, llvm::ArrayRef<int64_t> Target,
                      DimVector &S) {
  const size_t R = Target.size();
  if (T.Dims.size() > R)
    return false;
  DimVector Own = stridesOf(T.Dims);
  S.assign(R, 0);
  for (size_t I = 0; I < T.Dims.size(); ++I) {
    const size_t A = R - T.Dims.size() + I;
    if (T.Dims[I] != 1 && T.Dims[I] != Target[A])
      return false;
    S[A] = T.Dims[I] == 1 ? 0 : Own[I];
  }
  return true;
}

/// Operand O of Sh as the tile loops read it: the offset of its matrix for
/// each batch index, and its row and column strides.
void bindOperand(const AttentionShape &Sh, const TensorRef &T, int O,
                 Operand &Op) {
  const DimVector &S = Sh.Strides[O];
  const size_t R = S.size(), NB = Sh.BatchDims.size();
  Op.Data = T.Data;
  Op.RowStride = S[R - 2];
  Op.ColStride = S[R - 1];
  Op.BatchOff.assign(size_t(Sh.Batch), 0);
  for (int64_t B = 0; B < Sh.Batch; ++B) {
    int64_t Rem = B, Off = 0;
    for (int64_t A = int64_t(NB) - 1; A >= 0; --A) {
      Off += (Rem % Sh.BatchDims[A]) * S[A];
      Rem /= Sh.BatchDims[A];
    }
    Op.BatchOff[size_t(B)] = Off;
  }
}

/// Checks the node's refs against the contract and fills A.
llvm::Error prepare(const KernelContext &C, Attention &A) {
  AttentionShape Sh;
  if (llvm::Error E = attentionShape(C, Sh))
    return E;
  A.Batch = Sh.Batch;
  A.Sq = Sh.Sq;
  A.Sk = Sh.Sk;
  A.D = Sh.D;
  A.Dv = Sh.Dv;
  A.KTransposed = Sh.KTransposed;
  A.FillWhere = Sh.FillWhere;
  A.Scale = Sh.Scale;
  A.Fill = Sh.Fill;
  Operand *Ops[5] = {&A.Q, &A.K, &A.V, &A.Bias, &A.Mask};
  for (int O = 0; O < 5; ++O)
    if (!Sh.Strides[O].empty())
      bindOperand(Sh, C.Inputs[O], O, *Ops[O]);
  A.Y = C.Outputs[0].data<float>();
  return llvm::Error::success();
}

/// Adds the bias and applies the mask to row I (query row Row) of a tile
/// whose first key is Col0.
void biasAndMask(const Attention &A, int64_t B, int64_t Row, int64_t Col0,
                 float *S, int64_t Kn) {
  if (A.Bias.Data) {
    const float *P = static_cast<const float *>(A.Bias.Data) +
                     A.Bias.BatchOff[B] + Row * A.Bias.RowStride +
                     Col0 * A.Bias.ColStride;
    for (int64_t J = 0; J < Kn; ++J)
      S[J] += P[J * A.Bias.ColStride];
  }
  if (A.Mask.Data) {
    const uint8_t *P = static_cast<const uint8_t *>(A.Mask.Data) +
                       A.Mask.BatchOff[B] + Row * A.Mask.RowStride +
                       Col0 * A.Mask.ColStride;
    for (int64_t J = 0; J < Kn; ++J)
      if ((P[J * A.Mask.ColStride] != 0) == A.FillWhere)
        S[J] = A.Fill;
  }
}

/// e^X for the softmax's exponents (X <= 0 once the max is subtracted, or
/// NaN): fastExp (FastMath.h, within 3e-7 relative), and 0 below -87.3,
/// where float's exp underflows (masked scores, -inf, among them). With
/// std::exp, a libm call per score, the exponents were half the kernel.
inline float softmaxExp(float X) { return X < -87.3f ? 0.0f : fastExp(X); }

/// The online-softmax step for one row of Kn scores S: turns S into
/// exp(s - m_new), rescales the row's accumulator and sum by
/// exp(m_old - m_new). A row whose max is still -inf contributes nothing
/// (its probabilities are 0), so a later finite block starts clean. A NaN
/// score makes the row's sum NaN, which stays NaN (NaN * c + s), so the
/// row comes out NaN as the unfused Softmax gives it, whatever the block
/// it falls in: the max skips NaN, and a block of NaN and -inf only would
/// otherwise be dropped with the -inf ones. The max, the NaN test and the
/// sum run in eight lanes, so that their loops vectorize (a float sum in
/// one chain cannot be reordered), then across the lanes.
OOMPLAN_SIMD_CLONES void onlineRow(float *S, int64_t Kn, float &M, float &L,
                                   float *Acc, int64_t Dv) {
  constexpr int W = 8;
  float MaxL[W];
  int NaNL[W] = {};
  for (int I = 0; I < W; ++I)
    MaxL[I] = M;
  int64_t J = 0;
  for (; J + W <= Kn; J += W)
    for (int I = 0; I < W; ++I) {
      const float V = S[J + I];
      NaNL[I] |= V != V;
      MaxL[I] = MaxL[I] < V ? V : MaxL[I]; // std::max: NaN skipped
    }
  float Max = M;
  bool NaN = false;
  for (int I = 0; I < W; ++I) {
    NaN |= NaNL[I] != 0;
    Max = std::max(Max, MaxL[I]);
  }
  for (; J < Kn; ++J) {
    NaN |= std::isnan(S[J]);
    Max = std::max(Max, S[J]);
  }
  if (NaN)
    L = std::numeric_limits<float>::quiet_NaN();
  if (Max == -std::numeric_limits<float>::infinity()) {
    std::fill(S, S + Kn, 0.0f);
    return;
  }
  const float Corr = softmaxExp(M - Max);
  for (int64_t K = 0; K < Kn; ++K)
    S[K] = softmaxExp(S[K] - Max);
  float SumL[W] = {};
  J = 0;
  for (; J + W <= Kn; J += W)
    for (int I = 0; I < W; ++I)
      SumL[I] += S[J + I];
  float Sum = 0;
  for (int I = 0; I < W; ++I)
    Sum += SumL[I];
  for (; J < Kn; ++J)
    Sum += S[J];
  if (Corr != 1.0f)
    for (int64_t K = 0; K < Dv; ++K)
      Acc[K] *= Corr;
  L = L * Corr + Sum;
  M = Max;
}

/// One task: rows [R0, R0 + Rn) of batch index B, with slot scratch S
/// (Br x Bc), Acc (Br x Dv), Mx and L (Br each).
void attendRows(const Attention &A, int64_t B, int64_t R0, int64_t Rn,
                int64_t Bc, float *S, float *Acc, float *Mx, float *L) {
  const float *Q =
      static_cast<const float *>(A.Q.Data) + A.Q.BatchOff[B] + R0 * A.D;
  const float *K = static_cast<const float *>(A.K.Data) + A.K.BatchOff[B];
  const float *V = static_cast<const float *>(A.V.Data) + A.V.BatchOff[B];
  std::fill(Mx, Mx + Rn, -std::numeric_limits<float>::infinity());
  std::fill(L, L + Rn, 0.0f);
  std::fill(Acc, Acc + Rn * A.Dv, 0.0f);
  for (int64_t K0 = 0; K0 < A.Sk; K0 += Bc) {
    const int64_t Kn = std::min(Bc, A.Sk - K0);
    // S = scale * Q_rows K_cols^T; K is [Sk, D] (transposed by BLAS) or
    // already [D, Sk].
    if (A.D == 0)
      for (int64_t I = 0; I < Rn; ++I)
        std::fill(S + I * Bc, S + I * Bc + Kn, 0.0f);
    else if (A.KTransposed)
      gemm<float>(false, false, Rn, Kn, A.D, A.Scale, Q, A.D, K + K0, A.Sk,
                  0.0f, S, Bc);
    else
      gemm<float>(false, true, Rn, Kn, A.D, A.Scale, Q, A.D, K + K0 * A.D, A.D,
                  0.0f, S, Bc);
    for (int64_t I = 0; I < Rn; ++I) {
      biasAndMask(A, B, R0 + I, K0, S + I * Bc, Kn);
      onlineRow(S + I * Bc, Kn, Mx[I], L[I], Acc + I * A.Dv, A.Dv);
    }
    if (A.Dv)
      gemm<float>(false, false, Rn, A.Dv, Kn, 1.0f, S, Bc, V + K0 * A.Dv, A.Dv,
                  1.0f, Acc, A.Dv);
  }
  // A row that never saw a finite score has L = 0 and Acc = 0: 0/0 = NaN.
  float *Y = A.Y + (B * A.Sq + R0) * A.Dv;
  for (int64_t I = 0; I < Rn; ++I) {
    const float Inv = 1.0f / L[I];
    for (int64_t J = 0; J < A.Dv; ++J)
      Y[I * A.Dv + J] = Acc[I * A.Dv + J] * Inv;
  }
}

uint64_t attentionWorkspace(const Node &, llvm::ArrayRef<TensorRef> Inputs,
                            llvm::ArrayRef<TensorRef> Outputs) {
  if (Inputs.size() < 3 || Outputs.empty() || Outputs[0].Dims.size() < 2 ||
      Inputs[2].Dims.size() < 2)
    return 0;
  const auto &YD = Outputs[0].Dims, &VD = Inputs[2].Dims;
  const size_t R = YD.size();
  return fused::attentionWorkspaceBytes(
      uint64_t(productOf(YD, 0, R - 2)), uint64_t(YD[R - 2]),
      uint64_t(VD[VD.size() - 2]), uint64_t(YD[R - 1]));
}

llvm::Error runAttention(const KernelContext &C) {
  Attention A;
  if (llvm::Error E = prepare(C, A))
    return E;
  if (A.Batch == 0 || A.Sq == 0 || A.Dv == 0)
    return llvm::Error::success();
  if (A.Sk == 0) { // softmax over nothing, times an empty V: zeros
    std::fill(A.Y, A.Y + A.Batch * A.Sq * A.Dv, 0.0f);
    return llvm::Error::success();
  }
  const uint64_t Need = fused::attentionWorkspaceBytes(
      uint64_t(A.Batch), uint64_t(A.Sq), uint64_t(A.Sk), uint64_t(A.Dv));
  if (!C.Workspace || C.WorkspaceBytes < Need)
    return C.badInput("the plan gave " + llvm::Twine(C.WorkspaceBytes) +
                      " workspace bytes, the attention tiles need " +
                      llvm::Twine(Need));
  const int64_t Br = std::min<int64_t>(fused::AttentionBlockRows, A.Sq);
  const int64_t Bc = std::min<int64_t>(fused::AttentionBlockCols, A.Sk);
  const int64_t Blocks = (A.Sq + Br - 1) / Br, Tasks = A.Batch * Blocks;
  const int64_t Slots =
      std::min<int64_t>(int64_t(fused::AttentionMaxWorkers), Tasks);
  const int64_t SlotFloats = Br * Bc + Br * A.Dv + 2 * Br;
  // Each slot's tile GEMMs run on the pool thread that owns the slot, so
  // OpenBLAS itself must stay single-threaded: no BLAS threads under ours.
  useBlasThreads(1);
  float *Base = static_cast<float *>(C.Workspace);
  C.Pool.parallelFor(Slots, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t Slot = Begin; Slot < End; ++Slot) {
      float *S = Base + Slot * SlotFloats, *Acc = S + Br * Bc;
      float *Mx = Acc + Br * A.Dv, *L = Mx + Br;
      for (int64_t T = Slot; T < Tasks; T += Slots) {
        const int64_t R0 = (T % Blocks) * Br;
        attendRows(A, T / Blocks, R0, std::min(Br, A.Sq - R0), Bc, S, Acc, Mx,
                   L);
      }
    }
  });
  return llvm::Error::success();
}

} // namespace

llvm::Error attentionShape(const KernelContext &C, AttentionShape &A) {
  if (llvm::Error E = requireInputs(C, 3))
    return E;
  const TensorRef &Q = C.Inputs[0], &K = C.Inputs[1], &V = C.Inputs[2];
  const TensorRef &Y = C.Outputs[0];
  for (const TensorRef *T : {&Q, &K, &V, &Y})
    if (T->Type != ElementType::Float)
      return C.unsupported("Q, K, V and the output must be float32");
  if (Q.Dims.size() < 2 || K.Dims.size() < 2 || V.Dims.size() < 2 ||
      Y.Dims.size() < 2)
    return C.badInput("Q, K, V and the output need rank 2 or more");
  const size_t R = Y.Dims.size(), NB = R - 2;
  A.KTransposed = C.N.getInt("k_transposed", 0) != 0;
  A.Sq = Y.Dims[R - 2];
  A.Dv = Y.Dims[R - 1];
  A.D = Q.Dims.back();
  A.Sk = V.Dims[V.Dims.size() - 2];
  A.Batch = productOf(Y.Dims, 0, NB);
  A.BatchDims.assign(Y.Dims.begin(), Y.Dims.end() - 2);
  auto Bind = [&](const TensorRef &T, int64_t Rows, int64_t Cols, int O) {
    DimVector Full = A.BatchDims;
    Full.append({Rows, Cols});
    return T.Dims[T.Dims.size() - 2] == Rows && T.Dims.back() == Cols &&
           broadcastStrides(T, Full, A.Strides[O]);
  };
  if (!Bind(Q, A.Sq, A.D, 0) ||
      !Bind(K, A.KTransposed ? A.D : A.Sk, A.KTransposed ? A.Sk : A.D, 1) ||
      !Bind(V, A.Sk, A.Dv, 2))
    return C.badInput("Q, K and V do not match each other and the output");
  DimVector Scores = A.BatchDims;
  Scores.append({A.Sq, A.Sk});
  if (hasInput(C, 3) && (C.Inputs[3].Type != ElementType::Float ||
                         !broadcastStrides(C.Inputs[3], Scores, A.Strides[3])))
    return C.badInput("the bias is not float32 broadcastable to the scores");
  if (hasInput(C, 4) && (C.Inputs[4].Type != ElementType::Bool ||
                         !broadcastStrides(C.Inputs[4], Scores, A.Strides[4])))
    return C.badInput("the mask is not bool broadcastable to the scores");
  A.Scale = float(C.N.getFloat("scale", 1.0));
  A.Fill = float(
      C.N.getFloat("mask_fill", -std::numeric_limits<double>::infinity()));
  A.FillWhere = C.N.getInt("mask_fill_where", 1) != 0;
  return llvm::Error::success();
}

void registerFusedKernels(CPUKernelTable &T) {
  addKernel(T, fused::AttentionOp,
            Kernel{&runAttention, &attentionWorkspace, {ElementType::Float}});
  registerFusedConvKernel(T);
  registerFusedMatMulKernel(T);
  registerFusedConvDepthwiseKernel(T);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
