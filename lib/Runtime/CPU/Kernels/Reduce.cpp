//===- Reduce.cpp - CPU kernels: reductions over axes -----------*- C++ -*-===//
//
// The Reduce* family over any set of axes, given as an attribute (before
// opset 18; ReduceSum before 13) or as input 1, with keepdims and
// noop_with_empty_axes. Adjacent axes of the same kind (reduced or kept) are
// merged first, so a reduction over trailing axes is one contiguous run per
// output element. Floats accumulate in double and integers in 64 bits
// (numpy's wrap-around is kept, as the final conversion truncates).
// Single-axis kernels (ArgMax/ArgMin, the Softmax family, CumSum) are in
// AxisOps.cpp.
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

enum class RK { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, Square };

/// The input as alternating kept and reduced dims (after merging).
struct Layout {
  llvm::SmallVector<int64_t, 6> KeptDims, KeptStrides, RedDims, RedStrides;
  int64_t RedCount = 1;
};

Layout makeLayout(llvm::ArrayRef<int64_t> Dims, llvm::ArrayRef<bool> Reduced) {
  Layout L;
  int64_t Stride = 1;
  // Walk from the innermost dim so that each merged group's stride is the
  // stride of its innermost member.
  llvm::SmallVector<std::pair<int64_t, int64_t>, 6> Kept, Red;
  int LastKind = -1;
  for (size_t I = Dims.size(); I-- > 0;) {
    int64_t D = Dims[I];
    if (D != 1) {
      auto &Group = Reduced[I] ? Red : Kept;
      int Kind = Reduced[I] ? 1 : 0;
      if (Kind == LastKind)
        Group.back().first *= D;
      else
        Group.push_back({D, Stride});
      LastKind = Kind;
    }
    Stride *= D;
  }
  for (size_t I = Kept.size(); I-- > 0;) {
    L.KeptDims.push_back(Kept[I].first);
    L.KeptStrides.push_back(Kept[I].second);
  }
  for (size_t I = Red.size(); I-- > 0;) {
    L.RedDims.push_back(Red[I].first);
    L.RedStrides.push_back(Red[I].second);
    L.RedCount *= Red[I].first;
  }
  for (size_t I = 0; I < Dims.size(); ++I)
    if (Reduced[I] && Dims[I] == 0)
      L.RedCount = 0;
  return L;
}

/// Calls F(offset) for each reduced element below Base.
template <typename F>
void forEachReduced(const Layout &L, int64_t Base, F &&Fn) {
  size_t R = L.RedDims.size();
  if (L.RedCount == 0)
    return;
  if (R == 0) {
    Fn(Base);
    return;
  }
  llvm::SmallVector<int64_t, 6> Idx(R, 0);
  int64_t Inner = L.RedDims[R - 1], Step = L.RedStrides[R - 1];
  for (;;) {
    for (int64_t J = 0; J < Inner; ++J)
      Fn(Base + J * Step);
    size_t I = R - 1;
    for (;;) {
      if (I == 0)
        return;
      --I;
      Base += L.RedStrides[I];
      if (++Idx[I] < L.RedDims[I])
        break;
      Base -= Idx[I] * L.RedStrides[I];
      Idx[I] = 0;
    }
  }
}

template <RK K, typename A> A initOf() {
  if constexpr (K == RK::Prod)
    return A(1);
  else if constexpr (K == RK::Max)
    return std::numeric_limits<A>::has_infinity
               ? -std::numeric_limits<A>::infinity()
               : std::numeric_limits<A>::lowest();
  else if constexpr (K == RK::Min)
    return std::numeric_limits<A>::has_infinity
               ? std::numeric_limits<A>::infinity()
               : std::numeric_limits<A>::max();
  else
    return A(0);
}

template <RK K, typename A> A stepOf(A Acc, A X) {
  switch (K) {
  case RK::Sum:
  case RK::Mean:
  case RK::LogSum:
    return A(Acc + X);
  case RK::Prod:
    return A(Acc * X);
  case RK::Max:
  case RK::Min:
    if constexpr (!std::is_integral<A>::value)
      if (std::isnan(X) || std::isnan(Acc))
        return std::numeric_limits<A>::quiet_NaN();
    return (K == RK::Max ? X > Acc : X < Acc) ? X : Acc;
  case RK::L1:
    if constexpr (std::is_signed<A>::value)
      return A(Acc + (X < 0 ? A(0) - X : X));
    return A(Acc + X);
  case RK::L2:
  case RK::Square:
    return A(Acc + X * X);
  case RK::LogSumExp:
    if constexpr (std::is_integral<A>::value)
      return A(Acc + A(std::exp(double(X))));
    else
      return A(Acc + std::exp(X));
  }
  return Acc;
}

template <RK K, typename A> A finishOf(A Acc, int64_t N) {
  if constexpr (std::is_integral<A>::value) {
    if constexpr (K == RK::Mean)
      return N ? A(Acc / A(N)) : A(0);
    else if constexpr (K == RK::L2 || K == RK::LogSum || K == RK::LogSumExp)
      return A(K == RK::L2 ? std::sqrt(double(Acc)) : std::log(double(Acc)));
    else
      return Acc;
  } else {
    if constexpr (K == RK::Mean)
      return Acc / A(N);
    else if constexpr (K == RK::L2)
      return std::sqrt(Acc);
    else if constexpr (K == RK::LogSum || K == RK::LogSumExp)
      return std::log(Acc);
    else
      return Acc;
  }
}

