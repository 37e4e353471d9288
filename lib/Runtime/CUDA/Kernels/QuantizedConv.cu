//===- QuantizedConv.cu - ConvInteger and QLinearConv ---------------------===//
//
// A thread per output element sums its window over its group's input
// channels, operands less their zero points, exactly in 64-bit integers
// (ThreadMath.h's qConvSum, emulated on the host by ThreadMathTest.cpp
// against the CPU kernel), then stores it as int32 or requantized with its
// channel's scale and bias (qConvStore). A direct convolution: cuDNN's
// int8 convolutions take neither zero points nor this requantization, and
// a QOperator model's convolutions otherwise ran as host steps (their
// operands copied to the host and back, with a wait, at every run).
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include "ThreadMath.h"
#include <cuda_runtime.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
__global__ void qConvKernel(QConvArgs P, int64_t Total) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Total;
       I += int64_t(gridDim.x) * blockDim.x)
    thread::qConvStore(P, I, thread::qConvSum(P, I));
}
} // namespace

int quantizedConv(const QConvArgs &P, cudaStream_t Stream) {
  const int64_t Total = P.N * P.M * P.OutSize;
  if (Total == 0)
    return 0;
  qConvKernel<<<gridFor(Total), Block, 0, Stream>>>(P, Total);
  return lastError();
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
