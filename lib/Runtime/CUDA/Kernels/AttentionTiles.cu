//===- AttentionTiles.cu - OomplanAttention, query tiles sharing K and V --===//
//
// The same online softmax as Attention.cu (flash attention's recurrence:
// running max m and sum l per query row, the accumulator rescaled by
// exp(m_old - m_new)), but a block takes TileQ query rows of one batch
// index and walks the keys TileK at a time with K and V staged in shared
// memory, so that each key is read from memory once per tile of queries
// instead of once per query row. FP32 throughout, no tensor cores (the
// backend's numerics: no TF32). Chosen by OOMPLAN_CUDA_ATTENTION=tiles
// until a GPU run has compared it with the row kernel (docs/cuda.md).
//
// Threads: 128, four warps. TileK is the warp size, so the per-row max and
// sum over a key tile are one warp shuffle each, a warp taking TileQ / 4
// rows. Shared memory: Q [TileQ][D], K [TileK][D | 1] (an odd row stride
// keeps the score loop's column reads on distinct banks), V [TileK][Dv],
// the tile's scores P [TileQ][TileK], the accumulator [TileQ][Dv], and m,
// l and the rescale factor per row. Indices within a tile are 32-bit: the
// tiles are used only where they fit 48 KiB (D + Dv below 244).
//
//===----------------------------------------------------------------------===//
#include "AttentionOperands.cuh"
#include "Launch.h"
#include <cuda_runtime.h>
#include <math_constants.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
constexpr int Threads = 128, Warps = Threads / 32;
constexpr int TileQ = 16, TileK = 32;
static_assert(TileK == 32, "a key tile is one warp's lanes");
static_assert(TileQ % Warps == 0, "each warp takes whole rows");

size_t sharedFloats(int64_t D, int64_t Dv) {
  return size_t(TileQ * D + TileK * (D | 1) + TileK * Dv + TileQ * TileK +
                TileQ * Dv + 3 * TileQ);
}

