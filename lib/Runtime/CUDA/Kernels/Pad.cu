//===- Pad.cu - Pad's edge, reflect and wrap modes ------------------------===//
//
// A thread per output element, reading the input element the CPU kernel
// reads (CPU/Kernels/PadSource.h): the element moves as its bytes, so both
// backends give the same output. (Constant mode is a fill and a strided
// copy, DataKernels.cpp.)
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
template <typename T>
__global__ void padGatherKernel(const T *In, T *Out, pad::Geometry G, int64_t N,
                                T Constant) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t S = pad::sourceOf(G, I);
    Out[I] = S < 0 ? Constant : In[S];
  }
}
} // namespace

int padGather(const void *In, void *Out, int ElemBytes, const pad::Geometry &G,
              uint64_t Constant, cudaStream_t Stream) {
  int64_t N = 1;
  for (int K = 0; K < G.Rank; ++K)
    N *= G.OutDims[K];
  if (N == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using T = decltype(Z);
    padGatherKernel<T><<<gridFor(N), Block, 0, Stream>>>(
        static_cast<const T *>(In), static_cast<T *>(Out), G, N, T(Constant));
    return lastError();
  });
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
