//===- Elementwise.h - type dispatch and broadcasting ----------*- C++ -*-===//
//
// Helpers every elementwise CPU kernel needs: the C++ type of each ONNX
// element type (float16 and bfloat16 as 16-bit storage converted through
// float, with round-to-nearest-even as numpy does), a dispatcher from an
// ElementType to a template instantiation, and a broadcast walker that visits
// the output in contiguous runs with one offset per input (numpy's
// multidirectional broadcasting). Kernel files of any family may include it.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_ELEMENTWISE_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_ELEMENTWISE_H

#include "oomplan/Runtime/Kernel.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

/// Marks a hot loop to be compiled twice, for x86-64-v3 (AVX2 and FMA) and
/// for the build's baseline (x86-64: SSE2, a quarter of a current core's
/// vector width), the copy chosen once at load by the CPU (GCC's function
/// multi-versioning). OpenBLAS picks its kernels the same way; our own
/// loops would otherwise run at SSE2 on every machine. Clang (the fuzz and
/// sanitizer builds) compiles the baseline only.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define OOMPLAN_SIMD_CLONES                                                    \
  __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define OOMPLAN_SIMD_CLONES
#endif

namespace oomplan {
namespace runtime {
namespace cpu {

/// Storage of an IEEE half (ONNX float16).
struct Half {
  uint16_t Bits;
};
/// Storage of a bfloat16.
struct BFloat16 {
  uint16_t Bits;
};

/// Rounds D to a binary format with MantBits stored mantissa bits and the
/// exponent range [MinExp, MaxExp] of normal numbers, to nearest even, in one
/// step from double (so a double is not rounded twice through float).
template <int MantBits, int ExpBits>
inline uint16_t roundToSmallFloat(double D) {
  constexpr int Bias = (1 << (ExpBits - 1)) - 1;
  constexpr int MinExp = 1 - Bias, MaxExp = Bias;
  constexpr uint16_t ExpMask = uint16_t(((1 << ExpBits) - 1) << MantBits);
  uint16_t Sign = std::signbit(D) ? uint16_t(1u << (MantBits + ExpBits)) : 0;
  if (std::isnan(D))
    return Sign | ExpMask | uint16_t(1u << (MantBits - 1));
  double A = std::fabs(D);
  if (std::isinf(A))
    return Sign | ExpMask;
  if (A < std::ldexp(1.0, MinExp)) {
    // Subnormal: a multiple of the smallest step; 2^MantBits steps carry
    // into the smallest normal, whose bits are exactly that integer.
    double Q = std::nearbyint(std::ldexp(A, MantBits - MinExp));
    return Sign | uint16_t(Q);
  }
  int E;
  std::frexp(A, &E); // A = m * 2^E, m in [0.5, 1)
  --E;
  double Q = std::nearbyint(std::ldexp(A, MantBits - E));
  if (Q >= std::ldexp(1.0, MantBits + 1)) {
    Q /= 2;
    ++E;
  }
  if (E > MaxExp)
    return Sign | ExpMask;
  return Sign | uint16_t(uint32_t(E + Bias) << MantBits) |
         uint16_t(uint64_t(Q) - (uint64_t(1) << MantBits));
}

template <int MantBits, int ExpBits>
inline float smallFloatToFloat(uint16_t B) {
  constexpr int Bias = (1 << (ExpBits - 1)) - 1;
  bool Neg = B >> (MantBits + ExpBits);
  int Exp = (B >> MantBits) & ((1 << ExpBits) - 1);
  uint32_t Mant = B & ((1u << MantBits) - 1);
  float V;
  if (Exp == (1 << ExpBits) - 1)
    V = Mant ? NAN : INFINITY;
  else if (Exp == 0)
    V = std::ldexp(float(Mant), 1 - Bias - MantBits);
  else
    V = std::ldexp(float(Mant | (1u << MantBits)), Exp - Bias - MantBits);
  return Neg ? -V : V;
}

inline float toFloat(Half H) { return smallFloatToFloat<10, 5>(H.Bits); }
inline float toFloat(BFloat16 H) {
  uint32_t U = uint32_t(H.Bits) << 16;
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}
/// The value of a float16 (T Float16) or bfloat16 (otherwise) from its bits.
inline float halfBitsToFloat(ElementType T, uint16_t Bits) {
  return T == ElementType::Float16 ? toFloat(Half{Bits})
                                   : toFloat(BFloat16{Bits});
}
inline Half toHalf(double D) { return {roundToSmallFloat<10, 5>(D)}; }
inline BFloat16 toBFloat16(double D) { return {roundToSmallFloat<7, 8>(D)}; }

/// The type arithmetic happens in: float for the 16-bit floats, else T.
template <typename T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<Half> { using type = float; };
template <> struct ComputeOf<BFloat16> { using type = float; };
template <typename T> using ComputeT = typename ComputeOf<T>::type;

template <typename T> inline ComputeT<T> load(const T &V) { return V; }
inline float load(const Half &V) { return toFloat(V); }
inline float load(const BFloat16 &V) { return toFloat(V); }
/// Converts a computed value back to the storage type T.
template <typename T, typename C> inline T store(C V) {
  if constexpr (std::is_same<T, Half>::value)
    return toHalf(double(V));
  else if constexpr (std::is_same<T, BFloat16>::value)
    return toBFloat16(double(V));
  else
    return T(V);
}

/// Type tags for dispatch: Fn(TypeTag<T>{}).
template <typename T> struct TypeTag { using type = T; };

/// Which groups of types a dispatch accepts.
enum TypeSet : unsigned {
  FloatTypes = 1,   ///< float, double, float16, bfloat16
  SignedInts = 2,   ///< int8..int64
  UnsignedInts = 4, ///< uint8..uint64
  BoolType = 8,
  IntTypes = SignedInts | UnsignedInts,
  NumericTypes = FloatTypes | IntTypes,
  AllTypes = NumericTypes | BoolType,
};

/// Calls Fn(TypeTag<T>{}) for the C++ type of Ty when Ty is in Set and
/// returns true; false (Fn not called) otherwise. Set is a template
/// argument so that Fn is instantiated only for the types it accepts.
template <unsigned Set, typename FnT>
bool dispatchType(ElementType Ty, FnT &&Fn) {
  switch (Ty) {
#define OOMPLAN_TYPE_CASE(ET, CT, S)                                           \
  case ElementType::ET:                                                        \
    if constexpr ((Set & (S)) != 0) {                                          \
      Fn(TypeTag<CT>{});                                                       \
      return true;                                                             \
    } else {                                                                   \
      return false;                                                            \
    }
    OOMPLAN_TYPE_CASE(Float, float, FloatTypes)
    OOMPLAN_TYPE_CASE(Double, double, FloatTypes)
    OOMPLAN_TYPE_CASE(Float16, Half, FloatTypes)
    OOMPLAN_TYPE_CASE(BFloat16, BFloat16, FloatTypes)
    OOMPLAN_TYPE_CASE(Int8, int8_t, SignedInts)
    OOMPLAN_TYPE_CASE(Int16, int16_t, SignedInts)
    OOMPLAN_TYPE_CASE(Int32, int32_t, SignedInts)
    OOMPLAN_TYPE_CASE(Int64, int64_t, SignedInts)
    OOMPLAN_TYPE_CASE(UInt8, uint8_t, UnsignedInts)
    OOMPLAN_TYPE_CASE(UInt16, uint16_t, UnsignedInts)
    OOMPLAN_TYPE_CASE(UInt32, uint32_t, UnsignedInts)
    OOMPLAN_TYPE_CASE(UInt64, uint64_t, UnsignedInts)
    OOMPLAN_TYPE_CASE(Bool, bool, BoolType)
#undef OOMPLAN_TYPE_CASE
  default:
    return false;
  }
}

/// The element types of a TypeSet, for Kernel::Types.
llvm::SmallVector<ElementType, 4> typesOf(unsigned Set);

/// Strides of a tensor with InDims when read as the broadcast OutDims
/// (right-aligned; 0 on a broadcast dim). Size: OutDims.size().
llvm::SmallVector<int64_t, 6> broadcastStrides(llvm::ArrayRef<int64_t> InDims,
                                               llvm::ArrayRef<int64_t> OutDims);

/// True when InDims broadcasts to OutDims.
bool broadcastsTo(llvm::ArrayRef<int64_t> InDims,
                  llvm::ArrayRef<int64_t> OutDims);

/// A run of output elements [Out, Out + Len) whose inputs start at Offs[k]
/// and advance by Steps[k] per element.
struct BroadcastRun {
  int64_t Out;
  int64_t Len;
  const int64_t *Offs;
  const int64_t *Steps;
};

/// Visits every element of OutDims once, in runs along the innermost dim,
/// with the element offset of each input (Ins[k]'s dims broadcast to
/// OutDims). Splits the work over Pool. Fn(const BroadcastRun &).
void forEachBroadcastRun(llvm::ArrayRef<int64_t> OutDims,
                         llvm::ArrayRef<llvm::ArrayRef<int64_t>> InDims,
                         ThreadPool &Pool,
                         llvm::function_ref<void(const BroadcastRun &)> Fn);

/// Elements per parallel chunk for cheap elementwise bodies.
constexpr int64_t ElementwiseGrain = 16384;

/// Copies In to Out unless they are the same bytes (views, Identity).
void copyUnlessAliased(const TensorRef &In, const TensorRef &Out);

/// Reads element I of an integer or bool tensor as int64 (axes, scalars);
/// false for other types.
bool readInt(const TensorRef &T, uint64_t I, int64_t &Out);
/// Reads element I of a numeric tensor as double; false for other types.
bool readDouble(const TensorRef &T, uint64_t I, double &Out);

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
