//===- FusedMatMul.cpp - CPU kernel: OomplanMatMul, act(A @ B + Bias) -----===//
//
// The product is the table's own MatMul or Gemm kernel (attribute `gemm`),
// run on this node, whose attributes carry Gemm's names, so the fused run
// multiplies exactly as the unfused one. The epilogue then runs once over
// the output: the bias (numpy-broadcast; for Gemm it already is Gemm's C)
// and the activation, so neither the sum nor the pre-activation tensor (the
// MLP's decomposed GELU holds several of them) is ever materialized.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "FusedKernels.h"
#include "oomplan/IR/FusedOps.h"

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// Y = act(Y + Bias) with Bias broadcast to Y, parallel over Y's rows.
template <typename T>
llvm::Error biasAndActivate(const KernelContext &C, const Epilogue &E,
                            const TensorRef *Bias) {
  const TensorRef &Y = C.Outputs[0];
  const size_t R = Y.Dims.size();
  const int64_t Cols = R ? Y.Dims.back() : 1;
  const int64_t Rows = Cols ? int64_t(Y.numElements()) / Cols : 0;
  DimVector S(R, 0);
  if (Bias) {
    if (Bias->Type != Y.Type || Bias->Dims.size() > R)
      return C.badInput("the bias does not broadcast to the output");
    DimVector Own = stridesOf(Bias->Dims);
    for (size_t I = 0; I < Bias->Dims.size(); ++I) {
      const size_t A = R - Bias->Dims.size() + I;
      if (Bias->Dims[I] != 1 && Bias->Dims[I] != Y.Dims[A])
        return C.badInput("the bias does not broadcast to the output");
      S[A] = Bias->Dims[I] == 1 ? 0 : Own[I];
    }
  }
  if (!Bias) {
    applyEpilogue(E, Y.data<T>(), int64_t(Y.numElements()), C.Pool);
    return llvm::Error::success();
  }
  const T *B = Bias->data<const T>();
  const int64_t ColStride = R ? S[R - 1] : 0;
  T *YP = Y.data<T>();
  visitActivation(E.Act, [&](auto Tag) {
    constexpr Activation Act = decltype(Tag)::value;
    C.Pool.parallelFor(
        Rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, Cols)),
        [&](int64_t Begin, int64_t End) {
          for (int64_t Row = Begin; Row < End; ++Row) {
            int64_t Rem = Row, Off = 0;
            for (int64_t A = int64_t(R) - 2; A >= 0; --A) {
              Off += (Rem % Y.Dims[A]) * S[A];
              Rem /= Y.Dims[A];
            }
            T *YR = YP + Row * Cols;
            const T *BR = B + Off;
            if (ColStride == 1)
              biasActivateRun<Act>(E, YR, BR, Cols);
            else
              for (int64_t J = 0; J < Cols; ++J)
                YR[J] = activateAs<Act>(E, T(YR[J] + BR[J * ColStride]));
          }
        });
  });
  return llvm::Error::success();
}

llvm::Error runFusedMatMul(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  Epilogue Ep;
  if (!readEpilogue(C.N, Ep))
    return C.unsupported("activation '" + C.N.getString("activation", "") +
                         "'");
  const bool Gemm = C.N.getInt("gemm", 0) != 0;
  const ops::OpInfo *Info = ops::lookupOp(Gemm ? "Gemm" : "MatMul");
  if (!Info || !cpuKernels().get(ops::opCode(*Info)))
    return C.unsupported("no CPU kernel for the product");
  const Kernel &K = *cpuKernels().get(ops::opCode(*Info));
  // Gemm takes the bias as its C (times beta); MatMul sees only A and B.
  KernelContext Product{
      C.G,       C.N,         Gemm ? C.Inputs : C.Inputs.take_front(2),
      C.Outputs, C.Workspace, C.WorkspaceBytes,
      C.Pool,    C.ActualDims};
  if (llvm::Error E = K.Run(Product))
    return E;
  const TensorRef *Bias = !Gemm && hasInput(C, 2) ? &C.Inputs[2] : nullptr;
  if (C.Outputs[0].Type == ElementType::Double)
    return biasAndActivate<double>(C, Ep, Bias);
  if (C.Outputs[0].Type != ElementType::Float)
    return C.unsupported("OomplanMatMul of type " +
                         elementTypeName(C.Outputs[0].Type));
  return biasAndActivate<float>(C, Ep, Bias);
}

} // namespace

void registerFusedMatMulKernel(CPUKernelTable &T) {
  addKernel(T, fused::MatMulOp, Kernel{&runFusedMatMul, nullptr, floatTypes()});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
