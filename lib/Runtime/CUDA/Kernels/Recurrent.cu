//===- Recurrent.cu - RNN, GRU and LSTM: the elementwise part -------------===//
//
// The products of a recurrent step are cuBLAS's (RecurrentKernels.cpp);
// what each (batch row, hidden unit) does with its gates is the CPU
// kernel's function (CPU/Kernels/RecurrentCell.h, compiled here for the
// device), one thread an element (ThreadMath.h, emulated on the host by
// ThreadMathTest.cpp). Lengths are read on the device: a length
// out of range raises the device flag, which the executor reports after
// the run (the CPU kernel refuses it before the first step).
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
#define OOMPLAN_REC_LOOP(Total)                                                \
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;             \
       I < (Total); I += int64_t(gridDim.x) * blockDim.x)

__global__ void startKernel(RecurrentArgs A, const float *H0, const float *C0) {
  OOMPLAN_REC_LOOP(A.L.B * A.L.H) { thread::recurrentStartAt(A, H0, C0, I); }
}

__global__ void resetKernel(RecurrentArgs A) {
  OOMPLAN_REC_LOOP(A.L.B * A.L.H) { thread::recurrentResetAt(A, I); }
}

__global__ void stepKernel(RecurrentArgs A, int64_t Ti, float *Y, int *Bad) {
  OOMPLAN_REC_LOOP(A.L.B * A.L.H) { thread::recurrentStepAt(A, Ti, Y, Bad, I); }
}

__global__ void finishKernel(RecurrentArgs A, float *Yh, float *Yc) {
  OOMPLAN_REC_LOOP(A.L.B * A.L.H) { thread::recurrentFinishAt(A, Yh, Yc, I); }
}
#undef OOMPLAN_REC_LOOP
} // namespace

int recurrentStart(const RecurrentArgs &A, const float *H0, const float *C0,
                   cudaStream_t Stream) {
  const int64_t Total = A.L.B * A.L.H;
  if (Total == 0)
    return 0;
  startKernel<<<gridFor(Total), Block, 0, Stream>>>(A, H0, C0);
  return lastError();
}

int recurrentReset(const RecurrentArgs &A, cudaStream_t Stream) {
  const int64_t Total = A.L.B * A.L.H;
  if (Total == 0)
    return 0;
  resetKernel<<<gridFor(Total), Block, 0, Stream>>>(A);
  return lastError();
}

int recurrentStep(const RecurrentArgs &A, int64_t Ti, float *Y, int *BadIndex,
                  cudaStream_t Stream) {
  const int64_t Total = A.L.B * A.L.H;
  if (Total == 0)
    return 0;
  stepKernel<<<gridFor(Total), Block, 0, Stream>>>(A, Ti, Y, BadIndex);
  return lastError();
}

int recurrentFinish(const RecurrentArgs &A, float *Yh, float *Yc,
                    cudaStream_t Stream) {
  const int64_t Total = A.L.B * A.L.H;
  if (Total == 0 || (!Yh && !Yc))
    return 0;
  finishKernel<<<gridFor(Total), Block, 0, Stream>>>(A, Yh, Yc);
  return lastError();
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
