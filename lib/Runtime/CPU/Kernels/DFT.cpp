//===- DFT.cpp - CPU kernel: DFT (direct sum) -----------------------------===//
//
// The discrete Fourier transform along one axis of a real ([..., 1]) or
// complex ([..., 2]) signal, by the direct O(n^2) sum in double
// (DFTPoint.h, shared with the CUDA kernel): the tests and models here use
// short signals, and the direct sum has no length restriction (dft_length
// may pad with zeros or truncate). inverse divides by the length; onesided
// keeps the first n/2 + 1 bins.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

llvm::Error dftParams(const KernelContext &C, std::optional<int64_t> Length,
                      dft::Params &D) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const int64_t R = int64_t(X.Dims.size());
  if (R < 2 || (X.Dims[R - 1] != 1 && X.Dims[R - 1] != 2) ||
      Y.Dims.size() != X.Dims.size() || Y.Dims[R - 1] != 2)
    return C.badInput("signal must end in a dim of 1 (real) or 2 (complex)");
  int64_t Axis = C.N.getInt("axis", 1);
  if (!normAxis(Axis, R - 1) || Axis == 0)
    return C.badInput("axis must be a signal axis");
  const int64_t Len = Length ? *Length : X.Dims[Axis];
  if (Len <= 0)
    return C.badInput("dft_length must be positive");
  if ((X.Type != ElementType::Float && X.Type != ElementType::Double) ||
      Y.Type != X.Type)
    return C.unsupported("DFT of type " + elementTypeName(X.Type));
  D = dft::Params();
  D.Double = X.Type == ElementType::Double;
  D.Inverse = C.N.getInt("inverse", 0) != 0;
  D.Len = Len;
  D.Last = X.Dims[R - 1];
  D.InLen = X.Dims[Axis];
  D.OutLen = Y.Dims[Axis];
  D.Outer = productOf(X.Dims, 0, size_t(Axis));
  D.InInner = productOf(X.Dims, size_t(Axis) + 1, size_t(R));
  D.OutInner = productOf(Y.Dims, size_t(Axis) + 1, size_t(R));
  D.Points = D.InInner / D.Last;
  D.X = X.Data;
  D.Y = Y.Data;
  return llvm::Error::success();
}

namespace {

template <typename T> void dftTyped(const dft::Params &D) {
  for (int64_t O = 0; O < D.Outer; ++O)
    for (int64_t P = 0; P < D.Points; ++P)
      for (int64_t K = 0; K < D.OutLen; ++K) {
        double Re, Im;
        dft::bin<T>(D, O, P, K, Re, Im);
        T *Y = static_cast<T *>(D.Y) + dft::binAt(D, O, P, K);
        Y[0] = T(Re);
        Y[1] = T(Im);
      }
}

llvm::Error runDFT(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  dft::Params D;
  if (llvm::Error E = dftParams(
          C,
          hasInput(C, 1) ? std::optional<int64_t>(intAt(C.Inputs[1], 0))
                         : std::nullopt,
          D))
    return E;
  if (D.Double)
    dftTyped<double>(D);
  else
    dftTyped<float>(D);
  return llvm::Error::success();
}

} // namespace

void registerDFTKernels(CPUKernelTable &T) {
  addKernel(T, "DFT", Kernel{&runDFT, nullptr, floatTypes()});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
