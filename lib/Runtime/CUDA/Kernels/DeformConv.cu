//===- DeformConv.cu - DeformConv, a thread per output element -----------===//
//
// The CPU kernel's arithmetic (CPU/Kernels/DeformConvPoint.h), compiled
// without contraction (CMakeLists.txt: -fmad=false), so that the double
// sums and the bilinear weights round as on the host: both backends give
// the same floats.
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
__global__ void deformKernel(deform::Params P, int64_t Count) {
  for (int64_t E = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; E < Count;
       E += int64_t(gridDim.x) * blockDim.x) {
    const int64_t J = E % P.OW, I = (E / P.OW) % P.OH,
                  O = (E / (P.OW * P.OH)) % P.OC, B = E / (P.OW * P.OH * P.OC);
    P.Y[E] = deform::deformAt(P, B, O, I, J);
  }
}
} // namespace

int deformConv(const deform::Params &P, cudaStream_t Stream) {
  const int64_t Count = P.N * P.OC * P.OH * P.OW;
  if (Count == 0)
    return 0;
  deformKernel<<<gridFor(Count), Block, 0, Stream>>>(P, Count);
  return lastError();
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
