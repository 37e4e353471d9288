//===- DeformConvPoint.h - DeformConv's value at one output pixel -*- C++
//-*-===//
//
// One output element of DeformConv (opset 19, 2-D; torchvision's
// deform_conv2d): every tap of the window reads X at its usual place moved
// by its offset, bilinearly (pixels outside the image read 0, as ONNX's
// reference does through GridSample with align_corners and zero padding),
// times the tap's weight and the optional mask, summed in double with the
// bias first. Offsets come per offset group of channels as (dh, dw) pairs
// per tap: channel ((g * kH + i) * kW + j) * 2 + {0, 1}; the mask's channel
// is (g * kH + i) * kW + j. In plain types, so that the CPU kernel
// (DeformConv.cpp) and the CUDA kernel (CUDA/Kernels/DeformConv.cu,
// compiled without contraction) share one definition and give one result.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_DEFORMCONVPOINT_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_DEFORMCONVPOINT_H

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_DEFORM_HD __host__ __device__
#else
#define OOMPLAN_DEFORM_HD
#endif

namespace oomplan {
namespace runtime {
namespace deform {

/// The operands (float) and the geometry, checked by the CPU kernel's
/// deformParams.
struct Params {
  const float *X = nullptr, *W = nullptr, *Offset = nullptr, *Mask = nullptr,
              *Bias = nullptr;
  float *Y = nullptr;
  int64_t N = 0, IC = 0, H = 0, Wd = 0, OC = 0, KH = 0, KW = 0, OH = 0, OW = 0,
          G = 1, OG = 1;
  int64_t Stride[2] = {1, 1}, Dil[2] = {1, 1}, Pads[4] = {0, 0, 0, 0};
};

/// Plane P (H x W) at (Y, X), bilinear; pixels outside read 0.
OOMPLAN_DEFORM_HD inline double sampleBilinear(const float *P, int64_t H,
                                               int64_t W, double Y, double X) {
  const double FY = floor(Y), FX = floor(X);
  const int64_t Y0 = int64_t(FY), X0 = int64_t(FX);
  const double LY = Y - FY, LX = X - FX;
  double Acc = 0;
  for (int DY = 0; DY < 2; ++DY)
    for (int DX = 0; DX < 2; ++DX) {
      const int64_t YY = Y0 + DY, XX = X0 + DX;
      if (YY < 0 || YY >= H || XX < 0 || XX >= W)
        continue;
      Acc += (DY ? LY : 1 - LY) * (DX ? LX : 1 - LX) * double(P[YY * W + XX]);
    }
  return Acc;
}

/// Y[B, O, I, J].
OOMPLAN_DEFORM_HD inline float deformAt(const Params &P, int64_t B, int64_t O,
                                        int64_t I, int64_t J) {
  const int64_t ICG = P.IC / P.G, OCG = P.OC / P.G, ICOG = P.IC / P.OG;
  const int64_t Plane = P.OH * P.OW, Grp = O / OCG;
  double Acc = P.Bias ? double(P.Bias[O]) : 0;
  for (int64_t CI = Grp * ICG; CI < (Grp + 1) * ICG; ++CI) {
    const int64_t OGrp = CI / ICOG;
    const float *XC = P.X + (B * P.IC + CI) * P.H * P.Wd;
    const float *WC = P.W + (O * ICG + (CI - Grp * ICG)) * P.KH * P.KW;
    for (int64_t KI = 0; KI < P.KH; ++KI)
      for (int64_t KJ = 0; KJ < P.KW; ++KJ) {
        const int64_t Tap = (OGrp * P.KH + KI) * P.KW + KJ;
        const float *OffHW =
            P.Offset + (B * P.OG * P.KH * P.KW * 2 + Tap * 2) * Plane;
        const double DY = OffHW[I * P.OW + J], DX = OffHW[Plane + I * P.OW + J];
        const double M =
            P.Mask ? double(P.Mask[(B * P.OG * P.KH * P.KW + Tap) * Plane +
                                   I * P.OW + J])
                   : 1.0;
        const double V = sampleBilinear(
            XC, P.H, P.Wd,
            double(I * P.Stride[0] - P.Pads[0] + KI * P.Dil[0]) + DY,
            double(J * P.Stride[1] - P.Pads[1] + KJ * P.Dil[1]) + DX);
        Acc += double(WC[KI * P.KW + KJ]) * M * V;
      }
  }
  return float(Acc);
}

} // namespace deform
} // namespace runtime
} // namespace oomplan

#endif
