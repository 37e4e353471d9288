//===- RecurrentDriver.h - what a recurrent op queues, in order -*- C++ -*-===//
//
// The CUDA recurrent kernel's host side (RecurrentKernels.cpp) as a
// sequence of calls on a RecurrentQueue: per direction the states' start,
// per time step the gates' two products (three for GRU, around its reset
// gate) and the cell's update, then the final states. The CUDA queue
// sends them to cuBLAS and Recurrent.cu; a test's queue runs them on the
// host (a column-major SGEMM with cuBLAS's argument contract, and the
// kernels' per-element bodies from Kernels/ThreadMath.h), so the offsets,
// leading dimensions and order are checked against the CPU kernel on
// machines without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_RECURRENTDRIVER_H
#define OOMPLAN_LIB_RUNTIME_CUDA_RECURRENTDRIVER_H

#include "../CPU/Kernels/TensorUtil.h"
#include "Kernels/Launch.h"
#include "llvm/Support/Error.h"

namespace oomplan {
namespace runtime {
namespace cuda {

/// cuBLAS's column-major SGEMM (alpha 1): C = op(A) op(B) + Beta C, with C
/// M x N, op(A) M x K, op(B) K x N, and leading dimensions as cuBLAS reads
/// them.
struct SgemmArgs {
  bool TransA = false, TransB = false;
  int64_t M = 0, N = 0, K = 0;
  const float *A = nullptr;
  int64_t LdA = 0;
  const float *B = nullptr;
  int64_t LdB = 0;
  float Beta = 0;
  float *C = nullptr;
  int64_t LdC = 0;
};

/// Row-major Y (M x N, leading dimension LdY) = Beta Y + X W^T, X M x K
/// (leading dimension LdX), W N x K (leading dimension K), as a
/// column-major call: Y^T = W X^T, where W read column-major is W^T (op T
/// gives W) and X read so is X^T.
inline SgemmArgs productBT(int64_t M, int64_t N, int64_t K, const float *X,
                           int64_t LdX, const float *W, float Beta, float *Y,
                           int64_t LdY) {
  // TransA, TransB, M, N, K, A, LdA, B, LdB, Beta, C, LdC.
  return SgemmArgs{true, false, N, M, K, W, K, X, LdX, Beta, Y, LdY};
}

/// What a recurrent op's steps queue, in order, on one stream.
class RecurrentQueue {
public:
  virtual ~RecurrentQueue() = default;
  /// K > 0; the driver zeroes instead when K is 0 (cuBLAS's leading
  /// dimensions need K > 0).
  virtual llvm::Error sgemm(const SgemmArgs &G) = 0;
  /// Rows x Cols floats of a matrix with leading dimension Ld set to 0.
  virtual llvm::Error zero(float *Y, int64_t Rows, int64_t Cols,
                           int64_t Ld) = 0;
  virtual llvm::Error start(const RecurrentArgs &A, const float *H0,
                            const float *C0) = 0;
  virtual llvm::Error reset(const RecurrentArgs &A) = 0;
  virtual llvm::Error step(const RecurrentArgs &A, int64_t Ti, float *Y) = 0;
  virtual llvm::Error finish(const RecurrentArgs &A, float *Yh, float *Yc) = 0;
};

/// Queues the op of C, set up as S (cpu::recurrentSetup), on Q: its gates,
/// states and temporaries at States (B x H x (gates + 4) floats).
llvm::Error queueRecurrent(const KernelContext &C, const cpu::RecurrentSetup &S,
                           float *States, RecurrentQueue &Q);

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
