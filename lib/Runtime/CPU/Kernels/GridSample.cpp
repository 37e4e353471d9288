//===- GridSample.cpp - CPU kernel: GridSample (2-D) ----------------------===//
//
// Samples X [N, C, H, W] at the normalized (x, y) points of grid
// [N, Ho, Wo, 2]: each point is mapped to pixel coordinates (align_corners
// decides whether -1 and 1 are pixel centres or edges), moved inside by the
// padding mode (border clamps it, reflection folds it), and read by nearest
// (round half to even, as numpy's rint), bilinear or bicubic (Keys,
// a = -0.75) interpolation; pixels outside read 0 (zeros), the edge
// (border) or their reflection. This follows ONNX's reference step by step;
// the per-point arithmetic is GridSamplePoint.h, shared with the CUDA kernel.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "GridSamplePoint.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

llvm::Error gridSampleSetup(const KernelContext &C, gridsample::Mode &M,
                            gridsample::Padding &Pad, bool &Align) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  const TensorRef &X = C.Inputs[0], &Grid = C.Inputs[1], &Y = C.Outputs[0];
  if (X.Dims.size() != 4 || Grid.Dims.size() != 4 || Y.Dims.size() != 4)
    return C.unsupported("GridSample other than 2-D (4-D X and grid)");
  if (X.Type != ElementType::Float || Grid.Type != ElementType::Float)
    return C.unsupported("GridSample on " + elementTypeName(X.Type));
  const int64_t N = X.Dims[0], Ch = X.Dims[1];
  const int64_t Ho = Grid.Dims[1], Wo = Grid.Dims[2];
  if (Grid.Dims[0] != N || Grid.Dims[3] != 2 || Y.Dims[0] != N ||
      Y.Dims[1] != Ch || Y.Dims[2] != Ho || Y.Dims[3] != Wo)
    return C.badInput("grid must be [N, Ho, Wo, 2] and Y [N, C, Ho, Wo]");
  std::string Mode = C.N.getString("mode", "bilinear");
  std::string PadName = C.N.getString("padding_mode", "zeros");
  Align = C.N.getInt("align_corners", 0) != 0;
  // Opset 20 renamed the modes for any rank: linear, cubic.
  if (Mode == "bilinear" || Mode == "linear")
    M = gridsample::Mode::Bilinear;
  else if (Mode == "nearest")
    M = gridsample::Mode::Nearest;
  else if (Mode == "bicubic" || Mode == "cubic")
    M = gridsample::Mode::Bicubic;
  else
    return C.unsupported("mode '" + Mode + "'");
  if (PadName == "zeros")
    Pad = gridsample::Padding::Zeros;
  else if (PadName == "border")
    Pad = gridsample::Padding::Border;
  else if (PadName == "reflection")
    Pad = gridsample::Padding::Reflection;
  else
    return C.unsupported("padding_mode '" + PadName + "'");
  return llvm::Error::success();
}

namespace {

llvm::Error runGridSample(const KernelContext &C) {
  gridsample::Mode M;
  gridsample::Padding Pad;
  bool Align;
  if (llvm::Error E = gridSampleSetup(C, M, Pad, Align))
    return E;
  const TensorRef &X = C.Inputs[0], &Grid = C.Inputs[1], &Y = C.Outputs[0];
  const int64_t Ch = X.Dims[1], H = X.Dims[2], W = X.Dims[3];
  const int64_t Ho = Grid.Dims[1], Wo = Grid.Dims[2];
  C.Pool.parallelFor(X.Dims[0] * Ch, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t NC = Begin; NC < End; ++NC) {
      const gridsample::Plane S = gridsample::planeOf(
          X.data<const float>() + NC * H * W, H, W, Pad, Align);
      const float *GP = Grid.data<const float>() + (NC / Ch) * Ho * Wo * 2;
      float *Out = Y.data<float>() + NC * Ho * Wo;
      for (int64_t P = 0; P < Ho * Wo; ++P)
        Out[P] =
            float(gridsample::sample(S, M, Align, GP[2 * P], GP[2 * P + 1]));
    }
  });
  return llvm::Error::success();
}

} // namespace

llvm::Error affineGridParams(const KernelContext &C,
                             llvm::ArrayRef<int64_t> Size, affine::Params &A) {
  const TensorRef &Theta = C.Inputs[0], &Y = C.Outputs[0];
  if (Size.size() != 4 && Size.size() != 5)
    return C.badInput("size must be [N, C, H, W] or [N, C, D, H, W]");
  const int64_t S = int64_t(Size.size()) - 2, N = Size[0];
  if (Theta.Type != ElementType::Float || Y.Type != ElementType::Float)
    return C.unsupported("AffineGrid on " + elementTypeName(Theta.Type));
  if (Theta.Dims.size() != 3 || Theta.Dims[0] != N || Theta.Dims[1] != S ||
      Theta.Dims[2] != S + 1)
    return C.badInput("theta must be [N, 2, 3] (2-D) or [N, 3, 4] (3-D)");
  if (int64_t(Y.Dims.size()) != S + 2 || Y.Dims[0] != N || Y.Dims[S + 1] != S)
    return C.badInput("output disagrees with size");
  A = affine::Params();
  A.Points = 1;
  for (int64_t I = 0; I < S; ++I) {
    if (Y.Dims[size_t(I + 1)] != Size[size_t(I + 2)])
      return C.badInput("output disagrees with size");
    A.Size[I] = Size[size_t(I + 2)];
    A.Points *= A.Size[I];
  }
  A.S = int(S);
  A.N = N;
  A.Align = C.N.getInt("align_corners", 0) != 0;
  A.Theta = Theta.data<const float>();
  A.Y = Y.data<float>();
  return llvm::Error::success();
}

/// AffineGrid (opset 20), the grid GridSample reads (AffineGridPoint.h).
static llvm::Error runAffineGrid(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  DimVector Size;
  if (!readInts(C.Inputs[1], Size))
    return C.badInput("size must be integers");
  affine::Params A;
  if (llvm::Error E = affineGridParams(C, Size, A))
    return E;
  for (int64_t I = 0; I < A.N * A.Points; ++I)
    affine::point(A, I / A.Points, I % A.Points);
  return llvm::Error::success();
}

void registerGridSampleKernels(CPUKernelTable &T) {
  addKernel(T, "GridSample",
            Kernel{&runGridSample, nullptr, {ElementType::Float}});
  addKernel(T, "AffineGrid",
            Kernel{&runAffineGrid, nullptr, {ElementType::Float}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
