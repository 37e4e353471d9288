//===- GridSamplePoint.h - GridSample's value at one point ------*- C++ -*-===//
//
// One output point of GridSample on one [H, W] plane: the normalized (x, y)
// mapped to pixel coordinates (align_corners decides whether -1 and 1 are
// pixel centres or edges), moved inside by the padding mode (border clamps
// it, reflection folds it), and read by nearest (round half to even, as
// numpy's rint), bilinear or bicubic (Keys, a = -0.75) interpolation;
// pixels outside read 0 (zeros), the edge (border) or their reflection.
// ONNX's reference step by step, in plain types with no library call but
// floor, fabs and rint, so that the CPU kernel (GridSample.cpp) and the CUDA
// kernel (CUDA/Kernels/GridSample.cu) share one definition. Min and max
// are written as std::min and std::max compare, so NaN goes the same way.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_GRIDSAMPLEPOINT_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_GRIDSAMPLEPOINT_H

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_HOST_DEVICE __host__ __device__
#else
#define OOMPLAN_HOST_DEVICE
#endif

namespace oomplan {
namespace runtime {
namespace gridsample {

enum class Padding { Zeros, Border, Reflection };
enum class Mode { Nearest, Bilinear, Bicubic };

template <typename T> OOMPLAN_HOST_DEVICE inline T minOf(T A, T B) {
  return B < A ? B : A; // std::min
}
template <typename T> OOMPLAN_HOST_DEVICE inline T maxOf(T A, T B) {
  return A < B ? B : A; // std::max
}

OOMPLAN_HOST_DEVICE inline double reflect(double X, double Lo, double Hi) {
  const double Range = Hi - Lo;
  if (Range <= 0)
    return Lo;
  if (X < Lo) {
    double D = Lo - X;
    int64_t N = int64_t(D / Range);
    double R = D - double(N) * Range;
    return N % 2 == 0 ? Lo + R : Hi - R;
  }
  if (X > Hi) {
    double D = X - Hi;
    int64_t N = int64_t(D / Range);
    double R = D - double(N) * Range;
    return N % 2 == 0 ? Hi - R : Lo + R;
  }
  return X;
}

struct Plane {
  const float *Img;
  int64_t H, W;
  Padding Pad;
  double Border[4]; ///< x_min, y_min, x_max, y_max

  OOMPLAN_HOST_DEVICE double pixel(int64_t R, int64_t C) const {
    // An empty plane has no edge to clamp to or reflect from: every point
    // reads 0, as under zeros padding (the clamps below would read pixel
    // (0, 0), which does not exist).
    if (H <= 0 || W <= 0)
      return 0.0;
    switch (Pad) {
    case Padding::Zeros:
      return R >= 0 && R < H && C >= 0 && C < W ? double(Img[R * W + C]) : 0.0;
    case Padding::Border:
      R = maxOf<int64_t>(0, minOf<int64_t>(H - 1, R));
      C = maxOf<int64_t>(0, minOf<int64_t>(W - 1, C));
      return Img[R * W + C];
    case Padding::Reflection:
      C = int64_t(reflect(double(C), Border[0], Border[2]));
      R = int64_t(reflect(double(R), Border[1], Border[3]));
      R = maxOf<int64_t>(0, minOf<int64_t>(H - 1, R));
      C = maxOf<int64_t>(0, minOf<int64_t>(W - 1, C));
      return Img[R * W + C];
    }
    return 0;
  }
};

OOMPLAN_HOST_DEVICE inline void cubic(double X, double *C) {
  const double A = -0.75;
  X = fabs(X);
  C[0] = ((A * (X + 1) - 5 * A) * (X + 1) + 8 * A) * (X + 1) - 4 * A;
  C[1] = ((A + 2) * X - (A + 3)) * X * X + 1;
  C[2] = ((A + 2) * (1 - X) - (A + 3)) * (1 - X) * (1 - X) + 1;
  C[3] = ((A * (2 - X) - 5 * A) * (2 - X) + 8 * A) * (2 - X) - 4 * A;
}

/// The plane of H x W pixels at Img, read at grid point (Gx, Gy).
OOMPLAN_HOST_DEVICE inline Plane planeOf(const float *Img, int64_t H, int64_t W,
                                         Padding Pad, bool Align) {
  const double Lo = Align ? 0 : -0.5;
  return Plane{
      Img, H, W, Pad, {Lo, Lo, double(W - 1) - Lo, double(H - 1) - Lo}};
}

OOMPLAN_HOST_DEVICE inline double sample(const Plane &S, Mode M, bool Align,
                                         double Gx, double Gy) {
  const int64_t H = S.H, W = S.W;
  double Xc =
      Align ? (Gx + 1) / 2 * double(W - 1) : ((Gx + 1) * double(W) - 1) / 2;
  double Yc =
      Align ? (Gy + 1) / 2 * double(H - 1) : ((Gy + 1) * double(H) - 1) / 2;
  if (M == Mode::Nearest) {
    Xc = rint(Xc); // round half to even, as np.rint
    Yc = rint(Yc);
  }
  if (S.Pad == Padding::Border) {
    Xc = maxOf(0.0, minOf(double(W - 1), Xc));
    Yc = maxOf(0.0, minOf(double(H - 1), Yc));
  } else if (S.Pad == Padding::Reflection) {
    Xc = reflect(Xc, S.Border[0], S.Border[2]);
    Yc = reflect(Yc, S.Border[1], S.Border[3]);
  }
  if (M == Mode::Nearest)
    return S.pixel(int64_t(Yc), int64_t(Xc));
  if (M == Mode::Bilinear) {
    const int64_t X1 = int64_t(floor(Xc)), Y1 = int64_t(floor(Yc));
    const double Dx1 = Xc - double(X1), Dx2 = 1 - Dx1;
    const double Dy1 = Yc - double(Y1), Dy2 = 1 - Dy1;
    return Dy2 * (Dx2 * S.pixel(Y1, X1) + Dx1 * S.pixel(Y1, X1 + 1)) +
           Dy1 * (Dx2 * S.pixel(Y1 + 1, X1) + Dx1 * S.pixel(Y1 + 1, X1 + 1));
  }
  const int64_t X0 = int64_t(floor(Xc)) - 1, Y0 = int64_t(floor(Yc)) - 1;
  double Cx[4], Cy[4];
  cubic(Xc - double(X0) - 1, Cx);
  cubic(Yc - double(Y0) - 1, Cy);
  double V = 0;
  for (int I = 0; I < 4; ++I) {
    double Row = 0;
    for (int J = 0; J < 4; ++J)
      Row += Cx[J] * S.pixel(Y0 + I, X0 + J);
    V += Cy[I] * Row;
  }
  return V;
}

} // namespace gridsample
} // namespace runtime
} // namespace oomplan

#undef OOMPLAN_HOST_DEVICE
#endif
