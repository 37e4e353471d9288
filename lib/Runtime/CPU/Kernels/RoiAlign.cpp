//===- RoiAlign.cpp - CPU kernel: RoiAlign --------------------------------===//
//
// Each region of interest is cut into output_height x output_width bins,
// each the bilinear samples of RoiAlignPoint.h (shared with the CUDA
// kernel), one region and channel a task of the thread pool.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

llvm::Error roiAlignSetup(const KernelContext &C, roialign::Params &P) {
  if (C.Inputs.size() < 3 || !C.Inputs[2].present())
    return C.badInput("needs X, rois and batch_indices");
  const TensorRef &X = C.Inputs[0], &Rois = C.Inputs[1], &Batch = C.Inputs[2],
                  &Y = C.Outputs[0];
  if (X.Dims.size() != 4 || Rois.Dims.size() != 2 || Rois.Dims[1] != 4 ||
      Y.Dims.size() != 4)
    return C.badInput("X must be 4-D, rois [num_rois, 4]");
  if (X.Type != ElementType::Float || Rois.Type != ElementType::Float)
    return C.unsupported("RoiAlign on " + elementTypeName(X.Type));
  if (Batch.Type != ElementType::Int64 && Batch.Type != ElementType::Int32)
    return C.badInput("batch_indices must be int64 or int32");
  const int64_t NumRois = Rois.Dims[0];
  if (Y.Dims[0] != NumRois || Y.Dims[1] != X.Dims[1] ||
      int64_t(Batch.numElements()) != NumRois)
    return C.badInput("Y must be [num_rois, C, h, w], one batch index a roi");
  P.OH = Y.Dims[2];
  P.OW = Y.Dims[3];
  P.Max = C.N.getString("mode", "avg") == "max";
  P.Ratio = C.N.getInt("sampling_ratio", 0);
  P.Scale = C.N.getFloat("spatial_scale", 1.0);
  std::string CT = C.N.getString(
      "coordinate_transformation_mode",
      C.G.defaultOpset() >= 16 ? "half_pixel" : "output_half_pixel");
  P.HalfPixel = CT == "half_pixel";
  if (!P.HalfPixel && CT != "output_half_pixel")
    return C.unsupported("coordinate_transformation_mode '" + CT + "'");
  return llvm::Error::success();
}

namespace {

llvm::Error runRoiAlign(const KernelContext &C) {
  roialign::Params P;
  if (llvm::Error E = roiAlignSetup(C, P))
    return E;
  const TensorRef &X = C.Inputs[0], &Rois = C.Inputs[1], &Batch = C.Inputs[2],
                  &Y = C.Outputs[0];
  const int64_t N = X.Dims[0], Ch = X.Dims[1], H = X.Dims[2], W = X.Dims[3];
  const int64_t NumRois = Rois.Dims[0];
  for (int64_t R = 0; R < NumRois; ++R) {
    int64_t B = intAt(Batch, uint64_t(R));
    if (B < 0 || B >= N)
      return C.badInput("batch index " + llvm::Twine(B) + " out of range");
  }
  C.Pool.parallelFor(NumRois * Ch, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t RC = Begin; RC < End; ++RC) {
      const int64_t R = RC / Ch, Cc = RC % Ch;
      const float *Roi = Rois.data<const float>() + R * 4;
      const float *Plane =
          X.data<const float>() + (intAt(Batch, uint64_t(R)) * Ch + Cc) * H * W;
      float *Out = Y.data<float>() + RC * P.OH * P.OW;
      for (int64_t PH = 0; PH < P.OH; ++PH)
        for (int64_t PW = 0; PW < P.OW; ++PW)
          Out[PH * P.OW + PW] = roialign::bin(P, Roi, Plane, H, W, PH, PW);
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
