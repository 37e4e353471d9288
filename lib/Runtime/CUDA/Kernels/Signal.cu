//===- Signal.cu - DFT and STFT, a thread per output bin -----------------===//
//
// The CPU kernels' direct sums (CPU/Kernels/DFTPoint.h) in double, compiled
// without contraction (CMakeLists.txt), one thread per bin: O(n) work a
// thread, for the short signals of the models these ops appear in (audio
// front-ends). The device's cos and sin may differ from the host's in the
// last bit of a double, below float's rounding.
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include "NewerOpsMath.h"

namespace oomplan {
namespace runtime {
namespace cuda {
namespace newer {

namespace {
template <typename T> __global__ void dftKernel(dft::Params D, int64_t Count) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Count;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t K = I % D.OutLen, P = (I / D.OutLen) % D.Points,
                  O = I / (D.OutLen * D.Points);
    double Re, Im;
    dft::bin<T>(D, O, P, K, Re, Im);
    T *Y = static_cast<T *>(D.Y) + dft::binAt(D, O, P, K);
    Y[0] = T(Re);
    Y[1] = T(Im);
  }
}

template <typename T>
__global__ void stftKernel(dft::STFTParams S, int64_t Count) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Count;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t K = I % S.Bins, F = (I / S.Bins) % S.Frames,
                  Bi = I / (S.Bins * S.Frames);
    double Re, Im;
    dft::stftBin<T>(S, Bi, F, K, Re, Im);
    T *Y = static_cast<T *>(S.Y) + I * 2;
    Y[0] = T(Re);
    Y[1] = T(Im);
  }
}
} // namespace

int dft(const dft::Params &D, cudaStream_t Stream) {
  const int64_t Count = D.Outer * D.Points * D.OutLen;
  if (Count == 0)
    return 0;
  if (D.Double)
    dftKernel<double><<<gridFor(Count), Block, 0, Stream>>>(D, Count);
  else
    dftKernel<float><<<gridFor(Count), Block, 0, Stream>>>(D, Count);
  return lastError();
}

int stft(const dft::STFTParams &S, cudaStream_t Stream) {
  const int64_t Count = S.B * S.Frames * S.Bins;
  if (Count == 0)
    return 0;
  if (S.Double)
    stftKernel<double><<<gridFor(Count), Block, 0, Stream>>>(S, Count);
  else
    stftKernel<float><<<gridFor(Count), Block, 0, Stream>>>(S, Count);
  return lastError();
}

} // namespace newer
} // namespace cuda
} // namespace runtime
} // namespace oomplan
