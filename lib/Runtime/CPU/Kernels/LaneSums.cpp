//===- LaneSums.cpp - sums in double over eight partial sums --------------===//
//
// See Vector8.h. The partial sums are combined pairwise in a fixed order, so
// a result depends only on the values, not on the machine's vector width.
//
//===----------------------------------------------------------------------===//
#include "Elementwise.h"
#include "Vector8.h"

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

double combine(const double *A) {
  return ((A[0] + A[1]) + (A[2] + A[3])) + ((A[4] + A[5]) + (A[6] + A[7]));
}

template <typename T>
OOMPLAN_SIMD_CLONES double laneSum(const T *X, int64_t N) {
  double A[8] = {};
  int64_t I = 0;
  for (; I + 8 <= N; I += 8)
    for (int L = 0; L < 8; ++L)
      A[L] += double(X[I + L]);
  double S = combine(A);
  for (; I < N; ++I)
    S += double(X[I]);
  return S;
}

template <typename T>
OOMPLAN_SIMD_CLONES double laneSquares(const T *X, int64_t N, double Mean) {
  double A[8] = {};
  int64_t I = 0;
  for (; I + 8 <= N; I += 8)
    for (int L = 0; L < 8; ++L) {
      const double D = double(X[I + L]) - Mean;
      A[L] += D * D;
    }
  double S = combine(A);
  for (; I < N; ++I) {
    const double D = double(X[I]) - Mean;
    S += D * D;
  }
  return S;
}

} // namespace

double sumInDouble(const float *X, int64_t N) { return laneSum(X, N); }
double sumInDouble(const double *X, int64_t N) { return laneSum(X, N); }
double squaredDeviations(const float *X, int64_t N, double Mean) {
  return laneSquares(X, N, Mean);
}
double squaredDeviations(const double *X, int64_t N, double Mean) {
  return laneSquares(X, N, Mean);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
