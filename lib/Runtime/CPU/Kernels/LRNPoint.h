//===- LRNPoint.h - one element of local response normalization -*- C++ -*-===//
//
// LRN at one element of [N, C, spatial...]: its value over
// (bias + alpha / size * the sum of squares of the channels from
// c - floor((size - 1) / 2) to c + ceil((size - 1) / 2), clipped to the
// channels there are) ^ beta, in double as ONNX's reference. In plain
// types, so that the CPU kernel (Norm.cpp) and the CUDA kernel (CUDA/
// Kernels/Reduce.cu) share one definition.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_LRNPOINT_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_LRNPOINT_H

#include <cstdint>
#include <math.h>

#ifdef __CUDACC__
#define OOMPLAN_LRN_HD __host__ __device__
#else
#define OOMPLAN_LRN_HD
#endif

namespace oomplan {
namespace runtime {
namespace lrn {

struct Params {
  int64_t Channels = 0, Plane = 0; ///< C, and the product of spatial dims.
  int64_t Size = 1;
  double Alpha = 1e-4, Beta = 0.75, Bias = 1.0;
};

/// The normalized value of element At of X (row-major [N, C, Plane]).
template <typename T>
OOMPLAN_LRN_HD inline T at(const Params &P, const T *X, int64_t At) {
  const int64_t I = At % P.Plane, NC = At / P.Plane;
  const int64_t N = NC / P.Channels, Cc = NC % P.Channels;
  const int64_t Lo = (P.Size - 1) / 2, Hi = P.Size - 1 - Lo;
  const int64_t From = Cc - Lo < 0 ? 0 : Cc - Lo,
                To = Cc + Hi > P.Channels - 1 ? P.Channels - 1 : Cc + Hi;
  double Sq = 0;
  for (int64_t K = From; K <= To; ++K) {
    double V = double(X[(N * P.Channels + K) * P.Plane + I]);
    Sq += V * V;
  }
  return T(double(X[At]) / pow(P.Bias + P.Alpha / double(P.Size) * Sq, P.Beta));
}

} // namespace lrn
} // namespace runtime
} // namespace oomplan

#endif
