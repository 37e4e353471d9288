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

/// Rows [0, Rows) (at most six, Lda apart) of columns [0, Kc) at Src,
/// k-major into Dst: Dst[k * 6 + r], rows past Rows zero. Eight columns of
/// six rows at a time are transposed in registers and stored as eight
/// overlapping 8-float rows in ascending order, each row's two spare
/// lanes overwritten by the next (the last's land past Dst[Kc * 6]: the
/// next tile's first, written after, or AP's slack). Scalar, this copy
/// was a seventh of a 196-column product's time.
inline __attribute__((always_inline)) void
packSix(const float *Src, int64_t Lda, int64_t Rows, int64_t Kc, float *Dst) {
  int64_t K = 0;
  if (Rows == MR)
    for (; K + 8 <= Kc; K += 8) {
      const float *S = Src + K;
      const V8 R0 = *reinterpret_cast<const V8U *>(S);
      const V8 R1 = *reinterpret_cast<const V8U *>(S + Lda);
      const V8 R2 = *reinterpret_cast<const V8U *>(S + 2 * Lda);
      const V8 R3 = *reinterpret_cast<const V8U *>(S + 3 * Lda);
      const V8 R4 = *reinterpret_cast<const V8U *>(S + 4 * Lda);
      const V8 R5 = *reinterpret_cast<const V8U *>(S + 5 * Lda);
      const V8 Z{};
      // Pairs of rows interleaved, then pairs of pairs: Q0 holds rows 0-3
      // of columns 0 and 4, Q1 of 1 and 5, ..., P0 rows 4-5 likewise.
      const V8 T0 = OOMPLAN_SHUFFLE8(R0, R1, 0, 8, 1, 9, 4, 12, 5, 13);
      const V8 T1 = OOMPLAN_SHUFFLE8(R0, R1, 2, 10, 3, 11, 6, 14, 7, 15);
      const V8 T2 = OOMPLAN_SHUFFLE8(R2, R3, 0, 8, 1, 9, 4, 12, 5, 13);
      const V8 T3 = OOMPLAN_SHUFFLE8(R2, R3, 2, 10, 3, 11, 6, 14, 7, 15);
      const V8 T4 = OOMPLAN_SHUFFLE8(R4, R5, 0, 8, 1, 9, 4, 12, 5, 13);
      const V8 T5 = OOMPLAN_SHUFFLE8(R4, R5, 2, 10, 3, 11, 6, 14, 7, 15);
      const V8 Q0 = OOMPLAN_SHUFFLE8(T0, T2, 0, 1, 8, 9, 4, 5, 12, 13);
      const V8 Q1 = OOMPLAN_SHUFFLE8(T0, T2, 2, 3, 10, 11, 6, 7, 14, 15);
      const V8 Q2 = OOMPLAN_SHUFFLE8(T1, T3, 0, 1, 8, 9, 4, 5, 12, 13);
      const V8 Q3 = OOMPLAN_SHUFFLE8(T1, T3, 2, 3, 10, 11, 6, 7, 14, 15);
      const V8 P0 = OOMPLAN_SHUFFLE8(T4, Z, 0, 1, 8, 9, 4, 5, 12, 13);
      const V8 P1 = OOMPLAN_SHUFFLE8(T4, Z, 2, 3, 10, 11, 6, 7, 14, 15);
      const V8 P2 = OOMPLAN_SHUFFLE8(T5, Z, 0, 1, 8, 9, 4, 5, 12, 13);
      const V8 P3 = OOMPLAN_SHUFFLE8(T5, Z, 2, 3, 10, 11, 6, 7, 14, 15);
      float *D = Dst + K * MR;
      *reinterpret_cast<V8U *>(D) =
          OOMPLAN_SHUFFLE8(Q0, P0, 0, 1, 2, 3, 8, 9, 10, 11);
      *reinterpret_cast<V8U *>(D + 6) =
          OOMPLAN_SHUFFLE8(Q1, P1, 0, 1, 2, 3, 8, 9, 10, 11);
      *reinterpret_cast<V8U *>(D + 12) =
          OOMPLAN_SHUFFLE8(Q2, P2, 0, 1, 2, 3, 8, 9, 10, 11);
      *reinterpret_cast<V8U *>(D + 18) =
          OOMPLAN_SHUFFLE8(Q3, P3, 0, 1, 2, 3, 8, 9, 10, 11);
      *reinterpret_cast<V8U *>(D + 24) =
          OOMPLAN_SHUFFLE8(Q0, P0, 4, 5, 6, 7, 12, 13, 14, 15);
      *reinterpret_cast<V8U *>(D + 30) =
          OOMPLAN_SHUFFLE8(Q1, P1, 4, 5, 6, 7, 12, 13, 14, 15);
      *reinterpret_cast<V8U *>(D + 36) =
          OOMPLAN_SHUFFLE8(Q2, P2, 4, 5, 6, 7, 12, 13, 14, 15);
      *reinterpret_cast<V8U *>(D + 42) =
          OOMPLAN_SHUFFLE8(Q3, P3, 4, 5, 6, 7, 12, 13, 14, 15);
    }
  for (; K < Kc; ++K)
    for (int64_t R = 0; R < MR; ++R)
      Dst[K * MR + R] = R < Rows ? Src[R * Lda + K] : 0.0f;
}

