//===- AxisOps.cpp - CPU kernels: ops along one axis ------------*- C++ -*-===//
//
// ArgMax/ArgMin, Softmax, LogSoftmax, Hardmax and CumSum: each views the
// input as [Outer, Len, Inner] around its axis and works on the Len elements
// of each (outer, inner) pair. Before opset 13 the Softmax family coerces
// the input to 2-D at the axis instead (Len is the product of the dims from
// the axis on), which is why the same model gives different numbers under
// different opsets. Registered by the Reduce family (CPUKernels.h).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include <cmath>
#include <limits>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// [Outer, Len, Inner] around one axis.
struct AxisView {
  int64_t Outer = 1, Len = 1, Inner = 1;
};

/// Normalizes Axis against Rank; false when out of range.
bool normAxis(int64_t &Axis, size_t Rank) {
  int64_t R = int64_t(Rank);
  if (Axis < -R || Axis >= std::max<int64_t>(R, 1))
    return false;
  if (Axis < 0)
    Axis += R;
  return true;
}

AxisView viewAt(llvm::ArrayRef<int64_t> Dims, int64_t Axis, bool Coerce2D) {
  AxisView V;
  for (size_t I = 0; I < Dims.size(); ++I) {
    if (int64_t(I) < Axis)
      V.Outer *= Dims[I];
    else if (int64_t(I) == Axis || Coerce2D)
      V.Len *= Dims[I];
    else
      V.Inner *= Dims[I];
  }
  return V;
}

/// Calls Fn(Base) for each (outer, inner) pair, Base the offset of the
/// pair's first element; consecutive elements are Inner apart.
template <typename F>
void forEachLine(const KernelContext &C, AxisView V, F Fn) {
  int64_t Lines = V.Outer * V.Inner;
  int64_t Grain =
      std::max<int64_t>(1, ElementwiseGrain / std::max<int64_t>(1, V.Len));
  C.Pool.parallelFor(Lines, Grain, [&](int64_t B, int64_t E) {
    for (int64_t L = B; L < E; ++L)
      Fn((L / V.Inner) * V.Len * V.Inner + L % V.Inner);
  });
}

template <bool IsMax> llvm::Error runArg(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0];
  int64_t Axis = C.N.getInt("axis", 0);
  if (!normAxis(Axis, In.Dims.size()))
    return C.badInput("axis out of range");
  bool Last = C.N.getInt("select_last_index", 0) != 0;
  AxisView V = viewAt(In.Dims, Axis, false);
  if (V.Len == 0)
    return C.badInput("ArgMax/ArgMin over an empty axis");
  int64_t *Y = C.Outputs[0].data<int64_t>();
  if (!dispatchType<NumericTypes>(In.Type, [&](auto Tag) {
        using T = typename decltype(Tag)::type;
        const T *X = In.data<T>();
        forEachLine(C, V, [&](int64_t Base) {
          auto Best = load(X[Base]);
          int64_t BestK = 0;
          for (int64_t K = 1; K < V.Len; ++K) {
            auto Val = load(X[Base + K * V.Inner]);
            bool Take;
            if constexpr (std::is_integral<decltype(Val)>::value) {
              Take = IsMax ? (Last ? Val >= Best : Val > Best)
                           : (Last ? Val <= Best : Val < Best);
            } else if (std::isnan(Best)) {
              Take = Last && std::isnan(Val); // numpy: the first NaN wins.
            } else if (std::isnan(Val)) {
              Take = true;
            } else {
              Take = IsMax ? (Last ? Val >= Best : Val > Best)
                           : (Last ? Val <= Best : Val < Best);
            }
            if (Take) {
              Best = Val;
              BestK = K;
            }
          }
          // The output has the input's dims with the axis removed or 1, so
          // its line index is the pair's (outer, inner) index.
          int64_t OutIdx =
              (Base / (V.Len * V.Inner)) * V.Inner + Base % V.Inner;
          Y[OutIdx] = BestK;
        });
      }))
    return C.unsupported("element type " + elementTypeName(In.Type));
  return llvm::Error::success();
}

enum class SoftKind { Softmax, LogSoftmax, Hardmax };

