//===- Resize.cpp - CPU kernels: Resize and Upsample ----------------------===//
//
// Every output coordinate maps back to an input coordinate by the
// coordinate_transformation_mode, and the value is a weighted sum of input
// neighbours on each axis: one (nearest, by nearest_mode), two (linear) or
// four (cubic, with cubic_coeff_a and exclude_outside). Weights multiply
// across axes, as ONNX's reference interpolates axis by axis. Neighbours
// past the edge read the edge. The scale of an axis is the scales input
// when given, else output/input size (one scale for the named axes under
// opset 18's keep_aspect_ratio_policy); like the reference, the resized
// length in the formulas is scale * input length. Opset 18's axes name the
// axes that scales, sizes and roi describe. Upsample and opset-10 Resize
// use the asymmetric transform with floor rounding.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "ResizeTaps.h"
#include "TensorUtil.h"
#include "llvm/Support/MathExtras.h"
#include <cmath>
#include <memory>

namespace oomplan {
namespace runtime {
namespace cpu {

using namespace resize;

/// Reads the attributes, and the roi and scales inputs through Numbers,
/// into S. Shared with the CUDA kernel, which reads the inputs from the
/// device (TensorUtil.h).
llvm::Error resizeSetup(const KernelContext &C, ResizeNumbers Numbers,
                        ResizeSetup &S) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const size_t R = X.Dims.size();
  if (Y.Dims.size() != R)
    return C.badInput("output rank differs from the input's");
  const bool Legacy = C.N.OpType == "Upsample" || C.G.defaultOpset() < 11;
  std::string ModeName = C.N.getString("mode", "nearest");
  if (ModeName == "nearest")
    S.M.M = Mode::Nearest;
  else if (ModeName == "linear" || ModeName == "bilinear")
    S.M.M = Mode::Linear;
  else if (ModeName == "cubic")
    S.M.M = Mode::Cubic;
  else
    return C.unsupported("mode '" + ModeName + "'");
  std::string CT = C.N.getString("coordinate_transformation_mode",
                                 Legacy ? "asymmetric" : "half_pixel");
  static const std::pair<const char *, Coord> CTs[] = {
      {"half_pixel", Coord::HalfPixel},
      {"pytorch_half_pixel", Coord::PytorchHalfPixel},
      {"align_corners", Coord::AlignCorners},
      {"asymmetric", Coord::Asymmetric},
      {"tf_half_pixel_for_nn", Coord::TfHalfPixelForNN},
      {"tf_crop_and_resize", Coord::TfCropAndResize},
      {"half_pixel_symmetric", Coord::HalfPixelSymmetric}};
  bool Found = false;
  for (auto &[Name, V] : CTs)
    if (CT == Name) {
      S.M.CT = V;
      Found = true;
    }
  if (!Found)
    return C.unsupported("coordinate_transformation_mode '" + CT + "'");
  std::string NR =
      C.N.getString("nearest_mode", Legacy ? "floor" : "round_prefer_floor");
  S.M.NR = NR == "round_prefer_ceil" ? Round::PreferCeil
           : NR == "floor"           ? Round::Floor
           : NR == "ceil"            ? Round::Ceil
                                     : Round::PreferFloor;
  S.M.A = C.N.getFloat("cubic_coeff_a", -0.75);
  S.M.ExcludeOutside = C.N.getInt("exclude_outside", 0) != 0;
  S.Extrapolation = C.N.getFloat("extrapolation_value", 0);
  // Opset 18: scales, sizes and roi may name a subset of the axes; the
  // others keep their length.
  llvm::SmallVector<size_t, 8> Axes;
  if (const Attribute *A = C.N.attr("axes")) {
    for (int64_t Ax : A->Ints) {
      if (Ax < -int64_t(R) || Ax >= int64_t(R))
        return C.badInput("axes holds " + std::to_string(Ax) +
                          ", out of range for rank " + std::to_string(R));
      Axes.push_back(size_t(Ax < 0 ? Ax + int64_t(R) : Ax));
    }
  } else {
    for (size_t I = 0; I < R; ++I)
      Axes.push_back(I);
  }
  std::string Policy = C.N.getString("keep_aspect_ratio_policy", "stretch");
  if (Policy != "stretch" && Policy != "not_larger" && Policy != "not_smaller")
    return C.unsupported("keep_aspect_ratio_policy '" + Policy + "'");
  // Scales: input 1 for Upsample and opset-10 Resize, else input 2; the
  // attribute for Upsample-7.
  unsigned ScalesAt = Legacy ? 1 : 2;
  S.Axes.assign(R, Axis());
  for (size_t I = 0; I < R; ++I)
    S.Axes[I].OutLen = Y.Dims[I];
  llvm::SmallVector<double, 8> V;
  if (hasInput(C, ScalesAt) && C.Inputs[ScalesAt].numElements() > 0) {
    if (C.Inputs[ScalesAt].numElements() != Axes.size() ||
        !isFloatingPoint(C.Inputs[ScalesAt].Type))
      return C.badInput("scales must hold one float per axis");
    if (llvm::Error E = Numbers(ScalesAt, V))
      return E;
    for (size_t I = 0; I < Axes.size(); ++I)
      S.Axes[Axes[I]].Scale = V[I];
  } else if (auto A = C.N.attr("scales"); A && A->Floats.size() == R) {
    for (size_t I = 0; I < R; ++I)
      S.Axes[I].Scale = A->Floats[I];
  } else {
    for (size_t I = 0; I < R; ++I)
      S.Axes[I].Scale = X.Dims[I] ? double(Y.Dims[I]) / double(X.Dims[I]) : 1;
    if (Policy != "stretch") {
      // One scale for every named axis, from the sizes (ONNX's reference).
      if (!hasInput(C, 3) || C.Inputs[3].numElements() != Axes.size())
        return C.badInput("keep_aspect_ratio_policy needs one size per axis");
      if (llvm::Error E = Numbers(3, V))
        return E;
      double Scale = 0;
      for (size_t I = 0; I < Axes.size(); ++I) {
        double Ratio = V[I] / double(X.Dims[Axes[I]]);
        Scale = I == 0                   ? Ratio
                : Policy == "not_larger" ? std::min(Scale, Ratio)
                                         : std::max(Scale, Ratio);
      }
      for (size_t Ax : Axes)
        S.Axes[Ax].Scale = Scale;
    }
  }
  for (const Axis &A : S.Axes)
    if (!(A.Scale > 0))
      return C.badInput("scales must be positive");
  // Antialiasing stretches the linear and cubic filters by 1 / scale: it
  // changes nothing unless some axis shrinks.
  if (C.N.getInt("antialias", 0) != 0 && S.M.M != Mode::Nearest)
    for (const Axis &A : S.Axes)
      if (A.Scale < 1)
        return C.unsupported("antialias is not supported when downscaling "
                             "(a filter wider than the interpolation's)");
  if (S.M.CT == Coord::TfCropAndResize) {
    if (Legacy || !hasInput(C, 1) ||
        C.Inputs[1].numElements() != 2 * Axes.size())
      return C.badInput("tf_crop_and_resize needs an roi of 2 values per axis");
    if (llvm::Error E = Numbers(1, V))
      return E;
    for (size_t I = 0; I < Axes.size(); ++I) {
      S.Axes[Axes[I]].RoiStart = V[I];
      S.Axes[Axes[I]].RoiEnd = V[Axes.size() + I];
    }
  }
  return llvm::Error::success();
}

namespace {

/// Sums weight products over every combination of taps of the axes.
template <typename T>
double interpolate(const T *X, llvm::ArrayRef<Taps> AxisTaps,
                   llvm::ArrayRef<int64_t> Strides, size_t Axis, int64_t Base) {
  const Taps &T0 = AxisTaps[Axis];
  double Acc = 0;
  for (int K = 0; K < T0.N; ++K) {
    if (T0.W[K] == 0)
      continue;
    int64_t Off = Base + T0.Idx[K] * Strides[Axis];
    double V = Axis + 1 == AxisTaps.size()
                   ? double(X[Off])
                   : interpolate(X, AxisTaps, Strides, Axis + 1, Off);
    Acc += T0.W[K] * V;
  }
  return Acc;
}

/// Every axis's taps for each of its output coordinates: axisTaps divides
/// and rounds, so computing it once per coordinate rather than once per
/// output element is most of Resize's speed.
std::vector<std::vector<Taps>>
tapTables(const ResizeSetup &S, const TensorRef &X, const TensorRef &Y) {
  std::vector<std::vector<Taps>> Tab(X.Dims.size());
  for (size_t A = 0; A < X.Dims.size(); ++A) {
    Tab[A].resize(size_t(Y.Dims[A]));
    for (int64_t O = 0; O < Y.Dims[A]; ++O)
      Tab[A][size_t(O)] = axisTaps(S.M, S.Axes[A], O, X.Dims[A]);
  }
  return Tab;
}

/// Output rows (every axis but the last) per parallel task: a task copies a
/// row that repeats the one before it, so rows of one task share work.
constexpr int64_t RowsPerTask = 16;

template <typename T>
void resizeTyped(const KernelContext &C, const ResizeSetup &S) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const int64_t R = int64_t(X.Dims.size());
  const int64_t Inner = Y.Dims[R - 1];
  const int64_t Rows = productOf(Y.Dims, 0, size_t(R - 1));
  DimVector Strides = stridesOf(X.Dims);
  const std::vector<std::vector<Taps>> Tab = tapTables(S, X, Y);
  C.Pool.parallelFor(Rows, RowsPerTask, [&](int64_t Begin, int64_t End) {
    llvm::SmallVector<Taps, 6> AxisTaps(R);
    for (int64_t Row = Begin; Row < End; ++Row) {
      int64_t Rem = Row;
      bool Outside = false;
      for (int64_t A = R - 2; A >= 0; --A) {
        AxisTaps[A] = Tab[A][size_t(Rem % Y.Dims[A])];
        Outside |= AxisTaps[A].Outside;
        Rem /= Y.Dims[A];
      }
      T *Out = Y.data<T>() + Row * Inner;
      for (int64_t J = 0; J < Inner; ++J) {
        AxisTaps[R - 1] = Tab[R - 1][size_t(J)];
        Out[J] =
            Outside || AxisTaps[R - 1].Outside
                ? T(S.Extrapolation)
                : T(interpolate(X.data<const T>(), AxisTaps, Strides, 0, 0));
      }
    }
  });
}

/// Gathers one output row of nearest neighbours, elements of type T.
template <typename T>
void gatherRow(const char *Src, const int64_t *Idx, const bool *Out,
               int64_t Len, T Fill, char *Dst) {
  const T *S = reinterpret_cast<const T *>(Src);
  T *D = reinterpret_cast<T *>(Dst);
  for (int64_t J = 0; J < Len; ++J)
    D[J] = Out[J] ? Fill : S[Idx[J]];
}

/// Nearest on any element type: a gather of whole elements, row by row.
/// An output row whose source row is the previous output row's (every
/// upsampled row but the first of its run) is a copy of that row.
void resizeNearest(const KernelContext &C, const ResizeSetup &S) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const int64_t R = int64_t(X.Dims.size());
  const uint64_t EB = elemBytes(X.Type);
  const int64_t Inner = Y.Dims[R - 1];
  const int64_t Rows = productOf(Y.Dims, 0, size_t(R - 1));
  DimVector Strides = stridesOf(X.Dims);
  const std::vector<std::vector<Taps>> Tab = tapTables(S, X, Y);
  std::vector<int64_t> LastIdx(static_cast<size_t>(Inner));
  std::unique_ptr<bool[]> LastOut(new bool[size_t(Inner)]);
  for (int64_t J = 0; J < Inner; ++J) {
    LastIdx[size_t(J)] = Tab[R - 1][size_t(J)].Idx[0];
    LastOut[size_t(J)] = Tab[R - 1][size_t(J)].Outside;
  }
  // Only float and double extrapolate to a value; other types fill zeros,
  // as the element-wise path did.
  const double Fill = S.Extrapolation;
  C.Pool.parallelFor(Rows, RowsPerTask, [&](int64_t Begin, int64_t End) {
    int64_t PrevSrc = -1;
    char *PrevRow = nullptr;
    for (int64_t Row = Begin; Row < End; ++Row) {
      int64_t Rem = Row, Src = 0;
      bool Outside = false;
      for (int64_t A = R - 2; A >= 0; --A) {
        const Taps &T = Tab[A][size_t(Rem % Y.Dims[A])];
        Outside |= T.Outside;
        Src += T.Idx[0] * Strides[A];
        Rem /= Y.Dims[A];
      }
      char *Dst = Y.data<char>() + uint64_t(Row * Inner) * EB;
      if (Outside)
        Src = -2; // a row of fills: never equal to a real source row
      if (Src == PrevSrc && PrevRow) {
        std::memcpy(Dst, PrevRow, uint64_t(Inner) * EB);
      } else if (Outside) {
        if (X.Type == ElementType::Float)
          std::fill_n(reinterpret_cast<float *>(Dst), Inner, float(Fill));
        else if (X.Type == ElementType::Double)
          std::fill_n(reinterpret_cast<double *>(Dst), Inner, Fill);
        else
          std::memset(Dst, 0, uint64_t(Inner) * EB);
      } else {
        const char *From = X.data<const char>() + uint64_t(Src) * EB;
        const bool *O = LastOut.get();
        const int64_t *I = LastIdx.data();
        switch (X.Type == ElementType::Float    ? 5
                : X.Type == ElementType::Double ? 9
                                                : int(EB)) {
        case 5:
          gatherRow<float>(From, I, O, Inner, float(Fill), Dst);
          break;
        case 9:
          gatherRow<double>(From, I, O, Inner, Fill, Dst);
          break;
        case 1:
          gatherRow<uint8_t>(From, I, O, Inner, 0, Dst);
          break;
        case 2:
          gatherRow<uint16_t>(From, I, O, Inner, 0, Dst);
          break;
        case 4:
          gatherRow<uint32_t>(From, I, O, Inner, 0, Dst);
          break;
        default:
          gatherRow<uint64_t>(From, I, O, Inner, 0, Dst);
          break;
        }
      }
      PrevSrc = Src;
      PrevRow = Dst;
    }
  });
}

llvm::Error runResize(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  ResizeSetup S;
  if (llvm::Error E = resizeSetup(
          C,
          [&](unsigned I, llvm::SmallVectorImpl<double> &V) {
            V.clear();
            for (uint64_t K = 0; K < C.Inputs[I].numElements(); ++K)
              V.push_back(numberAt(C.Inputs[I], K));
            return llvm::Error::success();
          },
          S))
    return E;
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (Y.numElements() == 0)
    return llvm::Error::success();
  for (int64_t D : X.Dims)
    if (D == 0)
      return C.badInput("resizing an empty input");
  if (X.Dims.empty()) {
    std::memcpy(Y.Data, X.Data, X.bytes());
    return llvm::Error::success();
  }
  if (S.M.M == Mode::Nearest && elemBytes(X.Type) &&
      llvm::isPowerOf2_64(elemBytes(X.Type)) && elemBytes(X.Type) <= 8)
    resizeNearest(C, S);
  else if (X.Type == ElementType::Float)
    resizeTyped<float>(C, S);
  else if (X.Type == ElementType::Double)
    resizeTyped<double>(C, S);
  else
    return C.unsupported("linear or cubic Resize of type " +
                         elementTypeName(X.Type));
  return llvm::Error::success();
}

} // namespace

void registerResizeKernels(CPUKernelTable &T) {
  // Every type but the 16-bit floats, which run on float copies
  // (HalfInFloat.h): linear and cubic modes interpolate in float.
  addKernel(T, "Resize", Kernel{&runResize, nullptr, numericTypes()});
  addKernel(T, "Upsample", Kernel{&runResize, nullptr, numericTypes()});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
