//===- Gemm.h - one row-major GEMM for every element type -------*- C++ -*-===//
//
// C = alpha * op(A) * op(B) + beta * C, row-major. float and double go to
// OpenBLAS (the issue forbids a hand-written float GEMM); the integer types
// ONNX's MatMul and Gemm tests use get a plain loop, since BLAS has none.
// parallelGemm splits one GEMM into tiles over the run's thread pool.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_GEMM_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_GEMM_H

#include "oomplan/Runtime/Kernel.h"
#include <algorithm>
#include <cblas.h>
#include <cstdint>
#include <type_traits>

namespace oomplan {
namespace runtime {
namespace cpu {

/// One owner of the threads: our pool (--threads). OpenBLAS runs
/// single-threaded inside each pool thread; big GEMMs are split into tiles
/// by parallelGemm. Letting OpenBLAS start its own threads as well left its
/// workers spinning in sched_yield between calls, taking the cores from the
/// pool threads that run im2col and the elementwise kernels, so that two
/// threads ran slower than one. The argument is the run's thread count,
/// kept so that callers state what they use; the BLAS count is always 1.
inline void useBlasThreads(unsigned) {
  static const bool Once = (openblas_set_num_threads(1), true);
  (void)Once;
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

/// Below this many multiply-adds a GEMM runs on the calling thread: waking
/// the pool costs more than the work (about 10 us of one core).
constexpr int64_t ParallelGemmMinWork = int64_t(1) << 18;

/// gemm split over the pool: the output's columns (or, when it has fewer
/// columns than rows, its rows) are cut into one tile per thread, each
/// a single-threaded GEMM on its own slice of C. The tiles depend only on
/// the shapes and the thread count, and K is never split, so a run is
/// bit-reproducible at a given --threads (what --check=unplanned needs).
/// Init, when given, runs on each tile first (rows [M0, M1),
/// columns [N0, N1) of C), so that a bias fill happens on the thread and in
/// the cache that then accumulates into it; Post, when given, runs on each
/// tile after its product (a fused epilogue, while the tile is in cache).
/// Must not be called inside a parallelFor.
template <typename T>
void parallelGemm(
    ThreadPool &Pool, bool TransA, bool TransB, int64_t M, int64_t N, int64_t K,
    T Alpha, const T *A, int64_t Lda, const T *B, int64_t Ldb, T Beta, T *C,
    int64_t Ldc,
    llvm::function_ref<void(int64_t, int64_t, int64_t, int64_t)> Init = {},
    llvm::function_ref<void(int64_t, int64_t, int64_t, int64_t)> Post = {}) {
  const int64_t Threads = Pool.threads();
  const bool Big = M * N * std::max<int64_t>(K, 1) >= ParallelGemmMinWork;
  // Columns in multiples of 16 floats (one AVX-512 vector) so no two tiles
  // share a cache line of C; rows whole.
  const bool ByCols = N >= M;
  const int64_t Extent = ByCols ? N : M, Align = ByCols ? 16 : 1;
  int64_t Parts = Threads > 1 && Big ? Threads : 1;
  int64_t Step = (Extent + Parts - 1) / Parts;
  Step = (Step + Align - 1) / Align * Align;
  Parts = Step ? (Extent + Step - 1) / Step : 1;
  auto Tile = [&](int64_t P0, int64_t P1) {
    for (int64_t P = P0; P < P1; ++P) {
      int64_t Lo = P * Step, Hi = std::min(Extent, Lo + Step);
      if (Lo >= Hi)
        continue;
      int64_t M0 = ByCols ? 0 : Lo, M1 = ByCols ? M : Hi;
      int64_t N0 = ByCols ? Lo : 0, N1 = ByCols ? Hi : N;
      if (Init)
        Init(M0, M1, N0, N1);
      const T *AT = TransA ? A + M0 : A + M0 * Lda;
      const T *BT = TransB ? B + N0 * Ldb : B + N0;
      gemm<T>(TransA, TransB, M1 - M0, N1 - N0, K, Alpha, AT, Lda, BT, Ldb,
              Beta, C + M0 * Ldc + N0, Ldc);
      if (Post)
        Post(M0, M1, N0, N1);
    }
  };
  if (Parts <= 1)
    Tile(0, 1);
  else
    Pool.parallelFor(Parts, 1, Tile);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