/// The Rows x 8*NV tile of C at C (row stride Ldc; Rows at most six, the
/// rows a last, partial row tile has, so that it costs its rows' work and
/// not a whole tile's: M = 32 was six tiles' time for 5.3 tiles' rows):
/// Acc = C (Load) or 0, plus Bias[row] when given, plus the sum over Kc of
/// A's rows times B's 8*NV columns. Only those rows of A, C and Bias are
/// read or written. A row I, column K is
/// at A[I * RS + K * KS] (packed: RS 1, KS 6; in place: RS Lda, KS 1); B
/// is packed, 16 floats per k. Clamp, when given, clamps the sums as they
/// are stored.
template <int NV, int Rows>
inline __attribute__((always_inline)) void
tile(int64_t Kc, const float *__restrict A, int64_t RS, int64_t KS,
     const float *__restrict B, int64_t BS, float *__restrict C, int64_t Ldc,
     bool Load, const float *Bias, const ConvClamp *Clamp) {
  V8 Acc[Rows][NV];
#pragma GCC unroll 6
  for (int I = 0; I < Rows; ++I)
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
      BV[V] = *reinterpret_cast<const V8U *>(B + K * BS + 8 * V);
#pragma GCC unroll 6
    for (int I = 0; I < Rows; ++I) {
      const float AV = A[I * RS + K * KS];
#pragma GCC unroll 2
      for (int V = 0; V < NV; ++V)
        Acc[I][V] += AV * BV[V];
    }
  }
  if (Clamp) {
    const V8 Lo = V8{} + Clamp->Lo, Hi = V8{} + Clamp->Hi;
#pragma GCC unroll 6
    for (int I = 0; I < Rows; ++I)
#pragma GCC unroll 2
      for (int V = 0; V < NV; ++V) {
        // The unfused kernels' comparisons, so that NaN stays NaN.
        Acc[I][V] = Acc[I][V] < Lo ? Lo : Acc[I][V];
        Acc[I][V] = Hi < Acc[I][V] ? Hi : Acc[I][V];
      }
  }
#pragma GCC unroll 6
  for (int I = 0; I < Rows; ++I)
#pragma GCC unroll 2
    for (int V = 0; V < NV; ++V)
      *reinterpret_cast<V8U *>(C + I * Ldc + 8 * V) = Acc[I][V];
}

/// tile for the Rows (1 to 6) rows of a row tile.
template <int NV>
inline __attribute__((always_inline)) void
tileRows(int64_t Rows, int64_t Kc, const float *A, int64_t RS, int64_t KS,
         const float *B, int64_t BS, float *C, int64_t Ldc, bool Load,
         const float *Bias, const ConvClamp *Clamp) {
  switch (Rows) {
  case 1:
    return tile<NV, 1>(Kc, A, RS, KS, B, BS, C, Ldc, Load, Bias, Clamp);
  case 2:
    return tile<NV, 2>(Kc, A, RS, KS, B, BS, C, Ldc, Load, Bias, Clamp);
  case 3:
    return tile<NV, 3>(Kc, A, RS, KS, B, BS, C, Ldc, Load, Bias, Clamp);
  case 4:
    return tile<NV, 4>(Kc, A, RS, KS, B, BS, C, Ldc, Load, Bias, Clamp);
  case 5:
    return tile<NV, 5>(Kc, A, RS, KS, B, BS, C, Ldc, Load, Bias, Clamp);
  default:
    return tile<NV, MR>(Kc, A, RS, KS, B, BS, C, Ldc, Load, Bias, Clamp);
  }
}

