//===- NewerOps.cu - TensorScatter, AffineGrid and Col2Im ----------------===//
//
// A thread per element (NewerOpsMath.h has what each computes): an update
// element of TensorScatter (a write index outside the cache raises the
// device's index flag and writes nothing), an output point of AffineGrid,
// an image pixel of Col2Im (a gather over the taps, so no two threads write
// one pixel and the sum keeps the CPU's order).
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include "NewerOpsMath.h"

namespace oomplan {
namespace runtime {
namespace cuda {
namespace newer {

namespace {

template <typename T>
__global__ void scatterKernel(ScatterArgs A, int64_t Count, int *BadIndex) {
  const T *U = static_cast<const T *>(A.Update);
  T *Out = static_cast<T *>(A.Out);
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Count;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t To = scatterTarget(A, I);
    if (To < 0)
      *BadIndex = 1;
    else
      Out[To] = U[I];
  }
}

__global__ void affineKernel(affine::Params A, int64_t Count) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Count;
       I += int64_t(gridDim.x) * blockDim.x)
    affine::point(A, I / A.Points, I % A.Points);
}

template <typename T>
__global__ void col2ImKernel(Col2ImArgs A, int64_t Count) {
  T *Y = static_cast<T *>(A.Y);
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Count;
       I += int64_t(gridDim.x) * blockDim.x)
    Y[I] = col2ImPixel<T>(A, I / A.Pixels, I % A.Pixels);
}

} // namespace

int tensorScatter(const ScatterArgs &A, int *BadIndex, cudaStream_t Stream) {
  const int64_t Count = A.Prefix * A.Seq * A.Row;
  if (Count == 0)
    return 0;
  return byWidth(A.ElemBytes, [&](auto Z) {
    using T = decltype(Z);
    scatterKernel<T><<<gridFor(Count), Block, 0, Stream>>>(A, Count, BadIndex);
    return lastError();
  });
}

int affineGrid(const affine::Params &A, cudaStream_t Stream) {
  const int64_t Count = A.N * A.Points;
  if (Count == 0)
    return 0;
  affineKernel<<<gridFor(Count), Block, 0, Stream>>>(A, Count);
  return lastError();
}

int col2Im(const Col2ImArgs &A, cudaStream_t Stream) {
  const int64_t Count = A.Planes * A.Pixels;
  if (Count == 0)
    return 0;
  if (A.Double)
    col2ImKernel<double><<<gridFor(Count), Block, 0, Stream>>>(A, Count);
  else
    col2ImKernel<float><<<gridFor(Count), Block, 0, Stream>>>(A, Count);
  return lastError();
}

} // namespace newer
} // namespace cuda
} // namespace runtime
} // namespace oomplan
