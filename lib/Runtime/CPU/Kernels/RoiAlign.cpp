//===- RoiAlign.cpp - CPU kernel: RoiAlign --------------------------------===//
//
// Each region of interest (x1, y1, x2, y2, scaled by spatial_scale and
// shifted half a pixel under half_pixel) is cut into output_height x
// output_width bins; each bin averages (or, in max mode, takes the largest
// weighted corner of) a grid of bilinear samples, sampling_ratio per side
// or ceil(bin size) when it is 0. Sample positions and the edge rules follow
// ONNX's reference (and ONNX Runtime's kernel, which it mirrors).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// The bilinear sample of Plane (H x W) at (Y, X) as four weighted corners;
/// all weights 0 outside [-1, H] x [-1, W].
void corners(const float *Plane, int64_t H, int64_t W, double Y, double X,
             double Out[4]) {
  Out[0] = Out[1] = Out[2] = Out[3] = 0;
  if (Y < -1.0 || Y > double(H) || X < -1.0 || X > double(W))
    return;
  Y = std::max(Y, 0.0);
  X = std::max(X, 0.0);
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

llvm::Error runRoiAlign(const KernelContext &C) {
  if (C.Inputs.size() < 3)
    return C.badInput("needs X, rois and batch_indices");
  const TensorRef &X = C.Inputs[0], &Rois = C.Inputs[1], &Batch = C.Inputs[2],
                  &Y = C.Outputs[0];
  if (X.Dims.size() != 4 || Rois.Dims.size() != 2 || Rois.Dims[1] != 4 ||
      Y.Dims.size() != 4)
    return C.badInput("X must be 4-D, rois [num_rois, 4]");
  if (X.Type != ElementType::Float || Rois.Type != ElementType::Float)
    return C.unsupported("RoiAlign on " + elementTypeName(X.Type));
  const int64_t N = X.Dims[0], Ch = X.Dims[1], H = X.Dims[2], W = X.Dims[3];
  const int64_t NumRois = Rois.Dims[0], OH = Y.Dims[2], OW = Y.Dims[3];
  if (Y.Dims[0] != NumRois || Y.Dims[1] != Ch ||
      int64_t(Batch.numElements()) != NumRois)
    return C.badInput("Y must be [num_rois, C, h, w], one batch index a roi");
  const bool Max = C.N.getString("mode", "avg") == "max";
  const int64_t Ratio = C.N.getInt("sampling_ratio", 0);
  const double Scale = C.N.getFloat("spatial_scale", 1.0);
  std::string CT = C.N.getString(
      "coordinate_transformation_mode",
      C.G.defaultOpset() >= 16 ? "half_pixel" : "output_half_pixel");
  const bool HalfPixel = CT == "half_pixel";
  if (!HalfPixel && CT != "output_half_pixel")
    return C.unsupported("coordinate_transformation_mode '" + CT + "'");
  for (int64_t R = 0; R < NumRois; ++R) {
    int64_t B = intAt(Batch, uint64_t(R));
    if (B < 0 || B >= N)
      return C.badInput("batch index " + llvm::Twine(B) + " out of range");
  }
  const double Off = HalfPixel ? 0.5 : 0.0;
  C.Pool.parallelFor(NumRois * Ch, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t RC = Begin; RC < End; ++RC) {
      const int64_t R = RC / Ch, Cc = RC % Ch;
      const float *Roi = Rois.data<const float>() + R * 4;
      const double X1 = Roi[0] * Scale - Off, Y1 = Roi[1] * Scale - Off;
      double RW = Roi[2] * Scale - Off - X1, RH = Roi[3] * Scale - Off - Y1;
      if (!HalfPixel) {
        RW = std::max(RW, 1.0);
        RH = std::max(RH, 1.0);
      }
      const double BinH = RH / double(OH), BinW = RW / double(OW);
      const int64_t GH =
          Ratio > 0 ? Ratio : int64_t(std::ceil(RH / double(OH)));
      const int64_t GW =
          Ratio > 0 ? Ratio : int64_t(std::ceil(RW / double(OW)));
      const double Count = double(std::max<int64_t>(GH * GW, 1));
      const float *Plane =
          X.data<const float>() + (intAt(Batch, uint64_t(R)) * Ch + Cc) * H * W;
      float *Out = Y.data<float>() + RC * OH * OW;
      for (int64_t PH = 0; PH < OH; ++PH)
        for (int64_t PW = 0; PW < OW; ++PW) {
          double Acc = 0;
          bool First = true;
          for (int64_t IY = 0; IY < GH; ++IY)
            for (int64_t IX = 0; IX < GW; ++IX) {
              double Yy = Y1 + double(PH) * BinH +
                          (double(IY) + 0.5) * BinH / double(GH);
              double Xx = X1 + double(PW) * BinW +
                          (double(IX) + 0.5) * BinW / double(GW);
              double V[4];
              corners(Plane, H, W, Yy, Xx, V);
              if (Max) {
                double M = std::max(std::max(V[0], V[1]), std::max(V[2], V[3]));
                Acc = First ? M : std::max(Acc, M);
                First = false;
              } else {
                Acc += V[0] + V[1] + V[2] + V[3];
              }
            }
          Out[PH * OW + PW] = float(Max ? Acc : Acc / Count);
        }
    }
  });
  return llvm::Error::success();
}

} // namespace

void registerRoiAlignKernels(CPUKernelTable &T) {
  addKernel(T, "RoiAlign", Kernel{&runRoiAlign, nullptr, {ElementType::Float}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