/// Blocks of at most this many rows read B's whole panels in place.
constexpr int64_t InPlaceBRows = 48;

/// Panels this narrow or narrower at N's end take tailColumns.
constexpr int64_t TailMax = 4;

/// Columns [0, NC) of the packed B panel (16 floats per k) against the
/// G packed row tiles of AT (tile g at AT + g * TileStride, k-major, six
/// rows per k) into rows 6g + r (r < Rows[g]) and columns [0, NC) of C:
/// Load, Bias and Clamp as tile's. A row tile is one vector
/// here (its six rows in lanes 0-5, the next k's first two in 6-7, never
/// stored), so the G * NC sums are independent chains; tile<1> spends on
/// a one-column panel most of a whole panel's time (its six sums wait on
/// the FMA latency), which on a 7x7 map's 49 columns was a fifth of the
/// product. Each sum still runs over k in order from the same start, so a
/// column's values do not depend on whether it fell in a tail.
template <int NC, int G>
inline __attribute__((always_inline)) void
tailColumns(int64_t Kc, const float *__restrict AT, int64_t TileStride,
            const int64_t *Rows, const float *__restrict B, float *C,
            int64_t Ldc, bool Load, const float *Bias, const ConvClamp *Clamp) {
  V8 Acc[G][NC];
#pragma GCC unroll 8
  for (int Gi = 0; Gi < G; ++Gi)
#pragma GCC unroll 4
    for (int Ci = 0; Ci < NC; ++Ci) {
      alignas(32) float Init[8] = {};
      if (Load)
        for (int64_t R = 0; R < Rows[Gi]; ++R)
          Init[R] = C[(6 * Gi + R) * Ldc + Ci];
      Acc[Gi][Ci] = *reinterpret_cast<const V8 *>(Init);
      if (Bias) {
        alignas(32) float BV[8] = {};
        std::copy(Bias + 6 * Gi, Bias + 6 * Gi + Rows[Gi], BV);
        Acc[Gi][Ci] += *reinterpret_cast<const V8 *>(BV);
      }
    }
  for (int64_t K = 0; K < Kc; ++K) {
    V8 AV[G];
#pragma GCC unroll 8
    for (int Gi = 0; Gi < G; ++Gi)
      AV[Gi] = *reinterpret_cast<const V8U *>(AT + Gi * TileStride + K * MR);
#pragma GCC unroll 4
    for (int Ci = 0; Ci < NC; ++Ci) {
      const float BS = B[K * NR + Ci];
#pragma GCC unroll 8
      for (int Gi = 0; Gi < G; ++Gi)
        Acc[Gi][Ci] += AV[Gi] * BS;
    }
  }
#pragma GCC unroll 8
  for (int Gi = 0; Gi < G; ++Gi)
#pragma GCC unroll 4
    for (int Ci = 0; Ci < NC; ++Ci) {
      V8 V = Acc[Gi][Ci];
      if (Clamp) { // tile's comparisons: NaN stays NaN
        const V8 Lo = V8{} + Clamp->Lo, Hi = V8{} + Clamp->Hi;
        V = V < Lo ? Lo : V;
        V = Hi < V ? Hi : V;
      }
      alignas(32) float Out[8];
      *reinterpret_cast<V8 *>(Out) = V;
      for (int64_t R = 0; R < Rows[Gi]; ++R)
        C[(6 * Gi + R) * Ldc + Ci] = Out[R];
    }
}

