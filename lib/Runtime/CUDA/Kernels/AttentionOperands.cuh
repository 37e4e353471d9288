//===- AttentionOperands.cuh - attention operands at a batch -*- CUDA -*-===//
//
// Shared by the row kernel (Attention.cu) and the tiled one
// (AttentionTiles.cu): each operand's element offset at a batch index, the
// sum over the batch axes of index * BatchStride (Launch.h's contract), and
// the operands' pointers. Bias and Mask keep their pointers bare: their
// offset goes into each score's index.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_ATTENTIONOPERANDS_CUH
#define OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_ATTENTIONOPERANDS_CUH

#include "Launch.h"

namespace oomplan {
namespace runtime {
namespace cuda {

struct AttentionOperands {
  int64_t Off[5] = {0, 0, 0, 0, 0};
  const float *Q, *K, *V, *Bias;
  const unsigned char *Mask;
};

__device__ inline AttentionOperands operandsAt(const AttentionArgs &A,
                                               int64_t B) {
  AttentionOperands P;
  for (int64_t Rem = B, Ax = A.NB - 1; Ax >= 0; --Ax) {
    int64_t I = Rem % A.BatchDims[Ax];
    Rem /= A.BatchDims[Ax];
    for (int O = 0; O < 5; ++O)
      P.Off[O] += I * A.BatchStride[O][Ax];
  }
  P.Q = static_cast<const float *>(A.Data[0]) + P.Off[0];
  P.K = static_cast<const float *>(A.Data[1]) + P.Off[1];
  P.V = static_cast<const float *>(A.Data[2]) + P.Off[2];
  P.Bias = static_cast<const float *>(A.Data[3]);
  P.Mask = static_cast<const unsigned char *>(A.Data[4]);
  return P;
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
