//===- Pool.cpp - CPU kernels: windowed and global pooling ----------------===//
//
// MaxPool (with its optional Indices output), AveragePool, LpPool and the
// three global pools. A window reads the input positions
// o*stride - pad_begin + k*dilation that fall inside the input; the output
// dims (ceil_mode included) come from shape inference. AveragePool divides
// by the positions inside the input, or with count_include_pad by those
// inside the padded input (never past pad_end: a ceil_mode window that runs
// off the padding does not count the overhang, as ONNX's reference does).
// Planes (image, channel) run in parallel. MaxUnpool lives here too, and
// the family's register function adds RoiAlign.cpp.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "ConvGeometry.h"
#include "Elementwise.h"
#include "Vector8.h"
#include <cmath>
#include <limits>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

enum class PoolKind { Max, Average, Lp };

struct PoolSetup {
  WindowGeometry G;
  int64_t Planes = 0;
  bool CountPad = false;
};

std::string poolSetup(const KernelContext &C, PoolSetup &S) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (X.Dims.size() < 3 || Y.Dims.size() != X.Dims.size())
    return "X and Y must have the same rank, at least 3";
  if (!C.N.getInts("kernel_shape"))
    return "kernel_shape is required";
  llvm::ArrayRef<int64_t> XD(X.Dims), YD(Y.Dims);
  std::string Why =
      windowGeometry(C.N, XD.drop_front(2), YD.drop_front(2), {}, false, S.G);
  if (!Why.empty())
    return Why;
  if (Y.Dims[0] != X.Dims[0] || Y.Dims[1] != X.Dims[1])
    return "Y's batch or channels differ from X's";
  S.Planes = X.Dims[0] * X.Dims[1];
  S.CountPad = C.N.getInt("count_include_pad", 0) != 0;
  return "";
}

/// MaxPool of one 2-D plane, tap by tap: for each output row, each tap
/// (kh, kw) inside the input updates the run of outputs whose windows hold
/// it, Y[ow] = max(Y[ow], X[ow * S + kw - pad]). Every output still sees its
/// taps in the order of the window loop (rows, then columns), so results
/// (NaN included) are the per-window loop's; the inner loop is a strided
/// load and a compare the compiler vectorizes, where the per-window loop
/// (ResNet's stem MaxPool: 5.6 ms of 218) was scalar.
template <typename T>
OOMPLAN_SIMD_CLONES void maxPoolPlane2D(const T *Xp, T *Yp,
                                        const WindowGeometry &G) {
  const int64_t H = G.In[0], W = G.In[1], OH = G.Out[0], OW = G.Out[1];
  const int64_t SW = G.S[1], PW = G.PadBegin[1];
  for (int64_t Oh = 0; Oh < OH; ++Oh) {
    T *Yr = Yp + Oh * OW;
    std::fill(Yr, Yr + OW, std::numeric_limits<T>::lowest());
    const int64_t H0 = Oh * G.S[0] - G.PadBegin[0];
    const int64_t Hs = std::max<int64_t>(H0, 0),
                  He = std::min<int64_t>(H0 + G.K[0], H);
    for (int64_t Hh = Hs; Hh < He; ++Hh)
      for (int64_t Kw = 0; Kw < G.K[1]; ++Kw) {
        // Outputs whose tap Kw is inside the row: 0 <= ow*SW - PW + Kw < W.
        const int64_t Lead = PW - Kw, Last = W - 1 + PW - Kw;
        if (Last < 0)
          continue;
        const int64_t Lo = Lead > 0 ? (Lead + SW - 1) / SW : 0;
        const int64_t Hi = std::min(OW - 1, Last / SW);
        const T *Row = Xp + Hh * W;
        for (int64_t Ow = Lo; Ow <= Hi; ++Ow)
          Yr[Ow] = std::max(Yr[Ow], Row[Ow * SW - Lead]);
      }
  }
}

