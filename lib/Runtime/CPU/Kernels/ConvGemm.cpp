//===- ConvGemm.cpp - the float convolution's own GEMM --------------------===//
//
// See ConvGemm.h. The classic blocking of a register-tiled GEMM: a 6 x 16
// tile of C lives in twelve 8-float registers while k runs over a block of
// KC; the tile's 16-column panel of B is copied once per block of MC rows
// into a zero-padded buffer (KC x 16 floats, 16 KiB, in L1) that the tiles
// below it reuse; A is packed six rows at a time, k-major, one block of MC
// rows at a time, when the product is wide enough to repay the copy, else
// read in place. C is loaded (with the bias added, or not at all) and
// stored once per k block, through a small buffer only at its edges.
//
//===----------------------------------------------------------------------===//
#include "ConvGemm.h"
#include "Elementwise.h"
#include "Vector8.h"
#include <algorithm>
#include <cstring>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

constexpr int MR = 6;
constexpr int NR = 16;
/// A k block: the packed B panel (KC x 16 floats, 16 KiB) fits in L1 beside
/// the A rows streaming past it.
constexpr int64_t KC = 256;
/// Rows of A packed at a time (120 KiB at KC, L2-sized).
constexpr int64_t MC = 120;
/// Products narrower than this read A in place: packing A costs one copy
/// of it per call, which only enough column panels repay.
constexpr int64_t PackAMinColumns = 128;

/// The 6 x 8*NV tile of C at C (row stride Ldc): Acc = C (Load) or 0, plus
/// Bias[row] when given, plus the sum over Kc of A's six rows times B's
/// 8*NV columns. A row I, column K is
/// at A[I * RS + K * KS] (packed: RS 1, KS 6; in place: RS Lda, KS 1); B
/// is packed, 16 floats per k. Clamp, when given, clamps the sums as they
/// are stored.
template <int NV>
inline __attribute__((always_inline)) void
tile(int64_t Kc, const float *__restrict A, int64_t RS, int64_t KS,
     const float *__restrict B, float *__restrict C, int64_t Ldc, bool Load,
     const float *Bias, const ConvClamp *Clamp) {
  V8 Acc[MR][NV];
#pragma GCC unroll 6
  for (int I = 0; I < MR; ++I)
#pragma GCC unroll 2
    for (int V = 0; V < NV; ++V) {
      Acc[I][V] =
          Load ? *reinterpret_cast<const V8U *>(C + I * Ldc + 8 * V) : V8{};
      if (Bias)
        Acc[I][V] += Bias[I];
    }
  for (int64_t K = 0; K < Kc; ++K) {
    V8 BV[NV];
#pragma GCC unroll 2
    for (int V = 0; V < NV; ++V)
      BV[V] = *reinterpret_cast<const V8 *>(B + K * NR + 8 * V);
#pragma GCC unroll 6
    for (int I = 0; I < MR; ++I) {
      const float AV = A[I * RS + K * KS];
#pragma GCC unroll 2
      for (int V = 0; V < NV; ++V)
        Acc[I][V] += AV * BV[V];
    }
  }
  if (Clamp) {
    const V8 Lo = V8{} + Clamp->Lo, Hi = V8{} + Clamp->Hi;
#pragma GCC unroll 6
    for (int I = 0; I < MR; ++I)
#pragma GCC unroll 2
      for (int V = 0; V < NV; ++V) {
        // The unfused kernels' comparisons, so that NaN stays NaN.
        Acc[I][V] = Acc[I][V] < Lo ? Lo : Acc[I][V];
        Acc[I][V] = Hi < Acc[I][V] ? Hi : Acc[I][V];
      }
  }
#pragma GCC unroll 6
  for (int I = 0; I < MR; ++I)
#pragma GCC unroll 2
    for (int V = 0; V < NV; ++V)
      *reinterpret_cast<V8U *>(C + I * Ldc + 8 * V) = Acc[I][V];
}

} // namespace

