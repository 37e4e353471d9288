//===- Gemm.h - one row-major GEMM for every element type -------*- C++ -*-===//
//
// C = alpha * op(A) * op(B) + beta * C, row-major. float and double go to
// OpenBLAS (the issue forbids a hand-written float GEMM); the integer types
// ONNX's MatMul and Gemm tests use get a plain loop, since BLAS has none.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_GEMM_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_GEMM_H

#include <atomic>
#include <cblas.h>
#include <cstdint>
#include <type_traits>

namespace oomplan {
namespace runtime {
namespace cpu {

/// Makes OpenBLAS use the run's thread count (--threads), so a run with N
/// threads uses N cores in GEMM as in every other kernel. Cheap when the
/// count is unchanged, which is every call after the first.
inline void useBlasThreads(unsigned N) {
  static std::atomic<unsigned> Current{0};
  if (N && Current.exchange(N) != N)
    openblas_set_num_threads(int(N));
}

template <typename T>
void gemm(bool TransA, bool TransB, int64_t M, int64_t N, int64_t K, T Alpha,
          const T *A, int64_t Lda, const T *B, int64_t Ldb, T Beta, T *C,
          int64_t Ldc) {
  if (M == 0 || N == 0)
    return;
  if constexpr (std::is_same<T, float>::value) {
    cblas_sgemm(CblasRowMajor, TransA ? CblasTrans : CblasNoTrans,
                TransB ? CblasTrans : CblasNoTrans, blasint(M), blasint(N),
                blasint(K), Alpha, A, blasint(Lda), B, blasint(Ldb), Beta, C,
                blasint(Ldc));
  } else if constexpr (std::is_same<T, double>::value) {
    cblas_dgemm(CblasRowMajor, TransA ? CblasTrans : CblasNoTrans,
                TransB ? CblasTrans : CblasNoTrans, blasint(M), blasint(N),
                blasint(K), Alpha, A, blasint(Lda), B, blasint(Ldb), Beta, C,
                blasint(Ldc));
  } else {
    for (int64_t I = 0; I < M; ++I)
      for (int64_t J = 0; J < N; ++J) {
        T Acc = 0;
        for (int64_t P = 0; P < K; ++P)
          Acc += (TransA ? A[P * Lda + I] : A[I * Lda + P]) *
                 (TransB ? B[J * Ldb + P] : B[P * Ldb + J]);
        T &Out = C[I * Ldc + J];
        Out = T(Alpha * Acc + (Beta == T(0) ? T(0) : T(Beta * Out)));
      }
  }
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
