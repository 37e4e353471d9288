//===- Norm.cpp - CPU kernels: normalizations -----------------------------===//
//
// BatchNormalization (inference, and training mode with its running
// statistics), LayerNormalization (with its Mean and InvStdDev outputs),
// InstanceNormalization, GroupNormalization, LpNormalization, LRN and
// MeanVarianceNormalization.
// Statistics are accumulated in double whatever the element type, so a
// float run agrees with ONNX's numpy reference well inside its tolerance.
// Rows (channels, normalized rows) run in parallel.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include "TensorUtil.h"
#include "Vector8.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// Runs Fn<T>() for float or double inputs; unsupported otherwise.
template <template <typename> class Fn>
llvm::Error dispatchFloat(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  switch (C.Inputs[0].Type) {
  case ElementType::Float:
    return Fn<float>::run(C);
  case ElementType::Double:
    return Fn<double>::run(C);
  default:
    return C.unsupported("type " + elementTypeName(C.Inputs[0].Type));
  }
}

/// Element I of a per-channel parameter of type T, or Default when absent.
template <typename T>
double param(const KernelContext &C, unsigned Input, int64_t I,
             double Default) {
  return hasInput(C, Input) ? double(C.Inputs[Input].data<const T>()[I])
                            : Default;
}

template <typename T> struct BatchNorm {
  static llvm::Error run(const KernelContext &C) {
    const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
    if (X.Dims.size() < 2 || C.Inputs.size() < 5)
      return C.badInput("needs X (rank >= 2), scale, B, mean and var");
    const int64_t Ch = X.Dims[1], Batch = X.Dims[0];
    const int64_t Size = productOf(X.Dims, 2, X.Dims.size());
    for (unsigned I = 1; I < 5; ++I)
      if (int64_t(C.Inputs[I].numElements()) != Ch ||
          C.Inputs[I].Type != X.Type)
        return C.unsupported("scale, B, mean and var must be per channel, of "
                             "X's type");
    const double Eps = C.N.getFloat("epsilon", 1e-5);
    const double Momentum = C.N.getFloat("momentum", 0.9);
    const bool Training = C.N.getInt("training_mode", 0) != 0 ||
                          hasOutput(C, 1) || hasOutput(C, 2);
    for (unsigned I = 3; I < C.Outputs.size(); ++I)
      if (C.Outputs[I].present())
        return C.unsupported("saved_mean/saved_var outputs (opset < 14)");
    const T *XP = X.data<const T>();
    T *YP = Y.data<T>();
    C.Pool.parallelFor(Ch, 1, [&](int64_t Begin, int64_t End) {
      for (int64_t Cc = Begin; Cc < End; ++Cc) {
        double Mean = param<T>(C, 3, Cc, 0), Var = param<T>(C, 4, Cc, 1);
        if (Training) {
          double Sum = 0, Sq = 0;
          for (int64_t N = 0; N < Batch; ++N)
            for (int64_t I = 0; I < Size; ++I) {
              double V = XP[(N * Ch + Cc) * Size + I];
              Sum += V;
              Sq += V * V;
            }
          double Count = double(Batch * Size);
          double BMean = Sum / Count,
                 BVar = std::max(0.0, Sq / Count - BMean * BMean);
          if (hasOutput(C, 1))
            C.Outputs[1].data<T>()[Cc] =
                T(Mean * Momentum + BMean * (1 - Momentum));
          if (hasOutput(C, 2))
            C.Outputs[2].data<T>()[Cc] =
                T(Var * Momentum + BVar * (1 - Momentum));
          Mean = BMean;
          Var = BVar;
        }
        double Scale = param<T>(C, 1, Cc, 1) / std::sqrt(Var + Eps);
        double Shift = param<T>(C, 2, Cc, 0) - Mean * Scale;
        for (int64_t N = 0; N < Batch; ++N)
          for (int64_t I = 0; I < Size; ++I) {
            int64_t K = (N * Ch + Cc) * Size + I;
            YP[K] = T(double(XP[K]) * Scale + Shift);
          }
      }
    });
    return llvm::Error::success();
  }
};

