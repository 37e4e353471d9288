//===- AffineGridPoint.h - AffineGrid's value at one grid point -*- C++ -*-===//
//
// AffineGrid (opset 20), the grid GridSample reads: the normalized
// coordinates of a grid point ([x, y(, z), 1], x along the last axis; pixel
// centres, or with align_corners the first and last pixels at -1 and 1)
// times the sample's theta [2, 3] or [3, 4], in double. In plain types, so
// that the CPU kernel (GridSample.cpp) and the CUDA kernel (CUDA/Kernels/
// NewerOps.cu) share one definition.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_AFFINEGRIDPOINT_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_AFFINEGRIDPOINT_H

#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_AFFINE_HD __host__ __device__
#else
#define OOMPLAN_AFFINE_HD
#endif

namespace oomplan {
namespace runtime {
namespace affine {

/// Theta [N, S, S + 1] into Y [N, Size..., S]: Points = prod(Size[0..S)).
struct Params {
  const float *Theta = nullptr;
  float *Y = nullptr;
  int64_t N = 0, Points = 0, Size[3] = {};
  int S = 2;
  bool Align = false;
};

OOMPLAN_AFFINE_HD inline double coord(bool Align, int64_t I, int64_t Len) {
  if (Align)
    return Len > 1 ? -1.0 + 2.0 * double(I) / double(Len - 1) : -1.0;
  return (2.0 * double(I) + 1.0) / double(Len) - 1.0;
}

/// The S values of point P (row-major over Size) of sample B.
OOMPLAN_AFFINE_HD inline void point(const Params &A, int64_t B, int64_t P) {
  double H[4] = {0, 0, 0, 1};
  int64_t Rest = P;
  for (int I = A.S - 1; I >= 0; --I) {
    const int64_t Len = A.Size[I];
    H[A.S - 1 - I] = coord(A.Align, Rest % Len, Len);
    Rest /= Len;
  }
  H[A.S] = 1;
  const float *T = A.Theta + B * A.S * (A.S + 1);
  for (int R = 0; R < A.S; ++R) {
    double Acc = 0;
    for (int K = 0; K <= A.S; ++K)
      Acc += double(T[R * (A.S + 1) + K]) * H[K];
    A.Y[(B * A.Points + P) * A.S + R] = float(Acc);
  }
}

} // namespace affine
} // namespace runtime
} // namespace oomplan

#endif
