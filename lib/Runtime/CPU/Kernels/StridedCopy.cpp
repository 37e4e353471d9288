//===- StridedCopy.cpp - one gather loop for the layout kernels -*- C++ -*-===//
//
// Transpose, Expand, Slice, DepthToSpace/SpaceToDepth and Tile's rows are
// each a copy whose source index is a linear function of the output index.
// This file holds that one loop: the outer dims are walked row by row (rows
// split over the thread pool), the innermost dim is a tight typed loop, or a
// memcpy when it is contiguous. When the innermost dim is strided and another
// dim is the source's contiguous one (a transpose of the last two axes, such
// as attention's K^T), the copy goes in square tiles instead, so that every
// cache line read or written is used whole: row by row, each element of an
// output row came from another line (bert_like's K^T, 3 MB, took 1.4 ms).
//
//===----------------------------------------------------------------------===//
#include "TensorUtil.h"
#include <algorithm>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {
template <typename T>
void copyRow(char *Dst, const char *Src, int64_t N, int64_t Stride) {
  T *D = reinterpret_cast<T *>(Dst);
  const T *S = reinterpret_cast<const T *>(Src);
  for (int64_t I = 0; I < N; ++I)
    std::memcpy(D + I, S + I * Stride, sizeof(T));
}

void copyRowAny(char *Dst, const char *Src, int64_t N, int64_t Stride,
                uint64_t EB) {
  if (Stride == 1) {
    std::memcpy(Dst, Src, uint64_t(N) * EB);
    return;
  }
  switch (EB) {
  case 1:
    return copyRow<uint8_t>(Dst, Src, N, Stride);
  case 2:
    return copyRow<uint16_t>(Dst, Src, N, Stride);
  case 4:
    return copyRow<uint32_t>(Dst, Src, N, Stride);
  case 8:
    return copyRow<uint64_t>(Dst, Src, N, Stride);
  default:
    for (int64_t I = 0; I < N; ++I)
      std::memcpy(Dst + I * EB, Src + I * Stride * int64_t(EB), EB);
  }
}

/// Side of the tiles of the transposing path: 16 elements (a 64-byte line
/// of floats) each way.
constexpr int64_t TileSide = 16;

/// The 2-D block: D[j * DStride + i] = S[j + i * SStride] for j < Rows,
/// i < Cols, in TileSide x TileSide tiles.
template <typename T>
void transposeBlock(T *D, int64_t DStride, const T *S, int64_t SStride,
                    int64_t Rows, int64_t Cols) {
  for (int64_t J0 = 0; J0 < Rows; J0 += TileSide) {
    const int64_t J1 = std::min(Rows, J0 + TileSide);
    for (int64_t I0 = 0; I0 < Cols; I0 += TileSide) {
      const int64_t I1 = std::min(Cols, I0 + TileSide);
      for (int64_t J = J0; J < J1; ++J)
        for (int64_t I = I0; I < I1; ++I)
          D[J * DStride + I] = S[J + I * SStride];
    }
  }
}

void transposeBlockAny(char *D, int64_t DStride, const char *S, int64_t SStride,
                       int64_t Rows, int64_t Cols, uint64_t EB) {
  switch (EB) {
  case 1:
    return transposeBlock(reinterpret_cast<uint8_t *>(D), DStride,
                          reinterpret_cast<const uint8_t *>(S), SStride, Rows,
                          Cols);
  case 2:
    return transposeBlock(reinterpret_cast<uint16_t *>(D), DStride,
                          reinterpret_cast<const uint16_t *>(S), SStride, Rows,
                          Cols);
  case 4:
    return transposeBlock(reinterpret_cast<uint32_t *>(D), DStride,
                          reinterpret_cast<const uint32_t *>(S), SStride, Rows,
                          Cols);
  default:
    return transposeBlock(reinterpret_cast<uint64_t *>(D), DStride,
                          reinterpret_cast<const uint64_t *>(S), SStride, Rows,
                          Cols);
  }
}

