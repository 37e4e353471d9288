//===- StorageCast.h - a stored element to float and back -------*- C++ -*-===//
//
// toFloat and fromFloat for the storage types kernels templated on their
// element type read and write: float on the host and the device (so that
// thread math written once runs in host tests), float16 and bfloat16 on
// the device only, rounded to nearest even as the CPU's store does
// (GQAMath.h, LowBit.cu).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_STORAGECAST_H
#define OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_STORAGECAST_H

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define OOMPLAN_CAST_HD __host__ __device__
#else
#define OOMPLAN_CAST_HD
#endif

namespace oomplan {
namespace runtime {
namespace cuda {

OOMPLAN_CAST_HD inline float toFloat(float V) { return V; }
OOMPLAN_CAST_HD inline void fromFloat(float V, float &Out) { Out = V; }
#ifdef __CUDACC__
__device__ inline float toFloat(__half V) { return __half2float(V); }
__device__ inline void fromFloat(float V, __half &Out) {
  Out = __float2half_rn(V);
}
__device__ inline float toFloat(__nv_bfloat16 V) { return __bfloat162float(V); }
__device__ inline void fromFloat(float V, __nv_bfloat16 &Out) {
  Out = __float2bfloat16_rn(V);
}
#endif

/// V rounded to T and back.
template <typename T> OOMPLAN_CAST_HD inline float roundTo(float V) {
  T R;
  fromFloat(V, R);
  return toFloat(R);
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
