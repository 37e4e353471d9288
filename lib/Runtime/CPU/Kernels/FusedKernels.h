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

/// e^X for float without a libm call, so that the loops calling it
/// vectorize (the epilogue of a SiLU conv spent 90% of its time in scalar
/// expf): 2^n * P(r) with n = round(X log2 e), r = X - n ln 2 (ln 2 split
/// in two for exactness) and P exp's Taylor polynomial of degree 6, whose
/// relative error, with float rounding, is under 3e-7. X is clamped to
/// [-87.3, 88.3], where 2^n is a normal float; NaN stays NaN.
inline float fastExp(float X) {
  // NaN compares false, so it is clamped to -87.3 here (its int
  // conversion below would be undefined) and returned as itself at the end.
  float C = X > -87.3f ? X : -87.3f;
  C = C < 88.3f ? C : 88.3f;
  // Round to nearest by the 1.5 * 2^23 trick: no call, vectorizes.
  const float N = (C * 1.44269504f + 12582912.f) - 12582912.f;
  const float R = (C - N * 0.693359375f) + N * 2.12194440e-4f;
  float P = 1.f / 720;
  P = P * R + 1.f / 120;
  P = P * R + 1.f / 24;
  P = P * R + 1.f / 6;
  P = P * R + 0.5f;
  P = P * R + 1.f;
  P = P * R + 1.f;
  const int32_t Bits = (int32_t(N) + 127) << 23;
  float Scale;
  std::memcpy(&Scale, &Bits, sizeof(Scale));
  const float E = P * Scale;
  return X == X ? E : X;
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
    return T(0.5) * X * (T(1) + std::erf(X * T(0.7071067811865476)));
  else if constexpr (A == Activation::GeluTanh)
    return T(0.5) * X *
           (T(1) + std::tanh(T(0.7978845608028654) * // sqrt(2 / pi)
                             (X + T(0.044715) * X * X * X)));
  else if constexpr (A == Activation::Sigmoid)
    return epilogueSigmoid(X);
  else if constexpr (A == Activation::SiLU)
    return X * epilogueSigmoid(X);
  else if constexpr (A == Activation::Tanh)
    return std::tanh(X);
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
