//===- Conv.cpp - CPU kernels: Conv and ConvTranspose through GEMM --------===//
//
// Conv lowers each (image, group) to one GEMM: W_g (M/g x C/g*K) times the
// im2col matrix (C/g*K x output positions), which is the step's planned
// workspace (declared by convWorkspace so the plan counts it; a kernel never
// allocates). A 1x1 kernel with unit stride and no padding needs no im2col:
// the input already is that matrix. Depthwise convolutions (one input
// channel per group) skip GEMM, whose per-call cost dwarfs a 3x3 window
// (DepthwiseConv.cpp). ConvTranspose is the
// adjoint: W_g^T times the input gives the columns, and col2im scatters
// them into the output.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "ConvDirect.h"
#include "ConvEntry.h"
#include "ConvGemm.h"
#include "ConvGeometry.h"
#include "ConvWinograd.h"
#include "DepthwiseConv.h"
#include "Elementwise.h"
#include "Gemm.h"
#include "Vector8.h"
#include "llvm/Support/MathExtras.h"
#include <atomic>

namespace oomplan {
namespace runtime {
namespace cpu {

std::string convGeometry(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                         llvm::ArrayRef<TensorRef> Outputs, bool Transposed,
                         WindowGeometry &G) {
  if (Inputs.size() < 2 || Outputs.empty())
    return "needs X and W";
  const TensorRef &X = Inputs[0], &W = Inputs[1], &Y = Outputs[0];
  if (X.Dims.size() < 3 || W.Dims.size() != X.Dims.size() ||
      Y.Dims.size() != X.Dims.size())
    return "X, W and Y must have the same rank, at least 3";
  llvm::ArrayRef<int64_t> XD(X.Dims), YD(Y.Dims), WD(W.Dims);
  std::string Why = windowGeometry(N, XD.drop_front(2), YD.drop_front(2),
                                   WD.drop_front(2), Transposed, G);
  if (Why.empty() && llvm::ArrayRef<int64_t>(G.K) != WD.drop_front(2))
    return "kernel_shape differs from W's spatial dims";
  return Why;
}

std::string convChannels(const Node &N, const TensorRef &X, const TensorRef &W,
                         const TensorRef &Y) {
  const int64_t Group = N.getInt("group", 1);
  const int64_t Batch = X.Dims[0], Ch = X.Dims[1], M = W.Dims[0];
  if (Group <= 0 || Ch % Group || M % Group || W.Dims[1] * Group != Ch ||
      Y.Dims[1] != M || Y.Dims[0] != Batch)
    return ("channels of X, W and Y do not match group " + llvm::Twine(Group))
        .str();
  return "";
}

namespace {

bool isPointwise(const WindowGeometry &G) {
  for (size_t I = 0; I < G.rank(); ++I)
    if (G.K[I] != 1 || G.S[I] != 1 || G.PadBegin[I] != 0 || G.In[I] != G.Out[I])
      return false;
  return true;
}

bool isDepthwise(const Node &N, const TensorRef &X, const TensorRef &W) {
  int64_t Group = N.getInt("group", 1);
  return Group > 1 && Group == X.Dims[1] && W.Dims[1] == 1;
}

/// How a convolution's columns are cut: the im2col matrix (Cg*K rows,
/// one column per output position) is built and multiplied one tile of
/// columns at a time, each tile in one of up to ConvSlots slots of the
/// workspace, so that a tile is still in cache when the GEMM reads it.
/// Built whole, the matrix went to memory and back (88 MB for one 3x3
/// convolution of a text detector at 640x640), and the workspace was as
/// large.
struct ColumnTiles {
  int64_t Width = 0; ///< Columns per tile.
  int64_t Count = 0; ///< Tiles per (image, group).
  int64_t Slots = 0; ///< Tiles in flight at once: the workspace holds these.
};

/// Tiles of about TileBytes (L2-sized), never narrower than MinTileColumns
/// (a narrower GEMM spends its time packing the weights), in multiples of
/// 16 columns. Slots bound the workspace whatever the thread count, so a
/// plan does not depend on --threads: runs with more threads than slots
/// use ConvSlots of them for this step.
constexpr uint64_t TileBytes = 512 * 1024;
constexpr int64_t MinTileColumns = 256;
constexpr int64_t ConvSlots = 16;

/// Elements of the workspace: the whole matrix when every tile has its own
/// slot (the last tile is narrower, so slots of the full width would ask
/// for more than the matrix), else ConvSlots tiles of the full width.
uint64_t columnElements(const ColumnTiles &T, int64_t Rows, int64_t OutSize) {
  return T.Slots == T.Count ? uint64_t(Rows) * uint64_t(OutSize)
                            : uint64_t(T.Slots * Rows) * uint64_t(T.Width);
}

ColumnTiles columnTiles(int64_t Rows, int64_t OutSize, uint64_t ElemBytes) {
  ColumnTiles T;
  const uint64_t RowBytes =
      uint64_t(std::max<int64_t>(Rows, 1)) * std::max<uint64_t>(ElemBytes, 1);
  int64_t W = int64_t(TileBytes / RowBytes) / 16 * 16;
  W = std::max(W, MinTileColumns);
  T.Width = std::max<int64_t>(1, std::min(W, OutSize));
  T.Count = (OutSize + T.Width - 1) / T.Width;
  T.Slots = std::min(T.Count, ConvSlots);
  return T;
}

/// (Pointwise convolutions of other types than float, on OpenBLAS.) A
/// pointwise convolution's output cut into column tiles whose output and
/// input columns together fit in half a core's L2, so that the bias fill,
/// the product (beta 1) and a fused epilogue each find the tile in cache.
/// One GEMM over a whole large map (8 MB of output at 112x112) wrote it,
/// read it back and wrote it again through memory: such convolutions ran at
/// half the speed of the small maps' ones.
struct PointwiseTiles {
  int64_t Width = 0, Count = 0;
};
constexpr uint64_t PointwiseTileBytes = 256 * 1024;
constexpr int64_t MinPointwiseColumns = 64;

PointwiseTiles pointwiseTiles(int64_t Rows, int64_t Depth, int64_t OutSize,
                              uint64_t ElemBytes) {
  PointwiseTiles T;
  const uint64_t ColBytes = uint64_t(std::max<int64_t>(Rows + Depth, 1)) *
                            std::max<uint64_t>(ElemBytes, 1);
  int64_t W = int64_t(PointwiseTileBytes / ColBytes) / 16 * 16;
  T.Width =
      std::max<int64_t>(1, std::min(std::max(W, MinPointwiseColumns), OutSize));
  T.Count = (OutSize + T.Width - 1) / T.Width;
  return T;
}

/// Whether convTyped takes the direct path (ConvDirect.cpp), which needs
/// no workspace.
bool takesDirect(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                 const WindowGeometry &G) {
  return directConvApplies(G, Inputs[0].Type, N.getInt("group", 1),
                           Inputs[0].Dims[1], Inputs[1].Dims[0]);
}

uint64_t convWorkspace(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                       llvm::ArrayRef<TensorRef> Outputs) {
  WindowGeometry G;
  if (!convGeometry(N, Inputs, Outputs, false, G).empty() || isPointwise(G) ||
      isDepthwise(N, Inputs[0], Inputs[1]) || takesDirect(N, Inputs, G))
    return 0;
  const int64_t Rows = Inputs[1].Dims[1] * G.kernelSize();
  const uint64_t EB = elemBytes(Inputs[0].Type);
  if (EB == 0) // an element type of no fixed size: the kernel refuses it
    return 0;
  ColumnTiles T = columnTiles(Rows, G.outSize(), EB);
  const uint64_t Im2col = columnElements(T, Rows, G.outSize()) * EB;
  if (Inputs[0].Type == ElementType::Float) {
    const WinogradPlan P =
        winogradPlan(G, Inputs[0].Dims[0], Inputs[0].Dims[1], Inputs[1].Dims[0],
                     N.getInt("group", 1), Im2col);
    if (P.Use)
      return P.Bytes;
  }
  return Im2col;
}

/// [Lo, Hi): the output columns O in [0, Out) whose input column O * S +
/// Shift lies inside [0, In); empty (Lo == Hi) when none does.
inline void insideColumns(int64_t Shift, int64_t S, int64_t In, int64_t Out,
                          int64_t &Lo, int64_t &Hi) {
  Lo = std::min<int64_t>(Out, Shift >= 0 ? 0 : (-Shift + S - 1) / S);
  Hi = std::max<int64_t>(
      Lo, In - 1 - Shift < 0
              ? 0
              : std::min<int64_t>(Out, (In - 1 - Shift) / S + 1));
}

/// D[O] = Src[2 * O] for O in [A, B): eight at a time from two vector
/// loads and one shuffle (the stride-2 convolutions' im2col, the stems of
/// ResNet and MobileNet among them, copied float by float before). A
/// vector block reads up to Src[2 * O + 15], so blocks stop while one
/// output is left, whose element 2 * (B - 1) lies past all they read:
/// nothing past the row's last needed element is touched.
inline __attribute__((always_inline)) void copyEvens(const float *Src, float *D,
                                                     int64_t A, int64_t B) {
  int64_t O = A;
  for (; O + 8 < B; O += 8) {
    const V8 Lo = *reinterpret_cast<const V8U *>(Src + 2 * O);
    const V8 Hi = *reinterpret_cast<const V8U *>(Src + 2 * O + 8);
    *reinterpret_cast<V8U *>(D + O) =
        OOMPLAN_SHUFFLE8(Lo, Hi, 0, 2, 4, 6, 8, 10, 12, 14);
  }
  for (; O < B; ++O)
    D[O] = Src[2 * O];
}

/// im2colTile on a 2-D map: the output row and column advance with the
/// position instead of being divided out of it per segment, and segments
/// are copied by a loop the compiler vectorizes rather than by a memmove
/// call: a 7- or 14-wide segment was mostly those divisions and the call.
template <typename T>
OOMPLAN_SIMD_CLONES void im2colTile2D(const T *X, const WindowGeometry &G,
                                      int64_t N0, int64_t N1, int64_t Row0,
                                      int64_t Row1, T *Col, int64_t Ld) {
  const int64_t KW = G.K[1], KSize = G.K[0] * KW;
  const int64_t H = G.In[0], Wd = G.In[1], OW = G.Out[1];
  const int64_t SH = G.S[0], SW = G.S[1], DH = G.D[0], DW = G.D[1];
  const int64_t InSize = H * Wd;
  for (int64_t Row = Row0; Row < Row1; ++Row) {
    const int64_t K = Row % KSize;
    const int64_t OffH = (K / KW) * DH - G.PadBegin[0];
    const int64_t Shift = (K % KW) * DW - G.PadBegin[1];
    const T *Xc = X + (Row / KSize) * InSize;
    T *Dst = Col + Row * Ld;
    int64_t Lo, Hi;
    insideColumns(Shift, SW, Wd, OW, Lo, Hi);
    int64_t OH = N0 / OW, X0 = N0 % OW;
    for (int64_t Pos = N0; Pos < N1; ++OH, X0 = 0) {
      const int64_t X1 = std::min(OW, X0 + (N1 - Pos));
      const int64_t IH = OH * SH + OffH;
      T *D = Dst - X0;
      const int64_t A = std::max(X0, Lo), B = std::min(X1, Hi);
      if (IH < 0 || IH >= H || B <= A) {
        for (int64_t O = X0; O < X1; ++O)
          D[O] = T(0);
      } else {
        for (int64_t O = X0; O < A; ++O)
          D[O] = T(0);
        const T *Src = Xc + IH * Wd + Shift;
        if (SW == 1)
          for (int64_t O = A; O < B; ++O)
            D[O] = Src[O];
        else if (SW == 2 && std::is_same<T, float>::value)
          copyEvens(reinterpret_cast<const float *>(Src),
                    reinterpret_cast<float *>(D), A, B);
        else
          for (int64_t O = A; O < B; ++O)
            D[O] = Src[O * SW];
        for (int64_t O = B; O < X1; ++O)
          D[O] = T(0);
      }
      Dst += X1 - X0;
      Pos += X1 - X0;
    }
  }
}

/// Fills rows [Row0, Row1) of Col (Cg*K rows, one per channel and kernel
/// offset; N1 - N0 columns, rows Ld apart, or N1 - N0 when Ld is 0) with
/// output positions [N0, N1) of the Cg channels at X.
template <typename T>
void im2colTile(const T *X, const WindowGeometry &G, int64_t N0, int64_t N1,
                int64_t Row0, int64_t Row1, T *Col, int64_t Ld = 0) {
  if (Ld == 0)
    Ld = N1 - N0;
  if (G.rank() == 2)
    return im2colTile2D(X, G, N0, N1, Row0, Row1, Col, Ld);
  const int64_t R = int64_t(G.rank()), KSize = G.kernelSize();
  const int64_t InSize = G.inSize();
  const int64_t OutLast = G.Out[R - 1], InLast = G.In[R - 1];
  const int64_t SL = G.S[R - 1], PL = G.PadBegin[R - 1], DL = G.D[R - 1];
  DimVector InStr = stridesOf(G.In), KK;
  for (int64_t Row = Row0; Row < Row1; ++Row) {
    kernelOffsets(G, Row % KSize, KK);
    const T *Xc = X + (Row / KSize) * InSize;
    T *Dst = Col + Row * Ld - N0; // indexed by output position
    // Output positions O read X = O * SL + Shift on the last axis: zeros
    // where X falls in the padding, a copy (unit stride) or a strided
    // gather in [Lo, Hi). Found once per segment, not tested per element:
    // im2col was an eighth of ResNet-50's time with the test in the inner
    // loop.
    const int64_t Shift = KK[R - 1] * DL - PL;
    int64_t Lo, Hi;
    insideColumns(Shift, SL, InLast, OutLast, Lo, Hi);
    for (int64_t Pos = N0; Pos < N1;) {
      // One segment: the rest of this output row that the tile holds.
      const int64_t Outer = Pos / OutLast, X0 = Pos % OutLast;
      const int64_t X1 = std::min(OutLast, X0 + (N1 - Pos));
      int64_t Rem = Outer, Base = 0;
      bool Inside = true;
      for (int64_t I = R - 2; I >= 0; --I) {
        int64_t O = Rem % G.Out[I];
        Rem /= G.Out[I];
        int64_t Xi = O * G.S[I] - G.PadBegin[I] + KK[I] * G.D[I];
        Inside &= Xi >= 0 && Xi < G.In[I];
        Base += Xi * InStr[I];
      }
      T *D = Dst + Outer * OutLast;
      const int64_t A = std::max(X0, Lo), B = std::min(X1, Hi);
      if (!Inside || B <= A) {
        std::fill(D + X0, D + X1, T(0));
      } else {
        std::fill(D + X0, D + A, T(0));
        const T *Src = Xc + Base + A * SL + Shift;
        if (SL == 1)
          std::copy(Src, Src + (B - A), D + A);
        else
          for (int64_t O = A; O < B; ++O, Src += SL)
            D[O] = *Src;
        std::fill(D + B, D + X1, T(0));
      }
      Pos += X1 - X0;
    }
  }
}

/// Y[n, m] = B[m] for every position, or 0 without bias. Accumulate
/// (OomplanConv, Y already holds the residual): Y[n, m] += B[m] instead.
template <typename T>
void initBias(const KernelContext &C, T *Y, int64_t Channels, int64_t Size,
              bool Accumulate) {
  const T *B = hasInput(C, 2) ? C.Inputs[2].data<const T>() : nullptr;
  for (int64_t M = 0; M < Channels; ++M) {
    if (!Accumulate)
      std::fill(Y + M * Size, Y + (M + 1) * Size, B ? B[M] : T(0));
    else if (B)
      for (T *P = Y + M * Size; P != Y + (M + 1) * Size; ++P)
        *P += B[M];
  }
}

/// Rows [M0, M1), columns [N0, N1) of Y (row stride Ld) set to their row's
/// bias (0 without B), or with the bias added when Accumulate: the start of
/// a GEMM tile that accumulates onto it (beta 1).
template <typename T>
void initBiasTile(T *Y, int64_t Ld, const T *B, bool Accumulate, int64_t M0,
                  int64_t M1, int64_t N0, int64_t N1) {
  for (int64_t Row = M0; Row < M1; ++Row) {
    T *P = Y + Row * Ld;
    if (!Accumulate)
      std::fill(P + N0, P + N1, B ? B[Row] : T(0));
    else if (B)
      for (int64_t J = N0; J < N1; ++J)
        P[J] += B[Row];
  }
}

/// Depth (rows of the im2col matrix) up to which convGemm runs an im2col
/// product; deeper ones go to OpenBLAS, whose kernel runs deep products at
/// 88% of a core's peak against convGemm's 78% (docs/runtime.md): measured
/// on ResNet-18's 3x3 convolutions (576 to 4608 deep), convGemm was 13%
/// slower overall; on a text detector's shallow ones, 15% faster.
constexpr int64_t ConvGemmMaxDepth = 512;

/// Convolutions on small maps with every image at once, where the plan
/// has room (Kernel::RoomyWorkspace). Below BatchedMaxColumns output
/// positions an image (the 7x7 maps at the end of ResNets and MobileNets)
/// each image's product is a few dozen columns wide: OpenBLAS packed the
/// whole weight matrix (up to 9.4 MB) for 49 columns, convGemm read it in
/// place for as few. One product over every image's columns (im2col's,
/// or the input planes' for a pointwise convolution, copied side by side:
/// Rows x Batch*OutSize) packs it once per thread; the product (M x
/// Batch*OutSize) is then stored image by image with the bias. The GEMM
/// alone, single-threaded at 49 columns and batch 8: ResNet's 7x7 3x3
/// layer (4608 deep) 65 to 89 GFLOP/s, its 1x1 layers 64 to 80.
/// At 196 columns (14x14) a 3x3 layer measured the same either way with
/// two threads, its batched columns (14 MB at batch 8) out of cache.
constexpr int64_t BatchedMaxColumns = 128;

/// Only for weights over 1 MiB: smaller ones stay in cache from one
/// image's product to the next, and the batched path's copies cost more
/// than it saves. Measured at batch 8 on 7x7 maps, two threads, in a
/// model: ResNet's 3x3 512 -> 512 (9.4 MB of weights) 15.4 to 12.8 ms, its
/// 1x1 2048 -> 512 (4 MB) 7.3 to 5.3 and 512 -> 2048 6.0 to 5.5; but
/// MobileNetV2's 1x1 960 -> 160 (0.6 MB) 1.23 to 1.32.
constexpr uint64_t BatchedMinWeightBytes = uint64_t(1) << 20;

/// Products up to this deep run on convGemm, deeper ones on OpenBLAS
/// (single-threaded at 392 columns: convGemm 77-84 against 67-73 GFLOP/s
/// at depth 96 and 160, even at 256, 68 against 80 at 512).
constexpr int64_t BatchedConvGemmMaxDepth = 256;

struct BatchedIm2col {
  bool Use = false;
  uint64_t Bytes = 0;
};

BatchedIm2col batchedIm2col(int64_t Batch, int64_t Group, int64_t Rows,
                            int64_t M, int64_t OutSize,
                            const ColumnTiles &Tiles) {
  BatchedIm2col B;
  // A 1x1 output (squeeze-excite) has its own one-GEMM path.
  if (Group != 1 || Batch < 2 || Tiles.Count != 1 || OutSize < 2 ||
      OutSize >= BatchedMaxColumns ||
      llvm::SaturatingMultiply(uint64_t(M), uint64_t(Rows)) * sizeof(float) <
          BatchedMinWeightBytes)
    return B;
  B.Use = true;
  B.Bytes = llvm::SaturatingMultiply(
      llvm::SaturatingMultiply(uint64_t(Rows) + uint64_t(M), uint64_t(Batch)),
      llvm::SaturatingMultiply(uint64_t(OutSize), uint64_t(sizeof(float))));
  return B;
}

/// The batched path above, for a float convolution it applies to.
void im2colBatched(const KernelContext &C, const WindowGeometry &G,
                   bool Accumulate, ConvTileFn Post) {
  const TensorRef &X = C.Inputs[0], &W = C.Inputs[1], &Y = C.Outputs[0];
  const int64_t Batch = X.Dims[0], Ch = X.Dims[1], M = W.Dims[0];
  const int64_t Rows = Ch * G.kernelSize(), InSize = G.inSize();
  const int64_t OutSize = G.outSize(), Cols = Batch * OutSize;
  const float *Bias =
      hasInput(C, 2) ? C.Inputs[2].data<const float>() : nullptr;
  float *Col = static_cast<float *>(C.Workspace);
  float *Prod = Col + Rows * Cols;
  // Image N's columns are [N * OutSize, (N + 1) * OutSize) of every row.
  C.Pool.parallelFor(Batch * Rows, 16, [&](int64_t B0, int64_t B1) {
    for (int64_t T = B0; T < B1;) {
      const int64_t N = T / Rows, R0 = T % Rows;
      const int64_t R1 = std::min(Rows, R0 + (B1 - T));
      im2colTile(X.data<const float>() + N * Ch * InSize, G, 0, OutSize, R0, R1,
                 Col + N * OutSize, Cols);
      T += R1 - R0;
    }
  });
  if (Rows <= BatchedConvGemmMaxDepth) {
    // Column blocks of 16, one per thread.
    const int64_t Threads = int64_t(C.Pool.threads());
    const int64_t Step = ((Cols + Threads - 1) / Threads + 15) / 16 * 16;
    C.Pool.parallelFor(
        (Cols + Step - 1) / Step, 1, [&](int64_t T0, int64_t T1) {
          for (int64_t T = T0; T < T1; ++T) {
            const int64_t N0 = T * Step, N1 = std::min(Cols, N0 + Step);
            convGemm(M, N1 - N0, Rows, W.data<const float>(), Rows, Col + N0,
                     Cols, Prod + N0, Cols, nullptr, false);
          }
        });
  } else {
    parallelGemm<float>(C.Pool, false, false, M, Cols, Rows, 1.0f,
                        W.data<const float>(), Rows, Col, Cols, 0.0f, Prod,
                        Cols);
  }
  float *Yd = Y.data<float>();
  C.Pool.parallelFor(Batch * M, std::max<int64_t>(1, 4096 / OutSize),
                     [&](int64_t P0, int64_t P1) {
                       for (int64_t P = P0; P < P1; ++P) {
                         const int64_t N = P / M, Chan = P % M;
                         const float B = Bias ? Bias[Chan] : 0.0f;
                         const float *Src = Prod + Chan * Cols + N * OutSize;
                         float *Dst = Yd + P * OutSize;
                         if (Accumulate)
                           for (int64_t I = 0; I < OutSize; ++I)
                             Dst[I] += Src[I] + B;
                         else
                           for (int64_t I = 0; I < OutSize; ++I)
                             Dst[I] = Src[I] + B;
                       }
                       // Post in runs of planes of one image.
                       for (int64_t P = P0; Post && P < P1;) {
                         const int64_t End = std::min(P1, (P / M + 1) * M);
                         Post(P, End, 0, OutSize);
                         P = End;
                       }
                     });
}

/// Threads that can build tiles at once, each in its own slot of Rows x
/// Tiles.Width elements: where every tile has a slot the workspace holds
/// the matrix itself (columnElements), whose last tile may be narrower, so
/// a full-width slot there fits only as often as the whole width does.
int64_t im2colWorkers(const KernelContext &C, const ColumnTiles &Tiles,
                      int64_t Rows, uint64_t ElemBytes) {
  const uint64_t SlotBytes = uint64_t(Rows * Tiles.Width) * ElemBytes;
  const int64_t Fit = SlotBytes ? int64_t(C.WorkspaceBytes / SlotBytes) : 0;
  return std::min<int64_t>({int64_t(C.Pool.threads()), Tiles.Slots, Fit});
}

/// The im2col products of every (image, group) when the workspace has a
/// slot per thread: each thread takes the next tile of any image from one
/// counter and builds and multiplies it in its own slot, so that no thread
/// waits for another until the last tile (a parallelFor per image left a
/// thread idle whenever an image's tiles did not divide among the
/// threads). A tile's result does not depend on the thread or slot.
template <typename T>
void im2colAllImages(const KernelContext &C, const WindowGeometry &G,
                     const ColumnTiles &Tiles, bool Accumulate, ConvTileFn Post,
                     const ConvClamp *Clamp) {
  const TensorRef &X = C.Inputs[0], &W = C.Inputs[1], &Y = C.Outputs[0];
  const int64_t Group = C.N.getInt("group", 1);
  const int64_t Batch = X.Dims[0], Ch = X.Dims[1], M = W.Dims[0];
  const int64_t Cg = Ch / Group, Mg = M / Group, KSize = G.kernelSize();
  const int64_t InSize = G.inSize(), OutSize = G.outSize(), Rows = Cg * KSize;
  const T *Bias = hasInput(C, 2) ? C.Inputs[2].data<const T>() : nullptr;
  T *Col = static_cast<T *>(C.Workspace);
  const int64_t Total = Batch * Group * Tiles.Count;
  std::atomic<int64_t> Next{0};
  const int64_t Workers = im2colWorkers(C, Tiles, Rows, sizeof(T));
  C.Pool.parallelFor(Workers, 1, [&](int64_t S0, int64_t S1) {
    for (int64_t S = S0; S < S1; ++S) {
      T *Slot = Col + S * Rows * Tiles.Width;
      for (int64_t Task; (Task = Next.fetch_add(1)) < Total;) {
        const int64_t Tile = Task % Tiles.Count, Prod = Task / Tiles.Count;
        const int64_t N = Prod / Group, Gr = Prod % Group;
        const int64_t N0 = Tile * Tiles.Width;
        const int64_t N1 = std::min(OutSize, N0 + Tiles.Width);
        const T *Xg = X.data<const T>() + (N * Ch + Gr * Cg) * InSize;
        T *Yg = Y.data<T>() + (N * M + Gr * Mg) * OutSize;
        const T *Bg = Bias ? Bias + Gr * Mg : nullptr;
        const T *Wg = W.data<const T>() + Gr * Mg * Rows;
        im2colTile(Xg, G, N0, N1, 0, Rows, Slot);
        bool Done = false;
        if constexpr (std::is_same<T, float>::value)
          if (Rows <= ConvGemmMaxDepth) {
            convGemm(Mg, N1 - N0, Rows, Wg, Rows, Slot, N1 - N0, Yg + N0,
                     OutSize, Bg, Accumulate, Clamp);
            Done = true;
          }
        if (!Done) {
          // The bias goes into the tile just before the product
          // accumulates onto it (beta 1), while it is in cache.
          initBiasTile(Yg, OutSize, Bg, Accumulate, 0, Mg, N0, N1);
          gemm<T>(false, false, Mg, N1 - N0, Rows, T(1), Wg, Rows, Slot,
                  N1 - N0, T(1), Yg + N0, OutSize);
        }
        if (Post && !(Done && Clamp))
          Post(N * M + Gr * Mg, N * M + (Gr + 1) * Mg, N0, N1);
      }
    }
  });
}

template <typename T>
llvm::Error convTyped(const KernelContext &C, const WindowGeometry &G,
                      bool Accumulate, ConvTileFn Post,
                      const ConvClamp *Clamp) {
  const TensorRef &X = C.Inputs[0], &W = C.Inputs[1], &Y = C.Outputs[0];
  const int64_t Group = C.N.getInt("group", 1);
  const int64_t Batch = X.Dims[0], Ch = X.Dims[1], M = W.Dims[0];
  std::string Why = convChannels(C.N, X, W, Y);
  if (!Why.empty())
    return C.badInput(Why);
  if (hasInput(C, 2) && int64_t(C.Inputs[2].numElements()) != M)
    return C.badInput("bias length differs from the output channels");
  if (isDepthwise(C.N, X, W)) {
    depthwiseConv<T>(C, G, Accumulate, Post, Clamp);
    return llvm::Error::success();
  }
  if constexpr (std::is_same<T, float>::value)
    if (takesDirect(C.N, C.Inputs, G)) {
      directConv(C, G, Accumulate, Post, Clamp);
      return llvm::Error::success();
    }
  const int64_t Cg = Ch / Group, Mg = M / Group, KSize = G.kernelSize();
  const int64_t InSize = G.inSize(), OutSize = G.outSize();
  const bool Pointwise = isPointwise(G);
  const ColumnTiles Tiles = columnTiles(Cg * KSize, OutSize, sizeof(T));
  const uint64_t Need = columnElements(Tiles, Cg * KSize, OutSize) * sizeof(T);
  if constexpr (std::is_same<T, float>::value) {
    // 3x3 at stride 1 as Winograd F(2x2, 3x3) where its workspace is
    // within im2col's (the plan's workspace is convWorkspace's choice), or
    // where a roomy plan gave its larger one (convRoomyWorkspaceBytes,
    // convRoomierWorkspaceBytes), on a map of any size.
    WinogradPlan P = winogradPlan(G, Batch, Ch, M, Group, Need);
    if (!P.Use && C.Workspace) {
      const WinogradPlan R =
          roomyWinogradPlan(G, Batch, Ch, M, Group, /*SmallMaps=*/true);
      if (R.Use && C.WorkspaceBytes >= R.Bytes)
        P = R;
    }
    if (P.Use) {
      if (!C.Workspace || C.WorkspaceBytes < P.Bytes)
        return C.badInput("the plan gave " + llvm::Twine(C.WorkspaceBytes) +
                          " workspace bytes, Winograd needs " +
                          llvm::Twine(P.Bytes));
      winogradConv(C, G, P, Accumulate, Post, Clamp);
      return llvm::Error::success();
    }
  }
  if constexpr (std::is_same<T, float>::value) {
    const BatchedIm2col B =
        batchedIm2col(Batch, Group, Cg * KSize, M, OutSize, Tiles);
    if (B.Use && C.Workspace && C.WorkspaceBytes >= B.Bytes) {
      im2colBatched(C, G, Accumulate, Post);
      return llvm::Error::success();
    }
  }
  if (!Pointwise && (!C.Workspace || C.WorkspaceBytes < Need))
    return C.badInput("the plan gave " + llvm::Twine(C.WorkspaceBytes) +
                      " workspace bytes, im2col needs " + llvm::Twine(Need));
  T *Col = static_cast<T *>(C.Workspace);
  const T *Bias = hasInput(C, 2) ? C.Inputs[2].data<const T>() : nullptr;
  const T *Wt = W.data<const T>();
  if (Pointwise && OutSize == 1 && Group == 1 && Batch > 1) {
    // Every image is one column: Y (Batch x M) = X (Batch x Ch) W^T in one
    // GEMM that reads the weights once, where a product per image read
    // them Batch times (the squeeze-excite blocks of mobile networks).
    T *Yd = Y.data<T>();
    for (int64_t I = 0; I < Batch * M; ++I) {
      const T B = Bias ? Bias[I % M] : T(0);
      Yd[I] = Accumulate ? Yd[I] + B : B;
    }
    auto PostImages = [&](int64_t N0, int64_t N1, int64_t M0, int64_t M1) {
      if (Post)
        for (int64_t N = N0; N < N1; ++N)
          Post(N * M + M0, N * M + M1, 0, 1);
    };
    parallelGemm<T>(C.Pool, false, true, Batch, M, Ch, T(1), X.data<const T>(),
                    Ch, Wt, Ch, T(1), Yd, M, {}, PostImages);
    return llvm::Error::success();
  }
  if constexpr (std::is_same<T, float>::value)
    if (Pointwise) {
      pointwiseConvFloat(C, Batch, Group, Cg, Mg, OutSize, Accumulate, Post,
                         Clamp);
      return llvm::Error::success();
    }
  // All images' tiles at once when the workspace's slots keep the threads
  // busy (one per thread, or at least eight); else tile by tile.
  if (!Pointwise && im2colWorkers(C, Tiles, Cg * KSize, sizeof(T)) >=
                        std::min<int64_t>(int64_t(C.Pool.threads()), 8)) {
    im2colAllImages<T>(C, G, Tiles, Accumulate, Post, Clamp);
    return llvm::Error::success();
  }
  for (int64_t N = 0; N < Batch; ++N) {
    for (int64_t Gr = 0; Gr < Group; ++Gr) {
      const T *Xg = X.data<const T>() + (N * Ch + Gr * Cg) * InSize;
      T *Yg = Y.data<T>() + (N * M + Gr * Mg) * OutSize;
      const T *Bg = Bias ? Bias + Gr * Mg : nullptr;
      const T *Wg = Wt + Gr * Mg * Cg * KSize;
      // The bias goes into each GEMM tile just before the tile accumulates
      // onto it (beta 1), on the same thread, while it is in cache.
      auto InitTile = [&](int64_t M0, int64_t M1, int64_t N0, int64_t N1) {
        initBiasTile(Yg, OutSize, Bg, Accumulate, M0, M1, N0, N1);
      };
      // Post in planes of the whole output: rows of this group's GEMM
      // are channels Gr * Mg + row of image N.
      const int64_t Plane0 = N * M + Gr * Mg;
      auto PostRows = [&](int64_t M0, int64_t M1, int64_t N0, int64_t N1) {
        if (Post)
          Post(Plane0 + M0, Plane0 + M1, N0, N1);
      };
      if (Pointwise) {
        const PointwiseTiles PT = pointwiseTiles(Mg, Cg, OutSize, sizeof(T));
        if (PT.Count < 2 * int64_t(C.Pool.threads())) {
          parallelGemm<T>(C.Pool, false, false, Mg, OutSize, Cg, T(1), Wg, Cg,
                          Xg, OutSize, T(1), Yg, OutSize, InitTile, PostRows);
          continue;
        }
        C.Pool.parallelFor(PT.Count, 1, [&](int64_t T0, int64_t T1) {
          for (int64_t Tile = T0; Tile < T1; ++Tile) {
            const int64_t N0 = Tile * PT.Width;
            const int64_t N1 = std::min(OutSize, N0 + PT.Width);
            InitTile(0, Mg, N0, N1);
            gemm<T>(false, false, Mg, N1 - N0, Cg, T(1), Wg, Cg, Xg + N0,
                    OutSize, T(1), Yg + N0, OutSize);
            PostRows(0, Mg, N0, N1);
          }
        });
        continue;
      }
      // Fewer slots than threads (small maps): each tile is built and
      // multiplied by all threads together.
      const int64_t Rows = Cg * KSize;
      for (int64_t Tile = 0; Tile < Tiles.Count; ++Tile) {
        const int64_t N0 = Tile * Tiles.Width;
        const int64_t N1 = std::min(OutSize, N0 + Tiles.Width);
        C.Pool.parallelFor(Rows, 1, [&](int64_t R0, int64_t R1) {
          im2colTile(Xg, G, N0, N1, R0, R1, Col);
        });
        auto Init = [&](int64_t M0, int64_t M1, int64_t A, int64_t B) {
          InitTile(M0, M1, N0 + A, N0 + B);
        };
        auto Done = [&](int64_t M0, int64_t M1, int64_t A, int64_t B) {
          PostRows(M0, M1, N0 + A, N0 + B);
        };
        parallelGemm<T>(C.Pool, false, false, Mg, N1 - N0, Rows, T(1), Wg, Rows,
                        Col, N1 - N0, T(1), Yg + N0, OutSize, Init, Done);
      }
    }
  }
  return llvm::Error::success();
}

llvm::Error runConv(const KernelContext &C) {
  return runConvInto(C, /*Accumulate=*/false);
}

uint64_t convTransposeWorkspace(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                                llvm::ArrayRef<TensorRef> Outputs) {
  WindowGeometry G;
  if (!convGeometry(N, Inputs, Outputs, true, G).empty())
    return 0;
  const uint64_t Mg = uint64_t(Inputs[1].Dims[1]);
  return Mg * uint64_t(G.kernelSize()) * uint64_t(G.inSize()) *
         elemBytes(Inputs[0].Type);
}

/// Adds the columns (Mg*K rows, inSize columns) into Y's Mg channels. Row
/// by row of the input's last axis: the outer axes' output offset is found
/// once per row and the last axis's valid range once per tap, so the inner
/// loop is a strided add without a division (a division per element made
/// col2im most of a 2x2 stride-2 upsampling's time).
template <typename T>
void col2im(const T *Col, int64_t Mg, const WindowGeometry &G, T *Y,
            ThreadPool &Pool) {
  const int64_t R = int64_t(G.rank()), KSize = G.kernelSize();
  const int64_t InSize = G.inSize(), OutSize = G.outSize();
  const int64_t InLast = G.In[R - 1], OutLast = G.Out[R - 1];
  const int64_t SL = G.S[R - 1], PL = G.PadBegin[R - 1], DL = G.D[R - 1];
  const int64_t Rows = InSize / std::max<int64_t>(1, InLast);
  DimVector OutStr = stridesOf(G.Out);
  // Parallel over output channels: rows of one channel write one plane.
  Pool.parallelFor(Mg, 1, [&](int64_t Begin, int64_t End) {
    DimVector KK;
    for (int64_t M = Begin; M < End; ++M)
      for (int64_t K = 0; K < KSize; ++K) {
        kernelOffsets(G, K, KK);
        const T *Src = Col + (M * KSize + K) * InSize;
        T *Dst = Y + M * OutSize;
        // Input positions X whose output X * SL - PL + KK * DL lies in
        // [0, OutLast).
        const int64_t Shift = KK[R - 1] * DL - PL;
        int64_t Lo = Shift >= 0 ? 0 : (-Shift + SL - 1) / SL;
        int64_t Hi = OutLast - 1 - Shift < 0 ? -1 : (OutLast - 1 - Shift) / SL;
        Hi = std::min(Hi, InLast - 1);
        if (Lo > Hi)
          continue;
        for (int64_t Row = 0; Row < Rows; ++Row) {
          int64_t Rem = Row, Off = 0;
          bool Inside = true;
          for (int64_t A = R - 2; A >= 0 && Inside; --A) {
            int64_t X = Rem % G.In[A];
            Rem /= G.In[A];
            int64_t O = X * G.S[A] - G.PadBegin[A] + KK[A] * G.D[A];
            Inside = O >= 0 && O < G.Out[A];
            Off += O * OutStr[A];
          }
          if (!Inside)
            continue;
          const T *S = Src + Row * InLast;
          T *D = Dst + Off + Shift;
          if (SL == 1)
            for (int64_t X = Lo; X <= Hi; ++X)
              D[X] += S[X];
          else
            for (int64_t X = Lo; X <= Hi; ++X)
              D[X * SL] += S[X];
        }
      }
  });
}

template <typename T>
llvm::Error convTransposeTyped(const KernelContext &C,
                               const WindowGeometry &G) {
  const TensorRef &X = C.Inputs[0], &W = C.Inputs[1], &Y = C.Outputs[0];
  const int64_t Group = C.N.getInt("group", 1);
  const int64_t Batch = X.Dims[0], Ch = X.Dims[1];
  if (Group <= 0 || Ch % Group || W.Dims[0] != Ch ||
      Y.Dims[1] != W.Dims[1] * Group || Y.Dims[0] != Batch)
    return C.badInput("channels of X, W and Y do not match group " +
                      llvm::Twine(Group));
  const int64_t Cg = Ch / Group, Mg = W.Dims[1], M = Mg * Group;
  if (hasInput(C, 2) && int64_t(C.Inputs[2].numElements()) != M)
    return C.badInput("bias length differs from the output channels");
  const int64_t KSize = G.kernelSize(), InSize = G.inSize(),
                OutSize = G.outSize();
  const uint64_t Need = uint64_t(Mg * KSize * InSize) * sizeof(T);
  if (Need && (!C.Workspace || C.WorkspaceBytes < Need))
    return C.badInput("the plan gave " + llvm::Twine(C.WorkspaceBytes) +
                      " workspace bytes, col2im needs " + llvm::Twine(Need));
  T *Col = static_cast<T *>(C.Workspace);
  for (int64_t N = 0; N < Batch; ++N) {
    T *Yn = Y.data<T>() + N * M * OutSize;
    initBias(C, Yn, M, OutSize, /*Accumulate=*/false);
    for (int64_t Gr = 0; Gr < Group; ++Gr) {
      const T *Xg = X.data<const T>() + (N * Ch + Gr * Cg) * InSize;
      const T *Wg = W.data<const T>() + Gr * Cg * Mg * KSize;
      parallelGemm<T>(C.Pool, true, false, Mg * KSize, InSize, Cg, T(1), Wg,
                      Mg * KSize, Xg, InSize, T(0), Col, InSize);
      col2im(Col, Mg, G, Yn + Gr * Mg * OutSize, C.Pool);
    }
  }
  return llvm::Error::success();
}

llvm::Error runConvTranspose(const KernelContext &C) {
  WindowGeometry G;
  std::string Why = convGeometry(C.N, C.Inputs, C.Outputs, true, G);
  if (!Why.empty())
    return C.badInput(Why);
  useBlasThreads(C.Pool.threads());
  if (C.Inputs[0].Type == ElementType::Double)
    return convTransposeTyped<double>(C, G);
  if (C.Inputs[0].Type != ElementType::Float)
    return C.unsupported("ConvTranspose of type " +
                         elementTypeName(C.Inputs[0].Type));
  return convTransposeTyped<float>(C, G);
}

} // namespace

llvm::Error runConvInto(const KernelContext &C, bool Accumulate,
                        ConvTileFn Post, const ConvClamp *Clamp) {
  WindowGeometry G;
  std::string Why = convGeometry(C.N, C.Inputs, C.Outputs, false, G);
  if (!Why.empty())
    return C.badInput(Why);
  useBlasThreads(C.Pool.threads());
  if (C.Inputs[0].Type == ElementType::Double)
    return convTyped<double>(C, G, Accumulate, Post, nullptr);
  if (C.Inputs[0].Type != ElementType::Float)
    return C.unsupported("Conv of type " + elementTypeName(C.Inputs[0].Type));
  return convTyped<float>(C, G, Accumulate, Post, Clamp);
}

uint64_t convWorkspaceBytes(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                            llvm::ArrayRef<TensorRef> Outputs) {
  return convWorkspace(N, Inputs, Outputs);
}

namespace {
/// Conv's larger workspaces: SmallMaps as roomyWinogradPlan's.
uint64_t convLargerWorkspaceBytes(const Node &N,
                                  llvm::ArrayRef<TensorRef> Inputs,
                                  llvm::ArrayRef<TensorRef> Outputs,
                                  bool SmallMaps) {
  WindowGeometry G;
  if (!convGeometry(N, Inputs, Outputs, false, G).empty() ||
      Inputs[0].Type != ElementType::Float ||
      isDepthwise(N, Inputs[0], Inputs[1]) || takesDirect(N, Inputs, G))
    return 0;
  const int64_t Group = N.getInt("group", 1);
  const int64_t Batch = Inputs[0].Dims[0], M = Inputs[1].Dims[0];
  const int64_t Rows = Inputs[1].Dims[1] * G.kernelSize();
  const ColumnTiles T = columnTiles(Rows, G.outSize(), sizeof(float));
  // Winograd's choice is made against the plain im2col workspace, and it
  // stands: the batched path serves what stays on im2col.
  const uint64_t Im2col = columnElements(T, Rows, G.outSize()) * sizeof(float);
  if (winogradPlan(G, Batch, Inputs[0].Dims[1], M, Group, Im2col).Use)
    return 0;
  const WinogradPlan R =
      roomyWinogradPlan(G, Batch, Inputs[0].Dims[1], M, Group, SmallMaps);
  if (R.Use)
    return R.Bytes;
  const BatchedIm2col B = batchedIm2col(Batch, Group, Rows, M, G.outSize(), T);
  return B.Use ? B.Bytes : 0;
}
} // namespace

uint64_t convRoomyWorkspaceBytes(const Node &N,
                                 llvm::ArrayRef<TensorRef> Inputs,
                                 llvm::ArrayRef<TensorRef> Outputs) {
  // Maps of BatchedMaxColumns positions and more, which the batched path
  // never takes, may take Winograd's larger workspace instead.
  return convLargerWorkspaceBytes(N, Inputs, Outputs, /*SmallMaps=*/false);
}

uint64_t convRoomierWorkspaceBytes(const Node &N,
                                   llvm::ArrayRef<TensorRef> Inputs,
                                   llvm::ArrayRef<TensorRef> Outputs) {
  // Winograd on the small maps too (ResNet's 7x7 3x3 layers: 1.72x fewer
  // multiplications than im2col's), but its transformed weights (16 x
  // Cout x Cin floats, 16.8 MB at 512 channels) outweigh a small model's
  // whole arena at batch 1: a level of its own, so that a plan that
  // cannot afford it keeps the roomy workspaces.
  return convLargerWorkspaceBytes(N, Inputs, Outputs, /*SmallMaps=*/true);
}

void registerConvKernels(CPUKernelTable &T) {
  Kernel Conv{&runConv, &convWorkspace, floatTypes()};
  Conv.RoomyWorkspace = &convRoomyWorkspaceBytes;
  Conv.RoomierWorkspace = &convRoomierWorkspaceBytes;
  addKernel(T, "Conv", Conv);
  addKernel(T, "ConvTranspose",
            Kernel{&runConvTranspose, &convTransposeWorkspace, floatTypes()});
  registerCol2ImKernels(T);
  registerDeformConvKernels(T);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
