//===- FusedKernels.h - pieces the fused CPU kernels share ------*- C++ -*-===//
//
// OomplanConv and OomplanMatMul end with the same epilogue: an activation
// applied in the output buffer after the GEMM, named by the node's
// `activation` attribute (CONTRACTS.md section 1). The formulas are the
// unfused kernels' (Unary.cpp), so a fused run matches the unfused one.
// registerFusedKernels (FusedAttention.cpp) adds the other two files'
// kernels through the functions declared here.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_FUSEDKERNELS_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_FUSEDKERNELS_H

#include "Elementwise.h"
#include "FastMath.h"
#include "TensorUtil.h"
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace oomplan {
namespace runtime {
namespace cpu {

enum class Activation {
  None,
  Relu,
  Clip,
  LeakyRelu,
  Gelu,
  GeluTanh,
  Sigmoid,
  SiLU,
  Tanh,
  HardSwish ///< x * relu6(x + 3) / 6 (MobileNetV3's, PP-OCR's)
};

/// The node's activation and its parameters.
struct Epilogue {
  Activation Act = Activation::None;
  double Min = -std::numeric_limits<double>::infinity();
  double Max = std::numeric_limits<double>::infinity();
  double Alpha = 0.01;
};

/// Reads `activation` (and activation_min/max, alpha); false for a name no
/// kernel implements.
inline bool readEpilogue(const Node &N, Epilogue &E) {
  const std::string Name = N.getString("activation", "");
  static const std::pair<const char *, Activation> Names[] = {
      {"", Activation::None},           {"Relu", Activation::Relu},
      {"Clip", Activation::Clip},       {"LeakyRelu", Activation::LeakyRelu},
      {"Gelu", Activation::Gelu},       {"GeluTanh", Activation::GeluTanh},
      {"Sigmoid", Activation::Sigmoid}, {"SiLU", Activation::SiLU},
      {"Tanh", Activation::Tanh},       {"HardSwish", Activation::HardSwish}};
  bool Found = false;
  for (const auto &P : Names)
    if (Name == P.first) {
      E.Act = P.second;
      Found = true;
    }
  E.Min = N.getFloat("activation_min", E.Min);
  E.Max = N.getFloat("activation_max", E.Max);
  E.Alpha = N.getFloat("alpha", E.Alpha);
  return Found;
}

/// Split by sign so that exp never overflows (as Unary.cpp's Sigmoid).
template <typename T> T stableSigmoid(T X) {
  if (X >= T(0))
    return T(1) / (T(1) + std::exp(-X));
  T Ex = std::exp(X);
  return Ex / (T(1) + Ex);
}

/// The logistic function for the epilogues: float through fastExp (no
/// overflow: its argument is clamped), double through std::exp.
template <typename T> T epilogueSigmoid(T X) {
  if constexpr (std::is_same<T, float>::value)
    return 1.f / (1.f + fastExp(-X));
  else
    return stableSigmoid(X);
}

/// Activation A on X; A is a template argument so that the element loops
/// below carry no switch.
template <Activation A, typename T> T activateAs(const Epilogue &E, T X) {
  if constexpr (A == Activation::Relu)
    return X < T(0) ? T(0) : X;
  else if constexpr (A == Activation::Clip)
    return std::min(std::max(X, T(E.Min)), T(E.Max));
  else if constexpr (A == Activation::LeakyRelu)
    return X < T(0) ? T(E.Alpha) * X : X;
  else if constexpr (A == Activation::Gelu)
    return T(0.5) * X * (T(1) + erfOf(X * T(0.7071067811865476)));
  else if constexpr (A == Activation::GeluTanh)
    return T(0.5) * X *
           (T(1) + tanhOf(T(0.7978845608028654) * // sqrt(2 / pi)
                          (X + T(0.044715) * X * X * X)));
  else if constexpr (A == Activation::Sigmoid)
    return epilogueSigmoid(X);
  else if constexpr (A == Activation::SiLU)
    return X * epilogueSigmoid(X);
  else if constexpr (A == Activation::Tanh)
    return tanhOf(X);
  else if constexpr (A == Activation::HardSwish)
    return X * std::min(std::max(X + T(3), T(0)), T(6)) / T(6);
  else
    return X;
}

/// Calls Fn(std::integral_constant<Activation, Act>) for the run-time Act.
template <typename F> void visitActivation(Activation Act, F &&Fn) {
  using A = Activation;
  switch (Act) {
#define OOMPLAN_ACT(Name)                                                      \
  case A::Name:                                                                \
    Fn(std::integral_constant<A, A::Name>{});                                  \
    return;
    OOMPLAN_ACT(None)
    OOMPLAN_ACT(Relu)
    OOMPLAN_ACT(Clip)
    OOMPLAN_ACT(LeakyRelu)
    OOMPLAN_ACT(Gelu)
    OOMPLAN_ACT(GeluTanh)
    OOMPLAN_ACT(Sigmoid)
    OOMPLAN_ACT(SiLU)
    OOMPLAN_ACT(Tanh)
    OOMPLAN_ACT(HardSwish)
#undef OOMPLAN_ACT
  }
}

/// Activation A on Y[0, N) in place.
template <Activation A, typename T>
OOMPLAN_SIMD_CLONES void activateRun(const Epilogue &E, T *Y, int64_t N) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = activateAs<A>(E, Y[I]);
}

/// Y[I] = act(Y[I] * S + T) on Y[0, N) in place: one channel's plane of
/// OomplanConv with its per-channel affine.
template <Activation A, typename T>
OOMPLAN_SIMD_CLONES void affineActivateRun(const Epilogue &E, T *Y, int64_t N,
                                           T S, T Shift) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = activateAs<A>(E, T(Y[I] * S + Shift));
}

/// Y[I] = act(Y[I] + B[I]) on Y[0, N) in place: one row of OomplanMatMul
/// with its bias row. Cloned like the two above: inside a lambda the loop
/// would get the baseline's SSE2 only, and GELU's erf is most of its cost.
template <Activation A, typename T>
OOMPLAN_SIMD_CLONES void biasActivateRun(const Epilogue &E, T *Y, const T *B,
                                         int64_t N) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = activateAs<A>(E, T(Y[I] + B[I]));
}