template <SoftKind K> llvm::Error runSoft(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0];
  bool Old = C.G.defaultOpset() < 13;
  int64_t Axis = C.N.getInt("axis", Old ? 1 : -1);
  if (!normAxis(Axis, In.Dims.size()))
    return C.badInput("axis out of range");
  AxisView V = viewAt(In.Dims, Axis, Old);
  if (!dispatchType<FloatTypes>(In.Type, [&](auto Tag) {
        using T = typename decltype(Tag)::type;
        using Comp = ComputeT<T>;
        const T *X = In.data<T>();
        T *Y = C.Outputs[0].data<T>();
        forEachLine(C, V, [&](int64_t Base) {
          if (V.Len == 0)
            return;
          Comp Max = load(X[Base]);
          int64_t MaxK = 0;
          for (int64_t I = 1; I < V.Len; ++I) {
            Comp Val = load(X[Base + I * V.Inner]);
            if (Val > Max) {
              Max = Val;
              MaxK = I;
            }
          }
          if (K == SoftKind::Hardmax) {
            for (int64_t I = 0; I < V.Len; ++I)
              Y[Base + I * V.Inner] = store<T>(Comp(I == MaxK ? 1 : 0));
            return;
          }
          // exp in the compute type (expf for float: the hot loop of
          // attention), the sum in double so long rows lose nothing.
          double Sum = 0;
          if constexpr (std::is_same<T, Comp>::value) {
            if (K == SoftKind::Softmax) {
              // One exp per element: keep exp(x - max) in the output (read
              // before written, so an aliased input is fine), then scale.
              for (int64_t I = 0; I < V.Len; ++I) {
                Comp E = std::exp(X[Base + I * V.Inner] - Max);
                Y[Base + I * V.Inner] = E;
                Sum += double(E);
              }
              Comp Inv = Comp(1.0 / Sum);
              for (int64_t I = 0; I < V.Len; ++I)
                Y[Base + I * V.Inner] *= Inv;
              return;
            }
          }
          for (int64_t I = 0; I < V.Len; ++I)
            Sum += double(std::exp(load(X[Base + I * V.Inner]) - Max));
          if (K == SoftKind::LogSoftmax) {
            Comp LogSum = Comp(std::log(Sum));
            for (int64_t I = 0; I < V.Len; ++I) {
              T &Out = Y[Base + I * V.Inner];
              Out = store<T>(Comp(load(X[Base + I * V.Inner]) - Max - LogSum));
            }
            return;
          }
          Comp Inv = Comp(1.0 / Sum);
          for (int64_t I = 0; I < V.Len; ++I) {
            T &Out = Y[Base + I * V.Inner];
            Out = store<T>(
                Comp(std::exp(load(X[Base + I * V.Inner]) - Max) * Inv));
          }
        });
      }))
    return C.unsupported("element type " + elementTypeName(In.Type));
  return llvm::Error::success();
}

llvm::Error runCumSum(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0];
  int64_t Axis = 0;
  if (C.Inputs.size() < 2 || !C.Inputs[1].present() ||
      C.Inputs[1].numElements() != 1 || !readInt(C.Inputs[1], 0, Axis))
    return C.badInput("axis must be an integer scalar");
  if (!normAxis(Axis, In.Dims.size()))
    return C.badInput("axis out of range");
  bool Exclusive = C.N.getInt("exclusive", 0) != 0;
  bool Reverse = C.N.getInt("reverse", 0) != 0;
  AxisView V = viewAt(In.Dims, Axis, false);
  if (!dispatchType<NumericTypes>(In.Type, [&](auto Tag) {
        using T = typename decltype(Tag)::type;
        const T *X = In.data<T>();
        T *Y = C.Outputs[0].data<T>();
        forEachLine(C, V, [&](int64_t Base) {
          ComputeT<T> Acc = 0;
          for (int64_t J = 0; J < V.Len; ++J) {
            int64_t K = Reverse ? V.Len - 1 - J : J;
            int64_t Off = Base + K * V.Inner;
            ComputeT<T> Val = load(X[Off]); // Read first: Y may alias X.
            if (Exclusive) {
              Y[Off] = store<T>(Acc);
              Acc = ComputeT<T>(Acc + Val);
            } else {
              Acc = ComputeT<T>(Acc + Val);
              Y[Off] = store<T>(Acc);
            }
          }
        });
      }))
    return C.unsupported("element type " + elementTypeName(In.Type));
  return llvm::Error::success();
}

} // namespace

void registerAxisKernels(CPUKernelTable &T) {
  auto Add = [&T](llvm::StringRef Op, KernelFn Fn, unsigned Set) {
    addKernel(T, Op, Kernel{Fn, nullptr, typesOf(Set)});
  };
  Add("ArgMax", runArg<true>, NumericTypes);
  Add("ArgMin", runArg<false>, NumericTypes);
  Add("Softmax", runSoft<SoftKind::Softmax>, FloatTypes);
  Add("LogSoftmax", runSoft<SoftKind::LogSoftmax>, FloatTypes);
  Add("Hardmax", runSoft<SoftKind::Hardmax>, FloatTypes);
  Add("CumSum", runCumSum, NumericTypes);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
