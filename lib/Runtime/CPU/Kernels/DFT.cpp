//===- DFT.cpp - CPU kernel: DFT (direct sum) -----------------------------===//
//
// The discrete Fourier transform along one axis of a real ([..., 1]) or
// complex ([..., 2]) signal, by the direct O(n^2) sum in double: the tests
// and models here use short signals, and the direct sum has no length
// restriction (dft_length may pad with zeros or truncate). inverse divides
// by the length; onesided keeps the first n/2 + 1 bins.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

template <typename T>
void dftTyped(const KernelContext &C, int64_t Axis, int64_t Len, bool Inverse) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const int64_t R = int64_t(X.Dims.size());
  const bool Complex = X.Dims[R - 1] == 2;
  const int64_t InLen = X.Dims[Axis], OutLen = Y.Dims[Axis];
  const int64_t Outer = productOf(X.Dims, 0, size_t(Axis));
  const int64_t InInner = productOf(X.Dims, size_t(Axis) + 1, size_t(R));
  const int64_t OutInner = productOf(Y.Dims, size_t(Axis) + 1, size_t(R));
  const int64_t Points = InInner / X.Dims[R - 1]; // positions per sample
  const double Sign = Inverse ? 1 : -1;
  const double Pi = 3.14159265358979323846;
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t P = 0; P < Points; ++P)
      for (int64_t K = 0; K < OutLen; ++K) {
        double Re = 0, Im = 0;
        for (int64_t N = 0; N < std::min(InLen, Len); ++N) {
          const T *S =
              X.data<const T>() + (O * InLen + N) * InInner + P * X.Dims[R - 1];
          double A = double(S[0]), B = Complex ? double(S[1]) : 0.0;
          double Ang = Sign * 2 * Pi * double(K) * double(N) / double(Len);
          double Cs = std::cos(Ang), Sn = std::sin(Ang);
          Re += A * Cs - B * Sn;
          Im += A * Sn + B * Cs;
        }
        if (Inverse) {
          Re /= double(Len);
          Im /= double(Len);
        }
        T *D = Y.data<T>() + (O * OutLen + K) * OutInner + P * 2;
        D[0] = T(Re);
        D[1] = T(Im);
      }
}

llvm::Error runDFT(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const int64_t R = int64_t(X.Dims.size());
  if (R < 2 || (X.Dims[R - 1] != 1 && X.Dims[R - 1] != 2) ||
      Y.Dims.size() != X.Dims.size() || Y.Dims[R - 1] != 2)
    return C.badInput("signal must end in a dim of 1 (real) or 2 (complex)");
  int64_t Axis = C.N.getInt("axis", 1);
  if (!normAxis(Axis, R - 1) || Axis == 0)
    return C.badInput("axis must be a signal axis");
  int64_t Len = hasInput(C, 1) ? intAt(C.Inputs[1], 0) : X.Dims[Axis];
  if (Len <= 0)
    return C.badInput("dft_length must be positive");
  const bool Inverse = C.N.getInt("inverse", 0) != 0;
  if (X.Type == ElementType::Float)
    dftTyped<float>(C, Axis, Len, Inverse);
  else if (X.Type == ElementType::Double)
    dftTyped<double>(C, Axis, Len, Inverse);
  else
    return C.unsupported("DFT of type " + elementTypeName(X.Type));
  return llvm::Error::success();
}

} // namespace

void registerDFTKernels(CPUKernelTable &T) {
  addKernel(T, "DFT", Kernel{&runDFT, nullptr, floatTypes()});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