/// Applies E to Y[0, N) in place, in parallel.
template <typename T>
void applyEpilogue(const Epilogue &E, T *Y, int64_t N, ThreadPool &Pool) {
  if (E.Act == Activation::None)
    return;
  visitActivation(E.Act, [&](auto Tag) {
    Pool.parallelFor(N, 1 << 14, [&](int64_t Begin, int64_t End) {
      activateRun<decltype(Tag)::value>(E, Y + Begin, End - Begin);
    });
  });
}

void registerFusedConvKernel(ops::KernelTable<Kernel> &T);   // FusedConv.cpp
void registerFusedMatMulKernel(ops::KernelTable<Kernel> &T); // FusedMatMul.cpp
// FusedConvDepthwise.cpp
void registerFusedConvDepthwiseKernel(ops::KernelTable<Kernel> &T);

/// OomplanAttention's geometry, checked against its contract: the dims,
/// the attributes, and each operand's element strides right-aligned to its
/// full shape (the output's batch dims, then its two matrix dims; 0 on a
/// broadcast axis). Shared by the CPU and CUDA kernels (FusedAttention.cpp).
struct AttentionShape {
  int64_t Batch = 1, Sq = 0, Sk = 0, D = 0, Dv = 0;
  bool KTransposed = false, FillWhere = true;
  float Scale = 1, Fill = -std::numeric_limits<float>::infinity();
  DimVector BatchDims;
  /// Q, K, V, Bias, Mask (inputs 0 to 4); empty for an absent Bias or Mask.
  DimVector Strides[5];
};
llvm::Error attentionShape(const KernelContext &C, AttentionShape &A);

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
