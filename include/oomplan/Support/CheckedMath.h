//===- CheckedMath.h - overflow-checked byte arithmetic ---------*- C++ -*-===//
//
// Byte sizes are uint64_t; a 2^62-element tensor must give an error, never a
// wrapped small size. These return false on overflow.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SUPPORT_CHECKEDMATH_H
#define OOMPLAN_SUPPORT_CHECKEDMATH_H

#include <cstdint>

namespace oomplan {

/// Out = A * B; false on overflow.
inline bool checkedMul(uint64_t A, uint64_t B, uint64_t &Out) {
  return !__builtin_mul_overflow(A, B, &Out);
}
/// Out = A + B; false on overflow.
inline bool checkedAdd(uint64_t A, uint64_t B, uint64_t &Out) {
  return !__builtin_add_overflow(A, B, &Out);
}
/// The largest size the tool reports: reports and JSON print sizes as signed
/// 64-bit numbers, so a region, a plan or a tensor past 2^63 - 1 bytes is an
/// error, never a wrapped or negative number.
constexpr uint64_t MaxSizeBytes = (uint64_t(1) << 63) - 1;

/// A + B, or UINT64_MAX when that overflows: for totals that are compared
/// with a budget, where a wrapped small sum would wrongly fit.
inline uint64_t saturatingAdd(uint64_t A, uint64_t B) {
  uint64_t Out;
  return __builtin_add_overflow(A, B, &Out) ? UINT64_MAX : Out;
}

/// A * B, or UINT64_MAX when that overflows: for sizes derived from a
/// tensor's size, which the planner then rejects as past 2^63.
inline uint64_t saturatingMul(uint64_t A, uint64_t B) {
  uint64_t Out;
  return __builtin_mul_overflow(A, B, &Out) ? UINT64_MAX : Out;
}

/// Out = A rounded up to a multiple of Align (Align > 0); false on overflow.
inline bool checkedAlignUp(uint64_t A, uint64_t Align, uint64_t &Out) {
  uint64_t Rem = A % Align;
  if (Rem == 0) {
    Out = A;
    return true;
  }
  return checkedAdd(A, Align - Rem, Out);
}

} // namespace oomplan

#endif
