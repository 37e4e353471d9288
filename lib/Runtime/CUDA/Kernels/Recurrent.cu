//===- Recurrent.cu - RNN, GRU and LSTM: the elementwise part -------------===//
//
// The products of a recurrent step are cuBLAS's (RecurrentKernels.cpp);
// what each (batch row, hidden unit) does with its gates is the CPU
// kernel's function (CPU/Kernels/RecurrentCell.h, compiled here for the
// device), one thread an element. Lengths are read on the device: a length
// out of range raises the device flag, which the executor reports after
// the run (the CPU kernel refuses it before the first step).
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
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
  const int64_t H = A.L.H;
  OOMPLAN_REC_LOOP(A.L.B * H) {
    const int64_t Bi = I / H, J = I % H, At = A.L.state(A.Dir, Bi) + J;
    A.Hs[I] = H0 ? H0[At] : 0.0f;
    A.Cs[I] = C0 ? C0[At] : 0.0f;
  }
}

__global__ void resetKernel(RecurrentArgs A) {
  const int64_t H = A.L.H, GH = 3 * H;
  OOMPLAN_REC_LOOP(A.L.B * H) {
    const int64_t Bi = I / H, J = I % H;
    recurrent::gruReset(A.P, A.Gates + Bi * GH, A.Hs + Bi * H, A.Tmp + Bi * H,
                        J);
  }
}

__global__ void stepKernel(RecurrentArgs A, int64_t Ti, float *Y, int *Bad) {
  const int64_t H = A.L.H, GH = recurrent::gatesOf(A.P.K) * H;
  OOMPLAN_REC_LOOP(A.L.B * H) {
    const int64_t Bi = I / H, J = I % H;
    int64_t Len = A.L.T;
    if (A.SeqLens) {
      Len = A.SeqLens64 ? static_cast<const int64_t *>(A.SeqLens)[Bi]
                        : int64_t(static_cast<const int32_t *>(A.SeqLens)[Bi]);
      if (Len < 0 || Len > A.L.T) {
        *Bad = 1;
        Len = Len < 0 ? 0 : A.L.T;
      }
    }
    const bool Valid = Ti < Len;
    if (Valid)
      recurrent::update(A.P, A.Gates + Bi * GH, A.Hs + Bi * H, A.Cs + Bi * H,
                        A.Tmp2 + Bi * H, J);
    if (Y)
      Y[A.L.y(Ti, A.Dir, Bi) + J] = Valid ? A.Hs[Bi * H + J] : 0.0f;
  }
}

__global__ void finishKernel(RecurrentArgs A, float *Yh, float *Yc) {
  const int64_t H = A.L.H;
  OOMPLAN_REC_LOOP(A.L.B * H) {
    const int64_t Bi = I / H, J = I % H, At = A.L.state(A.Dir, Bi) + J;
    if (Yh)
      Yh[At] = A.Hs[I];
    if (Yc)
      Yc[At] = A.Cs[I];
  }
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
