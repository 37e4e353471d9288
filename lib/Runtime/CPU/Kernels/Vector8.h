//===- Vector8.h - eight-float vectors, lane-parallel sums ---*- C++ -*-===//
//
// The vector type of the kernels written with GCC's and Clang's vector
// extension (ConvGemm.cpp, DepthwiseBlocked.cpp, ConvWinograd.cpp): one AVX
// register in the x86-64-v3 clone of a function (OOMPLAN_SIMD_CLONES), two SSE
// registers in the baseline one. A vector goes to a cloned function by pointer,
// never by value: the argument's ABI differs between the clones.
//
// And sums in double over eight independent partial sums (LaneSums.cpp): one
// running sum is a chain of dependent additions, four cycles each; eight
// lanes vectorize. GlobalAveragePool and the normalizations' statistics.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_VECTOR8_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_VECTOR8_H

#include <cstdint>

namespace oomplan {
namespace runtime {
namespace cpu {

typedef float V8 __attribute__((vector_size(32)));
/// The same vector at any float alignment (rows of a matrix or a plane).
typedef float V8U __attribute__((vector_size(32), aligned(4)));

/// Two-vector shuffles by constant lanes (0-7 of A, 8-15 of B), in GCC's
/// and Clang's spelling.
typedef int V8I __attribute__((vector_size(32)));
#if defined(__clang__)
#define OOMPLAN_SHUFFLE8(A, B, ...) __builtin_shufflevector(A, B, __VA_ARGS__)
#else
#define OOMPLAN_SHUFFLE8(A, B, ...) __builtin_shuffle(A, B, V8I{__VA_ARGS__})
#endif

/// V's floats 2-3 and 4-5 swapped as pairs, in place: (0, 1, 4, 5, 2, 3, 6,
/// 7), its own inverse. The order that splitting two vectors' even and odd
/// floats within each 128-bit half leaves (one vshufps each, where a split
/// across the halves takes two vpermd and a blend, slow on some cores), put
/// back with one vpermpd. In place: a vector is no value argument or result
/// of the kernels' cloned functions (above).
inline __attribute__((always_inline)) void swapMiddlePairs(V8 &V) {
  typedef double V4D __attribute__((vector_size(32)));
  const V4D Pairs = (V4D)V; // a bit cast between vectors of one size
#if defined(__clang__)
  V = (V8)__builtin_shufflevector(Pairs, Pairs, 0, 2, 1, 3);
#else
  typedef long long V4L __attribute__((vector_size(32)));
  V = (V8)__builtin_shuffle(Pairs, V4L{0, 2, 1, 3});
#endif
}

/// The sum of X[0, N) in double.
double sumInDouble(const float *X, int64_t N);
double sumInDouble(const double *X, int64_t N);
/// The sum of (X[i] - Mean)^2 over [0, N) in double.
double squaredDeviations(const float *X, int64_t N, double Mean);
double squaredDeviations(const double *X, int64_t N, double Mean);

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