/// Mean and 1/sqrt(var + eps) of Row (N values), each sum in double over
/// eight partial sums (Vector8.h): one running sum made LayerNormalization
/// 3% of a BERT's run.
template <typename T>
void rowStats(const T *Row, int64_t N, double Eps, double &Mean,
              double &InvStd) {
  Mean = N ? sumInDouble(Row, N) / double(N) : 0;
  const double Sq = squaredDeviations(Row, N, Mean);
  InvStd = 1.0 / std::sqrt((N ? Sq / double(N) : 0) + Eps);
}

/// YR = (XR - Mean) * InvStd * Scale + Bias over a row, Scale and Bias read
/// per element (or element 0 when One), Bias 0 when null: without a
/// function call and two presence tests per element, the loop vectorizes.
template <typename T>
OOMPLAN_SIMD_CLONES void
normalizeRow(const T *XR, T *YR, int64_t N, double Mean, double InvStd,
             const T *Scale, bool ScaleOne, const T *Bias, bool BiasOne) {
  for (int64_t I = 0; I < N; ++I) {
    const double S = double(Scale[ScaleOne ? 0 : I]);
    const double B = Bias ? double(Bias[BiasOne ? 0 : I]) : 0.0;
    YR[I] = T((double(XR[I]) - Mean) * InvStd * S + B);
  }
}

template <typename T> struct LayerNorm {
  static llvm::Error run(const KernelContext &C) {
    if (llvm::Error E = requireInputs(C, 2))
      return E;
    const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
    const int64_t R = int64_t(X.Dims.size());
    int64_t Axis = C.N.getInt("axis", -1);
    if (!normAxis(Axis, R))
      return C.badInput("axis out of range");
    const int64_t Rows = productOf(X.Dims, 0, size_t(Axis));
    const int64_t Inner = productOf(X.Dims, size_t(Axis), size_t(R));
    const double Eps = C.N.getFloat("epsilon", 1e-5);
    for (unsigned I = 1; I < 3; ++I)
      if (hasInput(C, I) && (C.Inputs[I].Type != X.Type ||
                             (int64_t(C.Inputs[I].numElements()) != Inner &&
                              C.Inputs[I].numElements() != 1)))
        return C.unsupported("Scale and B must be X's type and have the "
                             "normalized shape or one element");
    for (unsigned I = 1; I < 3; ++I)
      if (hasOutput(C, I) && (int64_t(C.Outputs[I].numElements()) != Rows ||
                              !isFloatingPoint(C.Outputs[I].Type)))
        return C.badInput("Mean/InvStdDev must hold one float per row");
    const bool ScaleOne = C.Inputs[1].numElements() == 1;
    const bool BiasOne = hasInput(C, 2) && C.Inputs[2].numElements() == 1;
    const T *Scale = C.Inputs[1].data<const T>();
    const T *Bias = hasInput(C, 2) ? C.Inputs[2].data<const T>() : nullptr;
    C.Pool.parallelFor(Rows, 1, [&](int64_t Begin, int64_t End) {
      for (int64_t Row = Begin; Row < End; ++Row) {
        const T *XR = X.data<const T>() + Row * Inner;
        T *YR = Y.data<T>() + Row * Inner;
        double Mean, InvStd;
        rowStats(XR, Inner, Eps, Mean, InvStd);
        normalizeRow(XR, YR, Inner, Mean, InvStd, Scale, ScaleOne, Bias,
                     BiasOne);
        for (unsigned O = 1; O < 3; ++O)
          if (hasOutput(C, O)) {
            double V = O == 1 ? Mean : InvStd;
            if (C.Outputs[O].Type == ElementType::Double)
              C.Outputs[O].data<double>()[Row] = V;
            else
              C.Outputs[O].data<float>()[Row] = float(V);
          }
      }
    });
    return llvm::Error::success();
  }
};

