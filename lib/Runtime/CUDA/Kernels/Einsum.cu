//===- Einsum.cu - Einsum as the CPU kernel's one loop --------------------===//
//
// One thread per output element sums the operands' product over the
// summed labels, in the CPU kernel's order and type (Einsum.cpp), from the
// same setup (cpu::einsumSetup): any equation, at the product of all label
// sizes; exports use it for small contractions (T5's relative positions,
// MoE gates).
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include <cstdint>
#include <cuda_runtime.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
template <typename T>
__global__ void einsumKernel(EinsumArgs A, T *Y, int64_t NOut, int64_t NSum) {
  for (int64_t O = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; O < NOut;
       O += int64_t(gridDim.x) * blockDim.x) {
    int64_t Base[EinsumArgs::MaxOps] = {}, Rem = O;
    for (int K = A.OutRank - 1; K >= 0; --K) {
      const int64_t X = Rem % A.OutDims[K];
      Rem /= A.OutDims[K];
      for (int P = 0; P < A.NOp; ++P)
        Base[P] += X * A.OutStride[P][K];
    }
    T Acc = T(0);
    for (int64_t S = 0; S < NSum; ++S) {
      int64_t Off[EinsumArgs::MaxOps], R = S;
      for (int P = 0; P < A.NOp; ++P)
        Off[P] = Base[P];
      for (int K = A.SumRank - 1; K >= 0; --K) {
        const int64_t X = R % A.SumDims[K];
        R /= A.SumDims[K];
        for (int P = 0; P < A.NOp; ++P)
          Off[P] += X * A.SumStride[P][K];
      }
      T Prod = T(1);
      for (int P = 0; P < A.NOp; ++P)
        Prod = T(Prod * static_cast<const T *>(A.Data[P])[Off[P]]);
      Acc = T(Acc + Prod);
    }
    Y[O] = Acc;
  }
}
} // namespace

int einsum(const EinsumArgs &A, DType T, void *Y, cudaStream_t Stream) {
  int64_t NOut = 1, NSum = 1;
  for (int K = 0; K < A.OutRank; ++K)
    NOut *= A.OutDims[K];
  for (int K = 0; K < A.SumRank; ++K)
    NSum *= A.SumDims[K];
  if (NOut == 0)
    return 0;
  const int G = gridFor(NOut);
  switch (T) {
  case DType::F32:
    einsumKernel<float>
        <<<G, Block, 0, Stream>>>(A, static_cast<float *>(Y), NOut, NSum);
    break;
  case DType::F64:
    einsumKernel<double>
        <<<G, Block, 0, Stream>>>(A, static_cast<double *>(Y), NOut, NSum);
    break;
  case DType::I32:
    einsumKernel<int32_t>
        <<<G, Block, 0, Stream>>>(A, static_cast<int32_t *>(Y), NOut, NSum);
    break;
  case DType::I64:
    einsumKernel<int64_t>
        <<<G, Block, 0, Stream>>>(A, static_cast<int64_t *>(Y), NOut, NSum);
    break;
  default:
    return int(cudaErrorInvalidValue);
  }
  return lastError();
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
