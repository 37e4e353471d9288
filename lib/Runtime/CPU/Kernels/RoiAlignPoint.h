//===- RoiAlignPoint.h - RoiAlign's value at one output bin -----*- C++ -*-===//
//
// One output bin of RoiAlign on one [H, W] plane: the region (x1, y1, x2,
// y2, scaled by spatial_scale and shifted half a pixel under half_pixel)
// cut into OH x OW bins, the bin averaging (or, in max mode, taking the
// largest weighted corner of) a grid of bilinear samples, sampling_ratio
// per side or ceil(bin size) when it is 0. ONNX's reference (and ONNX
// Runtime's kernel, which it mirrors) step by step in plain types, so that
// the CPU kernel (RoiAlign.cpp) and the CUDA kernel (CUDA/Kernels/
// RoiAlign.cu) share one definition and pick the same pixels.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_ROIALIGNPOINT_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_ROIALIGNPOINT_H

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_ROI_HD __host__ __device__
#else
#define OOMPLAN_ROI_HD
#endif

namespace oomplan {
namespace runtime {
namespace roialign {

/// The attributes, as the kernels read them.
struct Params {
  int64_t OH = 0, OW = 0; ///< Output bins per side.
  int64_t Ratio = 0;      ///< sampling_ratio; 0: ceil of the bin size.
  double Scale = 1.0;     ///< spatial_scale.
  bool HalfPixel = true;  ///< coordinate_transformation_mode.
  bool Max = false;       ///< mode "max".
};

template <typename T> OOMPLAN_ROI_HD inline T biggerOf(T A, T B) {
  return A < B ? B : A; // std::max
}

/// The bilinear sample of Plane (H x W) at (Y, X) as four weighted corners;
/// all weights 0 outside [-1, H] x [-1, W].
OOMPLAN_ROI_HD inline void corners(const float *Plane, int64_t H, int64_t W,
                                   double Y, double X, double Out[4]) {
  Out[0] = Out[1] = Out[2] = Out[3] = 0;
  if (Y < -1.0 || Y > double(H) || X < -1.0 || X > double(W))
    return;
  Y = biggerOf(Y, 0.0);
  X = biggerOf(X, 0.0);
  int64_t YL = int64_t(Y), XL = int64_t(X), YH, XH;
  if (YL >= H - 1) {
    YH = YL = H - 1;
    Y = double(YL);
  } else {
    YH = YL + 1;
  }
  if (XL >= W - 1) {
    XH = XL = W - 1;
    X = double(XL);
  } else {
    XH = XL + 1;
  }
  const double LY = Y - double(YL), LX = X - double(XL);
  const double HY = 1 - LY, HX = 1 - LX;
  Out[0] = HY * HX * Plane[YL * W + XL];
  Out[1] = HY * LX * Plane[YL * W + XH];
  Out[2] = LY * HX * Plane[YH * W + XL];
  Out[3] = LY * LX * Plane[YH * W + XH];
}

/// Bin (PH, PW) of the region Roi (4 floats) on Plane (H x W).
OOMPLAN_ROI_HD inline float bin(const Params &P, const float *Roi,
                                const float *Plane, int64_t H, int64_t W,
                                int64_t PH, int64_t PW) {
  const double Off = P.HalfPixel ? 0.5 : 0.0;
  const double X1 = Roi[0] * P.Scale - Off, Y1 = Roi[1] * P.Scale - Off;
  double RW = Roi[2] * P.Scale - Off - X1, RH = Roi[3] * P.Scale - Off - Y1;
  if (!P.HalfPixel) {
    RW = biggerOf(RW, 1.0);
    RH = biggerOf(RH, 1.0);
  }
  const double BinH = RH / double(P.OH), BinW = RW / double(P.OW);
  const int64_t GH =
      P.Ratio > 0 ? P.Ratio : int64_t(std::ceil(RH / double(P.OH)));
  const int64_t GW =
      P.Ratio > 0 ? P.Ratio : int64_t(std::ceil(RW / double(P.OW)));
  const double Count = double(biggerOf<int64_t>(GH * GW, 1));
  double Acc = 0;
  bool First = true;
  for (int64_t IY = 0; IY < GH; ++IY)
    for (int64_t IX = 0; IX < GW; ++IX) {
      double Yy =
          Y1 + double(PH) * BinH + (double(IY) + 0.5) * BinH / double(GH);
      double Xx =
          X1 + double(PW) * BinW + (double(IX) + 0.5) * BinW / double(GW);
      double V[4];
      corners(Plane, H, W, Yy, Xx, V);
      if (P.Max) {
        double M = biggerOf(biggerOf(V[0], V[1]), biggerOf(V[2], V[3]));
        Acc = First ? M : biggerOf(Acc, M);
        First = false;
      } else {
        Acc += V[0] + V[1] + V[2] + V[3];
      }
    }
  return float(P.Max ? Acc : Acc / Count);
}

} // namespace roialign
} // namespace runtime
} // namespace oomplan

#endif
