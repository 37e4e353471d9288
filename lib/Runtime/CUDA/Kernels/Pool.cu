//===- Pool.cu - windowed pools cuDNN cannot express
//-----------------------===//
//
// One thread per output of one plane: the CPU kernel's per-output function
// (CPU/Kernels/PoolPoint.h, compiled here for the device), for the windows
// cuDNN's pools refuse (dilations, asymmetric padding, a ceil_mode that
// changes the output, MaxPool's Indices output). Max values and indices
// equal the CPU's; averages sum in the CPU's order, in double. And
// MaxUnpool, MaxPool's inverse: a thread per input element writes it at
// its index (ThreadMath.h's unpoolOffset).
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include "ThreadMath.h"
#include <cfloat>
#include <cstdint>
#include <cuda_runtime.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
__global__ void poolKernel(pool::Window W, pool::Kind Kd, const float *X,
                           float *Y, int64_t *Indices, int64_t InSize,
                           int64_t OutSize, int64_t Total) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Total;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t Plane = I / OutSize, O = I % OutSize;
    int64_t At = -1;
    Y[I] = pool::at<float>(W, Kd, X + Plane * InSize, O, -FLT_MAX,
                           Indices ? &At : nullptr);
    if (Indices)
      Indices[I] = Plane * InSize + At;
  }
}
} // namespace

int directPool(const pool::Window &W, pool::Kind Kd, const float *X, float *Y,
               int64_t *Indices, int64_t Planes, cudaStream_t Stream) {
  int64_t InSize = 1, OutSize = 1;
  for (int I = 0; I < W.Rank; ++I) {
    InSize *= W.In[I];
    OutSize *= W.Out[I];
  }
  const int64_t Total = Planes * OutSize;
  if (Total == 0)
    return 0;
  poolKernel<<<gridFor(Total), Block, 0, Stream>>>(W, Kd, X, Y, Indices, InSize,
                                                   OutSize, Total);
  return lastError();
}

namespace {
template <typename T>
__global__ void unpoolKernel(const T *X, const int64_t *Idx, T *Y, int64_t N,
                             UnpoolArgs A, int *BadIndex) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t Off = thread::unpoolOffset(A, Idx[I]);
    if (Off < 0)
      *BadIndex = 1;
    else
      Y[Off] = X[I];
  }
}
} // namespace

int maxUnpool(const void *X, const int64_t *Idx, void *Y, uint64_t YBytes,
              int ElemBytes, int64_t N, const UnpoolArgs &A, int *BadIndex,
              cudaStream_t Stream) {
  if (YBytes && cudaMemsetAsync(Y, 0, YBytes, Stream) != cudaSuccess)
    return lastError();
  if (N == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using T = decltype(Z);
    unpoolKernel<T><<<gridFor(N), Block, 0, Stream>>>(
        static_cast<const T *>(X), Idx, static_cast<T *>(Y), N, A, BadIndex);
    return lastError();
  });
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
