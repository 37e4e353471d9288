//===- FusedConv.cpp - CPU kernel: OomplanConv, act(Conv + residual) ------===//
//
// act(Conv(X, W, B) + Residual) through Conv.cpp's own im2col/GEMM path with
// Accumulate set: the output holds the residual, the bias is added into it
// and every GEMM accumulates with beta 1, then the activation runs in the
// output. When the planner made the output the residual's buffer (the
// in-place write that saves one activation tensor per residual block), the
// residual is consumed where it lies; otherwise (--check=unplanned, or a
// residual still read later) it is copied into the output first.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "ConvEntry.h"
#include "FusedKernels.h"
#include "oomplan/IR/FusedOps.h"
#include <cstring>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

uint64_t fusedConvWorkspace(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                            llvm::ArrayRef<TensorRef> Outputs) {
  return convWorkspaceBytes(N, Inputs, Outputs);
}

llvm::Error runFusedConv(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  Epilogue Ep;
  if (!readEpilogue(C.N, Ep))
    return C.unsupported("activation '" + C.N.getString("activation", "") +
                         "'");
  const TensorRef &Y = C.Outputs[0];
  const bool Residual = hasInput(C, 3);
  if (Residual) {
    const TensorRef &R = C.Inputs[3];
    if (R.Type != Y.Type || R.Dims != Y.Dims)
      return C.badInput("the residual's type or dims differ from the output's");
    if (R.Data != Y.Data)
      std::memcpy(Y.Data, R.Data, Y.bytes());
  }
  if (llvm::Error E = runConvInto(C, Residual))
    return E;
  if (Y.Type == ElementType::Double)
    applyEpilogue(Ep, Y.data<double>(), int64_t(Y.numElements()), C.Pool);
  else
    applyEpilogue(Ep, Y.data<float>(), int64_t(Y.numElements()), C.Pool);
  return llvm::Error::success();
}

} // namespace

void registerFusedConvKernel(CPUKernelTable &T) {
  addKernel(T, fused::ConvOp,
            Kernel{&runFusedConv, &fusedConvWorkspace, floatTypes()});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