/// The transposing path (see the file comment): Dims and Strides merged,
/// the source-contiguous dim J (stride 1) not the innermost. Each
/// combination of the other outer dims is one 2-D block (Dims[J] rows of
/// the output, the innermost dim's columns), split over the pool in
/// bands of TileSide rows.
void transposingCopy(char *D, const char *S, llvm::ArrayRef<int64_t> Dims,
                     llvm::ArrayRef<int64_t> Strides, size_t J, uint64_t EB,
                     ThreadPool *Pool) {
  const size_t R = Dims.size();
  const int64_t Inner = Dims[R - 1], InnerStride = Strides[R - 1];
  DimVector OutStr = stridesOf(Dims);
  // The outer dims other than J, walked as one index.
  DimVector ODims, OSrc, ODst;
  for (size_t K = 0; K + 1 < R; ++K)
    if (K != J) {
      ODims.push_back(Dims[K]);
      OSrc.push_back(Strides[K]);
      ODst.push_back(OutStr[K]);
    }
  const int64_t Blocks = productOf(ODims, 0, ODims.size());
  const int64_t Bands = (Dims[J] + TileSide - 1) / TileSide;
  auto Work = [&](int64_t Begin, int64_t End) {
    for (int64_t T = Begin; T < End; ++T) {
      int64_t Rem = T / Bands, SrcOff = 0, DstOff = 0;
      for (int64_t K = int64_t(ODims.size()) - 1; K >= 0; --K) {
        const int64_t X = Rem % ODims[K];
        Rem /= ODims[K];
        SrcOff += X * OSrc[K];
        DstOff += X * ODst[K];
      }
      const int64_t J0 = (T % Bands) * TileSide;
      const int64_t Rows = std::min(TileSide, Dims[J] - J0);
      transposeBlockAny(D + uint64_t(DstOff + J0 * OutStr[J]) * EB, OutStr[J],
                        S + (SrcOff + J0) * int64_t(EB), InnerStride, Rows,
                        Inner, EB);
    }
  };
  const int64_t Tasks = Blocks * Bands;
  if (Pool && Tasks > 1 && Tasks * TileSide * Inner >= (1 << 16))
    Pool->parallelFor(Tasks, 1, Work);
  else
    Work(0, Tasks);
}

} // namespace

void stridedCopy(void *Dst, const void *Src, llvm::ArrayRef<int64_t> OutDims,
                 llvm::ArrayRef<int64_t> SrcStrides, uint64_t EB,
                 ThreadPool *Pool) {
  // Drop unit dims and merge dims that are contiguous in the source, so the
  // inner loop is as long as possible.
  DimVector Dims, Strides;
  for (size_t K = 0; K < OutDims.size(); ++K) {
    if (OutDims[K] == 0)
      return;
    if (OutDims[K] == 1)
      continue;
    if (!Dims.empty() && Strides.back() == SrcStrides[K] * OutDims[K]) {
      Dims.back() *= OutDims[K];
      Strides.back() = SrcStrides[K];
      continue;
    }
    Dims.push_back(OutDims[K]);
    Strides.push_back(SrcStrides[K]);
  }
  if (Dims.empty()) {
    std::memcpy(Dst, Src, EB);
    return;
  }
  const int64_t R = int64_t(Dims.size());
  const int64_t Inner = Dims[R - 1], InnerStride = Strides[R - 1];
  if (InnerStride != 1 && Inner >= 4 &&
      (EB == 1 || EB == 2 || EB == 4 || EB == 8))
    for (int64_t J = 0; J + 1 < R; ++J)
      if (Strides[J] == 1 && Dims[J] >= 4) {
        transposingCopy(static_cast<char *>(Dst),
                        static_cast<const char *>(Src), Dims, Strides,
                        size_t(J), EB, Pool);
        return;
      }
  const int64_t Rows = productOf(Dims, 0, size_t(R - 1));
  char *D = static_cast<char *>(Dst);
  const char *S = static_cast<const char *>(Src);
  auto Work = [&](int64_t Begin, int64_t End) {
    for (int64_t Row = Begin; Row < End; ++Row) {
      int64_t Rem = Row, Off = 0;
      for (int64_t K = R - 2; K >= 0; --K) {
        Off += (Rem % Dims[K]) * Strides[K];
        Rem /= Dims[K];
      }
      copyRowAny(D + uint64_t(Row * Inner) * EB, S + Off * int64_t(EB), Inner,
                 InnerStride, EB);
    }
  };
  if (Pool && Rows > 1 && Rows * Inner >= (1 << 16))
    Pool->parallelFor(Rows, std::max<int64_t>(1, (1 << 14) / Inner), Work);
  else
    Work(0, Rows);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
