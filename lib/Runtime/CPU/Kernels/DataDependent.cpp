//===- DataDependent.cpp - CPU kernels: NonZero, Compress, Unique -*- C++
//-*-===//
//
// Ops whose output size depends on the values. The plan reserves the shape
// engine's upper bound; each kernel writes its result densely packed for the
// dims it actually produced and reports them through
// KernelContext::ActualDims (null when the dims were exact at plan time).
// Unique sorts slice indices in its planned workspace, never on the heap.
// Registered by the Reduce family (CPUKernels.h).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include <algorithm>
#include <cstring>
#include <numeric>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// Records output I's produced dims (a no-op when they were exact).
void setActual(const KernelContext &C, size_t I, llvm::ArrayRef<int64_t> Dims) {
  if (C.ActualDims && I < C.Outputs.size())
    C.ActualDims[I].assign(Dims.begin(), Dims.end());
}

/// True when element I of T is not zero (any numeric or bool type).
bool nonZeroAt(const TensorRef &T, int64_t I) {
  bool R = false;
  dispatchType<AllTypes>(T.Type, [&](auto Tag) {
    using V = typename decltype(Tag)::type;
    R = load(T.data<V>()[I]) != decltype(load(T.data<V>()[I]))(0);
  });
  return R;
}

llvm::Error runNonZero(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0];
  if (elementBits(X.Type) == 0 || X.Type == ElementType::String)
    return C.unsupported("element type " + elementTypeName(X.Type));
  int64_t N = int64_t(X.numElements()), Rank = int64_t(X.Dims.size());
  int64_t Count = 0;
  for (int64_t I = 0; I < N; ++I)
    Count += nonZeroAt(X, I);
  int64_t Bound = C.Outputs[0].Dims.size() == 2 ? C.Outputs[0].Dims[1] : 0;
  if (Count > Bound)
    return C.badInput("more nonzero elements than the planned bound");
  // [rank, count], row d holding each nonzero element's index along dim d.
  int64_t *Y = C.Outputs[0].data<int64_t>();
  for (int64_t I = 0, K = 0; I < N; ++I) {
    if (!nonZeroAt(X, I))
      continue;
    int64_t Rem = I;
    for (int64_t D = Rank; D-- > 0;) {
      Y[D * Count + K] = Rem % X.Dims[size_t(D)];
      Rem /= X.Dims[size_t(D)];
    }
    ++K;
  }
  setActual(C, 0, {Rank, Count});
  return llvm::Error::success();
}

llvm::Error runCompress(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &Cond = C.Inputs[1];
  if (Cond.Type != ElementType::Bool)
    return C.unsupported("condition of type " + elementTypeName(Cond.Type));
  unsigned Width = elementBits(X.Type) / 8;
  if (Width == 0)
    return C.unsupported("element type " + elementTypeName(X.Type));
  const bool *Keep = Cond.data<bool>();
  int64_t CondN = int64_t(Cond.numElements());
  const char *In = X.data<char>();
  char *Out = C.Outputs[0].data<char>();
  llvm::SmallVector<int64_t, 6> Dims;
  if (!C.N.attr("axis")) {
    // Flattened: element I kept when condition[I] (missing: dropped).
    int64_t N = std::min<int64_t>(int64_t(X.numElements()), CondN), K = 0;
    for (int64_t I = 0; I < N; ++I)
      if (Keep[I])
        std::memcpy(Out + (K++) * Width, In + I * Width, Width);
    Dims.push_back(K);
  } else {
    int64_t Rank = int64_t(X.Dims.size()), Axis = C.N.getInt("axis", 0);
    if (Axis < -Rank || Axis >= Rank)
      return C.badInput("axis out of range");
    if (Axis < 0)
      Axis += Rank;
    int64_t Outer = 1, Len = X.Dims[size_t(Axis)], Inner = 1;
    for (int64_t D = 0; D < Rank; ++D)
      if (D < Axis)
        Outer *= X.Dims[size_t(D)];
      else if (D > Axis)
        Inner *= X.Dims[size_t(D)];
    int64_t Kept = 0;
    for (int64_t I = 0; I < std::min(Len, CondN); ++I)
      Kept += Keep[I];
    uint64_t Row = uint64_t(Inner) * Width;
    for (int64_t O = 0; O < Outer; ++O)
      for (int64_t I = 0, K = 0; I < std::min(Len, CondN); ++I)
        if (Keep[I])
          std::memcpy(Out + (O * Kept + K++) * Row, In + (O * Len + I) * Row,
                      Row);
    Dims.assign(X.Dims.begin(), X.Dims.end());
    Dims[size_t(Axis)] = Kept;
  }
  uint64_t Planned = C.Outputs[0].numElements(), Got = 1;
  for (int64_t D : Dims)
    Got *= uint64_t(D);
  if (Got > Planned)
    return C.badInput("more elements than the planned bound");
  setActual(C, 0, Dims);
  return llvm::Error::success();
}

/// [Outer, Len, Inner] around Unique's axis (the flattened input: [1, N, 1]).
struct SliceView {
  int64_t Outer = 1, Len = 1, Inner = 1, Axis = -1;
};

