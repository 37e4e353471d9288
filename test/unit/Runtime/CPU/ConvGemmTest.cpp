//===- ConvGemmTest.cpp - the convolution's own GEMM against a plain loop -===//
//
// convGemm (lib/Runtime/CPU/Kernels/ConvGemm.cpp) on shapes that reach
// every edge of its blocking: rows not a multiple of its 6-row tiles (a
// last tile of each of 1 to 5 rows), columns that leave a last panel of at
// most 8 and of more than 8, depths over one k block (256), products wide
// enough to pack A (128 columns) and narrow ones that read it in place,
// blocks of at most 48 rows that read B's whole panels in place (the 30-row
// case), strides wider than the matrices, bias with and without
// accumulation. The reference is a double-precision loop.
//
//===----------------------------------------------------------------------===//
#include "Kernels/ConvGemm.h"
#include "gtest/gtest.h"
#include <cmath>
#include <cstring>
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
  } Cases[] = {{6, 16, 1, false, true},
               {7, 17, 3, false, true},
               {13, 5, 300, true, true},
               {1, 1, 1, false, false},
               {125, 140, 520, true, false},
               {12, 200, 64, false, true},
               {30, 49, 700, false, true},
               {5, 130, 257, true, true},
               // Last row tiles of 2, 3 and 4 rows (their own tiles, which
               // read and write only those rows), in place and packed.
               {32, 50, 40, true, true},
               {9, 20, 10, true, false},
               {16, 130, 30, false, true}};
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

// A column's value does not depend on the panel it falls in: the last one
// to four columns go through tailColumns (vectors down the rows), the rest
// through the register tiles, and each must equal, bit for bit, the same
// column computed in a whole 16-column panel. Two k blocks and two row
// blocks (M over 120), rows not a multiple of six, bias, accumulation and
// a clamp that cuts some sums.
TEST(ConvGemm, TailColumnsEqualTheSameColumnsInAWholePanel) {
  const int64_t M = 125, K = 300, Wide = 64;
  std::vector<float> A(size_t(M * K)), B(size_t(K * Wide)),
      Bias(static_cast<size_t>(M)), C0(size_t(M * Wide));
  for (size_t I = 0; I < A.size(); ++I)
    A[I] = value(I, 0.37f) + 0.01f * float(I % 13);
  for (size_t I = 0; I < B.size(); ++I)
    B[I] = value(I + 3, 0.29f) - 0.003f * float(I % 7);
  for (size_t I = 0; I < Bias.size(); ++I)
    Bias[I] = value(I + 1, 0.5f);
  for (size_t I = 0; I < C0.size(); ++I)
    C0[I] = value(I + 4, 0.75f);
  const ConvClamp Clamp{-3.0f, 2.5f};
  for (bool Accumulate : {false, true})
    for (const ConvClamp *Cl : {(const ConvClamp *)nullptr, &Clamp}) {
      std::vector<float> Whole = C0;
      convGemm(M, Wide, K, A.data(), K, B.data(), Wide, Whole.data(), Wide,
               Bias.data(), Accumulate, Cl);
      for (int64_t N : {49, 50, 51, 52, 1, 4}) {
        std::vector<float> Part = C0;
        convGemm(M, N, K, A.data(), K, B.data(), Wide, Part.data(), Wide,
                 Bias.data(), Accumulate, Cl);
        SCOPED_TRACE(testing::Message() << "N " << N << " accumulate "
                                        << Accumulate << " clamp " << !!Cl);
        for (int64_t I = 0; I < M; ++I)
          for (int64_t J = 0; J < Wide; ++J) {
            const size_t At = size_t(I * Wide + J);
            // Columns past N untouched; the rest bit-identical.
            const float Want = J < N ? Whole[At] : C0[At];
            ASSERT_EQ(std::memcmp(&Part[At], &Want, sizeof(float)), 0)
                << "row " << I << " column " << J << ": " << Part[At]
                << " against " << Want;
          }
      }
    }
}

// convGemmImages equals convGemm image by image, bit for bit, whatever the
// images' strides (here wider than the products, the gaps untouched).
TEST(ConvGemm, ImagesEqualOneProductPerImage) {
  const int64_t M = 40, N = 49, K = 70, Images = 3;
  const int64_t BStride = K * N + 11, CStride = M * N + 5;
  std::vector<float> A(size_t(M * K)), B(size_t(Images * BStride)),
      Bias(static_cast<size_t>(M)), C0(size_t(Images * CStride));
  for (size_t I = 0; I < A.size(); ++I)
    A[I] = value(I, 0.31f) + 0.002f * float(I % 17);
  for (size_t I = 0; I < B.size(); ++I)
    B[I] = value(I + 6, 0.23f);
  for (size_t I = 0; I < Bias.size(); ++I)
    Bias[I] = value(I + 2, 0.5f);
  for (size_t I = 0; I < C0.size(); ++I)
    C0[I] = value(I + 8, 1.0f);
  for (bool Accumulate : {false, true}) {
    std::vector<float> Each = C0, All = C0;
    for (int64_t Img = 0; Img < Images; ++Img)
      convGemm(M, N, K, A.data(), K, B.data() + Img * BStride, N,
               Each.data() + Img * CStride, N, Bias.data(), Accumulate);
    convGemmImages(M, N, K, A.data(), K, B.data(), N, All.data(), N,
                   Bias.data(), Accumulate, nullptr, Images, BStride, CStride);
    ASSERT_EQ(std::memcmp(Each.data(), All.data(), All.size() * sizeof(float)),
              0)
        << "accumulate " << Accumulate;
    // And the products are the products: one element against a plain sum.
    double Want =
        (Accumulate ? C0[size_t(CStride + 3 * N + 7)] : 0.0) + Bias[3];
    for (int64_t P = 0; P < K; ++P)
      Want += double(A[size_t(3 * K + P)]) * B[size_t(BStride + P * N + 7)];
    EXPECT_NEAR(All[size_t(CStride + 3 * N + 7)], Want,
                1e-4 * (1 + std::fabs(Want)));
  }
}

} // namespace