/// The common 2-D case (no dilation, no Indices output, max or average)
/// with each window's row and column range computed once: the generic loop
/// below decodes every tap's index, which costs more than the compare.
template <typename T>
void pool2D(const KernelContext &C, const PoolSetup &S, PoolKind Kind) {
  const WindowGeometry &G = S.G;
  const int64_t H = G.In[0], W = G.In[1], OH = G.Out[0], OW = G.Out[1];
  const T *X = C.Inputs[0].data<const T>();
  T *Y = C.Outputs[0].data<T>();
  C.Pool.parallelFor(S.Planes, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t Plane = Begin; Plane < End; ++Plane) {
      const T *Xp = X + Plane * H * W;
      T *Yp = Y + Plane * OH * OW;
      if (Kind == PoolKind::Max) {
        maxPoolPlane2D(Xp, Yp, G);
        continue;
      }
      for (int64_t Oh = 0; Oh < OH; ++Oh) {
        const int64_t H0 = Oh * G.S[0] - G.PadBegin[0];
        const int64_t Hs = std::max<int64_t>(H0, 0),
                      He = std::min<int64_t>(H0 + G.K[0], H);
        const int64_t PadRows =
            std::min<int64_t>(H0 + G.K[0], H + G.PadEnd[0]) -
            std::max<int64_t>(H0, -G.PadBegin[0]);
        for (int64_t Ow = 0; Ow < OW; ++Ow) {
          const int64_t W0 = Ow * G.S[1] - G.PadBegin[1];
          const int64_t Ws = std::max<int64_t>(W0, 0),
                        We = std::min<int64_t>(W0 + G.K[1], W);
          double Acc = 0;
          for (int64_t Hh = Hs; Hh < He; ++Hh)
            for (int64_t Ww = Ws; Ww < We; ++Ww)
              Acc += double(Xp[Hh * W + Ww]);
          int64_t Div =
              S.CountPad
                  ? PadRows * (std::min<int64_t>(W0 + G.K[1], W + G.PadEnd[1]) -
                               std::max<int64_t>(W0, -G.PadBegin[1]))
                  : std::max<int64_t>(0, He - Hs) *
                        std::max<int64_t>(0, We - Ws);
          Yp[Oh * OW + Ow] = T(Div > 0 ? Acc / double(Div) : 0.0);
        }
      }
    }
  });
}

template <typename T>
void poolPlanes(const KernelContext &C, const PoolSetup &S,
                const pool::Window &W, PoolKind Kind) {
  const int64_t InSize = S.G.inSize(), OutSize = S.G.outSize();
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  int64_t *Idx = hasOutput(C, 1) ? C.Outputs[1].data<int64_t>() : nullptr;
  const pool::Kind Kd = Kind == PoolKind::Max       ? pool::Kind::Max
                        : Kind == PoolKind::Average ? pool::Kind::Average
                                                    : pool::Kind::Lp;
  C.Pool.parallelFor(S.Planes, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t Plane = Begin; Plane < End; ++Plane) {
      const T *Xp = X.data<const T>() + Plane * InSize;
      T *Yp = Y.data<T>() + Plane * OutSize;
      for (int64_t O = 0; O < OutSize; ++O) {
        int64_t At = -1;
        Yp[O] = pool::at<T>(W, Kd, Xp, O, std::numeric_limits<T>::lowest(),
                            Idx ? &At : nullptr);
        if (Idx)
          Idx[Plane * OutSize + O] = Plane * InSize + At;
      }
    }
  });
}

llvm::Error runPool(const KernelContext &C, PoolKind Kind) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  PoolSetup S;
  std::string Why = poolSetup(C, S);
  if (!Why.empty())
    return C.badInput(Why);
  if (hasOutput(C, 1) && C.Outputs[1].Type != ElementType::Int64)
    return C.badInput("Indices must be int64");
  ElementType Type = C.Inputs[0].Type;
  if (Kind != PoolKind::Max && !isFloatingPoint(Type))
    return C.unsupported("pooling of type " + elementTypeName(Type));
  const bool Fast2D = S.G.rank() == 2 && !hasOutput(C, 1) &&
                      Kind != PoolKind::Lp && S.G.D[0] == 1 && S.G.D[1] == 1;
  pool::Window W;
  if (!Fast2D && !poolWindow(S.G, C.N, W))
    return C.unsupported("a window of rank " + llvm::Twine(S.G.rank()));
  if (!visitNumeric(Type, [&](auto Tag) {
        if (Fast2D)
          pool2D<decltype(Tag)>(C, S, Kind);
        else
          poolPlanes<decltype(Tag)>(C, S, W, Kind);
      }))
    return C.unsupported("pooling of type " + elementTypeName(Type));
  return llvm::Error::success();
}

llvm::Error runMaxPool(const KernelContext &C) {
  return runPool(C, PoolKind::Max);
}
llvm::Error runAveragePool(const KernelContext &C) {
  return runPool(C, PoolKind::Average);
}
llvm::Error runLpPool(const KernelContext &C) {
  return runPool(C, PoolKind::Lp);
}

template <typename T>
void globalPool(const KernelContext &C, PoolKind Kind, double P) {
  const TensorRef &X = C.Inputs[0];
  const int64_t Planes = X.Dims[0] * X.Dims[1];
  const int64_t Size = productOf(X.Dims, 2, X.Dims.size());
  C.Pool.parallelFor(Planes, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t Plane = Begin; Plane < End; ++Plane) {
      const T *Xp = X.data<const T>() + Plane * Size;
      if (Kind == PoolKind::Average) {
        C.Outputs[0].data<T>()[Plane] = T(sumInDouble(Xp, Size) / double(Size));
        continue;
      }
      double Acc = Kind == PoolKind::Max ? double(Xp[0]) : 0;
      for (int64_t I = 0; I < Size; ++I) {
        if (Kind == PoolKind::Max) {
          // NaN propagates wherever it is, as in ReduceMax and numpy's max
          // (std::max would keep it only as the first element).
          double V = double(Xp[I]);
          Acc = (V != V || V > Acc) ? V : Acc;
        } else {
          Acc += std::pow(std::fabs(double(Xp[I])), P);
        }
      }
      if (Kind == PoolKind::Lp)
        Acc = std::pow(Acc, 1.0 / P);
      C.Outputs[0].data<T>()[Plane] = T(Acc);
    }
  });
}

