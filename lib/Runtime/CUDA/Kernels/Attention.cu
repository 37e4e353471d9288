//===- Attention.cu - OomplanAttention with an online softmax -------------===//
//
// One block per query row: the row's scores are made Chunk keys at a time
// in shared memory (never the Sq x Sk matrix), with the running max m and
// sum l of exp(s - m) and the accumulator of exp(s - m) V rescaled by
// exp(m_old - m_new) when the max grows (flash attention's recurrence, the
// CPU kernel's). Simple rather than fast: each thread's score is a dot
// product over D read straight from K, which suits the short sequences of
// the test models; the row-per-block split keeps every operand broadcast
// and mask rule of the CPU kernel exact.
//
//===----------------------------------------------------------------------===//
#include "AttentionOperands.cuh"
#include "BlockReduce.cuh"
#include "Launch.h"
#include <cuda_runtime.h>
#include <math_constants.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
constexpr int Threads = 128;
constexpr int Chunk = 256;

__global__ void attentionRows(AttentionArgs A) {
  extern __shared__ float Shm[]; // q[D], p[Chunk], acc[Dv], 32 for reductions
  float *Q = Shm, *P = Q + A.D, *Acc = P + Chunk, *Red = Acc + A.Dv;
  const int64_t Row = blockIdx.x % A.Sq, B = blockIdx.x / A.Sq;
  const AttentionOperands Ops = operandsAt(A, B);
  const int64_t *Off = Ops.Off;
  const float *Qp = Ops.Q, *Kp = Ops.K, *Vp = Ops.V, *Bp = Ops.Bias;
  const unsigned char *Mp = Ops.Mask;
  for (int64_t D = threadIdx.x; D < A.D; D += blockDim.x)
    Q[D] = Qp[Row * A.Row[0] + D * A.Col[0]];
  for (int64_t D = threadIdx.x; D < A.Dv; D += blockDim.x)
    Acc[D] = 0;
  float M = -CUDART_INF_F, L = 0;
  __syncthreads();
  for (int64_t K0 = 0; K0 < A.Sk; K0 += Chunk) {
    const int64_t Kn = A.Sk - K0 < Chunk ? A.Sk - K0 : Chunk;
    float Local = -CUDART_INF_F;
    for (int64_t J = threadIdx.x; J < Kn; J += blockDim.x) {
      const int64_t Key = K0 + J;
      float S = 0;
      for (int64_t D = 0; D < A.D; ++D)
        S += Q[D] * (A.KTransposed ? Kp[D * A.Row[1] + Key * A.Col[1]]
                                   : Kp[Key * A.Row[1] + D * A.Col[1]]);
      S *= A.Scale;
      if (Bp)
        S += Bp[Off[3] + Row * A.Row[3] + Key * A.Col[3]];
      if (Mp &&
          ((Mp[Off[4] + Row * A.Row[4] + Key * A.Col[4]] != 0) == A.FillWhere))
        S = A.Fill;
      P[J] = S;
      Local = MaxKeepNaN()(Local, S);
    }
    // A NaN score makes the row NaN, as the unfused Softmax does: L becomes
    // NaN and stays so (NaN * Corr + Sum). fmaxf below skips the NaN, so a
    // chunk of NaN and -inf scores alone would otherwise be dropped.
    const float Tile = blockCombine(Local, Red, -CUDART_INF_F, MaxKeepNaN());
    if (isnan(Tile))
      L = CUDART_NAN_F;
    const float Max = fmaxf(M, Tile);
    if (Max == -CUDART_INF_F) // nothing finite yet: contributes nothing
      continue;
    const float Corr = __expf(M - Max); // 0 while M is -inf
    float Part = 0;
    for (int64_t J = threadIdx.x; J < Kn; J += blockDim.x) {
      P[J] = expf(P[J] - Max);
      Part += P[J];
    }
    const float Sum = blockReduce<false>(Part, Red); // also orders P
    for (int64_t D = threadIdx.x; D < A.Dv; D += blockDim.x) {
      float V = Acc[D] * Corr;
      for (int64_t J = 0; J < Kn; ++J)
        V += P[J] * Vp[(K0 + J) * A.Row[2] + D * A.Col[2]];
      Acc[D] = V;
    }
    L = L * Corr + Sum;
    M = Max;
    __syncthreads(); // P is rewritten by the next chunk
  }
  float *Y = A.Y + (B * A.Sq + Row) * A.Dv;
  for (int64_t D = threadIdx.x; D < A.Dv; D += blockDim.x)
    Y[D] = Acc[D] / L; // 0 / 0 = NaN for a fully masked row
}
} // namespace

int attention(const AttentionArgs &A, int64_t Batch, cudaStream_t Stream) {
  if (A.Tiles && attentionTilesFit(A))
    return attentionTiled(A, Batch, Stream);
  const int64_t Blocks = Batch * A.Sq;
  if (Blocks == 0 || A.Dv == 0)
    return 0;
  if (Blocks >= (int64_t(1) << 31))
    return int(cudaErrorInvalidValue);
  const size_t Shared = sizeof(float) * size_t(A.D + Chunk + A.Dv + 32);
  if (Shared > 48 * 1024)
    return int(cudaErrorInvalidValue); // head dims beyond 5,900
  attentionRows<<<unsigned(Blocks), Threads, Shared, Stream>>>(A);
  return int(cudaGetLastError());
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
