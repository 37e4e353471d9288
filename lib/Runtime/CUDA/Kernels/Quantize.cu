//===- Quantize.cu - QuantizeLinear and DequantizeLinear ------------------===//
//
// One thread an element, the CPU kernel's arithmetic (CPU/Kernels/
// QuantizePoint.h, compiled here for the device): x / scale is an IEEE
// division (no fast math) and rintf rounds half to even, as on the host, so
// both backends give the same integers.
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include <cstdint>
#include <cuda_runtime.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
template <typename Q>
__global__ void quantizeKernel(const float *X, const float *Scale,
                               const Q *Zero, Q *Y, int64_t N, quant::Axis A,
                               float Lo, float Hi) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t K = A(I);
    Y[I] = Q(
        quant::quantize(X[I], Scale[K], Zero ? float(Zero[K]) : 0.0f, Lo, Hi));
  }
}

template <typename T>
__global__ void dequantizeKernel(const T *X, const float *Scale, const T *Zero,
                                 float *Y, int64_t N, quant::Axis A) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t K = A(I);
    Y[I] =
        quant::dequantize(int64_t(X[I]), Zero ? int64_t(Zero[K]) : 0, Scale[K]);
  }
}
} // namespace

int quantizeLinear(const float *X, const float *Scale, const void *Zero,
                   void *Y, bool Signed, int64_t N, quant::Axis A,
                   cudaStream_t Stream) {
  if (N == 0)
    return 0;
  if (Signed)
    quantizeKernel<int8_t><<<gridFor(N), Block, 0, Stream>>>(
        X, Scale, static_cast<const int8_t *>(Zero), static_cast<int8_t *>(Y),
        N, A, -128.0f, 127.0f);
  else
    quantizeKernel<uint8_t><<<gridFor(N), Block, 0, Stream>>>(
        X, Scale, static_cast<const uint8_t *>(Zero), static_cast<uint8_t *>(Y),
        N, A, 0.0f, 255.0f);
  return lastError();
}

int dequantizeLinear(const void *X, DType T, const float *Scale,
                     const void *Zero, float *Y, int64_t N, quant::Axis A,
                     cudaStream_t Stream) {
  if (N == 0)
    return 0;
  auto Go = [&](auto Tag) {
    using E = decltype(Tag);
    dequantizeKernel<E><<<gridFor(N), Block, 0, Stream>>>(
        static_cast<const E *>(X), Scale, static_cast<const E *>(Zero), Y, N,
        A);
    return lastError();
  };
  switch (T) {
  case DType::I8:
    return Go(int8_t());
  case DType::U8:
    return Go(uint8_t());
  case DType::I32:
    return Go(int32_t());
  default:
    return int(cudaErrorInvalidValue);
  }
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
