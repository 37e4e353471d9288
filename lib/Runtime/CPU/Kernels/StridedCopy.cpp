//===- StridedCopy.cpp - one gather loop for the layout kernels -*- C++ -*-===//
//
// Transpose, Expand, Slice, DepthToSpace/SpaceToDepth and Tile's rows are
// each a copy whose source index is a linear function of the output index.
// This file holds that one loop: the outer dims are walked row by row (rows
// split over the thread pool), the innermost dim is a tight typed loop, or a
// memcpy when it is contiguous.
//
//===----------------------------------------------------------------------===//
#include "TensorUtil.h"

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