__global__ void attentionTiles(AttentionArgs A, int64_t QTiles) {
  extern __shared__ float Shm[];
  const int D = int(A.D), Dv = int(A.Dv), KStride = D | 1;
  float *Qs = Shm, *Ks = Qs + TileQ * D, *Vs = Ks + TileK * KStride,
        *Ps = Vs + TileK * Dv, *Acc = Ps + TileQ * TileK, *M = Acc + TileQ * Dv,
        *L = M + TileQ, *Corr = L + TileQ;
  const int Tid = threadIdx.x, Lane = Tid % 32, Warp = Tid / 32;
  const int64_t B = blockIdx.x / QTiles, Q0 = (blockIdx.x % QTiles) * TileQ;
  const int Nq = int(A.Sq - Q0 < TileQ ? A.Sq - Q0 : TileQ);
  const AttentionOperands Ops = operandsAt(A, B);
  const int64_t *Off = Ops.Off;
  const float *Qp = Ops.Q, *Kp = Ops.K, *Vp = Ops.V, *Bp = Ops.Bias;
  const unsigned char *Mp = Ops.Mask;

  for (int E = Tid; E < TileQ * D; E += Threads) {
    const int R = E / D, C = E % D;
    Qs[E] = R < Nq ? Qp[(Q0 + R) * A.Row[0] + C * A.Col[0]] : 0.f;
  }
  for (int E = Tid; E < TileQ * Dv; E += Threads)
    Acc[E] = 0;
  if (Tid < TileQ) {
    M[Tid] = -CUDART_INF_F;
    L[Tid] = 0;
  }
  __syncthreads();

  for (int64_t K0 = 0; K0 < A.Sk; K0 += TileK) {
    const int Nk = int(A.Sk - K0 < TileK ? A.Sk - K0 : TileK);
    // Stage the key tile, consecutive threads on consecutive addresses:
    // along a key's columns, or along the keys when K is transposed.
    for (int E = Tid; E < Nk * D; E += Threads) {
      if (A.KTransposed) {
        const int J = E % Nk, C = E / Nk;
        Ks[J * KStride + C] = Kp[C * A.Row[1] + (K0 + J) * A.Col[1]];
      } else {
        const int J = E / D, C = E % D;
        Ks[J * KStride + C] = Kp[(K0 + J) * A.Row[1] + C * A.Col[1]];
      }
    }
    for (int E = Tid; E < Nk * Dv; E += Threads) {
      const int J = E / Dv, C = E % Dv;
      Vs[E] = Vp[(K0 + J) * A.Row[2] + C * A.Col[2]];
    }
    __syncthreads();
    // Scores: a warp's lanes take one row's keys. Rows past Nq and keys
    // past Nk are -inf, which add nothing below.
    for (int E = Tid; E < TileQ * TileK; E += Threads) {
      const int R = E / TileK, J = E % TileK;
      float S = -CUDART_INF_F;
      if (R < Nq && J < Nk) {
        const int64_t Row = Q0 + R, Key = K0 + J;
        S = 0;
        for (int C = 0; C < D; ++C)
          S += Qs[R * D + C] * Ks[J * KStride + C];
        S *= A.Scale;
        if (Bp)
          S += Bp[Off[3] + Row * A.Row[3] + Key * A.Col[3]];
        if (Mp && ((Mp[Off[4] + Row * A.Row[4] + Key * A.Col[4]] != 0) ==
                   A.FillWhere))
          S = A.Fill;
      }
      Ps[E] = S;
    }
    __syncthreads();
    // Per row: the tile's max, the new running max, exp(s - max) and its
    // sum, as the row kernel's chunk step. A tile with nothing finite
    // (so far) changes nothing but a NaN's mark.
    for (int R = Warp; R < TileQ; R += Warps) {
      float S = Ps[R * TileK + Lane];
      float Mx = S;
      for (int O = 16; O > 0; O /= 2)
        Mx = fmaxf(Mx, __shfl_xor_sync(0xffffffffu, Mx, O));
      // A NaN score makes the row NaN (the unfused Softmax's answer): the
      // max skips it, so it is flagged, and L stays NaN once set.
      const bool AnyNaN = __any_sync(0xffffffffu, isnan(S));
      const float Old = M[R], New = fmaxf(Old, Mx);
      float P = 0, C = 1;
      if (New != -CUDART_INF_F) {
        P = expf(S - New);   // 0 for -inf scores
        C = expf(Old - New); // 0 while the row had no finite score
      }
      Ps[R * TileK + Lane] = P;
      float Sum = P;
      for (int O = 16; O > 0; O /= 2)
        Sum += __shfl_xor_sync(0xffffffffu, Sum, O);
      __syncwarp(); // every lane has read M[R] before lane 0 writes it
      if (Lane == 0) {
        if (New != -CUDART_INF_F) {
          L[R] = L[R] * C + Sum;
          M[R] = New;
        }
        if (AnyNaN)
          L[R] = CUDART_NAN_F;
        Corr[R] = C;
      }
    }
    __syncthreads();
    // The accumulator: consecutive threads take consecutive columns.
    for (int E = Tid; E < TileQ * Dv; E += Threads) {
      const int R = E / Dv, C = E % Dv;
      float V = Acc[E] * Corr[R];
      for (int J = 0; J < Nk; ++J)
        V += Ps[R * TileK + J] * Vs[J * Dv + C];
      Acc[E] = V;
    }
    __syncthreads(); // the next tile rewrites Ks, Vs and Ps
  }
  float *Y = A.Y + (B * A.Sq + Q0) * Dv;
  for (int E = Tid; E < Nq * Dv; E += Threads)
    Y[E] = Acc[E] / L[E / Dv]; // 0 / 0 = NaN for a fully masked row
}
} // namespace

bool attentionTilesFit(const AttentionArgs &A) {
  return sharedFloats(A.D, A.Dv) * sizeof(float) <= 48 * 1024;
}

int attentionTiled(const AttentionArgs &A, int64_t Batch, cudaStream_t Stream) {
  const int64_t QTiles = (A.Sq + TileQ - 1) / TileQ;
  const int64_t Blocks = Batch * QTiles;
  if (Blocks == 0 || A.Dv == 0)
    return 0;
  if (Blocks >= (int64_t(1) << 31) || !attentionTilesFit(A))
    return int(cudaErrorInvalidValue);
  attentionTiles<<<unsigned(Blocks), Threads,
                   sharedFloats(A.D, A.Dv) * sizeof(float), Stream>>>(A,
                                                                      QTiles);
  return int(cudaGetLastError());
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
