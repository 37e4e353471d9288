//===- SignalWindow.cpp - CPU kernels: Hann, Hamming, Blackman --*- C++ -*-===//
//
// The window generators of ONNX opset 17: input 0 is the window length N,
// the output N coefficients a0 - a1 cos(2 pi n / M) + a2 cos(4 pi n / M),
// with M = N for a periodic window (the default) and N - 1 for a symmetric
// one. Computed in double, stored in output_datatype (the output's type).
// Registered by the Unary family (CPUKernels.h).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

template <int Kind> llvm::Error runWindow(const KernelContext &C) {
  // Kind 0: Hann, 1: Hamming, 2: Blackman.
  const double A0 = Kind == 0 ? 0.5 : Kind == 1 ? 25.0 / 46.0 : 0.42;
  const double A1 = Kind == 0 ? 0.5 : Kind == 1 ? 21.0 / 46.0 : 0.5;
  const double A2 = Kind == 2 ? 0.08 : 0.0;
  const TensorRef &Out = C.Outputs[0];
  int64_t N = int64_t(Out.numElements());
  bool Periodic = C.N.getInt("periodic", 1) != 0;
  double M = double(Periodic ? N : N - 1);
  const double Pi = 3.14159265358979323846;
  if (!dispatchType<NumericTypes>(Out.Type, [&](auto Tag) {
        using T = typename decltype(Tag)::type;
        T *Y = Out.data<T>();
        for (int64_t I = 0; I < N; ++I) {
          // A symmetric window of length 1 is the single value 1.
          double W = M == 0 ? 1.0
                            : A0 - A1 * std::cos(2 * Pi * double(I) / M) +
                                  A2 * std::cos(4 * Pi * double(I) / M);
          Y[I] = store<T>(ComputeT<T>(W));
        }
      }))
    return C.unsupported("output type " + elementTypeName(Out.Type));
  return llvm::Error::success();
}

} // namespace

void registerSignalWindowKernels(CPUKernelTable &T) {
  llvm::SmallVector<ElementType, 4> Sizes = {ElementType::Int32,
                                             ElementType::Int64};
  addKernel(T, "HannWindow", Kernel{runWindow<0>, nullptr, Sizes});
  addKernel(T, "HammingWindow", Kernel{runWindow<1>, nullptr, Sizes});
  addKernel(T, "BlackmanWindow", Kernel{runWindow<2>, nullptr, Sizes});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
