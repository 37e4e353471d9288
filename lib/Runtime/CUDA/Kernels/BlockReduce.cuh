//===- BlockReduce.cuh - block-wide sum and max --------------*- CUDA -*-===//
//
// Shared by the row kernels (Reduce.cu) and attention (Attention.cu): warp
// shuffles, then one warp over the warps' results. Every thread gets the
// result; Shared holds 32 floats and is reusable on return.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_BLOCKREDUCE_CUH
#define OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_BLOCKREDUCE_CUH

#include <cfloat>

namespace oomplan {
namespace runtime {
namespace cuda {

template <bool Max> __device__ float blockReduce(float V, float *Shared) {
  for (int O = 16; O > 0; O /= 2) {
    float W = __shfl_xor_sync(0xffffffffu, V, O);
    V = Max ? fmaxf(V, W) : V + W;
  }
  int Lane = threadIdx.x % 32, Warp = threadIdx.x / 32;
  if (Lane == 0)
    Shared[Warp] = V;
  __syncthreads();
  int Warps = (blockDim.x + 31) / 32;
  // The max's identity is -inf, not -FLT_MAX: attention tests the max of a
  // fully masked chunk (every score -inf) against -inf.
  V = threadIdx.x < Warps ? Shared[threadIdx.x]
                          : (Max ? -__int_as_float(0x7f800000) : 0.f);
  if (Warp == 0)
    for (int O = 16; O > 0; O /= 2) {
      float W = __shfl_xor_sync(0xffffffffu, V, O);
      V = Max ? fmaxf(V, W) : V + W;
    }
  if (threadIdx.x == 0)
    Shared[0] = V;
  __syncthreads();
  V = Shared[0];
  __syncthreads(); // Shared is reused by the next reduction
  return V;
}

/// A block-wide sum in double (LayerNormalization's statistics and the row
/// sums, accumulated in double as the CPU kernels do). Shared holds 32
/// doubles and is reusable on return.
__device__ inline double blockSumDouble(double V, double *Shared) {
  for (int O = 16; O > 0; O /= 2)
    V += __shfl_xor_sync(0xffffffffu, V, O);
  int Lane = threadIdx.x % 32, Warp = threadIdx.x / 32;
  if (Lane == 0)
    Shared[Warp] = V;
  __syncthreads();
  int Warps = (blockDim.x + 31) / 32;
  V = threadIdx.x < Warps ? Shared[threadIdx.x] : 0.0;
  if (Warp == 0)
    for (int O = 16; O > 0; O /= 2)
      V += __shfl_xor_sync(0xffffffffu, V, O);
  if (threadIdx.x == 0)
    Shared[0] = V;
  __syncthreads();
  V = Shared[0];
  __syncthreads(); // Shared is reused by the next reduction
  return V;
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