llvm::Error runGlobal(const KernelContext &C, PoolKind Kind) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (X.Dims.size() < 2 || Y.numElements() != uint64_t(X.Dims[0] * X.Dims[1]))
    return C.badInput("output must hold one value per (image, channel)");
  if (productOf(X.Dims, 2, X.Dims.size()) == 0)
    return C.badInput("empty spatial dims");
  double P = double(C.N.getInt("p", 2));
  if (X.Type == ElementType::Float)
    globalPool<float>(C, Kind, P);
  else if (X.Type == ElementType::Double)
    globalPool<double>(C, Kind, P);
  else
    return C.unsupported("pooling of type " + elementTypeName(X.Type));
  return llvm::Error::success();
}

llvm::Error runGlobalMax(const KernelContext &C) {
  return runGlobal(C, PoolKind::Max);
}
llvm::Error runGlobalAverage(const KernelContext &C) {
  return runGlobal(C, PoolKind::Average);
}
llvm::Error runGlobalLp(const KernelContext &C) {
  return runGlobal(C, PoolKind::Lp);
}

/// Writes each X value at its flat index I into a zeroed Y (MaxPool's
/// inverse). The indices address the default unpooled shape,
/// (in - 1) * stride + kernel - pads per axis; with a larger output_shape a
/// value keeps its coordinates, as ONNX's example shows.
llvm::Error runMaxUnpool(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const size_t R = X.Dims.size();
  DimVector Def;
  if (llvm::Error E = maxUnpoolShape(C, Def))
    return E;
  const uint64_t EB = elemBytes(X.Type), N = Y.numElements();
  const int64_t DefN = productOf(Def, 0, R);
  DimVector YS = stridesOf(Y.Dims);
  std::memset(Y.Data, 0, Y.bytes());
  for (uint64_t I = 0; I < X.numElements(); ++I) {
    int64_t At = intAt(C.Inputs[1], I), Rem = At, Off = 0;
    bool Inside = At >= 0 && At < DefN;
    for (int64_t A = int64_t(R) - 1; A >= 0 && Inside; --A) {
      int64_t Coord = Rem % Def[A];
      Rem /= Def[A];
      Inside = Coord < Y.Dims[A];
      Off += Coord * YS[A];
    }
    if (!Inside || uint64_t(Off) >= N)
      return C.badInput("index " + llvm::Twine(At) +
                        " is outside the unpooled output");
    std::memcpy(Y.data<char>() + uint64_t(Off) * EB,
                X.data<const char>() + I * EB, EB);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error maxUnpoolShape(const KernelContext &C, DimVector &Def) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const size_t R = X.Dims.size();
  if (!hasInput(C, 1) || C.Inputs[1].numElements() != X.numElements())
    return C.badInput("indices must match X in size");
  if (R < 3 || Y.Dims.size() != R)
    return C.badInput("X and Y must have the same rank, at least 3");
  const size_t Sp = R - 2;
  auto K = C.N.getInts("kernel_shape");
  if (!K || K->size() != Sp)
    return C.badInput("kernel_shape must have one entry per spatial axis");
  std::vector<int64_t> St = C.N.getInts("strides").value_or(
                           std::vector<int64_t>(Sp, 1)),
                       Pads = C.N.getInts("pads").value_or(
                           std::vector<int64_t>(2 * Sp, 0));
  if (St.size() != Sp || Pads.size() != 2 * Sp)
    return C.badInput("strides or pads do not match the spatial rank");
  Def.assign(X.Dims.begin(), X.Dims.begin() + 2);
  for (size_t I = 0; I < Sp; ++I)
    Def.push_back((X.Dims[2 + I] - 1) * St[I] + (*K)[I] - Pads[I] -
                  Pads[Sp + I]);
  return llvm::Error::success();
}

/// RoiAlign.cpp
void registerRoiAlignKernels(CPUKernelTable &T);

void registerPoolKernels(CPUKernelTable &T) {
  addKernel(T, "MaxPool", Kernel{&runMaxPool, nullptr, numericTypes()});
  addKernel(T, "AveragePool", Kernel{&runAveragePool, nullptr, floatTypes()});
  addKernel(T, "LpPool", Kernel{&runLpPool, nullptr, floatTypes()});
  addKernel(T, "GlobalMaxPool", Kernel{&runGlobalMax, nullptr, floatTypes()});
  addKernel(T, "GlobalAveragePool",
            Kernel{&runGlobalAverage, nullptr, floatTypes()});
  addKernel(T, "GlobalLpPool", Kernel{&runGlobalLp, nullptr, floatTypes()});
  addKernel(T, "MaxUnpool", Kernel{&runMaxUnpool, nullptr, {}});
  registerRoiAlignKernels(T);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