/// tailColumns over the row tiles [T, Tiles) of a block of Mc rows (packed
/// at AP, Kc per k and tile) from row I0 on, NC columns at column J: G
/// tiles at a time, then the rest in halving groups. Each sum is a chain
/// of dependent FMAs, so the tiles of a group are what keeps the FMA
/// units busy (one tile alone waits four cycles a k).
template <int NC, int G>
inline __attribute__((always_inline)) void
tailGroups(int64_t Kc, const float *AP, int64_t Mc, int64_t T, int64_t Tiles,
           int64_t I0, const float *BP, float *C, int64_t Ldc, int64_t J,
           bool Load, const float *Bias, const ConvClamp *Clamp) {
  int64_t Rows[G];
  for (; T + G <= Tiles; T += G) {
    for (int Gi = 0; Gi < G; ++Gi)
      Rows[Gi] = std::min<int64_t>(MR, Mc - (T + Gi) * MR);
    tailColumns<NC, G>(Kc, AP + T * MR * Kc, MR * Kc, Rows, BP,
                       C + (I0 + T * MR) * Ldc + J, Ldc, Load,
                       Bias ? Bias + I0 + T * MR : nullptr, Clamp);
  }
  if constexpr (G > 1)
    tailGroups<NC, G / 2>(Kc, AP, Mc, T, Tiles, I0, BP, C, Ldc, J, Load, Bias,
                          Clamp);
}

/// tailColumns over a block's Mc rows: eight row tiles at a time for one
/// column, four for two, two for three or four (the sums and B's
/// broadcasts within the sixteen registers, A's vectors read by the FMAs).
template <int NC>
inline __attribute__((always_inline)) void
tailPanel(int64_t Kc, const float *AP, int64_t Mc, int64_t I0, const float *BP,
          float *C, int64_t Ldc, int64_t J, bool Load, const float *Bias,
          const ConvClamp *Clamp) {
  constexpr int G = NC == 1 ? 8 : NC == 2 ? 4 : 2;
  tailGroups<NC, G>(Kc, AP, Mc, 0, (Mc + MR - 1) / MR, I0, BP, C, Ldc, J, Load,
                    Bias, Clamp);
}

} // namespace

