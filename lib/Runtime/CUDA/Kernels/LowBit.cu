//===- LowBit.cu - MatMulNBits, GatherBlockQuantized, 4-bit DQ -----------===//
//
// The packed weights of int4 LLMs stay packed on the device: each kernel
// reads the bytes it needs and dequantizes in registers (LowBitMath.h, the
// CPU kernels' arithmetic). MatMulNBits has two paths: up to GemvRows rows
// of A (a decode step) one warp per output column streams its row of W
// once for all rows, with no workspace (a word of W a lane where a block
// is whole words, else a value a lane); a longer A (a prompt) dequantizes
// TileRows rows of W at a time into the step's planned workspace for one
// cuBLAS product each (the CPU kernel's tiling, with larger tiles).
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include "LowBitMath.h"
#include "StorageCast.h"

namespace oomplan {
namespace runtime {
namespace cuda {
namespace lowbit {

namespace {

constexpr int WarpsPerBlock = Block / 32;

template <bool Words> __global__ void gemvKernel(NBitsArgs P) {
  const int64_t N =
      int64_t(blockIdx.x) * WarpsPerBlock + int64_t(threadIdx.x / 32);
  const int Lane = int(threadIdx.x % 32);
  if (N >= P.N) // a whole warp leaves together: the shuffles below are safe
    return;
  float Acc[GemvRows];
  if (Words)
    nbitsGemvLaneWords(P, N, Lane, 32, Acc);
  else
    nbitsGemvLane(P, N, Lane, 32, Acc);
  for (int64_t M = 0; M < P.M; ++M) {
    float V = Acc[M];
    for (int O = 16; O > 0; O /= 2)
      V += __shfl_xor_sync(0xffffffffu, V, O);
    if (Lane == 0)
      P.Y[M * P.N + N] = P.Bias ? V + P.Bias[N] : V;
  }
}

__global__ void dequantizeTileKernel(NBitsArgs P, int64_t N0, int64_t Count,
                                     float *Tile) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Count;
       I += int64_t(gridDim.x) * blockDim.x)
    Tile[I] = nbitsWeight(P, N0 + I / P.K, I % P.K);
}

__global__ void rowBiasKernel(float *Y, const float *Bias, int64_t Count,
                              int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Count;
       I += int64_t(gridDim.x) * blockDim.x)
    Y[I] += Bias[I % N];
}

template <typename T>
__global__ void gatherKernel(GBQArgs A, int64_t Count, int *BadIndex) {
  const T *Scales = static_cast<const T *>(A.Scales);
  T *Y = static_cast<T *>(A.Y);
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Count;
       I += int64_t(gridDim.x) * blockDim.x) {
    const GBQPoint Pt = gbqAt(A, I);
    if (Pt.Bad) {
      *BadIndex = 1;
      fromFloat(0.0f, Y[I]);
      continue;
    }
    fromFloat(Pt.QLessZero * toFloat(Scales[Pt.ScaleIndex]), Y[I]);
  }
}

__global__ void dequantize4Kernel(const uint8_t *X, bool Signed,
                                  const float *Scale, const uint8_t *Zero,
                                  float *Y, int64_t N, quant::Axis A) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t K = A(I);
    Y[I] = quant::dequantize(nibbleAt(X, I, Signed),
                             Zero ? nibbleAt(Zero, K, Signed) : 0, Scale[K]);
  }
}

} // namespace

int nbitsGemv(const NBitsArgs &P, cudaStream_t Stream) {
  if (P.N == 0 || P.M == 0)
    return 0;
  if (P.M > GemvRows)
    return int(cudaErrorInvalidValue);
  const int64_t Blocks = (P.N + WarpsPerBlock - 1) / WarpsPerBlock;
  if (Blocks > INT32_MAX)
    return int(cudaErrorInvalidValue);
  if (nbitsWordPath(P))
    gemvKernel<true><<<unsigned(Blocks), Block, 0, Stream>>>(P);
  else
    gemvKernel<false><<<unsigned(Blocks), Block, 0, Stream>>>(P);
  return lastError();
}

int nbitsDequantize(const NBitsArgs &P, int64_t N0, int64_t Rows, float *Tile,
                    cudaStream_t Stream) {
  const int64_t Count = Rows * P.K;
  if (Count == 0)
    return 0;
  dequantizeTileKernel<<<gridFor(Count), Block, 0, Stream>>>(P, N0, Count,
                                                             Tile);
  return lastError();
}

int addRowBias(float *Y, const float *Bias, int64_t M, int64_t N,
               cudaStream_t Stream) {
  if (M * N == 0)
    return 0;
  rowBiasKernel<<<gridFor(M * N), Block, 0, Stream>>>(Y, Bias, M * N, N);
  return lastError();
}

int gatherBlockQuantized(const GBQArgs &A, int ScaleType, int *BadIndex,
                         cudaStream_t Stream) {
  const int64_t Count = A.NIdx * A.Rows * A.Width;
  if (Count == 0)
    return 0;
  const int G = gridFor(Count);
  switch (ScaleType) {
  case 0:
    gatherKernel<float><<<G, Block, 0, Stream>>>(A, Count, BadIndex);
    break;
  case 1:
    gatherKernel<__half><<<G, Block, 0, Stream>>>(A, Count, BadIndex);
    break;
  case 2:
    gatherKernel<__nv_bfloat16><<<G, Block, 0, Stream>>>(A, Count, BadIndex);
    break;
  default:
    return int(cudaErrorInvalidValue);
  }
  return lastError();
}

int dequantize4(const uint8_t *X, bool Signed, const float *Scale,
                const uint8_t *Zero, float *Y, int64_t N, quant::Axis A,
                cudaStream_t Stream) {
  if (N == 0)
    return 0;
  dequantize4Kernel<<<gridFor(N), Block, 0, Stream>>>(X, Signed, Scale, Zero, Y,
                                                      N, A);
  return lastError();
}

} // namespace lowbit
} // namespace cuda
} // namespace runtime
} // namespace oomplan