template <typename T> struct InstanceNorm {
  static llvm::Error run(const KernelContext &C) {
    const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
    if (X.Dims.size() < 3 || C.Inputs.size() < 3)
      return C.badInput("needs X (rank >= 3), scale and B");
    const int64_t Ch = X.Dims[1], Planes = X.Dims[0] * Ch;
    const int64_t Size = productOf(X.Dims, 2, X.Dims.size());
    if (int64_t(C.Inputs[1].numElements()) != Ch ||
        int64_t(C.Inputs[2].numElements()) != Ch)
      return C.badInput("scale and B must be per channel");
    const double Eps = C.N.getFloat("epsilon", 1e-5);
    C.Pool.parallelFor(Planes, 1, [&](int64_t Begin, int64_t End) {
      for (int64_t P = Begin; P < End; ++P) {
        const T *XP = X.data<const T>() + P * Size;
        T *YP = Y.data<T>() + P * Size;
        double Mean, InvStd;
        rowStats(XP, Size, Eps, Mean, InvStd);
        double S = param<T>(C, 1, P % Ch, 1) * InvStd;
        double B = param<T>(C, 2, P % Ch, 0);
        for (int64_t I = 0; I < Size; ++I)
          YP[I] = T((double(XP[I]) - Mean) * S + B);
      }
    });
    return llvm::Error::success();
  }
};

} // namespace

llvm::Error groupNormDims(const KernelContext &C, GroupNormDims &D) {
  const TensorRef &X = C.Inputs[0];
  if (X.Dims.size() < 2 || C.Inputs.size() < 3 || !C.Inputs[1].present() ||
      !C.Inputs[2].present())
    return C.badInput("needs X (rank >= 2), scale and bias");
  const int64_t Ch = X.Dims[1];
  D.G = C.N.getInt("num_groups", 0);
  if (D.G <= 0 || Ch % D.G != 0)
    return C.badInput("num_groups must be positive and divide the " +
                      std::to_string(Ch) + " channels");
  if (C.Inputs[1].Type != X.Type || C.Inputs[2].Type != X.Type)
    return C.badInput("scale and bias must be X's type");
  const int64_t Len = int64_t(C.Inputs[1].numElements());
  if ((Len != Ch && Len != D.G) || int64_t(C.Inputs[2].numElements()) != Len)
    return C.badInput("scale and bias must hold one value per channel "
                      "(opset 21) or per group (opset 18)");
  D.PerChannel = Len == Ch;
  D.PerGroup = Ch / D.G;
  D.Plane = productOf(X.Dims, 2, X.Dims.size());
  D.Groups = X.Dims[0] * D.G;
  return llvm::Error::success();
}

