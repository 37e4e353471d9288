//===- Compress.cu - Compress, its count read back by the host ------------===//
//
// Compress keeps the slices of X along its axis whose condition is true,
// so its output's size is known only once the condition is read: as
// NonZero (NonZero.cu), the count goes to device memory for the host to
// read back (Kernel::ReportsSizes), and nothing crosses to the host but 8
// bytes. A block per outer row (grid-stride over the rows): each block
// scans the condition itself (one chunk a thread, a scan of the chunks'
// counts in shared memory, so no workspace), which gives every block the
// total and each thread its first output position, and then copies its
// chunk's kept slices of its rows. Conditions are short (an axis's
// length), so the repeated scan costs little; the rows, which hold the
// bytes, are spread over the blocks. A thread's copies are ThreadMath.h's,
// emulated on the host by ThreadMathTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include "ThreadMath.h"
#include <cstdint>
#include <cuda_runtime.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
constexpr int Threads = 256;

template <typename T>
__global__ void __launch_bounds__(Threads)
    compressKernel(const T *X, const uint8_t *Keep, int64_t Len, int64_t XLen,
                   int64_t Outer, int64_t Inner, T *Y, int64_t BoundKept,
                   int64_t *Count) {
  __shared__ int64_t First[Threads];
  __shared__ int64_t Total;
  const thread::Chunk Ch = thread::chunkOf(Len, Threads, int(threadIdx.x));
  int64_t Mine = 0;
  for (int64_t I = Ch.Begin; I < Ch.End; ++I)
    Mine += Keep[I] != 0;
  First[threadIdx.x] = Mine;
  __syncthreads();
  if (threadIdx.x == 0) { // an exclusive scan of the chunks' counts
    int64_t Run = 0;
    for (int K = 0; K < Threads; ++K) {
      const int64_t C = First[K];
      First[K] = Run;
      Run += C;
    }
    Total = Run;
    if (blockIdx.x == 0)
      *Count = Run;
  }
  __syncthreads();
  const int64_t Kept = Total;
  if (Kept > BoundKept)
    return;
  for (int64_t O = blockIdx.x; O < Outer; O += gridDim.x)
    thread::compressChunk(Keep, Ch, First[threadIdx.x], O, XLen, Kept, Inner, X,
                          Y);
}
} // namespace

int compress(const void *X, int ElemBytes, const uint8_t *Keep, int64_t Len,
             int64_t XLen, int64_t Outer, int64_t Inner, void *Y,
             int64_t BoundKept, int64_t *Count, cudaStream_t Stream) {
  // At least one block, which writes the count (0 rows: nothing to copy).
  const int Grid = int(Outer < 65535 ? (Outer > 0 ? Outer : 1) : 65535);
  return byWidth(ElemBytes, [&](auto Tag) {
    using E = decltype(Tag);
    compressKernel<E><<<Grid, Threads, 0, Stream>>>(
        static_cast<const E *>(X), Keep, Len, XLen, Outer, Inner,
        static_cast<E *>(Y), BoundKept, Count);
    return lastError();
  });
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
