//===- Det.cpp - CPU kernel: Det (determinant by LU) ----------------------===//
//
// The determinant of each trailing M x M matrix, by Gaussian elimination
// with partial pivoting in double, on a copy of the matrix that lives in the
// step's workspace (detWorkspace).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

uint64_t detWorkspace(const Node &, llvm::ArrayRef<TensorRef> Inputs,
                      llvm::ArrayRef<TensorRef>) {
  if (Inputs.empty() || Inputs[0].Dims.size() < 2)
    return 0;
  const uint64_t M = uint64_t(Inputs[0].Dims.back());
  return M * M * sizeof(double);
}

double determinant(double *A, int64_t M) {
  double Det = 1;
  for (int64_t K = 0; K < M; ++K) {
    int64_t Pivot = K;
    for (int64_t I = K + 1; I < M; ++I)
      if (std::fabs(A[I * M + K]) > std::fabs(A[Pivot * M + K]))
        Pivot = I;
    if (A[Pivot * M + K] == 0)
      return 0;
    if (Pivot != K) {
      for (int64_t J = 0; J < M; ++J)
        std::swap(A[K * M + J], A[Pivot * M + J]);
      Det = -Det;
    }
    Det *= A[K * M + K];
    for (int64_t I = K + 1; I < M; ++I) {
      double F = A[I * M + K] / A[K * M + K];
      for (int64_t J = K; J < M; ++J)
        A[I * M + J] -= F * A[K * M + J];
    }
  }
  return Det;
}

llvm::Error runDet(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const size_t R = X.Dims.size();
  if (R < 2 || X.Dims[R - 1] != X.Dims[R - 2])
    return C.badInput("input must end in a square matrix");
  if (X.Type != ElementType::Float && X.Type != ElementType::Double)
    return C.unsupported("Det of type " + elementTypeName(X.Type));
  const int64_t M = X.Dims[R - 1];
  const int64_t Mats = productOf(X.Dims, 0, R - 2);
  if (int64_t(Y.numElements()) != Mats)
    return C.badInput("output must hold one value per matrix");
  if (C.WorkspaceBytes < uint64_t(M * M) * sizeof(double))
    return C.badInput("the plan gave too little workspace");
  double *A = static_cast<double *>(C.Workspace);
  for (int64_t K = 0; K < Mats; ++K) {
    for (int64_t I = 0; I < M * M; ++I)
      A[I] = numberAt(X, uint64_t(K * M * M + I));
    double D = determinant(A, M);
    if (Y.Type == ElementType::Double)
      Y.data<double>()[K] = D;
    else
      Y.data<float>()[K] = float(D);
  }
  return llvm::Error::success();
}

} // namespace

void registerDetKernels(CPUKernelTable &T) {
  addKernel(T, "Det", Kernel{&runDet, &detWorkspace, floatTypes()});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