namespace {

/// GroupNormalization (opset 18, 21): mean and variance over each group of
/// C / num_groups channels of a sample. Scale and bias are per group at
/// opset 18 and per channel at 21; their length tells which (the same when
/// num_groups equals C). Sums in double, whatever stash_type asks.
template <typename T> struct GroupNorm {
  static llvm::Error run(const KernelContext &C) {
    const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
    GroupNormDims D;
    if (llvm::Error E = groupNormDims(C, D))
      return E;
    const bool PerChannel = D.PerChannel;
    const int64_t G = D.G, PerGroup = D.PerGroup, Plane = D.Plane;
    const int64_t Size = PerGroup * Plane, Groups = D.Groups;
    const double Eps = C.N.getFloat("epsilon", 1e-5);
    C.Pool.parallelFor(Groups, 1, [&](int64_t Begin, int64_t End) {
      for (int64_t Grp = Begin; Grp < End; ++Grp) {
        const T *XG = X.data<const T>() + Grp * Size;
        T *YG = Y.data<T>() + Grp * Size;
        double Mean, InvStd;
        rowStats(XG, Size, Eps, Mean, InvStd);
        for (int64_t K = 0; K < PerGroup; ++K) {
          int64_t Idx = PerChannel ? (Grp % G) * PerGroup + K : Grp % G;
          double S = param<T>(C, 1, Idx, 1) * InvStd;
          double B = param<T>(C, 2, Idx, 0);
          for (int64_t I = K * Plane; I < (K + 1) * Plane; ++I)
            YG[I] = T((double(XG[I]) - Mean) * S + B);
        }
      }
    });
    return llvm::Error::success();
  }
};

template <typename T> struct LpNorm {
  static llvm::Error run(const KernelContext &C) {
    const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
    const int64_t R = int64_t(X.Dims.size());
    int64_t Axis, P;
    if (llvm::Error E = lpNormSetup(C, Axis, P))
      return E;
    const int64_t Outer = productOf(X.Dims, 0, size_t(Axis)), D = X.Dims[Axis];
    const int64_t Inner = productOf(X.Dims, size_t(Axis) + 1, size_t(R));
    for (int64_t O = 0; O < Outer; ++O)
      for (int64_t I = 0; I < Inner; ++I) {
        const T *XP = X.data<const T>() + O * D * Inner + I;
        T *YP = Y.data<T>() + O * D * Inner + I;
        double Norm = 0;
        for (int64_t K = 0; K < D; ++K) {
          double V = double(XP[K * Inner]);
          Norm += P == 1 ? std::fabs(V) : V * V;
        }
        if (P == 2)
          Norm = std::sqrt(Norm);
        for (int64_t K = 0; K < D; ++K)
          YP[K * Inner] = T(double(XP[K * Inner]) / Norm);
      }
    return llvm::Error::success();
  }
};

template <typename T> struct LRN {
  static llvm::Error run(const KernelContext &C) {
    lrn::Params P;
    if (llvm::Error E = lrnSetup(C, P))
      return E;
    const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
    C.Pool.parallelFor(
        X.Dims[0] * P.Channels, 1, [&](int64_t Begin, int64_t End) {
          for (int64_t At = Begin * P.Plane; At < End * P.Plane; ++At)
            Y.data<T>()[At] = lrn::at<T>(P, X.data<const T>(), At);
        });
    return llvm::Error::success();
  }
};

/// MeanVarianceNormalization's groups: the elements that share their
/// coordinates on the axes not reduced. GroupStride is 0 on reduced axes.
bool mvnGroups(const Node &N, llvm::ArrayRef<int64_t> Dims,
               DimVector &GroupStride, int64_t &Groups) {
  const int64_t R = int64_t(Dims.size());
  DimVector Axes;
  if (!mvnAxes(N, R, Axes))
    return false;
  llvm::SmallVector<bool, 6> Reduced(R, false);
  for (int64_t A : Axes)
    Reduced[A] = true;
  GroupStride.assign(R, 0);
  Groups = 1;
  for (int64_t I = R - 1; I >= 0; --I)
    if (!Reduced[I]) {
      GroupStride[I] = Groups;
      Groups *= Dims[I];
    }
  return true;
}

/// Two doubles (sum, sum of squares) per group.
uint64_t mvnWorkspace(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                      llvm::ArrayRef<TensorRef>) {
  DimVector GroupStride;
  int64_t Groups;
  if (Inputs.empty() || !mvnGroups(N, Inputs[0].Dims, GroupStride, Groups))
    return 0;
  return uint64_t(Groups) * 2 * sizeof(double);
}

template <typename T> struct MVN {
  /// Calls Fn(element, group) for every element in order.
  template <typename F>
  static void forEach(llvm::ArrayRef<int64_t> Dims,
                      llvm::ArrayRef<int64_t> GroupStride, F &&Fn) {
    const int64_t R = int64_t(Dims.size());
    DimVector Coord(R, 0);
    const uint64_t N = productOf(Dims, 0, Dims.size());
    for (uint64_t E = 0; E < N; ++E) {
      int64_t G = 0;
      for (int64_t I = 0; I < R; ++I)
        G += Coord[I] * GroupStride[I];
      Fn(E, G);
      for (int64_t I = R - 1; I >= 0; --I) {
        if (++Coord[I] < Dims[I])
          break;
        Coord[I] = 0;
      }
    }
  }

  static llvm::Error run(const KernelContext &C) {
    const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
    DimVector GroupStride;
    int64_t Groups;
    if (!mvnGroups(C.N, X.Dims, GroupStride, Groups))
      return C.badInput("axis out of range");
    if (X.numElements() == 0)
      return llvm::Error::success();
    if (C.WorkspaceBytes < uint64_t(Groups) * 2 * sizeof(double))
      return C.badInput("the plan gave too little workspace");
    double *Sum = static_cast<double *>(C.Workspace), *Sq = Sum + Groups;
    std::fill(Sum, Sum + 2 * Groups, 0.0);
    const T *XP = X.data<const T>();
    forEach(X.Dims, GroupStride, [&](uint64_t E, int64_t G) {
      double V = double(XP[E]);
      Sum[G] += V;
      Sq[G] += V * V;
    });
    const double Count = double(X.numElements()) / double(Groups);
    forEach(X.Dims, GroupStride, [&](uint64_t E, int64_t G) {
      double Mean = Sum[G] / Count;
      double Std = std::sqrt(std::max(0.0, Sq[G] / Count - Mean * Mean));
      // ONNX's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9).
      Y.data<T>()[E] = T((double(XP[E]) - Mean) / (Std + 1e-9));
    });
    return llvm::Error::success();
  }
};

llvm::Error runBatchNorm(const KernelContext &C) {
  return dispatchFloat<BatchNorm>(C);
}
llvm::Error runLayerNorm(const KernelContext &C) {
  return dispatchFloat<LayerNorm>(C);
}
llvm::Error runInstanceNorm(const KernelContext &C) {
  return dispatchFloat<InstanceNorm>(C);
}
llvm::Error runGroupNorm(const KernelContext &C) {
  return dispatchFloat<GroupNorm>(C);
}
llvm::Error runLpNorm(const KernelContext &C) {
  return dispatchFloat<LpNorm>(C);
}
llvm::Error runLRN(const KernelContext &C) { return dispatchFloat<LRN>(C); }
llvm::Error runMVN(const KernelContext &C) { return dispatchFloat<MVN>(C); }

} // namespace

