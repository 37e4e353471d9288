//===- ResizeTaps.h - Resize's neighbours and weights on one axis -*- C++
//-*-===//
//
// Where an output coordinate of Resize reads the input on one axis: the
// coordinate_transformation_mode maps it back, and the mode picks one
// neighbour (nearest, by nearest_mode), two (linear) or four (cubic, with
// cubic_coeff_a and exclude_outside) with their weights. Plain types and
// no library calls but floor, so that the CPU kernel (Resize.cpp) and the
// CUDA kernel (CUDA/Kernels/Resize.cu, compiled by nvcc for the device)
// share one definition and cannot drift apart.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_RESIZETAPS_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_RESIZETAPS_H

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_HOST_DEVICE __host__ __device__
#else
#define OOMPLAN_HOST_DEVICE
#endif

namespace oomplan {
namespace runtime {
namespace resize {

enum class Coord {
  HalfPixel,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNN,
  TfCropAndResize,
  HalfPixelSymmetric ///< opset 19
};
enum class Mode { Nearest, Linear, Cubic };
enum class Round { PreferFloor, PreferCeil, Floor, Ceil };

/// The attributes every axis shares.
struct Method {
  Mode M = Mode::Nearest;
  Coord CT = Coord::HalfPixel;
  Round NR = Round::PreferFloor;
  double A = -0.75;
  bool ExcludeOutside = false;
};

/// One axis: its scale, (tf_crop_and_resize) its roi and
/// (half_pixel_symmetric) its output length.
struct Axis {
  double Scale = 1, RoiStart = 0, RoiEnd = 1;
  int64_t OutLen = 0;
};

/// Up to four neighbours on one axis and their weights.
struct Taps {
  int64_t Idx[4] = {0, 0, 0, 0};
  double W[4] = {0, 0, 0, 0};
  int N = 0;
  bool Outside = false; ///< tf_crop_and_resize past the input: extrapolate.
};

OOMPLAN_HOST_DEVICE inline void cubicCoeffs(double R, double A, double *C) {
  C[0] = ((A * (R + 1) - 5 * A) * (R + 1) + 8 * A) * (R + 1) - 4 * A;
  C[1] = ((A + 2) * R - (A + 3)) * R * R + 1;
  C[2] = ((A + 2) * (1 - R) - (A + 3)) * (1 - R) * (1 - R) + 1;
  C[3] = ((A * (2 - R) - 5 * A) * (2 - R) + 8 * A) * (2 - R) - 4 * A;
}

/// The taps of output coordinate X on an axis of InLen input elements.
/// Like ONNX's reference, the resized length in the formulas is scale *
/// input length; neighbours past the edge read the edge.
OOMPLAN_HOST_DEVICE inline Taps axisTaps(const Method &S, const Axis &Ax,
                                         int64_t X, int64_t InLen) {
  Taps T;
  const double Scale = Ax.Scale;
  const double OutLen = Scale * double(InLen);
  double Xo = 0;
  switch (S.CT) {
  case Coord::HalfPixel:
    Xo = (double(X) + 0.5) / Scale - 0.5;
    break;
  case Coord::PytorchHalfPixel:
    Xo = OutLen == 1 ? -0.5 : (double(X) + 0.5) / Scale - 0.5;
    break;
  case Coord::AlignCorners:
    Xo = OutLen == 1 ? 0 : double(X) * double(InLen - 1) / (OutLen - 1);
    break;
  case Coord::Asymmetric:
    Xo = double(X) / Scale;
    break;
  case Coord::TfHalfPixelForNN:
    Xo = (double(X) + 0.5) / Scale;
    break;
  case Coord::HalfPixelSymmetric: {
    // Half-pixel about the input's centre: the output's whole length over
    // its fractional one shifts the grid by what rounding took off.
    const double Adjust = OutLen == 0 ? 1 : double(Ax.OutLen) / OutLen;
    Xo = double(InLen) / 2 * (1 - Adjust) + (double(X) + 0.5) / Scale - 0.5;
    break;
  }
  case Coord::TfCropAndResize: {
    double Span = (Ax.RoiEnd - Ax.RoiStart) * double(InLen - 1);
    Xo = OutLen == 1 ? Span / 2 : double(X) * Span / (OutLen - 1);
    Xo += Ax.RoiStart * double(InLen - 1);
    if (Xo < 0 || Xo > double(InLen - 1))
      T.Outside = true;
    break;
  }
  }
  const double Floor = floor(Xo);
  const double R = Xo - Floor;
  const int64_t X0 = int64_t(Floor);
  auto Clamp = [InLen](int64_t I) {
    return I < 0 ? int64_t(0) : (I > InLen - 1 ? InLen - 1 : I);
  };
  if (S.M == Mode::Nearest) {
    bool Up = R > 0 &&
              (S.NR == Round::Ceil || (S.NR == Round::PreferFloor && R > 0.5) ||
               (S.NR == Round::PreferCeil && R >= 0.5));
    T.N = 1;
    T.Idx[0] = Clamp(X0 + (Up ? 1 : 0));
    T.W[0] = 1;
    return T;
  }
  if (S.M == Mode::Linear) {
    T.N = 2;
    T.Idx[0] = X0;
    T.Idx[1] = X0 + 1;
    T.W[0] = 1 - R;
    T.W[1] = R;
  } else {
    T.N = 4;
    cubicCoeffs(R, S.A, T.W);
    for (int K = 0; K < 4; ++K)
      T.Idx[K] = X0 - 1 + K;
  }
  if (S.ExcludeOutside) {
    double Sum = 0;
    for (int K = 0; K < T.N; ++K) {
      if (T.Idx[K] < 0 || T.Idx[K] >= InLen)
        T.W[K] = 0;
      Sum += T.W[K];
    }
    if (Sum != 0)
      for (int K = 0; K < T.N; ++K)
        T.W[K] /= Sum;
  }
  for (int K = 0; K < T.N; ++K)
    T.Idx[K] = Clamp(T.Idx[K]);
  return T;
}

} // namespace resize
} // namespace runtime
} // namespace oomplan

#undef OOMPLAN_HOST_DEVICE
#endif
