//===- GridSample.cu - GridSample (2-D) -----------------------------------===//
//
// One thread per output point of one plane: the CPU kernel's per-point
// function (CPU/Kernels/GridSamplePoint.h, compiled here for the device),
// so both backends sample alike. Compiled without FMA contraction: the
// coordinates decide which pixels are read (floor, rint, the reflection's
// folds), and a contracted multiply-add can move one across an integer.
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include <cstdint>
#include <cuda_runtime.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
__global__ void gridSampleKernel(const float *X, const float *Grid, float *Y,
                                 int64_t N, int64_t Ch, int64_t H, int64_t W,
                                 int64_t Points, gridsample::Mode M,
                                 gridsample::Padding Pad, bool Align) {
  const int64_t Total = N * Ch * Points;
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Total;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t NC = I / Points, P = I % Points;
    const gridsample::Plane S =
        gridsample::planeOf(X + NC * H * W, H, W, Pad, Align);
    const float *G = Grid + ((NC / Ch) * Points + P) * 2;
    Y[I] = float(gridsample::sample(S, M, Align, G[0], G[1]));
  }
}
} // namespace

int gridSample(const float *X, const float *Grid, float *Y, int64_t N,
               int64_t C, int64_t H, int64_t W, int64_t Ho, int64_t Wo,
               gridsample::Mode M, gridsample::Padding Pad, bool Align,
               cudaStream_t Stream) {
  const int64_t Total = N * C * Ho * Wo;
  if (Total == 0)
    return 0;
  gridSampleKernel<<<gridFor(Total), Block, 0, Stream>>>(
      X, Grid, Y, N, C, H, W, Ho * Wo, M, Pad, Align);
  return lastError();
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
