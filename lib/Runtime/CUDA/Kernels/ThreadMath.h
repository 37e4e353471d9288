//===- ThreadMath.h - what one GPU thread computes, in plain C++ -*- C++
//-*-===//
//
// The per-thread index arithmetic of kernels whose launch logic is their
// own (NonZero's chunks and scan, a reduction over scattered axes, the
// recurrent ops' elementwise kernels, Hardmax's lines, GlobalLpPool's
// window, Compress's copies, LpNormalization's lines, the quantized
// MatMul's operands, batches and epilogue), as
// host-and-device functions: the .cu kernels call them, and a unit test
// (test/unit/Runtime/CUDA/ThreadMathTest.cpp) runs every thread of a
// launch one after another on the host against the CPU kernel, so the
// index math is checked on machines without a GPU. Only the memory model
// (shared memory, barriers) is the device's alone; the emulation keeps its
// phases in the same order.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_THREADMATH_H
#define OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_THREADMATH_H

#include "Launch.h"
#include <cmath>
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

/// Compress's thread: the kept positions of its chunk of the condition
/// (Keep), the first of them output position K, each copying the Inner
/// elements of outer row O from X [Outer, XLen, Inner] to Y [Outer, Kept,
/// Inner].
template <typename T>
OOMPLAN_THREAD_HD inline void
compressChunk(const uint8_t *Keep, Chunk Ch, int64_t K, int64_t O, int64_t XLen,
              int64_t Kept, int64_t Inner, const T *X, T *Y) {
  for (int64_t I = Ch.Begin; I < Ch.End; ++I) {
    if (!Keep[I])
      continue;
    const T *From = X + (O * XLen + I) * Inner;
    T *To = Y + (O * Kept + K++) * Inner;
    for (int64_t J = 0; J < Inner; ++J)
      To[J] = From[J];
  }
}

/// ReverseSequence: the element of X that output element I of [T, B,
/// Inner] (TimeMajor) or [B, T, Inner] takes: its batch's first Len rows
/// reversed. A length outside [0, T] sets *Bad and reverses nothing.
OOMPLAN_THREAD_HD inline int64_t reversedSource(int64_t I, const int64_t *Len,
                                                int64_t T, int64_t B,
                                                int64_t Inner, bool TimeMajor,
                                                int *Bad) {
  const int64_t J = I % Inner, Row = I / Inner;
  const int64_t Ti = TimeMajor ? Row / B : Row % T,
                Bi = TimeMajor ? Row % B : Row / T;
  int64_t L = Len[Bi];
  if (L < 0 || L > T) {
    *Bad = 1;
    L = 0;
  }
  const int64_t Src = Ti < L ? L - 1 - Ti : Ti;
  return (TimeMajor ? Src * B + Bi : Bi * T + Src) * Inner + J;
}

