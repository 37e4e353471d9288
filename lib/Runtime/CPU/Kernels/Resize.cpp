//===- Resize.cpp - CPU kernels: Resize and Upsample ----------------------===//
//
// Every output coordinate maps back to an input coordinate by the
// coordinate_transformation_mode, and the value is a weighted sum of input
// neighbours on each axis: one (nearest, by nearest_mode), two (linear) or
// four (cubic, with cubic_coeff_a and exclude_outside). Weights multiply
// across axes, as ONNX's reference interpolates axis by axis. Neighbours
// past the edge read the edge. The scale of an axis is the scales input
// when given, else output/input size; like the reference, the resized
// length in the formulas is scale * input length. Upsample and opset-10
// Resize use the asymmetric transform with floor rounding.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

enum class Coord {
  HalfPixel,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNN,
  TfCropAndResize
};
enum class Mode { Nearest, Linear, Cubic };
enum class Round { PreferFloor, PreferCeil, Floor, Ceil };

struct ResizeSetup {
  Mode M = Mode::Nearest;
  Coord CT = Coord::HalfPixel;
  Round NR = Round::PreferFloor;
  double A = -0.75;
  bool ExcludeOutside = false;
  double Extrapolation = 0;
  llvm::SmallVector<double, 6> Scale, RoiStart, RoiEnd;
};

/// Up to four neighbours on one axis and their weights.
struct Taps {
  int64_t Idx[4];
  double W[4];
  int N = 0;
  bool Outside = false; ///< tf_crop_and_resize past the input: extrapolate.
};

void cubicCoeffs(double R, double A, double *C) {
  C[0] = ((A * (R + 1) - 5 * A) * (R + 1) + 8 * A) * (R + 1) - 4 * A;
  C[1] = ((A + 2) * R - (A + 3)) * R * R + 1;
  C[2] = ((A + 2) * (1 - R) - (A + 3)) * (1 - R) * (1 - R) + 1;
  C[3] = ((A * (2 - R) - 5 * A) * (2 - R) + 8 * A) * (2 - R) - 4 * A;
}

Taps axisTaps(const ResizeSetup &S, int Axis, int64_t X, int64_t InLen) {
  Taps T;
  const double Scale = S.Scale[Axis];
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
  case Coord::TfCropAndResize: {
    double Span = (S.RoiEnd[Axis] - S.RoiStart[Axis]) * double(InLen - 1);
    Xo = OutLen == 1 ? Span / 2 : double(X) * Span / (OutLen - 1);
    Xo += S.RoiStart[Axis] * double(InLen - 1);
    if (Xo < 0 || Xo > double(InLen - 1))
      T.Outside = true;
    break;
  }
  }
  const double Floor = std::floor(Xo);
  const double R = Xo - Floor;
  const int64_t X0 = int64_t(Floor);
  auto Clamp = [&](int64_t I) {
    return std::max<int64_t>(0, std::min(InLen - 1, I));
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

/// Reads the attributes and the roi/scales inputs into S.
std::string resizeSetup(const KernelContext &C, ResizeSetup &S) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const size_t R = X.Dims.size();
  if (Y.Dims.size() != R)
    return "output rank differs from the input's";
  const bool Legacy = C.N.OpType == "Upsample" || C.G.defaultOpset() < 11;
  std::string ModeName = C.N.getString("mode", "nearest");
  if (ModeName == "nearest")
    S.M = Mode::Nearest;
  else if (ModeName == "linear" || ModeName == "bilinear")
    S.M = Mode::Linear;
  else if (ModeName == "cubic")
    S.M = Mode::Cubic;
  else
    return "unsupported:mode '" + ModeName + "'";
  std::string CT = C.N.getString("coordinate_transformation_mode",
                                 Legacy ? "asymmetric" : "half_pixel");
  static const std::pair<const char *, Coord> CTs[] = {
      {"half_pixel", Coord::HalfPixel},
      {"pytorch_half_pixel", Coord::PytorchHalfPixel},
      {"align_corners", Coord::AlignCorners},
      {"asymmetric", Coord::Asymmetric},
      {"tf_half_pixel_for_nn", Coord::TfHalfPixelForNN},
      {"tf_crop_and_resize", Coord::TfCropAndResize}};
  bool Found = false;
  for (auto &[Name, V] : CTs)
    if (CT == Name) {
      S.CT = V;
      Found = true;
    }
  if (!Found)
    return "unsupported:coordinate_transformation_mode '" + CT + "'";
  std::string NR =
      C.N.getString("nearest_mode", Legacy ? "floor" : "round_prefer_floor");
  S.NR = NR == "round_prefer_ceil" ? Round::PreferCeil
         : NR == "floor"           ? Round::Floor
         : NR == "ceil"            ? Round::Ceil
                                   : Round::PreferFloor;
  S.A = C.N.getFloat("cubic_coeff_a", -0.75);
  S.ExcludeOutside = C.N.getInt("exclude_outside", 0) != 0;
  S.Extrapolation = C.N.getFloat("extrapolation_value", 0);
  if (C.N.getInt("antialias", 0) != 0)
    return "unsupported:antialias";
  if (C.N.attr("axes"))
    return "unsupported:the axes attribute";
  std::string Policy = C.N.getString("keep_aspect_ratio_policy", "stretch");
  if (Policy != "stretch")
    return "unsupported:keep_aspect_ratio_policy '" + Policy + "'";
  // Scales: input 1 for Upsample and opset-10 Resize, else input 2; the
  // attribute for Upsample-7.
  unsigned ScalesAt = Legacy ? 1 : 2;
  S.Scale.clear();
  if (hasInput(C, ScalesAt) && C.Inputs[ScalesAt].numElements() > 0) {
    const TensorRef &Sc = C.Inputs[ScalesAt];
    if (Sc.numElements() != R || !isFloatingPoint(Sc.Type))
      return "scales must hold one float per axis";
    for (size_t I = 0; I < R; ++I)
      S.Scale.push_back(numberAt(Sc, I));
  } else if (auto A = C.N.attr("scales"); A && A->Floats.size() == R) {
    S.Scale.assign(A->Floats.begin(), A->Floats.end());
  } else {
    for (size_t I = 0; I < R; ++I)
      S.Scale.push_back(X.Dims[I] ? double(Y.Dims[I]) / double(X.Dims[I]) : 1);
  }
  for (double V : S.Scale)
    if (!(V > 0))
      return "scales must be positive";
  S.RoiStart.assign(R, 0);
  S.RoiEnd.assign(R, 1);
  if (S.CT == Coord::TfCropAndResize) {
    if (Legacy || !hasInput(C, 1) || C.Inputs[1].numElements() != 2 * R)
      return "tf_crop_and_resize needs an roi of 2 * rank values";
    for (size_t I = 0; I < R; ++I) {
      S.RoiStart[I] = numberAt(C.Inputs[1], I);
      S.RoiEnd[I] = numberAt(C.Inputs[1], R + I);
    }
  }
  return "";
}

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

