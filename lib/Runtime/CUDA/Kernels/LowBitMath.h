//===- LowBitMath.h - one element of packed low-bit weights -----*- C++ -*-===//
//
// What one GPU thread computes for ONNX Runtime's MatMulNBits and
// GatherBlockQuantized (com.microsoft) and ONNX's 4-bit DequantizeLinear,
// in plain C++: the .cu kernels (LowBit.cu) call these, and a unit test
// (test/unit/Runtime/CUDA/LowBitThreadTest.cpp) runs every thread of a
// launch on the host against the CPU kernels, so the packing, block and
// zero-point arithmetic is checked on machines without a GPU.
//
// The arithmetic is the CPU kernels' to the bit: (q - zero point) * scale
// with an integer zero point is exact before the one rounding of the
// product, in float as in the CPU's double; a float zero point is
// subtracted in double, as there.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_LOWBITMATH_H
#define OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_LOWBITMATH_H

#include "../../CPU/Kernels/QuantizePoint.h"
#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_LOWBIT_HD __host__ __device__
#else
#define OOMPLAN_LOWBIT_HD
#endif

typedef struct CUstream_st *cudaStream_t;

namespace oomplan {
namespace runtime {
namespace cuda {
namespace lowbit {

/// Value I of an array of Bits-bit values (1, 2, 4 or 8) packed from the
/// low bits of each byte up.
OOMPLAN_LOWBIT_HD inline unsigned packedAt(const uint8_t *P, int64_t I,
                                           int Bits) {
  const int64_t Bit = I * Bits;
  return (P[Bit / 8] >> (Bit % 8)) & ((1u << Bits) - 1);
}

/// Value I of an int4 (Signed, sign-extended) or uint4 array.
OOMPLAN_LOWBIT_HD inline int64_t nibbleAt(const uint8_t *P, int64_t I,
                                          bool Signed) {
  const int64_t V = packedAt(P, I, 4);
  return Signed && V >= 8 ? V - 16 : V;
}

/// MatMulNBits: Y [M, N] = A [M, K] * W^T (+ Bias), W [N, K] in B as
/// Blocks blocks of Block values of Bits bits per row (Blob bytes each),
/// Scales [N * Blocks]; zero points packed like B (ZpPacked, ZpRowBytes a
/// row) or float [N * Blocks], or absent (2^(Bits-1)). Every pointer is
/// float but B and a packed Zp: half models reach the kernel widened
/// (HalfInFloat.h), as the CPU's.
struct NBitsArgs {
  const float *A = nullptr;
  const uint8_t *B = nullptr;
  const float *Scales = nullptr;
  const void *Zp = nullptr;
  bool ZpPacked = false;
  const float *Bias = nullptr;
  float *Y = nullptr;
  int64_t M = 0, N = 0, K = 0, Block = 0, Blocks = 0, Blob = 0, ZpRowBytes = 0;
  int Bits = 4;
};

/// W[Row][Col] of MatMulNBits, as the CPU kernel dequantizes it.
OOMPLAN_LOWBIT_HD inline float nbitsWeight(const NBitsArgs &P, int64_t Row,
                                           int64_t Col) {
  const int64_t J = Col / P.Block, Index = Row * P.Blocks + J;
  const int Q = int(packedAt(P.B + Index * P.Blob, Col - J * P.Block, P.Bits));
  const float Scale = P.Scales[Index];
  if (!P.Zp)
    return float(Q - (1 << (P.Bits - 1))) * Scale;
  if (P.ZpPacked)
    return float(Q - int(packedAt(static_cast<const uint8_t *>(P.Zp) +
                                      Row * P.ZpRowBytes,
                                  J, P.Bits))) *
           Scale;
  return float((double(Q) - double(static_cast<const float *>(P.Zp)[Index])) *
               double(Scale));
}

/// Rows of A the GEMV kernel takes (one warp per column of Y, each lane
/// keeping a sum per row); above it, tiles of W dequantized into the
/// workspace go through cuBLAS.
constexpr int64_t GemvRows = 8;
/// Rows of W dequantized at once on the GEMM path.
constexpr int64_t TileRows = 1024;

/// Lane Lane of Lanes' part of column N of Y for each of the M <= GemvRows
/// rows: Acc[m] = sum over Col = Lane, Lane + Lanes, ... of A[m][Col] *
/// W[N][Col].
OOMPLAN_LOWBIT_HD inline void nbitsGemvLane(const NBitsArgs &P, int64_t N,
                                            int Lane, int Lanes,
                                            float Acc[GemvRows]) {
  for (int64_t M = 0; M < GemvRows; ++M)
    Acc[M] = 0.0f;
  for (int64_t Col = Lane; Col < P.K; Col += Lanes) {
    const float W = nbitsWeight(P, N, Col);
    for (int64_t M = 0; M < P.M; ++M)
      Acc[M] += P.A[M * P.K + Col] * W;
  }
}

/// The GEMV's word path applies: a word holds whole values (2, 4 or 8
/// bits), a block's bytes are whole 32-bit words (Blob a multiple of 4, so
/// a word never straddles two blocks) and B is
/// 4-byte aligned (a planned buffer is 256-aligned; checked anyway).
OOMPLAN_LOWBIT_HD inline bool nbitsWordPath(const NBitsArgs &P) {
  return (P.Bits == 2 || P.Bits == 4 || P.Bits == 8) && P.Blob % 4 == 0 &&
         reinterpret_cast<uintptr_t>(P.B) % 4 == 0;
}

/// nbitsGemvLane on whole words (nbitsWordPath): lane Lane takes words
/// Lane, Lane + Lanes, ... of row N of B, so a warp's loads are 128
/// contiguous bytes rather than 16, and each word's block, scale and zero
/// point are found once for its 32 / Bits values, not per value (the first
/// GPU runs: 2.29 ms for the 4-layer decode step's 125 MB of weights, most
/// of it 64-bit divisions per value). Each weight is dequantized exactly as
/// nbitsWeight does; values past K (the last block's padding) are skipped.
/// The sums differ from nbitsGemvLane's only in their order.
OOMPLAN_LOWBIT_HD inline void nbitsGemvLaneWords(const NBitsArgs &P, int64_t N,
                                                 int Lane, int Lanes,
                                                 float Acc[GemvRows]) {
  for (int64_t M = 0; M < GemvRows; ++M)
    Acc[M] = 0.0f;
  const int64_t WordsPerBlock = P.Blob / 4, Words = P.Blocks * WordsPerBlock;
  const int PerWord = 32 / P.Bits;
  const uint32_t Mask = (1u << P.Bits) - 1;
  const uint32_t *Row =
      reinterpret_cast<const uint32_t *>(P.B + N * P.Blocks * P.Blob);
  for (int64_t Wd = Lane; Wd < Words; Wd += Lanes) {
    const int64_t J = Wd / WordsPerBlock, Index = N * P.Blocks + J;
    const int64_t Col0 = J * P.Block + (Wd - J * WordsPerBlock) * PerWord;
    if (Col0 >= P.K)
      continue;
    const float Scale = P.Scales[Index];
    int IntZero = 1 << (P.Bits - 1);
    double FloatZero = 0;
    const bool FloatZp = P.Zp && !P.ZpPacked;
    if (FloatZp)
      FloatZero = double(static_cast<const float *>(P.Zp)[Index]);
    else if (P.Zp)
      IntZero = int(packedAt(
          static_cast<const uint8_t *>(P.Zp) + N * P.ZpRowBytes, J, P.Bits));
    const uint32_t Word = Row[Wd];
    const int Count = P.K - Col0 < PerWord ? int(P.K - Col0) : PerWord;
    const float *A = P.A + Col0;
    for (int T = 0; T < Count; ++T) {
      const int Q = int((Word >> (T * P.Bits)) & Mask);
      const float W = FloatZp ? float((double(Q) - FloatZero) * double(Scale))
                              : float(Q - IntZero) * Scale;
      for (int64_t M = 0; M < P.M; ++M)
        Acc[M] += A[M * P.K + T] * W;
    }
  }
}

/// GatherBlockQuantized: Y [NIdx, Rows, Width] = the rows of Data [V,
/// Rows, P bytes] at the indices (axis 0), each of Width = P * 8 / Bits
/// values in blocks of Block, scale [V * Rows * Blocks] (of Y's type),
/// zero points packed like Data (ZpRow bytes a row) or absent.
struct GBQArgs {
  const uint8_t *Data = nullptr;
  const void *Idx = nullptr;
  bool Idx64 = false;
  const void *Scales = nullptr;
  const uint8_t *Zp = nullptr;
  void *Y = nullptr;
  int64_t V = 0, Rows = 0, P = 0, Width = 0, Block = 0, Blocks = 0, ZpRow = 0,
          NIdx = 0;
  int Bits = 4;
};

/// Output element O of GatherBlockQuantized: (q - zero point), which the
/// kernel multiplies by the scale at ScaleIndex; Bad when the index is
/// outside [-V, V) (the output holds 0 there).
struct GBQPoint {
  int64_t ScaleIndex = 0;
  float QLessZero = 0;
  bool Bad = false;
};
OOMPLAN_LOWBIT_HD inline GBQPoint gbqAt(const GBQArgs &A, int64_t O) {
  GBQPoint R;
  const int64_t Col = O % A.Width, Line = O / A.Width;
  const int64_t M = Line % A.Rows, I = Line / A.Rows;
  int64_t Row = A.Idx64 ? static_cast<const int64_t *>(A.Idx)[I]
                        : static_cast<const int32_t *>(A.Idx)[I];
  if (Row < -A.V || Row >= A.V) {
    R.Bad = true;
    return R;
  }
  if (Row < 0)
    Row += A.V;
  const int64_t Src = Row * A.Rows + M, J = Col / A.Block;
  const float Z = A.Zp ? float(packedAt(A.Zp + Src * A.ZpRow, J, A.Bits))
                       : float(1u << (A.Bits - 1));
  R.ScaleIndex = Src * A.Blocks + J;
  R.QLessZero = float(packedAt(A.Data + Src * A.P, Col, A.Bits)) - Z;
  return R;
}

// The launchers (LowBit.cu); each returns cudaGetLastError()'s value.

/// MatMulNBits for M <= GemvRows: one warp per column, no workspace.
int nbitsGemv(const NBitsArgs &P, cudaStream_t Stream);
/// Rows [N0, N0 + Rows) of W, dequantized into Tile [Rows, K].
int nbitsDequantize(const NBitsArgs &P, int64_t N0, int64_t Rows, float *Tile,
                    cudaStream_t Stream);
/// Y[m][n] += Bias[n] over Y [M, N].
int addRowBias(float *Y, const float *Bias, int64_t M, int64_t N,
               cudaStream_t Stream);
/// GatherBlockQuantized into Y of ScaleType 0 (float), 1 (float16) or 2
/// (bfloat16), the scales' type; an index out of range sets *BadIndex.
int gatherBlockQuantized(const GBQArgs &A, int ScaleType, int *BadIndex,
                         cudaStream_t Stream);
/// DequantizeLinear of N int4 (Signed) or uint4 values of X into float Y,
/// with Scale and zero point Zero (packed like X, may be null) per tensor,
/// axis or block (A).
int dequantize4(const uint8_t *X, bool Signed, const float *Scale,
                const uint8_t *Zero, float *Y, int64_t N, quant::Axis A,
                cudaStream_t Stream);

} // namespace lowbit
} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
