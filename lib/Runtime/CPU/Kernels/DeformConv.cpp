//===- DeformConv.cpp - CPU kernel: DeformConv (opset 19, 2-D) ------------===//
//
// torchvision's deform_conv2d: a convolution whose every tap reads the
// input at its usual place moved by a learned offset, bilinearly (the four
// pixels around it, those outside the image reading 0, as ONNX's reference
// does through GridSample with align_corners and zero padding), the product
// scaled by the optional mask. Offsets come per offset group of channels
// as (dh, dw) pairs per tap: channel ((g * kH + i) * kW + j) * 2 + {0, 1};
// the mask's channel is (g * kH + i) * kW + j. Sums in double; a task per
// (sample, output channel).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// X (H x W) at (Y, X0), bilinear; pixels outside read 0.
double sampleBilinear(const float *P, int64_t H, int64_t W, double Y,
                      double X) {
  const double FY = std::floor(Y), FX = std::floor(X);
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

llvm::Error runDeformConv(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 3))
    return E;
  const TensorRef &X = C.Inputs[0], &Wt = C.Inputs[1], &Off = C.Inputs[2],
                  &Y = C.Outputs[0];
  const TensorRef *Bias = hasInput(C, 3) ? &C.Inputs[3] : nullptr;
  const TensorRef *Mask = hasInput(C, 4) ? &C.Inputs[4] : nullptr;
  if (X.Dims.size() != 4)
    return C.unsupported("DeformConv other than 2-D (4-D X)");
  for (const TensorRef *T : {&X, &Wt, &Off, Bias, Mask})
    if (T && T->Type != ElementType::Float)
      return C.unsupported("DeformConv on " + elementTypeName(T->Type));
  const int64_t N = X.Dims[0], IC = X.Dims[1], H = X.Dims[2], W = X.Dims[3];
  if (Wt.Dims.size() != 4 || Off.Dims.size() != 4 || Y.Dims.size() != 4)
    return C.badInput("W, offset and Y must be 4-D");
  const int64_t OC = Wt.Dims[0], KH = Wt.Dims[2], KW = Wt.Dims[3];
  const int64_t OH = Y.Dims[2], OW = Y.Dims[3];
  const int64_t G = C.N.getInt("group", 1), OG = C.N.getInt("offset_group", 1);
  if (G <= 0 || OG <= 0 || IC % G != 0 || OC % G != 0 || IC % OG != 0 ||
      Wt.Dims[1] != IC / G)
    return C.badInput("group and offset_group must divide the channels, and "
                      "W must be [OC, C / group, kH, kW]");
  auto Pair = [&](const char *Name, int64_t Default, int64_t Out[2]) {
    Out[0] = Out[1] = Default;
    if (auto A = C.N.getInts(Name)) {
      if (A->size() != 2)
        return false;
      Out[0] = (*A)[0];
      Out[1] = (*A)[1];
    }
    return true;
  };
  int64_t Stride[2], Dil[2], Pads[4] = {0, 0, 0, 0};
  if (auto A = C.N.getInts("pads")) {
    if (A->size() != 4)
      return C.badInput("pads needs four values");
    std::copy(A->begin(), A->end(), Pads);
  }
  if (!Pair("strides", 1, Stride) || !Pair("dilations", 1, Dil) ||
      Stride[0] <= 0 || Stride[1] <= 0 || Dil[0] <= 0 || Dil[1] <= 0)
    return C.badInput("strides and dilations need two positive values");
  if (Y.Dims[0] != N || Y.Dims[1] != OC || Off.Dims[0] != N ||
      Off.Dims[1] != OG * KH * KW * 2 || Off.Dims[2] != OH || Off.Dims[3] != OW)
    return C.badInput("offset must be [N, offset_group * kH * kW * 2, oH, "
                      "oW] and Y [N, OC, oH, oW]");
  if (Mask && (Mask->Dims.size() != 4 || Mask->Dims[0] != N ||
               Mask->Dims[1] != OG * KH * KW || Mask->Dims[2] != OH ||
               Mask->Dims[3] != OW))
    return C.badInput("mask must be [N, offset_group * kH * kW, oH, oW]");
  if (Bias && int64_t(Bias->numElements()) != OC)
    return C.badInput("B must hold one value per output channel");
  const int64_t ICG = IC / G, OCG = OC / G, ICOG = IC / OG, Plane = OH * OW;
  const float *PX = X.data<const float>(), *PW = Wt.data<const float>(),
              *PO = Off.data<const float>();
  const float *PM = Mask ? Mask->data<const float>() : nullptr;
  const float *PB = Bias ? Bias->data<const float>() : nullptr;
  float *PY = Y.data<float>();
  C.Pool.parallelFor(N * OC, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t T = Begin; T < End; ++T) {
      const int64_t B = T / OC, O = T % OC, Grp = O / OCG;
      for (int64_t I = 0; I < OH; ++I)
        for (int64_t J = 0; J < OW; ++J) {
          double Acc = PB ? double(PB[O]) : 0;
          for (int64_t CI = Grp * ICG; CI < (Grp + 1) * ICG; ++CI) {
            const int64_t OGrp = CI / ICOG;
            const float *XC = PX + (B * IC + CI) * H * W;
            const float *WC = PW + (O * ICG + (CI - Grp * ICG)) * KH * KW;
            for (int64_t KI = 0; KI < KH; ++KI)
              for (int64_t KJ = 0; KJ < KW; ++KJ) {
                const int64_t Tap = (OGrp * KH + KI) * KW + KJ;
                const float *OffHW =
                    PO + (B * OG * KH * KW * 2 + Tap * 2) * Plane;
                double DY = OffHW[I * OW + J], DX = OffHW[Plane + I * OW + J];
                double M =
                    PM ? double(
                             PM[(B * OG * KH * KW + Tap) * Plane + I * OW + J])
                       : 1.0;
                double V = sampleBilinear(
                    XC, H, W,
                    double(I * Stride[0] - Pads[0] + KI * Dil[0]) + DY,
                    double(J * Stride[1] - Pads[1] + KJ * Dil[1]) + DX);
                Acc += double(WC[KI * KW + KJ]) * M * V;
              }
          }
          PY[(B * OC + O) * Plane + I * OW + J] = float(Acc);
        }
    }
  });
  return llvm::Error::success();
}

} // namespace

void registerDeformConvKernels(CPUKernelTable &T) {
  addKernel(T, "DeformConv",
            Kernel{&runDeformConv, nullptr, {ElementType::Float}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
