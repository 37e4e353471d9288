//===- GridSample.cpp - CPU kernel: GridSample (2-D) ----------------------===//
//
// Samples X [N, C, H, W] at the normalized (x, y) points of grid
// [N, Ho, Wo, 2]: each point is mapped to pixel coordinates (align_corners
// decides whether -1 and 1 are pixel centres or edges), moved inside by the
// padding mode (border clamps it, reflection folds it), and read by nearest
// (round half to even, as numpy's rint), bilinear or bicubic (Keys,
// a = -0.75) interpolation; pixels outside read 0 (zeros), the edge
// (border) or their reflection. This follows ONNX's reference step by step.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

enum class Padding { Zeros, Border, Reflection };

double reflect(double X, double Lo, double Hi) {
  const double Range = Hi - Lo;
  if (Range <= 0)
    return Lo;
  if (X < Lo) {
    double D = Lo - X;
    int64_t N = int64_t(D / Range);
    double R = D - double(N) * Range;
    return N % 2 == 0 ? Lo + R : Hi - R;
  }
  if (X > Hi) {
    double D = X - Hi;
    int64_t N = int64_t(D / Range);
    double R = D - double(N) * Range;
    return N % 2 == 0 ? Hi - R : Lo + R;
  }
  return X;
}

struct Sampler {
  const float *Img;
  int64_t H, W;
  Padding Pad;
  double Border[4]; ///< x_min, y_min, x_max, y_max

  double pixel(int64_t R, int64_t C) const {
    switch (Pad) {
    case Padding::Zeros:
      return R >= 0 && R < H && C >= 0 && C < W ? Img[R * W + C] : 0.0;
    case Padding::Border:
      R = std::max<int64_t>(0, std::min(H - 1, R));
      C = std::max<int64_t>(0, std::min(W - 1, C));
      return Img[R * W + C];
    case Padding::Reflection:
      C = int64_t(reflect(double(C), Border[0], Border[2]));
      R = int64_t(reflect(double(R), Border[1], Border[3]));
      R = std::max<int64_t>(0, std::min(H - 1, R));
      C = std::max<int64_t>(0, std::min(W - 1, C));
      return Img[R * W + C];
    }
    return 0;
  }
};

void cubic(double X, double *C) {
  const double A = -0.75;
  X = std::fabs(X);
  C[0] = ((A * (X + 1) - 5 * A) * (X + 1) + 8 * A) * (X + 1) - 4 * A;
  C[1] = ((A + 2) * X - (A + 3)) * X * X + 1;
  C[2] = ((A + 2) * (1 - X) - (A + 3)) * (1 - X) * (1 - X) + 1;
  C[3] = ((A * (2 - X) - 5 * A) * (2 - X) + 8 * A) * (2 - X) - 4 * A;
}

llvm::Error runGridSample(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  const TensorRef &X = C.Inputs[0], &Grid = C.Inputs[1], &Y = C.Outputs[0];
  if (X.Dims.size() != 4 || Grid.Dims.size() != 4 || Y.Dims.size() != 4)
    return C.unsupported("GridSample other than 2-D (4-D X and grid)");
  if (X.Type != ElementType::Float || Grid.Type != ElementType::Float)
    return C.unsupported("GridSample on " + elementTypeName(X.Type));
  const int64_t N = X.Dims[0], Ch = X.Dims[1], H = X.Dims[2], W = X.Dims[3];
  const int64_t Ho = Grid.Dims[1], Wo = Grid.Dims[2];
  if (Grid.Dims[0] != N || Grid.Dims[3] != 2 || Y.Dims[0] != N ||
      Y.Dims[1] != Ch || Y.Dims[2] != Ho || Y.Dims[3] != Wo)
    return C.badInput("grid must be [N, Ho, Wo, 2] and Y [N, C, Ho, Wo]");
  std::string Mode = C.N.getString("mode", "bilinear");
  std::string PadName = C.N.getString("padding_mode", "zeros");
  const bool Align = C.N.getInt("align_corners", 0) != 0;
  if (Mode != "bilinear" && Mode != "nearest" && Mode != "bicubic")
    return C.unsupported("mode '" + Mode + "'");
  Padding Pad = PadName == "zeros"        ? Padding::Zeros
                : PadName == "border"     ? Padding::Border
                : PadName == "reflection" ? Padding::Reflection
                                          : Padding(-1);
  if (int(Pad) < 0)
    return C.unsupported("padding_mode '" + PadName + "'");
  const double Lo = Align ? 0 : -0.5;
  C.Pool.parallelFor(N * Ch, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t NC = Begin; NC < End; ++NC) {
      const int64_t Ni = NC / Ch;
      Sampler S{X.data<const float>() + NC * H * W,
                H,
                W,
                Pad,
                {Lo, Lo, double(W - 1) - Lo, double(H - 1) - Lo}};
      const float *GP = Grid.data<const float>() + Ni * Ho * Wo * 2;
      float *Out = Y.data<float>() + NC * Ho * Wo;
      for (int64_t P = 0; P < Ho * Wo; ++P) {
        double Gx = GP[2 * P], Gy = GP[2 * P + 1];
        double Xc = Align ? (Gx + 1) / 2 * double(W - 1)
                          : ((Gx + 1) * double(W) - 1) / 2;
        double Yc = Align ? (Gy + 1) / 2 * double(H - 1)
                          : ((Gy + 1) * double(H) - 1) / 2;
        if (Mode == "nearest") {
          Xc = std::nearbyint(Xc); // round half to even, as np.rint
          Yc = std::nearbyint(Yc);
        }
        if (Pad == Padding::Border) {
          Xc = std::max(0.0, std::min(double(W - 1), Xc));
          Yc = std::max(0.0, std::min(double(H - 1), Yc));
        } else if (Pad == Padding::Reflection) {
          Xc = reflect(Xc, S.Border[0], S.Border[2]);
          Yc = reflect(Yc, S.Border[1], S.Border[3]);
        }
        double V;
        if (Mode == "nearest") {
          V = S.pixel(int64_t(Yc), int64_t(Xc));
        } else if (Mode == "bilinear") {
          const int64_t X1 = int64_t(std::floor(Xc)),
                        Y1 = int64_t(std::floor(Yc));
          const double Dx1 = Xc - double(X1), Dx2 = 1 - Dx1;
          const double Dy1 = Yc - double(Y1), Dy2 = 1 - Dy1;
          V = Dy2 * (Dx2 * S.pixel(Y1, X1) + Dx1 * S.pixel(Y1, X1 + 1)) +
              Dy1 * (Dx2 * S.pixel(Y1 + 1, X1) + Dx1 * S.pixel(Y1 + 1, X1 + 1));
        } else {
          const int64_t X0 = int64_t(std::floor(Xc)) - 1,
                        Y0 = int64_t(std::floor(Yc)) - 1;
          double Cx[4], Cy[4];
          cubic(Xc - double(X0) - 1, Cx);
          cubic(Yc - double(Y0) - 1, Cy);
          V = 0;
          for (int I = 0; I < 4; ++I) {
            double Row = 0;
            for (int J = 0; J < 4; ++J)
              Row += Cx[J] * S.pixel(Y0 + I, X0 + J);
            V += Cy[I] * Row;
          }
        }
        Out[P] = float(V);
      }
    }
  });
  return llvm::Error::success();
}

} // namespace

void registerGridSampleKernels(CPUKernelTable &T) {
  addKernel(T, "GridSample",
            Kernel{&runGridSample, nullptr, {ElementType::Float}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
