//===- Float8.h - the four 8-bit floats of ONNX 1.14 -------------*- C++
//-*-===//
//
// Decoding and encoding of float8e4m3fn, float8e4m3fnuz, float8e5m2 and
// float8e5m2fnuz as ONNX's Cast-19 defines them. Encoding rounds to nearest
// even at the target's precision with an unbounded exponent ([x]); what
// lands beyond the largest finite value, and infinities, follow Cast's two
// tables (saturate on: the largest value; off: NaN, or infinity for e5m2).
// One exception to the tables: with saturation, an infinity becomes the
// largest value in the "uz" types too (Cast-19's table says NaN), as ONNX's
// reference (numpy_helper.saturate_cast clips first) and ONNX Runtime both
// do. The "fn" types have no
// infinity and one NaN per sign (all ones); the "uz" types have no negative
// zero and their only NaN is 0x80.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_FLOAT8_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_FLOAT8_H

#include "oomplan/IR/ElementType.h"
#include <cmath>
#include <cstdint>

namespace oomplan {
namespace runtime {
namespace f8 {

struct Format {
  int Mant, Exp, Bias;
  bool HasInf; ///< e5m2: exponent all ones is infinity (mantissa 0) or NaN
  bool Uz;     ///< no negative zero, 0x80 the only NaN
  double Max;  ///< the largest finite value
};

/// The format of a float8 element type; null for any other.
inline const Format *formatOf(ElementType T) {
  static const Format E4M3FN{3, 4, 7, false, false, 448},
      E4M3FNUZ{3, 4, 8, false, true, 240}, E5M2{2, 5, 15, true, false, 57344},
      E5M2FNUZ{2, 5, 16, false, true, 57344};
  switch (T) {
  case ElementType::Float8E4M3FN:
    return &E4M3FN;
  case ElementType::Float8E4M3FNUZ:
    return &E4M3FNUZ;
  case ElementType::Float8E5M2:
    return &E5M2;
  case ElementType::Float8E5M2FNUZ:
    return &E5M2FNUZ;
  default:
    return nullptr;
  }
}

inline double decode(const Format &F, uint8_t B) {
  if (F.Uz && B == 0x80)
    return NAN;
  const bool Neg = B & 0x80;
  const int ExpField = (B >> F.Mant) & ((1 << F.Exp) - 1);
  const int Mant = B & ((1 << F.Mant) - 1);
  const int ExpAllOnes = (1 << F.Exp) - 1;
  double V;
  if (F.HasInf && ExpField == ExpAllOnes)
    V = Mant ? NAN : INFINITY;
  else if (!F.HasInf && !F.Uz && ExpField == ExpAllOnes &&
           Mant == (1 << F.Mant) - 1)
    V = NAN;
  else if (ExpField == 0)
    V = std::ldexp(double(Mant), 1 - F.Bias - F.Mant);
  else
    V = std::ldexp(double(Mant | (1 << F.Mant)), ExpField - F.Bias - F.Mant);
  return Neg ? -V : V;
}

inline uint8_t encode(const Format &F, double X, bool Saturate) {
  const uint8_t Sign = std::signbit(X) ? 0x80 : 0;
  const uint8_t NaN = F.Uz ? 0x80 : uint8_t(Sign | 0x7F);
  const uint8_t Inf = uint8_t(Sign | (((1 << F.Exp) - 1) << F.Mant));
  auto Encoded = [&](double V) -> uint8_t {
    // V: exactly representable, 0 <= V <= Max.
    const int MinNormExp = 1 - F.Bias;
    if (V == 0)
      return F.Uz ? 0 : Sign;
    int E = std::ilogb(V);
    uint8_t Bits;
    if (E < MinNormExp)
      Bits = uint8_t(std::ldexp(V, F.Mant - MinNormExp));
    else
      Bits = uint8_t(((E + F.Bias) << F.Mant) |
                     (int(std::ldexp(V, F.Mant - E)) - (1 << F.Mant)));
    return uint8_t(Bits | Sign);
  };
  auto Overflow = [&]() -> uint8_t {
    if (Saturate)
      return Encoded(F.Max);
    return F.HasInf ? Inf : NaN;
  };
  if (std::isnan(X))
    return NaN;
  if (std::isinf(X))
    return Overflow();
  double A = std::fabs(X);
  if (A == 0)
    return Encoded(0);
  // The quantum at A's binade (subnormal quantum below the normal range),
  // then round half to even in units of it.
  int E = std::max(std::ilogb(A), 1 - F.Bias);
  double Q = std::ldexp(1.0, E - F.Mant);
  double V = std::nearbyint(A / Q) * Q;
  if (V > F.Max)
    return Overflow();
  return Encoded(V);
}

} // namespace f8
} // namespace runtime
} // namespace oomplan

#endif
