//===- Normalize.cu - LpNormalization, MeanVarianceNormalization ----------===//
//
// The two normalizations whose statistics are not one contiguous row
// (LayerNormalization's, Reduce.cu): LpNormalization's norm runs along
// one axis with the others' elements between (a thread per line, the
// line's walk ThreadMath.h's), MeanVarianceNormalization's statistics over
// any set of axes (default N, H, W: one group per channel, its elements
// scattered over the batch). MVN takes a block per group: the block sums x
// and x^2 over the group's elements in double (the CPU kernel's
// accumulator), then writes (x - mean) / (std + 1e-9) with the CPU's
// formula, ONNX's function body.
//
//===----------------------------------------------------------------------===//
#include "BlockReduce.cuh"
#include "Launching.cuh"
#include "ThreadMath.h"
#include <cuda_runtime.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
__global__ void lpNormKernel(const float *X, float *Y, int64_t Lines, int64_t D,
                             int64_t Inner, int P) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Lines;
       I += int64_t(gridDim.x) * blockDim.x)
    thread::lpNormLine(X, Y, D, Inner, P, I);
}

__global__ void mvnKernel(const float *X, float *Y, ReduceAxes A) {
  __shared__ double Shared[32];
  for (int64_t G = blockIdx.x; G < A.Outputs; G += gridDim.x) {
    const int64_t Base = thread::keptOffset(A, G);
    double Sum = 0, Sq = 0;
    for (int64_t R = threadIdx.x; R < A.Reduced; R += blockDim.x) {
      const double V = X[Base + thread::reducedOffset(A, R)];
      Sum += V;
      Sq += V * V;
    }
    Sum = blockSumDouble(Sum, Shared);
    Sq = blockSumDouble(Sq, Shared);
    const double Count = double(A.Reduced), Mean = Sum / Count;
    const double Var = Sq / Count - Mean * Mean;
    const double Std = sqrt(Var > 0 ? Var : 0.0);
    for (int64_t R = threadIdx.x; R < A.Reduced; R += blockDim.x) {
      const int64_t At = Base + thread::reducedOffset(A, R);
      Y[At] = float((double(X[At]) - Mean) / (Std + 1e-9));
    }
  }
}
} // namespace

int lpNormalize(const float *X, float *Y, int64_t Outer, int64_t D,
                int64_t Inner, int P, cudaStream_t Stream) {
  const int64_t Lines = Outer * Inner;
  if (Lines == 0 || D == 0)
    return 0;
  lpNormKernel<<<gridFor(Lines), Block, 0, Stream>>>(X, Y, Lines, D, Inner, P);
  return lastError();
}

int meanVarianceNormalize(const float *X, float *Y, const ReduceAxes &A,
                          cudaStream_t Stream) {
  if (A.Outputs == 0 || A.Reduced == 0)
    return 0;
  const int Grid = int(A.Outputs < 65535 ? A.Outputs : 65535);
  mvnKernel<<<Grid, Block, 0, Stream>>>(X, Y, A);
  return lastError();
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