template <typename T>
void resizeTyped(const KernelContext &C, const ResizeSetup &S) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const int64_t R = int64_t(X.Dims.size());
  const int64_t Inner = Y.Dims[R - 1];
  const int64_t Rows = productOf(Y.Dims, 0, size_t(R - 1));
  DimVector Strides = stridesOf(X.Dims);
  C.Pool.parallelFor(Rows, 1, [&](int64_t Begin, int64_t End) {
    llvm::SmallVector<Taps, 6> AxisTaps(R);
    for (int64_t Row = Begin; Row < End; ++Row) {
      int64_t Rem = Row;
      bool Outside = false;
      for (int64_t A = R - 2; A >= 0; --A) {
        AxisTaps[A] = axisTaps(S, int(A), Rem % Y.Dims[A], X.Dims[A]);
        Outside |= AxisTaps[A].Outside;
        Rem /= Y.Dims[A];
      }
      T *Out = Y.data<T>() + Row * Inner;
      for (int64_t J = 0; J < Inner; ++J) {
        AxisTaps[R - 1] = axisTaps(S, int(R - 1), J, X.Dims[R - 1]);
        Out[J] =
            Outside || AxisTaps[R - 1].Outside
                ? T(S.Extrapolation)
                : T(interpolate(X.data<const T>(), AxisTaps, Strides, 0, 0));
      }
    }
  });
}

/// Nearest on any element type: a gather of whole elements.
void resizeNearestBytes(const KernelContext &C, const ResizeSetup &S) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const int64_t R = int64_t(X.Dims.size());
  const uint64_t EB = elemBytes(X.Type);
  DimVector Strides = stridesOf(X.Dims), Coord(R, 0);
  const uint64_t N = Y.numElements();
  for (uint64_t E = 0; E < N; ++E) {
    int64_t Off = 0;
    bool Outside = false;
    for (int64_t A = 0; A < R; ++A) {
      Taps T = axisTaps(S, int(A), Coord[A], X.Dims[A]);
      Outside |= T.Outside;
      Off += T.Idx[0] * Strides[A];
    }
    if (Outside)
      std::memset(Y.data<char>() + E * EB, 0, EB);
    else
      std::memcpy(Y.data<char>() + E * EB, X.data<const char>() + Off * EB, EB);
    for (int64_t A = R - 1; A >= 0; --A) {
      if (++Coord[A] < Y.Dims[A])
        break;
      Coord[A] = 0;
    }
  }
}

llvm::Error runResize(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  ResizeSetup S;
  std::string Why = resizeSetup(C, S);
  if (llvm::StringRef(Why).startswith("unsupported:"))
    return C.unsupported(llvm::StringRef(Why).drop_front(12));
  if (!Why.empty())
    return C.badInput(Why);
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
  if (X.Type == ElementType::Float)
    resizeTyped<float>(C, S);
  else if (X.Type == ElementType::Double)
    resizeTyped<double>(C, S);
  else if (S.M == Mode::Nearest && elemBytes(X.Type))
    resizeNearestBytes(C, S);
  else
    return C.unsupported("linear or cubic Resize of type " +
                         elementTypeName(X.Type));
  return llvm::Error::success();
}

} // namespace

void registerResizeKernels(CPUKernelTable &T) {
  addKernel(T, "Resize", Kernel{&runResize, nullptr, {}});
  addKernel(T, "Upsample", Kernel{&runResize, nullptr, {}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
