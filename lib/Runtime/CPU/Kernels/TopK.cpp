//===- TopK.cpp - CPU kernel: TopK ----------------------------------------===//
//
// The k largest (or smallest) elements along an axis and their indices,
// sorted, with equal values ordered by index and NaN after every number,
// as ONNX's reference does (its stable argsort). The index array of one slice
// is the step's workspace, declared by topKWorkspace: a kernel never allocates.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <algorithm>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

uint64_t topKWorkspace(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                       llvm::ArrayRef<TensorRef>) {
  if (Inputs.empty())
    return 0;
  int64_t Axis = N.getInt("axis", -1);
  if (!normAxis(Axis, int64_t(Inputs[0].Dims.size())))
    return 0;
  return uint64_t(Inputs[0].Dims[Axis]) * sizeof(int64_t);
}

template <typename T>
void topKTyped(const KernelContext &C, int64_t Axis, int64_t K, bool Largest,
               int64_t *Order) {
  const TensorRef &X = C.Inputs[0];
  const int64_t R = int64_t(X.Dims.size()), D = X.Dims[Axis];
  const int64_t Outer = productOf(X.Dims, 0, size_t(Axis));
  const int64_t Inner = productOf(X.Dims, size_t(Axis) + 1, size_t(R));
  const TensorRef &Vals = C.Outputs[0];
  int64_t *Idx = hasOutput(C, 1) ? C.Outputs[1].data<int64_t>() : nullptr;
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t I = 0; I < Inner; ++I) {
      const T *Src = X.data<const T>() + O * D * Inner + I;
      for (int64_t J = 0; J < D; ++J)
        Order[J] = J;
      // A total order, NaN included: NaN after every number either way
      // (ONNX's reference sorts with numpy's stable argsort, which puts
      // NaN last), equal values and NaNs by index. Without NaN's place the
      // order is not strict weak and partial_sort's result undefined.
      auto Before = [&](int64_t A, int64_t B) {
        T VA = Src[A * Inner], VB = Src[B * Inner];
        const bool NA = VA != VA, NB = VB != VB;
        if (NA || NB)
          return NA == NB ? A < B : NB;
        if (VA != VB)
          return Largest ? VA > VB : VA < VB;
        return A < B;
      };
      std::partial_sort(Order, Order + K, Order + D, Before);
      for (int64_t J = 0; J < K; ++J) {
        int64_t At = (O * K + J) * Inner + I;
        if (Vals.present())
          Vals.data<T>()[At] = Src[Order[J] * Inner];
        if (Idx)
          Idx[At] = Order[J];
      }
    }
}

llvm::Error runTopK(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &X = C.Inputs[0];
  const int64_t R = int64_t(X.Dims.size());
  int64_t Axis = C.N.getInt("axis", -1);
  if (!normAxis(Axis, R))
    return C.badInput("axis out of range");
  int64_t K = hasInput(C, 1) ? intAt(C.Inputs[1], 0) : C.N.getInt("k", -1);
  if (K < 0 || K > X.Dims[Axis])
    return C.badInput("k = " + llvm::Twine(K) + " is outside [0, " +
                      llvm::Twine(X.Dims[Axis]) + "]");
  // With a run-time k the plan reserved the bound (ActualDims set): the
  // outputs are packed densely for k and their dims reported back.
  for (unsigned I = 0; I < C.Outputs.size(); ++I) {
    const TensorRef &Out = C.Outputs[I];
    if (!Out.present())
      continue;
    const bool Bounded = C.ActualDims != nullptr;
    if (Out.Dims.size() != X.Dims.size() ||
        (Bounded ? Out.Dims[Axis] < K : Out.Dims[Axis] != K))
      return C.badInput("outputs disagree with k");
    if (Bounded) {
      C.ActualDims[I].assign(X.Dims.begin(), X.Dims.end());
      C.ActualDims[I][Axis] = K;
    }
  }
  if (hasOutput(C, 1) && C.Outputs[1].Type != ElementType::Int64)
    return C.badInput("Indices must be int64");
  if (C.WorkspaceBytes < uint64_t(X.Dims[Axis]) * sizeof(int64_t))
    return C.badInput("the plan gave too little workspace");
  const bool Largest = C.N.getInt("largest", 1) != 0;
  int64_t *Order = static_cast<int64_t *>(C.Workspace);
  if (!visitNumeric(X.Type, [&](auto Tag) {
        topKTyped<decltype(Tag)>(C, Axis, K, Largest, Order);
      }))
    return C.unsupported("TopK of type " + elementTypeName(X.Type));
  return llvm::Error::success();
}

} // namespace

void registerTopKKernels(CPUKernelTable &T) {
  addKernel(T, "TopK", Kernel{&runTopK, &topKWorkspace, numericTypes()});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
