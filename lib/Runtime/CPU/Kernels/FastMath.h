//===- FastMath.h - exp, erf and tanh for float without libm ---*- C++ -*-===//
//
// libm's expf, erff and tanhf are calls, so a loop over them runs one element
// at a time: BERT's GELU epilogue (an erf per element of the 3072-wide MLP)
// took a third as long as the GEMM before it. These are branch-free formulas
// of multiplies, adds, one division and bit tricks, so the loops calling them
// vectorize (OOMPLAN_SIMD_CLONES). Their coefficients are least-squares fits
// to the double-precision functions (utils/check/fit_fast_math.py refits and
// checks them); FastMathTest checks them on a dense walk over the floats
// against libm's double results.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_FASTMATH_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_FASTMATH_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace oomplan {
namespace runtime {
namespace cpu {

/// e^X: 2^n * P(r) with n = round(X log2 e), r = X - n ln 2 (ln 2 split
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

/// X with the sign of S (S's sign bit, so -0 and NaN's sign too).
inline float withSignOf(float X, float S) {
  uint32_t XB, SB;
  std::memcpy(&XB, &X, sizeof(XB));
  std::memcpy(&SB, &S, sizeof(SB));
  XB = (XB & 0x7fffffffu) | (SB & 0x80000000u);
  float R;
  std::memcpy(&R, &XB, sizeof(R));
  return R;
}

/// erf(X) within 2e-7 absolute everywhere and 2e-7 relative below 0.875
/// (about two float ulps), both pieces computed and one chosen:
/// - |X| < 0.875: X * P(X^2), P of degree 5;
/// - above: 1 - erfc, erfc(z) = t e^(-z^2 + Q(t)) with t = 1 / (1 + z/2)
///   and Q of degree 7 (the form of Numerical Recipes' erfcc, refitted on
///   [0.875, 4]); z is clamped to 4, past which erf is 1 in float.
/// NaN stays NaN (through fastExp and the final select).
inline float fastErf(float X) {
  float Z = X < 0.f ? -X : X;
  Z = Z < 4.f ? Z : 4.f;
  const float S = Z * Z;
  float P = -0.000628526206f;
  P = P * S + 0.00504677184f;
  P = P * S + -0.0268004742f;
  P = P * S + 0.112826802f;
  P = P * S + -0.376125693f;
  P = P * S + 1.12837911f;
  const float Small = Z * P;
  const float T = 1.f / (1.f + 0.5f * Z);
  float Q = -0.279902309f;
  Q = Q * T + 1.09006786f;
  Q = Q * T + -1.5187372f;
  Q = Q * T + 0.775734305f;
  Q = Q * T + -0.242670685f;
  Q = Q * T + 0.449946284f;
  Q = Q * T + 0.990307927f;
  Q = Q * T + -1.26496923f;
  const float Large = 1.f - T * fastExp(Q - S);
  const float R = withSignOf(Z < 0.875f ? Small : Large, X);
  return X == X ? R : X;
}

/// tanh(X) within 2e-7 relative (about two float ulps), both pieces
/// computed and one chosen:
/// - |X| < 0.625: X * P(X^2), P of degree 6;
/// - above: 1 - 2 / (1 + e^(2|X|)), |X| clamped to 9.1 (tanh rounds to 1
///   in float from 9.01 on).
inline float fastTanh(float X) {
  float Z = X < 0.f ? -X : X;
  Z = Z < 9.1f ? Z : 9.1f;
  const float S = Z * Z;
  float P = 0.00216567982f;
  P = P * S + -0.00819985569f;
  P = P * S + 0.0217084512f;
  P = P * S + -0.0539477989f;
  P = P * S + 0.133332089f;
  P = P * S + -0.333333313f;
  P = P * S + 1.f;
  const float Small = Z * P;
  const float Large = 1.f - 2.f / (1.f + fastExp(2.f * Z));
  const float R = withSignOf(Z < 0.625f ? Small : Large, X);
  return X == X ? R : X;
}

/// erf and tanh for the kernels' element types: float through the formulas
/// above, double through libm.
template <typename T> T erfOf(T X) {
  if constexpr (std::is_same<T, float>::value)
    return fastErf(X);
  else
    return std::erf(X);
}
template <typename T> T tanhOf(T X) {
  if constexpr (std::is_same<T, float>::value)
    return fastTanh(X);
  else
    return std::tanh(X);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
