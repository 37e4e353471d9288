//===- GroupQueryAttention.cu - ONNX Runtime's GQA on the device ---------===//
//
// Two kernels on one stream (GQAMath.h has what each thread computes):
// the present caches element by element (the past's rows, the new keys
// rotated and values, zeros after them), then one warp per query row, each
// lane holding head_size / 32 dims of the rotated query and of the
// accumulator, keys visited in order with an online softmax: no score
// matrix and no workspace. With few rows (a decode step) a row gets a
// block instead, its warps a part of the keys each, merged in shared
// memory (the first GPU run: 5.32 ms for a 4-layer decode step after a
// cache of 1023, its 16 rows walking the cache on 2 SMs). A long prompt's
// attention is a tiled kernel's job, left for a GPU to measure
// (docs/cuda.md).
//
//===----------------------------------------------------------------------===//
#include "GQAMath.h"
#include "Launching.cuh"

namespace oomplan {
namespace runtime {
namespace cuda {
namespace gqa {

namespace {

template <typename T>
__global__ void presentKernel(GQAArgs A, int64_t Count, int *BadIndex) {
  const Mode M = modeOf(A);
  T *PK = static_cast<T *>(A.PresentK), *PV = static_cast<T *>(A.PresentV);
  for (int64_t E = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; E < Count;
       E += int64_t(gridDim.x) * blockDim.x) {
    float K, V;
    if (!presentAt<T>(A, M, E, K, V))
      *BadIndex = 1;
    fromFloat(K, PK[E]);
    fromFloat(V, PV[E]);
  }
}

struct WarpSum {
  __device__ float operator()(float V) const {
    for (int O = 16; O > 0; O /= 2)
      V += __shfl_xor_sync(0xffffffffu, V, O);
    return V;
  }
};

constexpr int WarpsPerBlock = Block / 32;

template <typename T>
__global__ void attendKernel(GQAArgs A, int64_t Rows, int *BadIndex) {
  const int64_t Row =
      int64_t(blockIdx.x) * WarpsPerBlock + int64_t(threadIdx.x / 32);
  if (Row >= Rows) // whole warps leave: the shuffles stay full
    return;
  const int64_t H = Row % A.Hq, S = (Row / A.Hq) % A.S, B = Row / (A.Hq * A.S);
  if (!attendRow<T, LaneSlots>(A, modeOf(A), B, S, H, int(threadIdx.x % 32), 32,
                               WarpSum()))
    *BadIndex = 1;
}

// One block per query row, each warp a part of its keys (attendPart), the
// parts merged by warp 0 through shared memory: a decode step has one row
// per query head (16 in gpu-check's int4 LLM), which as one warp each
// leaves all but two of the device's SMs idle while every warp walks the
// whole cache key by key.
template <typename T>
__global__ void attendPartsKernel(GQAArgs A, int *BadIndex) {
  __shared__ float PartMax[WarpsPerBlock], PartSum[WarpsPerBlock];
  __shared__ float PartAcc[WarpsPerBlock][32 * LaneSlots];
  const int64_t Row = blockIdx.x;
  const int Warp = int(threadIdx.x / 32), Lane = int(threadIdx.x % 32);
  const int64_t H = Row % A.Hq, S = (Row / A.Hq) % A.S, B = Row / (A.Hq * A.S);
  // Smooth softmax's implicit zero logit belongs to one part.
  Softmax Sm(A.Smooth && Warp == 0);
  float Acc[LaneSlots];
  // Whether the row fits is the same for every warp: all leave together,
  // before the barrier.
  if (!attendPart<T, LaneSlots>(A, modeOf(A), B, S, H, Lane, 32, Warp,
                                WarpsPerBlock, WarpSum(), Sm, Acc)) {
    if (threadIdx.x == 0)
      *BadIndex = 1;
    return;
  }
  if (Lane == 0) {
    PartMax[Warp] = Sm.Max;
    PartSum[Warp] = Sm.Sum;
  }
  for (int R = 0; R < LaneSlots; ++R)
    PartAcc[Warp][Lane + 32 * R] = Acc[R];
  __syncthreads();
  if (Warp != 0)
    return;
  for (int W = 1; W < WarpsPerBlock; ++W) {
    Softmax From(false);
    From.Max = PartMax[W];
    From.Sum = PartSum[W];
    float FromAcc[LaneSlots];
    for (int R = 0; R < LaneSlots; ++R)
      FromAcc[R] = PartAcc[W][Lane + 32 * R];
    mergePart<LaneSlots>(Sm, Acc, From, FromAcc);
  }
  writeRow<T, LaneSlots>(A, B, S, H, Lane, 32, Sm, Acc);
}

// Below this many rows, a row's keys are split over a block's warps: one
// warp a row would keep under 1024 warps busy, an eighth of what an H200
// holds at once (132 SMs of 64 warps).
constexpr int64_t SplitBelowRows = 1024;

template <typename T>
int launch(const GQAArgs &A, int *BadIndex, cudaStream_t Stream) {
  const int64_t Count = A.B * A.Hkv * A.Present * A.D;
  if (Count > 0) {
    presentKernel<T><<<gridFor(Count), Block, 0, Stream>>>(A, Count, BadIndex);
    if (int E = lastError())
      return E;
  }
  const int64_t Rows = A.B * A.S * A.Hq;
  const int64_t Blocks = (Rows + WarpsPerBlock - 1) / WarpsPerBlock;
  if (Rows == 0)
    return 0;
  if (Rows < SplitBelowRows) {
    attendPartsKernel<T><<<unsigned(Rows), Block, 0, Stream>>>(A, BadIndex);
    return lastError();
  }
  if (Blocks > INT32_MAX)
    return int(cudaErrorInvalidValue);
  attendKernel<T><<<unsigned(Blocks), Block, 0, Stream>>>(A, Rows, BadIndex);
  return lastError();
}

} // namespace

int groupQueryAttention(const GQAArgs &A, int Type, int *BadIndex,
                        cudaStream_t Stream) {
  switch (Type) {
  case 0:
    return launch<float>(A, BadIndex, Stream);
  case 1:
    return launch<__half>(A, BadIndex, Stream);
  case 2:
    return launch<__nv_bfloat16>(A, BadIndex, Stream);
  }
  return int(cudaErrorInvalidValue);
}

} // namespace gqa
} // namespace cuda
} // namespace runtime
} // namespace oomplan
