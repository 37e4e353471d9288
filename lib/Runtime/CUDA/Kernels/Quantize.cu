//===- Quantize.cu - QuantizeLinear, DequantizeLinear, DynamicQuantize ---===//
//
// One thread an element, the CPU kernel's arithmetic (CPU/Kernels/
// QuantizePoint.h, compiled here for the device): x / scale is an IEEE
// division (no fast math) and rintf rounds half to even, as on the host, so
// both backends give the same integers. DynamicQuantizeLinear first finds
// its range in one block (min and max are exact in any order, NaN ignored
// as the CPU's std::min/std::max ignore it), which writes y_scale and
// y_zero_point; the elements then read them from device memory.
//
//===----------------------------------------------------------------------===//
#include "BlockReduce.cuh"
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
struct MinOf {
  __device__ float operator()(float A, float B) const { return fminf(A, B); }
};

// One block: the range of X, widened to include 0, gives the scale and
// the zero point (the CPU kernel's formulas).
__global__ void dynamicRangeKernel(const float *X, int64_t N, float *Scale,
                                   uint8_t *Zero) {
  __shared__ float Shared[32];
  float Min = 0, Max = 0;
  for (int64_t I = threadIdx.x; I < N; I += blockDim.x) {
    const float V = X[I];
    Min = V < Min ? V : Min;
    Max = Max < V ? V : Max;
  }
  Min = blockCombine(Min, Shared, 0.0f, MinOf());
  Max = blockCombine(Max, Shared, 0.0f, MaxOf());
  if (threadIdx.x == 0) {
    const float S = (Max - Min) / 255.0f;
    *Scale = S;
    *Zero = uint8_t(quant::saturate(0.0f - Min / S, 0.0f, 255.0f));
  }
}

__global__ void dynamicQuantizeKernel(const float *X, const float *Scale,
                                      const uint8_t *Zero, uint8_t *Y,
                                      int64_t N) {
  const float S = *Scale, Z = float(*Zero);
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x)
    Y[I] = uint8_t(quant::quantize(X[I], S, Z, 0.0f, 255.0f));
}
} // namespace

int dynamicQuantizeLinear(const float *X, int64_t N, uint8_t *Y, float *Scale,
                          uint8_t *Zero, cudaStream_t Stream) {
  dynamicRangeKernel<<<1, 1024, 0, Stream>>>(X, N, Scale, Zero);
  if (int E = lastError())
    return E;
  if (N == 0)
    return 0;
  dynamicQuantizeKernel<<<gridFor(N), Block, 0, Stream>>>(X, Scale, Zero, Y, N);
  return lastError();
}

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
