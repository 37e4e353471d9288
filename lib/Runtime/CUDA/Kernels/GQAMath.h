//===- GQAMath.h - GroupQueryAttention's threads, in plain C++ --*- C++ -*-===//
//
// ONNX Runtime's GroupQueryAttention as the CPU kernel computes it
// (CPU/Kernels/GroupQueryAttention.cpp: which rows of the cache a batch row
// has, the positions, the rotation, the causal window, softcap and smooth
// softmax), written once for the device kernels (GroupQueryAttention.cu)
// and for a unit test that runs every thread on the host
// (test/unit/Runtime/CUDA/LowBitThreadTest.cpp). Templated on the storage
// type T: the host instantiates float only; the device also float16 and
// bfloat16 (StorageCast.h).
//
// What the CPU kernel refuses before it runs (seqlens_k that do not fit the
// cache, a position outside cos_cache, several new tokens in a batch of
// more than one) depends on values in device memory here: a thread that
// meets it raises the device's index flag, which the executor turns into
// an error at its next synchronize, as for Gather.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_GQAMATH_H
#define OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_GQAMATH_H

#include "StorageCast.h"
#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_GQA_HD __host__ __device__
#else
#define OOMPLAN_GQA_HD
#endif

typedef struct CUstream_st *cudaStream_t;

