//===- BlockReduce.cuh - block-wide sum and max --------------*- CUDA -*-===//
//
// Shared by the row kernels (Reduce.cu) and attention (Attention.cu): warp
// shuffles, then one warp over the warps' results. Every thread gets the
// result; Shared holds 32 values and is reusable on return.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_BLOCKREDUCE_CUH
#define OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_BLOCKREDUCE_CUH

#include <cfloat>

namespace oomplan {
namespace runtime {
namespace cuda {

struct MaxOf {
  __device__ float operator()(float A, float B) const { return fmaxf(A, B); }
};
/// The max that keeps a NaN (fmaxf drops it): attention must know that a
/// chunk of NaN and -inf scores holds a NaN.
struct MaxKeepNaN {
  __device__ float operator()(float A, float B) const {
    return isnan(A) || isnan(B) ? A + B : fmaxf(A, B);
  }
};
struct SumOf {
  template <typename T> __device__ T operator()(T A, T B) const {
    return A + B;
  }
};

/// F over the block's V (Identity fills the lanes past the last warp).
template <typename T, typename Fn>
__device__ T blockCombine(T V, T *Shared, T Identity, Fn F) {
  for (int O = 16; O > 0; O /= 2)
    V = F(V, __shfl_xor_sync(0xffffffffu, V, O));
  int Lane = threadIdx.x % 32, Warp = threadIdx.x / 32;
  if (Lane == 0)
    Shared[Warp] = V;
  __syncthreads();
  int Warps = (blockDim.x + 31) / 32;
  V = threadIdx.x < Warps ? Shared[threadIdx.x] : Identity;
  if (Warp == 0)
    for (int O = 16; O > 0; O /= 2)
      V = F(V, __shfl_xor_sync(0xffffffffu, V, O));
  if (threadIdx.x == 0)
    Shared[0] = V;
  __syncthreads();
  V = Shared[0];
  __syncthreads(); // Shared is reused by the next reduction
  return V;
}

// The max's identity is -inf, not -FLT_MAX: attention tests the max of a
// fully masked chunk (every score -inf) against -inf.
template <bool Max> __device__ float blockReduce(float V, float *Shared) {
  if (Max)
    return blockCombine(V, Shared, -__int_as_float(0x7f800000), MaxOf());
  return blockCombine(V, Shared, 0.f, SumOf());
}

/// A block-wide sum in double (LayerNormalization's statistics and the row
/// sums, accumulated in double as the CPU kernels do).
__device__ inline double blockSumDouble(double V, double *Shared) {
  return blockCombine(V, Shared, 0.0, SumOf());
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
