//===- DataDependent.cpp - CPU kernels: data-sized outputs -----*- C++ -*-===//
//
// Ops whose output size depends on the values. The plan reserves the shape
// engine's upper bound; each kernel writes its result densely packed for the
// dims it actually produced and reports them through
// KernelContext::ActualDims (null when the dims were exact at plan time).
// Unique and NonMaxSuppression sort indices in their planned workspace,
// never on the heap.
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

/// Two int64 per box: the candidates in score order, and those selected.
uint64_t nmsWorkspace(const Node &, llvm::ArrayRef<TensorRef> Inputs,
                      llvm::ArrayRef<TensorRef>) {
  return Inputs[0].Dims.size() == 3 ? 2 * 8 * uint64_t(Inputs[0].Dims[1]) : 0;
}

/// IoU of two boxes, as ONNX Runtime computes it: corners normalized first
/// (center_point_box 0 allows flipped corners), 0 without overlap.
double iou(const float *A, const float *B, bool Center) {
  auto Corners = [Center](const float *P, double &Y1, double &X1, double &Y2,
                          double &X2) {
    if (Center) {
      X1 = P[0] - P[2] / 2.0;
      X2 = P[0] + P[2] / 2.0;
      Y1 = P[1] - P[3] / 2.0;
      Y2 = P[1] + P[3] / 2.0;
      return;
    }
    Y1 = std::min(P[0], P[2]);
    Y2 = std::max(P[0], P[2]);
    X1 = std::min(P[1], P[3]);
    X2 = std::max(P[1], P[3]);
  };
  double AY1, AX1, AY2, AX2, BY1, BX1, BY2, BX2;
  Corners(A, AY1, AX1, AY2, AX2);
  Corners(B, BY1, BX1, BY2, BX2);
  double IH = std::min(AY2, BY2) - std::max(AY1, BY1);
  double IW = std::min(AX2, BX2) - std::max(AX1, BX1);
  if (IH <= 0 || IW <= 0)
    return 0;
  double Inter = IH * IW;
  double Union = (AY2 - AY1) * (AX2 - AX1) + (BY2 - BY1) * (BX2 - BX1) - Inter;
  return Union <= 0 ? 0 : Inter / Union;
}

llvm::Error runNMS(const KernelContext &C) {
  const TensorRef &Boxes = C.Inputs[0], &Scores = C.Inputs[1];
  if (Boxes.Type != ElementType::Float || Scores.Type != ElementType::Float ||
      Boxes.Dims.size() != 3 || Scores.Dims.size() != 3 || Boxes.Dims[2] != 4 ||
      Boxes.Dims[0] != Scores.Dims[0] || Boxes.Dims[1] != Scores.Dims[2])
    return C.badInput("boxes must be float [B, N, 4], scores [B, C, N]");
  auto Scalar = [&](size_t I, double Default) {
    double V = Default;
    if (I < C.Inputs.size() && C.Inputs[I].present() &&
        C.Inputs[I].numElements() > 0)
      readDouble(C.Inputs[I], 0, V);
    return V;
  };
  // An int64 read as an integer: torchvision passes INT64_MAX, which a
  // double cannot hold (converting it back overflowed to a negative limit,
  // and no box was ever selected).
  int64_t MaxOut = 0;
  if (C.Inputs.size() > 2 && C.Inputs[2].present() &&
      C.Inputs[2].numElements() > 0 && !readInt(C.Inputs[2], 0, MaxOut))
    return C.badInput("max_output_boxes_per_class must be an integer");
  double IouThreshold = Scalar(3, 0);
  bool HasScoreThreshold = C.Inputs.size() > 4 && C.Inputs[4].present();
  double ScoreThreshold = Scalar(4, 0);
  bool Center = C.N.getInt("center_point_box", 0) != 0;
  int64_t NB = Boxes.Dims[0], NC = Scores.Dims[1], N = Boxes.Dims[1];
  if (!C.Workspace || C.WorkspaceBytes < uint64_t(2 * 8 * N))
    return C.unsupported("no planned workspace for the candidates");
  int64_t *Cand = static_cast<int64_t *>(C.Workspace), *Sel = Cand + N;
  const float *PB = Boxes.data<float>(), *PS = Scores.data<float>();
  int64_t *Out = C.Outputs[0].data<int64_t>();
  int64_t Bound = C.Outputs[0].Dims.empty() ? 0 : C.Outputs[0].Dims[0];
  int64_t Total = 0;
  for (int64_t B = 0; B < NB; ++B)
    for (int64_t Cls = 0; Cls < NC; ++Cls) {
      const float *S = PS + (B * NC + Cls) * N;
      int64_t NCand = 0;
      for (int64_t I = 0; I < N; ++I)
        if (!HasScoreThreshold || S[I] > ScoreThreshold)
          Cand[NCand++] = I;
      // Highest score first; equal scores keep the lower box index first.
      std::stable_sort(Cand, Cand + NCand,
                       [S](int64_t A, int64_t Bx) { return S[A] > S[Bx]; });
      int64_t NSel = 0;
      for (int64_t K = 0; K < NCand && NSel < MaxOut; ++K) {
        const float *Box = PB + (B * N + Cand[K]) * 4;
        bool Keep = true;
        for (int64_t J = 0; J < NSel && Keep; ++J)
          Keep = iou(Box, PB + (B * N + Sel[J]) * 4, Center) <= IouThreshold;
        if (!Keep)
          continue;
        Sel[NSel++] = Cand[K];
        if (Total >= Bound)
          return C.badInput("more boxes than the planned bound");
        Out[Total * 3] = B;
        Out[Total * 3 + 1] = Cls;
        Out[Total * 3 + 2] = Cand[K];
        ++Total;
      }
    }
  setActual(C, 0, {Total, 3});
  return llvm::Error::success();
}

} // namespace

void registerDataDependentKernels(CPUKernelTable &T) {
  addKernel(T, "NonZero", Kernel{runNonZero, nullptr, typesOf(AllTypes)});
  addKernel(T, "Compress", Kernel{runCompress, nullptr, {}});
  addKernel(T, "Unique",
            Kernel{runUnique, uniqueWorkspace, typesOf(NumericTypes)});
  addKernel(T, "NonMaxSuppression",
            Kernel{runNMS, nmsWorkspace, {ElementType::Float}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
