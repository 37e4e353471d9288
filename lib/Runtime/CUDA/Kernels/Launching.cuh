//===- Launching.cuh - what every launcher shares ------------*- CUDA -*-===//
//
// The block size, a grid for N elements (grid-stride loops, so a capped
// grid still covers them), the launch's error code, and the dispatches on
// an element's width (kernels that move bytes) and on the number types the
// arithmetic kernels take.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_LAUNCHING_CUH
#define OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_LAUNCHING_CUH

#include "Launch.h"
#include <cstdint>
#include <cuda_runtime.h>

namespace oomplan {
namespace runtime {
namespace cuda {

constexpr int Block = 256;

inline int gridFor(int64_t N) {
  int64_t B = (N + Block - 1) / Block;
  return int(B < 65535 * 8 ? (B > 0 ? B : 1) : 65535 * 8);
}

inline int lastError() { return int(cudaGetLastError()); }

/// Fn(an unsigned integer of ElemBytes: 1, 2, 4 or 8), else invalid value.
template <typename F> int byWidth(int ElemBytes, F &&Fn) {
  switch (ElemBytes) {
  case 1:
    return Fn(uint8_t());
  case 2:
    return Fn(uint16_t());
  case 4:
    return Fn(uint32_t());
  case 8:
    return Fn(uint64_t());
  }
  return int(cudaErrorInvalidValue);
}

/// Fn(a value of T: F32, F64, I32 or I64), else invalid value.
template <typename F> int byNumberType(DType T, F &&Fn) {
  switch (T) {
  case DType::F32:
    return Fn(float());
  case DType::F64:
    return Fn(double());
  case DType::I32:
    return Fn(int32_t());
  case DType::I64:
    return Fn(int64_t());
  default:
    return int(cudaErrorInvalidValue);
  }
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
