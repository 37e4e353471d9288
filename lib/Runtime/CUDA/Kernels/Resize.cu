//===- Resize.cu - Resize and Upsample ------------------------------------===//
//
// One thread per output element: the taps of each axis come from the CPU
// kernel's own function (CPU/Kernels/ResizeTaps.h, compiled here for the
// device), and the value is the weighted sum over every combination of
// taps, axis by axis and in double, in the CPU kernel's order (Resize.cpp's
// interpolate), so both backends round alike.
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include <cstdint>
#include <cuda_runtime.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
// The taps of every axis at dense output index I; Outside when any axis
// falls past a tf_crop_and_resize roi. Off[a] is the input's stride.
__device__ bool tapsAt(const ResizeArgs &A, int64_t I, resize::Taps *T) {
  bool Outside = false;
  for (int D = A.Rank - 1; D >= 0; --D) {
    T[D] = resize::axisTaps(A.M, A.Axes[D], I % A.OutDims[D], A.InDims[D]);
    I /= A.OutDims[D];
    Outside |= T[D].Outside;
  }
  return Outside;
}

// Resize.cpp's interpolate without recursion: the taps' combinations in
// the same nested order, each level's partial sum kept on a small stack.
template <typename T>
__device__ double interpolate(const T *X, const ResizeArgs &A,
                              const resize::Taps *Tp) {
  double Acc[MaxRank + 1];
  int K[MaxRank];
  int64_t Base[MaxRank + 1];
  int D = 0;
  Base[0] = 0;
  Acc[0] = 0;
  K[0] = -1;
  while (D >= 0) {
    // Next tap of axis D with a nonzero weight.
    int Next = K[D] + 1;
    while (Next < Tp[D].N && Tp[D].W[Next] == 0)
      ++Next;
    if (Next >= Tp[D].N) { // axis D done: fold its sum into axis D - 1's
      if (D == 0)
        break;
      --D;
      Acc[D] += Tp[D].W[K[D]] * Acc[D + 1];
      continue;
    }
    K[D] = Next;
    int64_t Off = Base[D] + Tp[D].Idx[Next] * A.InStride[D];
    if (D + 1 == A.Rank) {
      Acc[D] += Tp[D].W[Next] * double(X[Off]);
      continue;
    }
    Base[D + 1] = Off;
    Acc[D + 1] = 0;
    K[D + 1] = -1;
    ++D;
  }
  return Acc[0];
}

template <typename T>
__global__ void resizeKernel(ResizeArgs A, const T *X, T *Y, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    resize::Taps Tp[MaxRank];
    bool Outside = tapsAt(A, I, Tp);
    Y[I] = Outside ? T(A.Extrapolation) : T(interpolate(X, A, Tp));
  }
}

// Nearest on any element type: whole elements gathered; outside the roi
// is zero bytes (the CPU kernel's resizeNearestBytes).
template <typename T>
__global__ void nearestKernel(ResizeArgs A, const T *X, T *Y, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    resize::Taps Tp[MaxRank];
    bool Outside = tapsAt(A, I, Tp);
    int64_t Off = 0;
    for (int D = 0; D < A.Rank; ++D)
      Off += Tp[D].Idx[0] * A.InStride[D];
    Y[I] = Outside ? T(0) : X[Off];
  }
}

int64_t outCount(const ResizeArgs &A) {
  int64_t N = 1;
  for (int D = 0; D < A.Rank; ++D)
    N *= A.OutDims[D];
  return N;
}
} // namespace

int resizeInterpolate(const ResizeArgs &A, DType T, const void *X, void *Y,
                      cudaStream_t Stream) {
  int64_t N = outCount(A);
  if (N == 0)
    return 0;
  if (T == DType::F32)
    resizeKernel<float><<<gridFor(N), Block, 0, Stream>>>(
        A, static_cast<const float *>(X), static_cast<float *>(Y), N);
  else if (T == DType::F64)
    resizeKernel<double><<<gridFor(N), Block, 0, Stream>>>(
        A, static_cast<const double *>(X), static_cast<double *>(Y), N);
  else
    return int(cudaErrorInvalidValue);
  return lastError();
}

int resizeNearest(const ResizeArgs &A, int ElemBytes, const void *X, void *Y,
                  cudaStream_t Stream) {
  int64_t N = outCount(A);
  if (N == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using V = decltype(Z);
    nearestKernel<V><<<gridFor(N), Block, 0, Stream>>>(
        A, static_cast<const V *>(X), static_cast<V *>(Y), N);
    return lastError();
  });
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