namespace oomplan {
namespace runtime {
namespace cuda {
namespace gqa {

/// The node's operands (device pointers on a GPU, host ones in the test)
/// and dims: query [B, S, Hq * D] (or packed [B, S, (Hq + 2 Hkv) * D] with
/// K and V null), key and value [B, S, Hkv * D], past caches [B, Hkv, Past,
/// D] (null when Past is 0), seqlens_k [B] and total_sequence_length [1]
/// (int32), cos and sin caches [CosRows, Rot / 2], position_ids (int64 or
/// int32, PosCount values, may be null); outputs [B, S, Hq * D] and the present
/// caches [B, Hkv, Present, D].
struct GQAArgs {
  const void *Q = nullptr, *K = nullptr, *V = nullptr, *PastK = nullptr,
             *PastV = nullptr, *Cos = nullptr, *Sin = nullptr,
             *PosIds = nullptr;
  const int32_t *Seqlens = nullptr, *Total = nullptr;
  void *Y = nullptr, *PresentK = nullptr, *PresentV = nullptr;
  int64_t B = 0, S = 0, Hq = 0, Hkv = 0, D = 0, Past = 0, Present = 0, Rot = 0,
          CosRows = 0, Window = -1, PosCount = 0;
  bool Packed = false, Rotary = false, Interleaved = false, Smooth = false,
       Pos64 = true;
  float Scale = 1.0f, Softcap = 0.0f;
};

/// How this call's sequence relates to the cache, from
/// total_sequence_length: the first prompt (S tokens, no past), or new
/// tokens after a past; Bad for what ONNX Runtime refuses (several new
/// tokens after a past in a batch above 1; after the first prompt, more
/// than one token).
struct Mode {
  bool First = false, Bad = false;
};
OOMPLAN_GQA_HD inline Mode modeOf(const GQAArgs &A) {
  Mode M;
  const int64_t Total = A.Total[0];
  const bool Subsequent = A.S > 1 && A.S != Total;
  M.First = !Subsequent && A.S == Total;
  M.Bad = (Subsequent && A.B != 1) || (!Subsequent && !M.First && A.S != 1);
  return M;
}

/// Batch row B's past length (its first new token's row in the cache).
OOMPLAN_GQA_HD inline int64_t pastOf(const GQAArgs &A, Mode M, int64_t B) {
  return M.First ? 0 : int64_t(A.Seqlens[B]) + 1 - A.S;
}

/// Whether batch row B's tokens fit the caches (the CPU kernel's check).
OOMPLAN_GQA_HD inline bool rowFits(const GQAArgs &A, Mode M, int64_t B) {
  const int64_t Total = int64_t(A.Seqlens[B]) + 1, Past = pastOf(A, M, B);
  return !M.Bad && Past >= 0 && Total <= A.Present && Past + A.S <= A.Present &&
         (M.First || Past <= A.Past);
}

/// The rotary position of token S of batch row B.
/// Only rotation reads it: 0 without. -1 (no rotary row) when
/// position_ids has too few values.
OOMPLAN_GQA_HD inline int64_t positionOf(const GQAArgs &A, Mode M, int64_t B,
                                         int64_t S) {
  if (!A.Rotary)
    return 0;
  if (A.PosIds) {
    const int64_t I = M.First ? 0 : B * A.S + S;
    if (I >= A.PosCount)
      return -1;
    const int64_t P = A.Pos64 ? static_cast<const int64_t *>(A.PosIds)[I]
                              : static_cast<const int32_t *>(A.PosIds)[I];
    return M.First ? P + S : P;
  }
  return pastOf(A, M, B) + S;
}

/// Whether position P has a row of the rotary caches (always, without
/// rotation).
OOMPLAN_GQA_HD inline bool positionFits(const GQAArgs &A, int64_t P) {
  return !A.Rotary || (P >= 0 && P < A.CosRows);
}

/// Element offset of head Head of token S of batch row B in the query
/// (Slot 0), key (1) or value (2) input, or in the packed query.
OOMPLAN_GQA_HD inline int64_t rowOf(const GQAArgs &A, int64_t B, int64_t S,
                                    int64_t Head, int Slot) {
  const int64_t Width =
      A.Packed ? (A.Hq + 2 * A.Hkv) * A.D : (Slot == 0 ? A.Hq : A.Hkv) * A.D;
  const int64_t Base = !A.Packed   ? 0
                       : Slot == 0 ? 0
                       : Slot == 1 ? A.Hq * A.D
                                   : (A.Hq + A.Hkv) * A.D;
  return (B * A.S + S) * Width + Base + Head * A.D;
}

/// Element I of row X rotated to position Pos (the first Rot dims; the
/// rest as they are), rounded to T.
template <typename T>
OOMPLAN_GQA_HD inline float rotatedAt(const GQAArgs &A, const T *X, int64_t Pos,
                                      int64_t I) {
  if (!A.Rotary || I >= A.Rot)
    return toFloat(X[I]);
  const int64_t Half = A.Rot / 2;
  int64_t Idx, J;
  float Sign;
  if (A.Interleaved) {
    Idx = I / 2, Sign = I % 2 == 0 ? -1.0f : 1.0f, J = I ^ 1;
  } else {
    Idx = I % Half, Sign = I < Half ? -1.0f : 1.0f;
    J = (I + Half) % A.Rot;
  }
  const int64_t C = Pos * Half + Idx;
  const float Cs = toFloat(static_cast<const T *>(A.Cos)[C]),
              Sn = toFloat(static_cast<const T *>(A.Sin)[C]);
  return roundTo<T>(toFloat(X[I]) * Cs + Sign * toFloat(X[J]) * Sn);
}

/// Element E of the present caches (B, Hkv, Present, D): the past's row,
/// the new token's key (rotated) and value, or zeros past them. False
/// (and zeros) when the row does not fit or its position has no rotary
/// row: the caller raises the flag.
template <typename T>
OOMPLAN_GQA_HD inline bool presentAt(const GQAArgs &A, Mode M, int64_t E,
                                     float &KOut, float &VOut) {
  KOut = VOut = 0.0f;
  const int64_t Dd = E % A.D, Line = E / A.D;
  const int64_t Row = Line % A.Present, Head = (Line / A.Present) % A.Hkv,
                B = Line / (A.Present * A.Hkv);
  if (!rowFits(A, M, B))
    return false;
  const int64_t Past = pastOf(A, M, B);
  if (Row < Past) {
    const int64_t Src = ((B * A.Hkv + Head) * A.Past + Row) * A.D + Dd;
    KOut = toFloat(static_cast<const T *>(A.PastK)[Src]);
    VOut = toFloat(static_cast<const T *>(A.PastV)[Src]);
    return true;
  }
  if (Row >= Past + A.S)
    return true;
  const int64_t S = Row - Past, Pos = positionOf(A, M, B, S);
  if (!positionFits(A, Pos))
    return false;
  const T *K = static_cast<const T *>(A.Packed ? A.Q : A.K),
          *V = static_cast<const T *>(A.Packed ? A.Q : A.V);
  KOut = rotatedAt<T>(A, K + rowOf(A, B, S, Head, 1), Pos, Dd);
  VOut = toFloat(V[rowOf(A, B, S, Head, 2) + Dd]);
  return true;
}

/// Score of the attention: Scale * Dot, soft-capped when Softcap > 0.
OOMPLAN_GQA_HD inline float scoreOf(const GQAArgs &A, float Dot) {
  float X = A.Scale * Dot;
  if (A.Softcap > 0)
    X = A.Softcap * tanhf(X / A.Softcap);
  return X;
}

/// The online softmax of one row (flash attention's recurrence): Max and
/// Sum of exp(score - Max) so far; smooth softmax starts from a score of 0
/// with no value (the extra 1 of its denominator).
struct Softmax {
  float Max, Sum;
  OOMPLAN_GQA_HD explicit Softmax(bool Smooth)
      : Max(Smooth ? 0.0f : -INFINITY), Sum(Smooth ? 1.0f : 0.0f) {}
  /// Adds score X: returns its weight exp(X - new max) and sets Rescale to
  /// what the accumulated values are multiplied by first.
  OOMPLAN_GQA_HD float push(float X, float &Rescale) {
    const float New = X > Max ? X : Max;
    Rescale = expf(Max - New);
    const float P = expf(X - New);
    Sum = Sum * Rescale + P;
    Max = New;
    return P;
  }
};

/// Part Part of Parts of query row (B, S, H)'s keys (equal chunks of its
/// causal range, in order; a chunk may be empty), computed by Lanes threads
/// of which this is Lane: the lane owns dims Lane, Lane + Lanes, ... (at
/// most Slots of them; the device runs a warp, Lanes 32; the test one lane
/// holding all). LaneSum adds a value over the lanes (a warp's shuffles;
/// the identity for one lane). Sm and Acc are the online softmax's state
/// over the chunk: Sm as the caller made it (smooth softmax's implicit
/// zero logit in one part only, so that merging counts it once), Acc
/// zeroed here. False when the row does not fit (the same for every part).
template <typename T, int Slots, typename SumFn>
OOMPLAN_GQA_HD inline bool attendPart(const GQAArgs &A, Mode M, int64_t B,
                                      int64_t S, int64_t H, int Lane, int Lanes,
                                      int Part, int Parts, SumFn LaneSum,
                                      Softmax &Sm, float (&Acc)[Slots]) {
  const int64_t Pos = positionOf(A, M, B, S);
  if (!rowFits(A, M, B) || !positionFits(A, Pos))
    return false;
  float Q[Slots];
  const T *QRow = static_cast<const T *>(A.Q) + rowOf(A, B, S, H, 0);
  for (int R = 0; R < Slots; ++R) {
    const int64_t I = Lane + int64_t(R) * Lanes;
    Q[R] = I < A.D ? rotatedAt<T>(A, QRow, Pos, I) : 0.0f;
    Acc[R] = 0.0f;
  }
  const int64_t KvHead = H / (A.Hq / A.Hkv);
  const int64_t Base = (B * A.Hkv + KvHead) * A.Present * A.D;
  const T *K = static_cast<const T *>(A.PresentK) + Base,
          *V = static_cast<const T *>(A.PresentV) + Base;
  const int64_t Causal = pastOf(A, M, B) + S + 1;
  const int64_t Start =
      A.Window > 0 && Causal > A.Window ? Causal - A.Window : 0;
  const int64_t Chunk = (Causal - Start + Parts - 1) / Parts;
  const int64_t From = Start + Part * Chunk;
  const int64_t To = From + Chunk < Causal ? From + Chunk : Causal;
  for (int64_t J = From; J < To; ++J) {
    float Dot = 0;
    for (int R = 0; R < Slots; ++R) {
      const int64_t I = Lane + int64_t(R) * Lanes;
      if (I < A.D)
        Dot += Q[R] * toFloat(K[J * A.D + I]);
    }
    float Rescale;
    const float P = Sm.push(scoreOf(A, LaneSum(Dot)), Rescale);
    for (int R = 0; R < Slots; ++R) {
      const int64_t I = Lane + int64_t(R) * Lanes;
      if (I < A.D)
        Acc[R] = Acc[R] * Rescale + P * toFloat(V[J * A.D + I]);
    }
  }
  return true;
}

/// Adds part From (its softmax state and accumulators, the same lane's
/// dims) to Into: both rescaled to the larger max. A part without keys
/// (Sum 0, max -inf) adds nothing.
template <int Slots>
OOMPLAN_GQA_HD inline void mergePart(Softmax &Into, float (&Acc)[Slots],
                                     const Softmax &From,
                                     const float (&FromAcc)[Slots]) {
  if (From.Sum == 0)
    return;
  if (Into.Sum == 0) {
    Into = From;
    for (int R = 0; R < Slots; ++R)
      Acc[R] = FromAcc[R];
    return;
  }
  const float New = From.Max > Into.Max ? From.Max : Into.Max;
  const float A = expf(Into.Max - New), B = expf(From.Max - New);
  Into.Sum = Into.Sum * A + From.Sum * B;
  Into.Max = New;
  for (int R = 0; R < Slots; ++R)
    Acc[R] = Acc[R] * A + FromAcc[R] * B;
}

/// Writes row (B, S, H)'s output from its merged state: the lane's dims.
template <typename T, int Slots>
OOMPLAN_GQA_HD inline void
writeRow(const GQAArgs &A, int64_t B, int64_t S, int64_t H, int Lane, int Lanes,
         const Softmax &Sm, const float (&Acc)[Slots]) {
  T *Y = static_cast<T *>(A.Y) + (B * A.S + S) * A.Hq * A.D + H * A.D;
  for (int R = 0; R < Slots; ++R) {
    const int64_t I = Lane + int64_t(R) * Lanes;
    if (I < A.D)
      fromFloat(Acc[R] / Sm.Sum, Y[I]);
  }
}

/// Query row (B, S, H)'s output in one part (attendPart's lanes): false
/// when the row does not fit (nothing written).
template <typename T, int Slots, typename SumFn>
OOMPLAN_GQA_HD inline bool attendRow(const GQAArgs &A, Mode M, int64_t B,
                                     int64_t S, int64_t H, int Lane, int Lanes,
                                     SumFn LaneSum) {
  Softmax Sm(A.Smooth);
  float Acc[Slots];
  if (!attendPart<T, Slots>(A, M, B, S, H, Lane, Lanes, 0, 1, LaneSum, Sm, Acc))
    return false;
  writeRow<T, Slots>(A, B, S, H, Lane, Lanes, Sm, Acc);
  return true;
}

/// Head dims a device lane holds: head_size up to 32 * LaneSlots.
constexpr int LaneSlots = 8;

/// The launcher (GroupQueryAttention.cu): the present caches, then one
/// warp per query row, or, for fewer rows than fill the device (a decode
/// step), one block per row whose warps take a part of its keys each.
/// Type 0 float, 1 float16, 2 bfloat16.
int groupQueryAttention(const GQAArgs &A, int Type, int *BadIndex,
                        cudaStream_t Stream);

} // namespace gqa
} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