OOMPLAN_SIMD_CLONES void
convGemmImages(int64_t M, int64_t N, int64_t K, const float *A, int64_t Lda,
               const float *B0, int64_t Ldb, float *C0, int64_t Ldc,
               const float *Bias, bool Accumulate, const ConvClamp *Clamp,
               int64_t Images, int64_t BStride, int64_t CStride) {
  if (M <= 0 || N <= 0 || Images <= 0)
    return;
  // Packed operands and one tile of C, on the stack (137 KiB): a tile at
  // C's edge goes through CT, so that no load or store passes row M or
  // column N. AP's 8 spare floats take packSix's last overlapping store.
  alignas(32) float AP[MC * KC + 8];
  alignas(32) float BP[KC * NR];
  alignas(32) float CT[MR * NR];
  // A narrow last panel is computed from packed A (tailPanel), so a
  // product that has one packs A however narrow.
  const int64_t Tail = N % NR;
  const bool PackA =
      N * Images >= PackAMinColumns || (Tail > 0 && Tail <= TailMax);
  for (int64_t K0 = 0; K0 < std::max<int64_t>(K, 1); K0 += KC) {
    const int64_t Kc = std::min(KC, K - K0);
    const bool First = K0 == 0;
    // Clamped at the last k block only: a partial sum is no output.
    const ConvClamp *ClampK = K0 + KC >= K ? Clamp : nullptr;
    for (int64_t I0 = 0; I0 < M; I0 += MC) {
      const int64_t Mc = std::min(MC, M - I0);
      if (PackA) { // six rows at a time, k-major, rows past M zero
        for (int64_t T = 0; T < Mc; T += MR)
          packSix(A + (I0 + T) * Lda + K0, Lda, std::min<int64_t>(MR, Mc - T),
                  Kc, AP + T * Kc);
        // tailColumns' loads of the last k reach two floats past the last
        // tile: zeros, not stale stack.
        const int64_t End = (Mc + MR - 1) / MR * MR * Kc;
        std::fill(AP + End, AP + End + 8, 0.0f);
      }
      // Every image's columns against this block of A while it is in L2.
      for (int64_t Img = 0; Img < Images; ++Img) {
        const float *B = B0 + Img * BStride;
        float *C = C0 + Img * CStride;
        for (int64_t J = 0; J < N; J += NR) {
          const int64_t Nr = std::min<int64_t>(NR, N - J);
          if (PackA && Nr <= TailMax) {
            for (int64_t Kk = 0; Kk < Kc; ++Kk)
              for (int64_t X = 0; X < Nr; ++X)
                BP[Kk * NR + X] = B[(K0 + Kk) * Ldb + J + X];
            const float *BiasT = First && Bias ? Bias : nullptr;
            const bool Load = !First || Accumulate;
            switch (Nr) {
            case 1:
              tailPanel<1>(Kc, AP, Mc, I0, BP, C, Ldc, J, Load, BiasT, ClampK);
              break;
            case 2:
              tailPanel<2>(Kc, AP, Mc, I0, BP, C, Ldc, J, Load, BiasT, ClampK);
              break;
            case 3:
              tailPanel<3>(Kc, AP, Mc, I0, BP, C, Ldc, J, Load, BiasT, ClampK);
              break;
            default:
              tailPanel<4>(Kc, AP, Mc, I0, BP, C, Ldc, J, Load, BiasT, ClampK);
            }
            continue;
          }
          // B's panel: a whole one read in place by a block of few rows
          // (the copy would be a tenth of their time), else packed.
          const bool InPlace = Nr == NR && Mc <= InPlaceBRows;
          const float *BT = InPlace ? B + K0 * Ldb + J : BP;
          const int64_t BS = InPlace ? Ldb : NR;
          if (InPlace)
            ;
          else if (Nr == NR)
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
          // Read in place, the panel's Kc rows are as many streams, too
          // many for the hardware prefetcher: each row tile asks for its
          // share of the next panel's rows while it computes this one.
          const bool PrefetchNext = InPlace && J + NR < N;
          const int64_t RowTiles = (Mc + MR - 1) / MR;
          for (int64_t T = 0; T < Mc; T += MR) {
            const int64_t Mr = std::min<int64_t>(MR, Mc - T);
            const int64_t Row = I0 + T;
            if (PrefetchNext) {
              const int64_t Tile = T / MR;
              for (int64_t Kk = Tile * Kc / RowTiles,
                           KEnd = (Tile + 1) * Kc / RowTiles;
                   Kk < KEnd; ++Kk) {
                const float *Next = B + (K0 + Kk) * Ldb + J + NR;
                __builtin_prefetch(Next, 0, 3);
                __builtin_prefetch(Next + std::min<int64_t>(NR, N - J - NR) - 1,
                                   0, 3);
              }
            }
            const float *BiasT = First && Bias ? Bias + Row : nullptr;
            const bool Load = !First || Accumulate;
            // A's Mr rows, packed (RS 1, KS 6) or in place (RS Lda, KS 1).
            const float *AT = PackA ? AP + T * Kc : A + Row * Lda + K0;
            const int64_t RS = PackA ? 1 : Lda, KS = PackA ? MR : 1;
            if (Mr == MR && Nr == NR) { // a whole tile: in C itself
              tile<2, MR>(Kc, AT, RS, KS, BT, BS, C + Row * Ldc + J, Ldc, Load,
                          BiasT, ClampK);
              continue;
            }
            if (Nr == NR) { // whole columns of fewer rows: in C too
              tileRows<2>(Mr, Kc, AT, RS, KS, BT, BS, C + Row * Ldc + J, Ldc,
                          Load, BiasT, ClampK);
              continue;
            }
            if (Load)
              for (int64_t R = 0; R < Mr; ++R)
                std::memcpy(CT + R * NR, C + (Row + R) * Ldc + J,
                            size_t(Nr) * sizeof(float));
            // A last panel of at most 8 columns takes one vector per row.
            if (Nr <= NR / 2)
              tileRows<1>(Mr, Kc, AT, RS, KS, BT, BS, CT, NR, Load, BiasT,
                          ClampK);
            else
              tileRows<2>(Mr, Kc, AT, RS, KS, BT, BS, CT, NR, Load, BiasT,
                          ClampK);
            for (int64_t R = 0; R < Mr; ++R)
              std::memcpy(C + (Row + R) * Ldc + J, CT + R * NR,
                          size_t(Nr) * sizeof(float));
          }
        }
      }
    }
  }
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
