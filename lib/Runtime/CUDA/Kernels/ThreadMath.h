//===- ThreadMath.h - what one GPU thread computes, in plain C++ -*- C++
//-*-===//
//
// The per-thread index arithmetic of kernels whose launch logic is their
// own (NonZero's chunks and scan, a reduction over scattered axes, the
// recurrent ops' elementwise kernels, Hardmax's lines, GlobalLpPool's
// window), as
// host-and-device functions: the .cu kernels call them, and a unit test
// (test/unit/RuntimeCUDA/ThreadMathTest.cpp) runs every thread of a
// launch one after another on the host against the CPU kernel, so the
// index math is checked on machines without a GPU. Only the memory model
// (shared memory, barriers) is the device's alone; the emulation keeps its
// phases in the same order.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_THREADMATH_H
#define OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_THREADMATH_H

#include "Launch.h"
#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_THREAD_HD __host__ __device__
#else
#define OOMPLAN_THREAD_HD
#endif

namespace oomplan {
namespace runtime {
namespace cuda {
namespace thread {

/// NonZero's threads: thread T of Threads owns the contiguous chunk
/// [Begin, End) of N elements.
struct Chunk {
  int64_t Begin = 0, End = 0;
};
OOMPLAN_THREAD_HD inline Chunk chunkOf(int64_t N, int Threads, int T) {
  const int64_t Per = (N + Threads - 1) / Threads;
  Chunk C;
  C.Begin = int64_t(T) * Per < N ? int64_t(T) * Per : N;
  C.End = C.Begin + Per < N ? C.Begin + Per : N;
  return C;
}

/// Writes element I's coordinates (row-major over D) as column K of Y, a
/// [rank, Cols] matrix.
OOMPLAN_THREAD_HD inline void writeCoordinates(const NonZeroDims &D, int64_t I,
                                               int64_t K, int64_t Cols,
                                               int64_t *Y) {
  int64_t Rem = I;
  for (int Dim = D.Rank - 1; Dim >= 0; --Dim) {
    Y[Dim * Cols + K] = Rem % D.Dims[Dim];
    Rem /= D.Dims[Dim];
  }
}

/// The input offset of output I of a scattered reduction, before its
/// reduced positions.
OOMPLAN_THREAD_HD inline int64_t keptOffset(const ReduceAxes &A, int64_t I) {
  int64_t Base = 0;
  for (int K = 0; K < A.KeptRank; ++K)
    Base += (I / A.KeptDiv[K]) % A.KeptDims[K] * A.KeptStride[K];
  return Base;
}

/// The offset of reduced position R from an output's base.
OOMPLAN_THREAD_HD inline int64_t reducedOffset(const ReduceAxes &A, int64_t R) {
  int64_t Off = 0;
  for (int K = 0; K < A.RedRank; ++K)
    Off += (R / A.RedDiv[K]) % A.RedDims[K] * A.RedStride[K];
  return Off;
}

/// A recurrent step's element I (row I / H, unit I % H) of each kernel in
/// Recurrent.cu: the states before the first step, GRU's reset gate, a
/// time step's update and Y row, the final states.
OOMPLAN_THREAD_HD inline void recurrentStartAt(const RecurrentArgs &A,
                                               const float *H0, const float *C0,
                                               int64_t I) {
  const int64_t H = A.L.H, Bi = I / H, J = I % H;
  const int64_t At = A.L.state(A.Dir, Bi) + J;
  A.Hs[I] = H0 ? H0[At] : 0.0f;
  A.Cs[I] = C0 ? C0[At] : 0.0f;
}
OOMPLAN_THREAD_HD inline void recurrentResetAt(const RecurrentArgs &A,
                                               int64_t I) {
  const int64_t H = A.L.H, GH = 3 * H, Bi = I / H, J = I % H;
  recurrent::gruReset(A.P, A.Gates + Bi * GH, A.Hs + Bi * H, A.Tmp + Bi * H, J);
}
/// A length outside [0, T] counts as the nearest bound and sets *Bad.
OOMPLAN_THREAD_HD inline void recurrentStepAt(const RecurrentArgs &A,
                                              int64_t Ti, float *Y, int *Bad,
                                              int64_t I) {
  const int64_t H = A.L.H, GH = recurrent::gatesOf(A.P.K) * H;
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
OOMPLAN_THREAD_HD inline void
recurrentFinishAt(const RecurrentArgs &A, float *Yh, float *Yc, int64_t I) {
  const int64_t H = A.L.H, Bi = I / H, J = I % H;
  const int64_t At = A.L.state(A.Dir, Bi) + J;
  if (Yh)
    Yh[At] = A.Hs[I];
  if (Yc)
    Yc[At] = A.Cs[I];
}

/// Hardmax's line I of [Outer, Axis, Inner]: 1 at its first largest
/// element (a NaN is never larger), 0 elsewhere.
OOMPLAN_THREAD_HD inline void hardmaxLine(const float *In, float *Out,
                                          int64_t Axis, int64_t Inner,
                                          int64_t I) {
  const int64_t Base = (I / Inner) * Axis * Inner + I % Inner;
  float Max = In[Base];
  int64_t MaxK = 0;
  for (int64_t K = 1; K < Axis; ++K)
    if (In[Base + K * Inner] > Max) {
      Max = In[Base + K * Inner];
      MaxK = K;
    }
  for (int64_t K = 0; K < Axis; ++K)
    Out[Base + K * Inner] = K == MaxK ? 1.0f : 0.0f;
}

/// GlobalLpPool as one pool window over all of a plane's Rank spatial
/// dims (Spatial, row-major), with exponent P (pool::at's Lp).
inline pool::Window globalWindow(const int64_t *Spatial, int Rank, double P) {
  pool::Window W;
  W.Rank = Rank;
  int64_t Row = 1, Col = 1;
  for (int I = Rank - 1; I >= 0; --I) {
    W.InStride[I] = Row;
    Row *= Spatial[I];
  }
  for (int I = 0; I < Rank; ++I) {
    W.ColStride[I] = Col;
    Col *= Spatial[I];
    W.In[I] = W.K[I] = Spatial[I];
    W.Out[I] = W.S[I] = W.D[I] = 1;
  }
  W.KernelSize = Row;
  W.P = P;
  return W;
}

/// The scattered reduction's launch arguments for input Dims reduced over
/// Axes (normalized, sorted, unique; rank at most MaxRank): the kept and
/// reduced axes in order with their input strides, and row-major divisors
/// of the output index and of the reduced position.
inline ReduceAxes reduceAxesOf(const int64_t *Dims, int Rank,
                               const int64_t *Axes, int NumAxes) {
  ReduceAxes A;
  int64_t Stride = 1;
  int64_t Strides[MaxRank] = {};
  for (int D = Rank - 1; D >= 0; --D) {
    Strides[D] = Stride;
    Stride *= Dims[D];
  }
  for (int D = 0; D < Rank; ++D) {
    bool Red = false;
    for (int K = 0; K < NumAxes; ++K)
      Red = Red || Axes[K] == D;
    int &N = Red ? A.RedRank : A.KeptRank;
    (Red ? A.RedDims : A.KeptDims)[N] = Dims[D];
    (Red ? A.RedStride : A.KeptStride)[N] = Strides[D];
    ++N;
  }
  A.Outputs = 1;
  for (int K = A.KeptRank - 1; K >= 0; --K) {
    A.KeptDiv[K] = A.Outputs;
    A.Outputs *= A.KeptDims[K];
  }
  for (int K = A.RedRank - 1; K >= 0; --K) {
    A.RedDiv[K] = A.Reduced;
    A.Reduced *= A.RedDims[K];
  }
  return A;
}

} // namespace thread
} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
