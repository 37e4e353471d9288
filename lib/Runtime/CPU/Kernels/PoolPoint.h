//===- PoolPoint.h - one output of a windowed pool -------------*- C++ -*-===//
//
// One output position of MaxPool, AveragePool or LpPool on one plane: the
// window reads the input positions o*stride - pad_begin + k*dilation that
// fall inside the input. Max keeps the first largest (and its offset, row-
// or column-major, for MaxPool's Indices); Average divides by the positions
// inside the input, or with count_include_pad by those inside the padded
// input (never past pad_end: a ceil_mode window that runs off the padding
// does not count the overhang, as ONNX's reference does). In plain types, so
// that the CPU kernel (Pool.cpp) and the CUDA kernel (CUDA/Kernels/
// Pool.cu, for what cuDNN cannot express) share one definition.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_POOLPOINT_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_POOLPOINT_H

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_POOL_HD __host__ __device__
#else
#define OOMPLAN_POOL_HD
#endif

namespace oomplan {
namespace runtime {
namespace pool {

enum class Kind : int { Max, Average, Lp };

/// A window of rank 1 to MaxRank, by value (a kernel argument).
struct Window {
  static constexpr int MaxRank = 8;
  int Rank = 0;
  int64_t In[MaxRank] = {}, Out[MaxRank] = {}, K[MaxRank] = {}, S[MaxRank] = {},
          D[MaxRank] = {}, PadBegin[MaxRank] = {}, PadEnd[MaxRank] = {};
  /// Row-major strides of the input, and column-major (storage_order 1).
  int64_t InStride[MaxRank] = {}, ColStride[MaxRank] = {};
  int64_t KernelSize = 1;
  bool CountPad = false, ColumnMajor = false;
  double P = 2; ///< LpPool's p.
};

/// The pooled value of output O (row-major over Out) of Plane; for Max,
/// *Index (when not null) gets the chosen position's offset in the plane
/// (row- or column-major). A max window that holds no input position gives
/// Lowest (T's lowest value) and index -1 (row-major) or 0 (column-major).
template <typename T>
OOMPLAN_POOL_HD inline T at(const Window &W, Kind Kd, const T *Plane, int64_t O,
                            T Lowest, int64_t *Index) {
  int64_t OC[Window::MaxRank];
  int64_t Rem = O;
  for (int I = W.Rank - 1; I >= 0; --I) {
    OC[I] = Rem % W.Out[I];
    Rem /= W.Out[I];
  }
  double Acc = 0;
  T Best = Lowest;
  int64_t BestOff = -1, BestCol = 0, Count = 0, PadCount = 0;
  for (int64_t K = 0; K < W.KernelSize; ++K) {
    int64_t KRem = K, Off = 0, ColOff = 0;
    bool Inside = true, InPad = true;
    for (int I = W.Rank - 1; I >= 0; --I) {
      int64_t Kk = KRem % W.K[I];
      KRem /= W.K[I];
      int64_t Xi = OC[I] * W.S[I] - W.PadBegin[I] + Kk * W.D[I];
      Inside = Inside && Xi >= 0 && Xi < W.In[I];
      InPad = InPad && Xi >= -W.PadBegin[I] && Xi < W.In[I] + W.PadEnd[I];
      Off += Xi * W.InStride[I];
      ColOff += Xi * W.ColStride[I];
    }
    PadCount += InPad;
    if (!Inside)
      continue;
    ++Count;
    T V = Plane[Off];
    if (Kd == Kind::Max) {
      if (BestOff < 0 || V > Best) {
        Best = V;
        BestOff = Off;
        BestCol = ColOff;
      }
    } else if (Kd == Kind::Average) {
      Acc += double(V);
    } else {
      Acc += pow(fabs(double(V)), W.P);
    }
  }
  if (Kd == Kind::Max) {
    if (Index)
      *Index = W.ColumnMajor ? BestCol : BestOff;
    return Best;
  }
  if (Kd == Kind::Average) {
    int64_t Div = W.CountPad ? PadCount : Count;
    return T(Div ? Acc / double(Div) : 0.0);
  }
  return T(pow(Acc, 1.0 / W.P));
}

} // namespace pool
} // namespace runtime
} // namespace oomplan

#endif