llvm::Error lpNormSetup(const KernelContext &C, int64_t &Axis, int64_t &P) {
  Axis = C.N.getInt("axis", -1);
  P = C.N.getInt("p", 2);
  if (!normAxis(Axis, int64_t(C.Inputs[0].Dims.size())))
    return C.badInput("axis out of range");
  if (P != 1 && P != 2)
    return C.badInput("p must be 1 or 2");
  return llvm::Error::success();
}

bool mvnAxes(const Node &N, int64_t Rank, DimVector &Axes) {
  if (auto A = N.getInts("axes"))
    Axes.assign(A->begin(), A->end());
  else
    Axes = {0, 2, 3};
  for (int64_t &A : Axes)
    if (!normAxis(A, Rank))
      return false;
  return true;
}

llvm::Error lrnSetup(const KernelContext &C, lrn::Params &P) {
  const TensorRef &X = C.Inputs[0];
  if (X.Dims.size() < 3)
    return C.badInput("X must have rank 3 or more");
  P.Size = C.N.getInt("size", 0);
  if (P.Size <= 0)
    return C.badInput("size must be positive");
  P.Alpha = C.N.getFloat("alpha", 1e-4);
  P.Beta = C.N.getFloat("beta", 0.75);
  P.Bias = C.N.getFloat("bias", 1.0);
  P.Channels = X.Dims[1];
  P.Plane = productOf(X.Dims, 2, X.Dims.size());
  return llvm::Error::success();
}

void registerNormKernels(CPUKernelTable &T) {
  addKernel(T, "BatchNormalization",
            Kernel{&runBatchNorm, nullptr, floatTypes()});
  addKernel(T, "LayerNormalization",
            Kernel{&runLayerNorm, nullptr, floatTypes()});
  addKernel(T, "InstanceNormalization",
            Kernel{&runInstanceNorm, nullptr, floatTypes()});
  addKernel(T, "GroupNormalization",
            Kernel{&runGroupNorm, nullptr, floatTypes()});
  addKernel(T, "LpNormalization", Kernel{&runLpNorm, nullptr, floatTypes()});
  addKernel(T, "LRN", Kernel{&runLRN, nullptr, floatTypes()});
  addKernel(T, "MeanVarianceNormalization",
            Kernel{&runMVN, &mvnWorkspace, floatTypes()});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