template <RK K, typename T>
void reduceTyped(const KernelContext &C, const Layout &L) {
  using Comp = ComputeT<T>;
  using A = std::conditional_t<
      std::is_integral<Comp>::value,
      std::conditional_t<std::is_signed<Comp>::value, int64_t, uint64_t>,
      double>;
  const T *X = C.Inputs[0].data<T>();
  T *Y = C.Outputs[0].data<T>();
  int64_t Outs = int64_t(C.Outputs[0].numElements());
  int64_t Grain =
      std::max<int64_t>(1, ElementwiseGrain / std::max<int64_t>(1, L.RedCount));
  size_t NK = L.KeptDims.size();
  C.Pool.parallelFor(Outs, Grain, [&](int64_t B, int64_t E) {
    for (int64_t O = B; O < E; ++O) {
      int64_t Rem = O, Base = 0;
      for (size_t I = NK; I-- > 0;) {
        Base += (Rem % L.KeptDims[I]) * L.KeptStrides[I];
        Rem /= L.KeptDims[I];
      }
      A Acc = initOf<K, A>();
      forEachReduced(L, Base, [&](int64_t Off) {
        Acc = stepOf<K, A>(Acc, A(load(X[Off])));
      });
      Y[O] = store<T>(finishOf<K, A>(Acc, L.RedCount));
    }
  });
}

/// Reads the axes (input 1 or the attribute) into a mask over the rank.
llvm::Error readAxes(const KernelContext &C, llvm::SmallVectorImpl<bool> &Mask,
                     bool &Noop) {
  int64_t Rank = int64_t(C.Inputs[0].Dims.size());
  std::vector<int64_t> Axes;
  if (C.Inputs.size() > 1 && C.Inputs[1].present()) {
    const TensorRef &T = C.Inputs[1];
    for (uint64_t I = 0; I < T.numElements(); ++I) {
      int64_t V;
      if (!readInt(T, I, V))
        return C.badInput("axes must be integers");
      Axes.push_back(V);
    }
  } else if (auto A = C.N.getInts("axes")) {
    Axes = *A;
  }
  Mask.assign(size_t(Rank), Axes.empty());
  Noop = Axes.empty() && C.N.getInt("noop_with_empty_axes", 0) != 0;
  for (int64_t A : Axes) {
    if (A < -Rank || A >= Rank)
      return C.badInput("axis " + llvm::Twine(A) + " out of range for rank " +
                        llvm::Twine(Rank));
    Mask[size_t(A < 0 ? A + Rank : A)] = true;
  }
  return llvm::Error::success();
}

template <RK K, unsigned Set> llvm::Error runReduce(const KernelContext &C) {
  llvm::SmallVector<bool, 6> Mask;
  bool Noop = false;
  if (llvm::Error E = readAxes(C, Mask, Noop))
    return E;
  const TensorRef &In = C.Inputs[0];
  if (Noop) {
    // Nothing reduced: the op still applies its per-element map (ONNX
    // reference: ReduceL2 with noop gives |x|, ReduceSumSquare x*x).
    for (bool &B : Mask)
      B = false;
  }
  Layout L = makeLayout(In.Dims, Mask);
  if (!dispatchType<Set>(In.Type, [&](auto Tag) {
        reduceTyped<K, typename decltype(Tag)::type>(C, L);
      }))
    return C.unsupported("element type " + elementTypeName(In.Type));
  return llvm::Error::success();
}

constexpr unsigned Flt = FloatTypes;
constexpr unsigned Num = NumericTypes;

} // namespace

// AxisOps.cpp: ArgMax/ArgMin, Softmax, LogSoftmax, Hardmax, CumSum.
void registerAxisKernels(CPUKernelTable &T);
// Loss.cpp: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
void registerLossKernels(CPUKernelTable &T);
// TfIdf.cpp: TfIdfVectorizer.
void registerTfIdfKernels(CPUKernelTable &T);
// DataDependent.cpp: NonZero, Compress, Unique.
void registerDataDependentKernels(CPUKernelTable &T);

void registerReduceKernels(CPUKernelTable &T) {
  auto Add = [&T](llvm::StringRef Op, KernelFn Fn, unsigned Set) {
    addKernel(T, Op, Kernel{Fn, nullptr, typesOf(Set)});
  };
  Add("ReduceSum", runReduce<RK::Sum, Num>, Num);
  Add("ReduceMean", runReduce<RK::Mean, Num>, Num);
  Add("ReduceMax", runReduce<RK::Max, Num>, Num);
  Add("ReduceMin", runReduce<RK::Min, Num>, Num);
  Add("ReduceProd", runReduce<RK::Prod, Num>, Num);
  Add("ReduceL1", runReduce<RK::L1, Num>, Num);
  Add("ReduceL2", runReduce<RK::L2, Num>, Num);
  Add("ReduceLogSum", runReduce<RK::LogSum, Flt>, Flt);
  Add("ReduceLogSumExp", runReduce<RK::LogSumExp, Flt>, Flt);
  Add("ReduceSumSquare", runReduce<RK::Square, Num>, Num);
  registerAxisKernels(T);
  registerLossKernels(T);
  registerTfIdfKernels(T);
  registerDataDependentKernels(T);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