OOMPLAN_SIMD_CLONES void convGemm(int64_t M, int64_t N, int64_t K,
                                  const float *A, int64_t Lda, const float *B,
                                  int64_t Ldb, float *C, int64_t Ldc,
                                  const float *Bias, bool Accumulate,
                                  const ConvClamp *Clamp) {
  if (M <= 0 || N <= 0)
    return;
  // Packed operands and one tile of C, on the stack (137 KiB): a tile at
  // C's edge goes through CT, so that no load or store passes row M or
  // column N.
  alignas(32) float AP[MC * KC];
  alignas(32) float BP[KC * NR];
  alignas(32) float CT[MR * NR];
  alignas(32) float Zero[MR] = {};
  const bool PackA = N >= PackAMinColumns;
  for (int64_t K0 = 0; K0 < std::max<int64_t>(K, 1); K0 += KC) {
    const int64_t Kc = std::min(KC, K - K0);
    const bool First = K0 == 0;
    // Clamped at the last k block only: a partial sum is no output.
    const ConvClamp *ClampK = K0 + KC >= K ? Clamp : nullptr;
    for (int64_t I0 = 0; I0 < M; I0 += MC) {
      const int64_t Mc = std::min(MC, M - I0);
      if (PackA) // six rows at a time, k-major, rows past M zero
        for (int64_t T = 0; T < Mc; T += MR)
          for (int64_t R = 0; R < MR; ++R) {
            float *Dst = AP + T * Kc + R;
            if (T + R >= Mc) {
              for (int64_t Kk = 0; Kk < Kc; ++Kk)
                Dst[Kk * MR] = 0.0f;
              continue;
            }
            const float *Src = A + (I0 + T + R) * Lda + K0;
            for (int64_t Kk = 0; Kk < Kc; ++Kk)
              Dst[Kk * MR] = Src[Kk];
          }
      for (int64_t J = 0; J < N; J += NR) {
        const int64_t Nr = std::min<int64_t>(NR, N - J);
        if (Nr == NR)
          for (int64_t Kk = 0; Kk < Kc; ++Kk) {
            if (J + 2 * NR <= N)
              __builtin_prefetch(B + (K0 + Kk) * Ldb + J + NR, 0, 3);
            const V8U *Src =
                reinterpret_cast<const V8U *>(B + (K0 + Kk) * Ldb + J);
            V8 *Dst = reinterpret_cast<V8 *>(BP + Kk * NR);
            Dst[0] = Src[0];
            Dst[1] = Src[1];
          }
        else
          for (int64_t Kk = 0; Kk < Kc; ++Kk) {
            const float *Src = B + (K0 + Kk) * Ldb + J;
            float *Dst = BP + Kk * NR;
            for (int64_t X = 0; X < NR; ++X)
              Dst[X] = X < Nr ? Src[X] : 0.0f;
          }
        for (int64_t T = 0; T < Mc; T += MR) {
          const int64_t Mr = std::min<int64_t>(MR, Mc - T);
          const int64_t Row = I0 + T;
          const float *BiasT = First && Bias ? Bias + Row : nullptr;
          if (BiasT && Mr < MR) { // no bias read past row M
            std::copy(BiasT, BiasT + Mr, Zero);
            BiasT = Zero;
          }
          const bool Load = !First || Accumulate;
          // A's six rows, packed (RS 1, KS 6) or in place (RS Lda, KS 1). In
          // place, a partial tile would read rows past M: it is packed
          // alone, zero-padded.
          const float *AT = PackA ? AP + T * Kc : A + Row * Lda + K0;
          int64_t RS = PackA ? 1 : Lda, KS = PackA ? MR : 1;
          if (!PackA && Mr < MR) {
            for (int64_t R = 0; R < MR; ++R)
              for (int64_t Kk = 0; Kk < Kc; ++Kk)
                AP[Kk * MR + R] = R < Mr ? AT[R * Lda + Kk] : 0.0f;
            AT = AP;
            RS = 1;
            KS = MR;
          }
          if (Mr == MR && Nr == NR) { // a whole tile: in C itself
            tile<2>(Kc, AT, RS, KS, BP, C + Row * Ldc + J, Ldc, Load, BiasT,
                    ClampK);
            continue;
          }
          if (Load)
            for (int64_t R = 0; R < Mr; ++R)
              std::memcpy(CT + R * NR, C + (Row + R) * Ldc + J,
                          size_t(Nr) * sizeof(float));
          // A last panel of at most 8 columns takes one vector per row.
          if (Nr <= NR / 2)
            tile<1>(Kc, AT, RS, KS, BP, CT, NR, Load, BiasT, ClampK);
          else
            tile<2>(Kc, AT, RS, KS, BP, CT, NR, Load, BiasT, ClampK);
          for (int64_t R = 0; R < Mr; ++R)
            std::memcpy(C + (Row + R) * Ldc + J, CT + R * NR,
                        size_t(Nr) * sizeof(float));
        }
      }
    }
  }
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
