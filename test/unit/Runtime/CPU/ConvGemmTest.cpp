//===- ConvGemmTest.cpp - the convolution's own GEMM against a plain loop -===//
//
// convGemm (lib/Runtime/CPU/Kernels/ConvGemm.cpp) on shapes that reach
// every edge of its blocking: rows not a multiple of its 6-row tiles,
// columns that leave a last panel of at most 8 and of more than 8, depths
// over one k block (256), products wide enough to pack A (128 columns) and
// narrow ones that read it in place, strides wider than the matrices, bias
// with and without accumulation. The reference is a double-precision loop.
//
//===----------------------------------------------------------------------===//
#include "Kernels/ConvGemm.h"
#include "gtest/gtest.h"
#include <cmath>
#include <vector>

using namespace oomplan::runtime::cpu;

namespace {

float value(size_t I, float Scale) {
  return float(int64_t(I * 7919 % 23) - 11) * Scale;
}

TEST(ConvGemm, MatchesAPlainLoopAtEveryBlockingEdge) {
  struct Case {
    int64_t M, N, K;
    bool Accumulate, WithBias;
  } Cases[] = {{6, 16, 1, false, true},      {7, 17, 3, false, true},
               {13, 5, 300, true, true},     {1, 1, 1, false, false},
               {125, 140, 520, true, false}, {12, 200, 64, false, true},
               {30, 49, 700, false, true},   {5, 130, 257, true, true}};
  for (const Case &T : Cases) {
    // Strides wider than the matrices: nothing past a row's end is read
    // into the result or written.
    const int64_t Lda = T.K + 3, Ldb = T.N + 5, Ldc = T.N + 2;
    std::vector<float> A(size_t(T.M * Lda)), B(size_t(T.K * Ldb)),
        Bias(size_t(T.M)), C(size_t(T.M * Ldc));
    for (size_t I = 0; I < A.size(); ++I)
      A[I] = value(I, 0.125f);
    for (size_t I = 0; I < B.size(); ++I)
      B[I] = value(I + 5, 0.25f);
    for (size_t I = 0; I < Bias.size(); ++I)
      Bias[I] = value(I + 9, 0.5f);
    for (size_t I = 0; I < C.size(); ++I)
      C[I] = value(I + 2, 1.0f);
    std::vector<float> Before = C;
    convGemm(T.M, T.N, T.K, A.data(), Lda, B.data(), Ldb, C.data(), Ldc,
             T.WithBias ? Bias.data() : nullptr, T.Accumulate);
    SCOPED_TRACE(testing::Message()
                 << "M " << T.M << " N " << T.N << " K " << T.K);
    for (int64_t I = 0; I < T.M; ++I)
      for (int64_t J = 0; J < Ldc; ++J) {
        const size_t At = size_t(I * Ldc + J);
        if (J >= T.N) { // padding between rows: untouched
          ASSERT_EQ(C[At], Before[At]) << "row " << I << " column " << J;
          continue;
        }
        double Want = T.Accumulate ? Before[At] : 0.0;
        if (T.WithBias)
          Want += Bias[size_t(I)];
        for (int64_t P = 0; P < T.K; ++P)
          Want += double(A[size_t(I * Lda + P)]) * B[size_t(P * Ldb + J)];
        // Products of eighths and quarters of small integers, summed in
        // fp32: exact up to the rounding of partial sums near 2^24.
        ASSERT_NEAR(C[At], Want, 1e-3 * (1 + std::fabs(Want)))
            << "row " << I << " column " << J;
      }
  }
}

} // namespace
