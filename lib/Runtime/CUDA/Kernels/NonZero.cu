//===- NonZero.cu - NonZero, its count read back by the host --------------===//
//
// NonZero's output is [rank, n], n known only once the input is read, in
// the row-major order of the input's elements. One block: each of its
// threads counts the nonzero elements of its own contiguous chunk, a scan
// of the counts gives each chunk's first output column and the total n,
// and a second pass writes the coordinates at [d * n + column]. The total
// goes to Count (device memory) for the host to read back. One block reads
// the input twice at one multiprocessor's bandwidth: well under a
// millisecond for a detector's score map, and nothing of the input crosses
// to the host (a host step copied it all). No workspace: the scan is in
// shared memory. More than Bound nonzero elements write nothing. A
// thread's chunk and writes are ThreadMath.h's, emulated on the host by
// ThreadMathTest.cpp.
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
constexpr int Threads = 1024;

template <typename T> __device__ bool isNonZero(T V) { return V != T(0); }
// Zero in either half type is +0 or -0: every bit but the sign clear.
struct HalfBits {
  uint16_t Bits;
};
__device__ bool isNonZero(HalfBits V) { return (V.Bits & 0x7FFF) != 0; }

// __launch_bounds__: 1024 threads need at most 64 registers each (36 used
// on sm_90 when this was written; the bound keeps a later compiler honest).
template <typename T>
__global__ void __launch_bounds__(Threads)
    nonZeroKernel(const T *X, int64_t N, NonZeroDims D, int64_t *Y,
                  int64_t Bound, int64_t *Count) {
  __shared__ int64_t First[Threads];
  __shared__ int64_t Total;
  const thread::Chunk Ch = thread::chunkOf(N, Threads, int(threadIdx.x));
  int64_t Mine = 0;
  for (int64_t I = Ch.Begin; I < Ch.End; ++I)
    Mine += isNonZero(X[I]);
  First[threadIdx.x] = Mine;
  __syncthreads();
  if (threadIdx.x == 0) { // an exclusive scan of 1024 counts
    int64_t Run = 0;
    for (int K = 0; K < Threads; ++K) {
      int64_t C = First[K];
      First[K] = Run;
      Run += C;
    }
    Total = Run;
    *Count = Run;
  }
  __syncthreads();
  const int64_t Cols = Total;
  if (Cols > Bound)
    return;
  int64_t K = First[threadIdx.x];
  for (int64_t I = Ch.Begin; I < Ch.End; ++I)
    if (isNonZero(X[I]))
      thread::writeCoordinates(D, I, K++, Cols, Y);
}
} // namespace

int nonZero(const void *X, DType T, int64_t N, const NonZeroDims &D, int64_t *Y,
            int64_t Bound, int64_t *Count, cudaStream_t Stream) {
  auto Go = [&](auto Tag) {
    using E = decltype(Tag);
    nonZeroKernel<E><<<1, Threads, 0, Stream>>>(static_cast<const E *>(X), N, D,
                                                Y, Bound, Count);
    return lastError();
  };
  switch (T) {
  case DType::F32:
    return Go(float());
  case DType::F64:
    return Go(double());
  case DType::I32:
    return Go(int32_t());
  case DType::I64:
    return Go(int64_t());
  case DType::Bool:
  case DType::U8:
    return Go(uint8_t());
  case DType::I8:
    return Go(int8_t());
  case DType::F16:
  case DType::BF16:
    return Go(HalfBits());
  }
  return int(cudaErrorInvalidValue);
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