/// MaxUnpool: where in Y index At goes (its coordinates in the default
/// unpooled dims, row-major, taken into Y's), or -1 when At is outside
/// those dims or a coordinate past Y's.
OOMPLAN_THREAD_HD inline int64_t unpoolOffset(const UnpoolArgs &A, int64_t At) {
  if (At < 0 || At >= A.DefCount)
    return -1;
  int64_t Rem = At, Off = 0;
  for (int D = A.Rank - 1; D >= 0; --D) {
    const int64_t C = Rem % A.Def[D];
    Rem /= A.Def[D];
    if (C >= A.YDims[D])
      return -1;
    Off += C * A.YStride[D];
  }
  return Off;
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

/// LpNormalization's line I of [Outer, D, Inner]: each element over the
/// line's L1 (P 1) or L2 norm, summed in double as on the CPU.
OOMPLAN_THREAD_HD inline void lpNormLine(const float *X, float *Y, int64_t D,
                                         int64_t Inner, int P, int64_t I) {
  const int64_t Base = (I / Inner) * D * Inner + I % Inner;
  double Norm = 0;
  for (int64_t K = 0; K < D; ++K) {
    const double V = X[Base + K * Inner];
    Norm += P == 1 ? (V < 0 ? -V : V) : V * V;
  }
  if (P == 2)
    Norm = sqrt(Norm);
  for (int64_t K = 0; K < D; ++K)
    Y[Base + K * Inner] = float(double(X[Base + K * Inner]) / Norm);
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

/// Element I of an 8-bit quantized operand (Signed: int8, else uint8).
OOMPLAN_THREAD_HD inline int32_t int8At(const void *P, bool Signed, int64_t I) {
  return Signed ? int32_t(static_cast<const int8_t *>(P)[I])
                : int32_t(static_cast<const uint8_t *>(P)[I]);
}

/// Element I of a quantized MatMul's operand less its zero point (taken
/// along the operand's flat index, as the CPU kernel widens it).
OOMPLAN_THREAD_HD inline int32_t qOperand(const void *P, const void *Zero,
                                          bool Signed, quant::Axis Z,
                                          int64_t I) {
  return int8At(P, Signed, I) - (Zero ? int8At(Zero, Signed, Z(I)) : 0);
}

/// What the thread at (Tx, Ty) of a 16 x 16 output tile, its output at
/// (Row, Col), loads for the K tile from K0: A's element (Row, K0 + Tx)
/// and B's (K0 + Ty, Col) of the batch at AOff and BOff, less their zero
/// points; 0 past the matrices' edges.
OOMPLAN_THREAD_HD inline void qTileLoad(const QMatMulArgs &P, int64_t AOff,
                                        int64_t BOff, int64_t Row, int64_t Col,
                                        int64_t K0, int Tx, int Ty, int32_t &A,
                                        int32_t &B) {
  const int64_t Ka = K0 + Tx, Kb = K0 + Ty;
  A = Row < P.M && Ka < P.K
          ? qOperand(P.A, P.AZero, P.ASigned, P.AZ, AOff + Row * P.K + Ka)
          : 0;
  B = Kb < P.K && Col < P.N
          ? qOperand(P.B, P.BZero, P.BSigned, P.BZ, BOff + Kb * P.N + Col)
          : 0;
}

/// Where batch Bt's operands start in A and B.
OOMPLAN_THREAD_HD inline void qBatchOffsets(const QMatMulArgs &P, int64_t Bt,
                                            int64_t &AOff, int64_t &BOff) {
  AOff = BOff = 0;
  for (int D = P.BatchRank - 1; D >= 0; --D) {
    const int64_t C = Bt % P.YBatch[D];
    Bt /= P.YBatch[D];
    AOff += C * P.AStride[D];
    BOff += C * P.BStride[D];
  }
}

/// Output I of QLinearMatMul or QLinearConv (8-bit Y) from Sum, the exact
/// sum (plus Conv's bias), as the CPU kernel requantizes: Sum x Scale /
/// y_scale in double, rounded half to even, plus y_zero_point, saturated.
OOMPLAN_THREAD_HD inline void qRequantize(double Sum, double Scale,
                                          const float *YScale,
                                          const void *YZero, bool YSigned,
                                          void *Y, int64_t I) {
  const double Zero = YZero ? double(int8At(YZero, YSigned, 0)) : 0.0;
  double V = rint(Sum * Scale / double(YScale[0])) + Zero;
  const double Lo = YSigned ? -128 : 0, Hi = YSigned ? 127 : 255;
  V = V < Lo ? Lo : V > Hi ? Hi : V;
  if (YSigned)
    static_cast<int8_t *>(Y)[I] = int8_t(V);
  else
    static_cast<uint8_t *>(Y)[I] = uint8_t(V);
}

/// Output I of a quantized MatMul from its exact sum Acc: int32, or
/// requantized, its scales' row and column from I as the CPU takes them.
OOMPLAN_THREAD_HD inline void qStore(const QMatMulArgs &P, int64_t I,
                                     int64_t Acc) {
  if (!P.QLinear) {
    static_cast<int32_t *>(P.Y)[I] = int32_t(Acc);
    return;
  }
  const int64_t Row = I / P.YCols % P.YRows, Col = I % P.YCols;
  const double Scale = double(P.AScale[P.AScaleOne ? 0 : Row]) *
                       double(P.BScale[P.BScaleOne ? 0 : Col]);
  qRequantize(double(Acc), Scale, P.YScale, P.YZero, P.YSigned, P.Y, I);
}

/// The exact sum of quantized convolution output I ([N, M, out] row-major):
/// its window over its group's input channels, positions in the padding
/// skipped. Kernel positions outermost (an odometer, no division), so that
/// a position's bounds and offset are found once for all the channels;
/// W's zero point is its output channel's (per tensor or along axis 0).
OOMPLAN_THREAD_HD inline int64_t qConvSum(const QConvArgs &P, int64_t I) {
  const pool::Window &G = P.Geo;
  const int64_t O = I % P.OutSize, Mi = I / P.OutSize % P.M,
                Ni = I / P.OutSize / P.M;
  const int64_t Cg = P.C / P.Group, Gr = Mi / (P.M / P.Group);
  int64_t Base[pool::Window::MaxRank], KC[pool::Window::MaxRank];
  int64_t Rem = O;
  for (int D = G.Rank - 1; D >= 0; --D) {
    Base[D] = Rem % G.Out[D] * G.S[D] - G.PadBegin[D];
    Rem /= G.Out[D];
    KC[D] = 0;
  }
  const int64_t XBase = (Ni * P.C + Gr * Cg) * P.InSize,
                WBase = Mi * Cg * G.KernelSize;
  const int32_t Zx = P.XZero ? int8At(P.XZero, P.XSigned, 0) : 0;
  const int32_t Zw = P.WZero ? int8At(P.WZero, P.WSigned, P.WZ(WBase)) : 0;
  int64_t Acc = 0;
  for (int64_t Kp = 0; Kp < G.KernelSize; ++Kp) {
    int64_t Off = 0;
    bool Inside = true;
    for (int D = 0; D < G.Rank; ++D) {
      const int64_t In = Base[D] + KC[D] * G.D[D];
      Inside = Inside && In >= 0 && In < G.In[D];
      Off += In * G.InStride[D];
    }
    if (Inside)
      for (int64_t Ci = 0; Ci < Cg; ++Ci)
        Acc +=
            int64_t(int8At(P.X, P.XSigned, XBase + Ci * P.InSize + Off) - Zx) *
            (int8At(P.W, P.WSigned, WBase + Ci * G.KernelSize + Kp) - Zw);
    for (int D = G.Rank - 1; D >= 0; --D) { // the next kernel position
      if (++KC[D] < G.K[D])
        break;
      KC[D] = 0;
    }
  }
  return Acc;
}

/// Output I of a quantized convolution from its exact sum Acc: int32, or
/// requantized with its channel's w_scale and bias.
OOMPLAN_THREAD_HD inline void qConvStore(const QConvArgs &P, int64_t I,
                                         int64_t Acc) {
  if (!P.QLinear) {
    static_cast<int32_t *>(P.Y)[I] = int32_t(Acc);
    return;
  }
  const int64_t Mi = I / P.OutSize % P.M;
  const double Scale =
      double(P.XScale[0]) * double(P.WScale[P.WScaleOne ? 0 : Mi]);
  const double Add = P.Bias ? double(P.Bias[Mi]) : 0.0;
  qRequantize(double(Acc) + Add, Scale, P.YScale, P.YZero, P.YSigned, P.Y, I);
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
