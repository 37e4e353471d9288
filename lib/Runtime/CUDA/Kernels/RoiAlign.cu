//===- RoiAlign.cu - RoiAlign ---------------------------------------------===//
//
// One thread per output bin of one region and channel: the CPU kernel's
// per-bin function (CPU/Kernels/RoiAlignPoint.h, compiled here for the
// device), so both backends sample alike. A batch index out of range gives
// zeros and raises the device flag, which the executor reports after the
// run (the CPU kernel refuses it before sampling). Compiled without FMA
// contraction: the sample coordinates decide which pixels are read.
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include <cstdint>
#include <cuda_runtime.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
__global__ void roiAlignKernel(roialign::Params P, const float *X,
                               const float *Rois, const void *Batch,
                               bool Batch64, float *Y, int64_t N, int64_t Ch,
                               int64_t H, int64_t W, int64_t Total, int *Bad) {
  const int64_t Bins = P.OH * P.OW;
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Total;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t RC = I / Bins, Bin = I % Bins;
    const int64_t R = RC / Ch, Cc = RC % Ch;
    const int64_t B = Batch64 ? static_cast<const int64_t *>(Batch)[R]
                              : int64_t(static_cast<const int32_t *>(Batch)[R]);
    if (B < 0 || B >= N) {
      *Bad = 1;
      Y[I] = 0;
      continue;
    }
    Y[I] = roialign::bin(P, Rois + R * 4, X + (B * Ch + Cc) * H * W, H, W,
                         Bin / P.OW, Bin % P.OW);
  }
}
} // namespace

int roiAlign(const roialign::Params &P, const float *X, const float *Rois,
             const void *Batch, bool Batch64, float *Y, int64_t N, int64_t C,
             int64_t H, int64_t W, int64_t NumRois, int *BadIndex,
             cudaStream_t Stream) {
  const int64_t Total = NumRois * C * P.OH * P.OW;
  if (Total == 0)
    return 0;
  roiAlignKernel<<<gridFor(Total), Block, 0, Stream>>>(
      P, X, Rois, Batch, Batch64, Y, N, C, H, W, Total, BadIndex);
  return lastError();
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
