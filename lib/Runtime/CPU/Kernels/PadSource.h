//===- PadSource.h - where a padded element comes from ----------*- C++ -*-===//
//
// Pad's edge, reflect and wrap modes read every output element from some
// input element: per axis, the output coordinate less the pad before it,
// clamped (edge), mirrored without repeating the border, period 2 (D - 1)
// (reflect, numpy's, for pads of any length), or taken modulo D (wrap).
// Constant mode, and an empty axis in any mode, read the constant (-1). In
// plain types, so that the CPU kernel (Indexing.cpp) and the CUDA kernel
// (CUDA/Kernels/Pad.cu) share one definition.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_PADSOURCE_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_PADSOURCE_H

#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_PAD_HD __host__ __device__
#else
#define OOMPLAN_PAD_HD
#endif

namespace oomplan {
namespace runtime {
namespace pad {

enum Mode : int { Constant = 0, Edge = 1, Reflect = 2, Wrap = 3 };

/// The source coordinate of output coordinate O on an axis of D input
/// elements padded by PadBegin before it (negative: cropped), or -1 when
/// it reads the constant.
OOMPLAN_PAD_HD inline int64_t source(int64_t O, int64_t PadBegin, int64_t D,
                                     int M) {
  int64_t X = O - PadBegin;
  if (X >= 0 && X < D)
    return X;
  if (M == Constant || D == 0)
    return -1;
  if (M == Edge)
    return X < 0 ? 0 : D - 1;
  if (M == Wrap)
    return ((X % D) + D) % D;
  if (D == 1) // reflect of one element is that element
    return 0;
  const int64_t Period = 2 * (D - 1);
  X = ((X % Period) + Period) % Period;
  return X < D ? X : Period - X;
}

constexpr int MaxRank = 8;

/// A padded tensor's geometry: Rank axes of InDims padded to OutDims with
/// Begin elements before each.
struct Geometry {
  int Rank = 0, M = Constant;
  int64_t InDims[MaxRank] = {}, OutDims[MaxRank] = {}, Begin[MaxRank] = {};
};

/// The input element output element I (row-major over OutDims) reads, or
/// -1 for the constant.
OOMPLAN_PAD_HD inline int64_t sourceOf(const Geometry &G, int64_t I) {
  int64_t Off = 0, Stride = 1;
  for (int K = G.Rank - 1; K >= 0; --K) {
    const int64_t S = source(I % G.OutDims[K], G.Begin[K], G.InDims[K], G.M);
    if (S < 0)
      return -1;
    I /= G.OutDims[K];
    Off += S * Stride;
    Stride *= G.InDims[K];
  }
  return Off;
}

} // namespace pad
} // namespace runtime
} // namespace oomplan

#endif
