//===- NewerOpsMath.h - TensorScatter and Col2Im threads --------*- C++ -*-===//
//
// What one GPU thread computes for two ops of opsets 18 to 24 that ran as
// host steps (NewerOps.cu): TensorScatter (opset 24's KV-cache write) and
// Col2Im (18), in plain C++, so that a unit test
// (test/unit/Runtime/CUDA/NewerOpsThreadTest.cpp) runs every thread on the
// host against the CPU kernels. Col2Im gathers a pixel's sum in the CPU's
// order of (tap, block), so both backends give the same bits. (AffineGrid
// and DeformConv share the CPU kernels' own per-point functions:
// CPU/Kernels/AffineGridPoint.h, DeformConvPoint.h.)
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_NEWEROPSMATH_H
#define OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_NEWEROPSMATH_H

#include "../../CPU/Kernels/AffineGridPoint.h"
#include "../../CPU/Kernels/DFTPoint.h"
#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_NEWER_HD __host__ __device__
#else
#define OOMPLAN_NEWER_HD
#endif

typedef struct CUstream_st *cudaStream_t;

namespace oomplan {
namespace runtime {
namespace cuda {
namespace newer {

/// TensorScatter: update [Prefix, Seq, Row] (Prefix = the dims before the
/// axis, Row elements after it) written into the cache [Prefix, Max, Row]
/// at each batch row's write index (Index: Batch int64 or int32 values, or
/// null for 0; a batch row spans PerBatch prefixes), modulo Max when
/// Circular.
struct ScatterArgs {
  const void *Update = nullptr, *Index = nullptr;
  void *Out = nullptr;
  bool Index64 = true, Circular = false;
  int64_t Prefix = 0, PerBatch = 1, Max = 0, Seq = 0, Row = 0;
  int ElemBytes = 4;
};

/// The cache element update element I goes to; -1 when its write index
/// leaves the cache (linear mode: index < 0 or index + Seq > Max), which
/// the CPU kernel refuses and the device flags.
OOMPLAN_NEWER_HD inline int64_t scatterTarget(const ScatterArgs &A, int64_t I) {
  const int64_t K = I % A.Row, Line = I / A.Row;
  const int64_t S = Line % A.Seq, P = Line / A.Seq, B = P / A.PerBatch;
  int64_t W = !A.Index    ? 0
              : A.Index64 ? static_cast<const int64_t *>(A.Index)[B]
                          : static_cast<const int32_t *>(A.Index)[B];
  if (A.Circular)
    W = ((W % A.Max) + A.Max) % A.Max; // reduced first: W + S cannot wrap
  else if (W < 0 || W > A.Max - A.Seq)
    return -1;
  const int64_t Pos = A.Circular ? (W + S) % A.Max : W + S;
  return (P * A.Max + Pos) * A.Row + K;
}

/// Col2Im over S spatial axes (at most MaxAxes): the image [Planes,
/// Pixels] from the columns [Planes, Cells, Columns] (Cells taps of the
/// block, Columns sliding blocks, Blocks[i] of them along axis i).
constexpr int MaxAxes = 6;
struct Col2ImArgs {
  const void *X = nullptr;
  void *Y = nullptr;
  bool Double = false;
  int S = 0;
  int64_t Image[MaxAxes] = {}, Block[MaxAxes] = {}, Strides[MaxAxes] = {},
          Dilations[MaxAxes] = {}, PadBegin[MaxAxes] = {}, Blocks[MaxAxes] = {};
  int64_t Planes = 0, Pixels = 0, Cells = 0, Columns = 0;
};

/// Pixel Pixel of plane Plane: the sum of the column values that land on
/// it, tap after tap (each tap reaches a pixel from one block at most), as
/// the CPU kernel adds them.
template <typename T>
OOMPLAN_NEWER_HD inline T col2ImPixel(const Col2ImArgs &A, int64_t Plane,
                                      int64_t Pixel) {
  int64_t Pos[MaxAxes];
  int64_t Rest = Pixel;
  for (int I = A.S - 1; I >= 0; --I) {
    Pos[I] = Rest % A.Image[I];
    Rest /= A.Image[I];
  }
  const T *Col = static_cast<const T *>(A.X) + Plane * A.Cells * A.Columns;
  T Sum = T(0);
  for (int64_t Cell = 0; Cell < A.Cells; ++Cell) {
    int64_t Tap = Cell, Column = 0, Scale = 1;
    bool Hit = true;
    for (int I = A.S - 1; I >= 0 && Hit; --I) {
      const int64_t T0 = Tap % A.Block[I];
      Tap /= A.Block[I];
      const int64_t Q = Pos[I] + A.PadBegin[I] - T0 * A.Dilations[I];
      Hit = Q >= 0 && Q % A.Strides[I] == 0 && Q / A.Strides[I] < A.Blocks[I];
      Column += (Hit ? Q / A.Strides[I] : 0) * Scale;
      Scale *= A.Blocks[I];
    }
    if (Hit)
      Sum += Col[Cell * A.Columns + Column];
  }
  return Sum;
}

// The launchers (NewerOps.cu). TensorScatter's caller has copied the cache
// into Out first (unless the plan aliased them).
int tensorScatter(const ScatterArgs &A, int *BadIndex, cudaStream_t Stream);

int col2Im(const Col2ImArgs &A, cudaStream_t Stream);
/// AffineGrid: a thread per grid point (CPU/Kernels/AffineGridPoint.h).
int affineGrid(const affine::Params &A, cudaStream_t Stream);
/// DFT and STFT: a thread per output bin (CPU/Kernels/DFTPoint.h;
/// Signal.cu).
int dft(const dft::Params &D, cudaStream_t Stream);
int stft(const dft::STFTParams &S, cudaStream_t Stream);

} // namespace newer
} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