llvm::Error uniqueView(const KernelContext &C, llvm::ArrayRef<int64_t> Dims,
                       SliceView &V) {
  if (!C.N.attr("axis")) {
    V.Len = 1;
    for (int64_t D : Dims)
      V.Len *= D;
    return llvm::Error::success();
  }
  int64_t Rank = int64_t(Dims.size()), Axis = C.N.getInt("axis", 0);
  if (Axis < -Rank || Axis >= Rank)
    return C.badInput("axis out of range");
  V.Axis = Axis < 0 ? Axis + Rank : Axis;
  V.Len = Dims[size_t(V.Axis)];
  for (int64_t D = 0; D < Rank; ++D)
    if (D < V.Axis)
      V.Outer *= Dims[size_t(D)];
    else if (D > V.Axis)
      V.Inner *= Dims[size_t(D)];
  return llvm::Error::success();
}

/// Two int64 per slice: the sort order and each slice's unique slot.
uint64_t uniqueWorkspace(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                         llvm::ArrayRef<TensorRef>) {
  uint64_t Len = 1;
  if (const Attribute *A = N.attr("axis")) {
    int64_t Rank = int64_t(Inputs[0].Dims.size()), Axis = A->I;
    if (Axis < 0)
      Axis += Rank;
    if (Axis >= 0 && Axis < Rank)
      Len = uint64_t(Inputs[0].Dims[size_t(Axis)]);
  } else {
    Len = Inputs[0].numElements();
  }
  return 2 * 8 * Len;
}

template <typename T>
llvm::Error uniqueTyped(const KernelContext &C, const SliceView &V) {
  const T *X = C.Inputs[0].data<T>();
  int64_t *Order = static_cast<int64_t *>(C.Workspace);
  int64_t *Slot = Order + V.Len;
  // Compares slices A and B in numpy's order: along the axis moved first,
  // then the rest flattened.
  auto Less = [&](int64_t A, int64_t B) {
    for (int64_t O = 0; O < V.Outer; ++O)
      for (int64_t J = 0; J < V.Inner; ++J) {
        auto XA = load(X[(O * V.Len + A) * V.Inner + J]);
        auto XB = load(X[(O * V.Len + B) * V.Inner + J]);
        if (XA < XB)
          return true;
        if (XB < XA)
          return false;
      }
    return false;
  };
  auto Equal = [&](int64_t A, int64_t B) { return !Less(A, B) && !Less(B, A); };
  std::iota(Order, Order + V.Len, 0);
  // Stable: each group of equal slices starts with its first occurrence.
  std::stable_sort(Order, Order + V.Len, Less);
  int64_t NU = 0;
  for (int64_t K = 0; K < V.Len; ++K) {
    if (K > 0 && Equal(Order[K - 1], Order[K]))
      Slot[Order[K]] = Slot[Order[K - 1]];
    else
      Slot[Order[K]] = NU++;
  }
  bool Sorted = C.N.getInt("sorted", 1) != 0;
  if (!Sorted) {
    // Renumber the groups by first occurrence.
    std::fill(Order, Order + V.Len, -1); // Order[old slot] = new slot
    int64_t Next = 0;
    for (int64_t I = 0; I < V.Len; ++I) {
      if (Order[Slot[I]] < 0)
        Order[Slot[I]] = Next++;
      Slot[I] = Order[Slot[I]];
    }
  }
  // Outputs: Y, indices (first occurrence), inverse_indices, counts.
  T *Y = C.Outputs[0].data<T>();
  auto Out = [&](size_t I) -> int64_t * {
    return I < C.Outputs.size() && C.Outputs[I].present()
               ? C.Outputs[I].data<int64_t>()
               : nullptr;
  };
  int64_t *Indices = Out(1), *Inverse = Out(2), *Counts = Out(3);
  if (Counts)
    std::fill(Counts, Counts + NU, 0);
  for (int64_t I = V.Len; I-- > 0;) { // backwards: the first wins
    int64_t U = Slot[I];
    if (Indices)
      Indices[U] = I;
    if (Inverse)
      Inverse[I] = U;
    if (Counts)
      ++Counts[U];
    for (int64_t O = 0; O < V.Outer; ++O)
      for (int64_t J = 0; J < V.Inner; ++J)
        Y[(O * NU + U) * V.Inner + J] = X[(O * V.Len + I) * V.Inner + J];
  }
  llvm::SmallVector<int64_t, 6> YDims;
  if (V.Axis < 0) {
    YDims.push_back(NU);
  } else {
    YDims.assign(C.Inputs[0].Dims.begin(), C.Inputs[0].Dims.end());
    YDims[size_t(V.Axis)] = NU;
  }
  setActual(C, 0, YDims);
  setActual(C, 1, {NU});
  setActual(C, 2, {V.Len});
  setActual(C, 3, {NU});
  return llvm::Error::success();
}

llvm::Error runUnique(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0];
  SliceView V;
  if (llvm::Error E = uniqueView(C, X.Dims, V))
    return E;
  if (!C.Workspace || C.WorkspaceBytes < uint64_t(2 * 8 * V.Len))
    return C.unsupported("no planned workspace for the sort");
  llvm::Error Result = llvm::Error::success();
  if (!dispatchType<NumericTypes>(X.Type, [&](auto Tag) {
        Result = uniqueTyped<typename decltype(Tag)::type>(C, V);
      }))
    return C.unsupported("element type " + elementTypeName(X.Type));
  return Result;
}

} // namespace

void registerDataDependentKernels(CPUKernelTable &T) {
  addKernel(T, "NonZero", Kernel{runNonZero, nullptr, typesOf(AllTypes)});
  addKernel(T, "Compress", Kernel{runCompress, nullptr, {}});
  addKernel(T, "Unique",
            Kernel{runUnique, uniqueWorkspace, typesOf(NumericTypes)});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
