//===- DeformConv.cpp - CPU kernel: DeformConv (opset 19, 2-D) ------------===//
//
// torchvision's deform_conv2d: a convolution whose every tap reads the
// input at its usual place moved by a learned offset, bilinearly, the
// product scaled by the optional mask (DeformConvPoint.h, shared with the
// CUDA kernel). A task per (sample, output channel).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "DeformConvPoint.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

llvm::Error deformParams(const KernelContext &C, deform::Params &P) {
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
  P = deform::Params();
  P.N = X.Dims[0], P.IC = X.Dims[1], P.H = X.Dims[2], P.Wd = X.Dims[3];
  if (Wt.Dims.size() != 4 || Off.Dims.size() != 4 || Y.Dims.size() != 4)
    return C.badInput("W, offset and Y must be 4-D");
  P.OC = Wt.Dims[0], P.KH = Wt.Dims[2], P.KW = Wt.Dims[3];
  P.OH = Y.Dims[2], P.OW = Y.Dims[3];
  P.G = C.N.getInt("group", 1), P.OG = C.N.getInt("offset_group", 1);
  if (P.G <= 0 || P.OG <= 0 || P.IC % P.G != 0 || P.OC % P.G != 0 ||
      P.IC % P.OG != 0 || Wt.Dims[1] != P.IC / P.G)
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
  if (auto A = C.N.getInts("pads")) {
    if (A->size() != 4)
      return C.badInput("pads needs four values");
    std::copy(A->begin(), A->end(), P.Pads);
  }
  if (!Pair("strides", 1, P.Stride) || !Pair("dilations", 1, P.Dil) ||
      P.Stride[0] <= 0 || P.Stride[1] <= 0 || P.Dil[0] <= 0 || P.Dil[1] <= 0)
    return C.badInput("strides and dilations need two positive values");
  if (Y.Dims[0] != P.N || Y.Dims[1] != P.OC || Off.Dims[0] != P.N ||
      Off.Dims[1] != P.OG * P.KH * P.KW * 2 || Off.Dims[2] != P.OH ||
      Off.Dims[3] != P.OW)
    return C.badInput("offset must be [N, offset_group * kH * kW * 2, oH, "
                      "oW] and Y [N, OC, oH, oW]");
  if (Mask && (Mask->Dims.size() != 4 || Mask->Dims[0] != P.N ||
               Mask->Dims[1] != P.OG * P.KH * P.KW || Mask->Dims[2] != P.OH ||
               Mask->Dims[3] != P.OW))
    return C.badInput("mask must be [N, offset_group * kH * kW, oH, oW]");
  if (Bias && int64_t(Bias->numElements()) != P.OC)
    return C.badInput("B must hold one value per output channel");
  P.X = X.data<const float>();
  P.W = Wt.data<const float>();
  P.Offset = Off.data<const float>();
  P.Mask = Mask ? Mask->data<const float>() : nullptr;
  P.Bias = Bias ? Bias->data<const float>() : nullptr;
  P.Y = Y.data<float>();
  return llvm::Error::success();
}

namespace {

// A task per (sample, output channel).
llvm::Error runDeformConv(const KernelContext &C) {
  deform::Params P;
  if (llvm::Error E = deformParams(C, P))
    return E;
  C.Pool.parallelFor(P.N * P.OC, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t T = Begin; T < End; ++T) {
      const int64_t B = T / P.OC, O = T % P.OC;
      for (int64_t I = 0; I < P.OH; ++I)
        for (int64_t J = 0; J < P.OW; ++J)
          P.Y[((B * P.OC + O) * P.OH + I) * P.OW + J] =
              deform::deformAt(P, B, O, I, J);
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
