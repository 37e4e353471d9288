//===- Launch.h - the CUDA kernels' launchers, in plain types ---*- C++ -*-===//
//
// The .cu files define these; the kernel-table files (C++, compiled by the
// host compiler) call them. Only plain types cross this line, so nvcc never
// parses LLVM's headers (slower to compile, and not needed on the device).
// Every launcher queues work on Stream and returns cudaGetLastError()'s
// value (0 = success) as an int, so that this header needs no CUDA header.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_LAUNCH_H
#define OOMPLAN_LIB_RUNTIME_CUDA_KERNELS_LAUNCH_H

#include "../../CPU/Kernels/DeformConvPoint.h"
#include "../../CPU/Kernels/GridSamplePoint.h"
#include "../../CPU/Kernels/LRNPoint.h"
#include "../../CPU/Kernels/PadSource.h"
#include "../../CPU/Kernels/PoolPoint.h"
#include "../../CPU/Kernels/QuantizePoint.h"
#include "../../CPU/Kernels/RecurrentCell.h"
#include "../../CPU/Kernels/ResizeTaps.h"
#include "../../CPU/Kernels/RoiAlignPoint.h"
#include <cstdint>

typedef struct CUstream_st *cudaStream_t;

namespace oomplan {
namespace runtime {
namespace cuda {

constexpr int MaxRank = 8;

/// Element types the kernels handle (ElementType's subset).
enum class DType : int { F32, F64, I32, I64, Bool, U8, I8, F16, BF16 };

/// An N-d index space and, per operand, its element strides into it (0 on a
/// broadcast axis). Rank <= MaxRank; rank 0 is one element.
struct Strided {
  int Rank = 0;
  int64_t Dims[MaxRank] = {};
  int64_t Stride[3][MaxRank] = {};
};

enum class UnaryOp : int {
  Relu,
  Sigmoid,
  Tanh,
  Erf,
  Exp,
  Log,
  Sqrt,
  Neg,
  Abs,
  Reciprocal,
  Floor,
  Ceil,
  Sin,
  Cos,
  Clip,
  LeakyRelu,
  HardSigmoid,
  Softplus,
  Gelu,
  Sign,
  Not,
  PowScalar,
  Round,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Softsign,
  HardSwish,
  Elu,
  Selu,
  Celu,
  ThresholdedRelu,
  Shrink,
  DivScalar,
  GeluTanh, ///< Gelu's approximate="tanh"
  Mish
};
/// Out[i] = op(In[i]) for N elements (In may equal Out). A and B are the
/// op's parameters (Clip: min, max; LeakyRelu, Elu, Celu, ThresholdedRelu:
/// alpha; HardSigmoid: alpha, beta; Selu: alpha, gamma; Shrink: lambd,
/// bias; PowScalar: the exponent; DivScalar: the divisor, Mean's count).
/// F32 and F64 (Not: Bool; Neg, Abs, Sign, Relu: also I32, I64).
int unary(UnaryOp Op, DType T, const void *In, void *Out, int64_t N, double A,
          double B, cudaStream_t Stream);

/// Out[i] = whether In[i] is NaN (IsNaN), or an infinity of a sign Flags
/// asks for (IsInf: bit 0 positive, bit 1 negative), F32 and F64.
enum class FloatClass : int { NaN, Inf };
int classify(FloatClass What, int Flags, DType T, const void *In, bool *Out,
             int64_t N, cudaStream_t Stream);

enum class BinaryOp : int {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Max,
  Min,
  Mod,  ///< numpy.mod: the divisor's sign (ONNX Mod, fmod=0)
  FMod, ///< C's fmod: the dividend's sign (fmod=1)
  Equal,
  Greater,
  Less,
  GreaterOrEqual,
  LessOrEqual,
  And,
  Or,
  Xor,
  PRelu
};
/// Out = A op B over S (operand 0 is A, 1 is B, 2 is Out). Comparisons
/// write Bool. T is the operands' type.
int binary(BinaryOp Op, DType T, const void *A, const void *B, void *Out,
           const Strided &S, cudaStream_t Stream);

/// BitShift of unsigned integers of ElemBytes (1, 2, 4 or 8) over S: A
/// shifted left (Left) or right by B; a shift by the width or more gives 0
/// (numpy's, and the CPU kernel's).
int bitShift(const void *A, const void *B, void *Out, int ElemBytes, bool Left,
             const Strided &S, cudaStream_t Stream);

/// BitwiseAnd (Op 0), BitwiseOr (1) and BitwiseXor (2) of integers of
/// ElemBytes (1, 2, 4 or 8; the sign does not matter) over S; BitwiseNot
/// (3) of N = S's count elements of A (B unused, S dense).
int bitwise(int Op, const void *A, const void *B, void *Out, int ElemBytes,
            const Strided &S, cudaStream_t Stream);

/// Out = Cond ? X : Y over S (operand 0 Cond, 1 X, 2 Y; Out is dense), for
/// elements of ElemBytes (1, 2, 4 or 8).
int where(const bool *Cond, const void *X, const void *Y, void *Out,
          int ElemBytes, const Strided &S, cudaStream_t Stream);

/// Out (dense over S) = In at operand 0's strides (plus InOffset elements):
/// Expand, Transpose, Slice and any other strided view made dense.
int stridedCopy(const void *In, int64_t InOffset, void *Out, int ElemBytes,
                const Strided &S, cudaStream_t Stream);

/// Out at operand 1's strides (plus OutOffset) = In at operand 0's strides
/// (plus InOffset), over S's index space: copies into a strided part of
/// Out (Pad's interior).
int stridedCopy2(const void *In, int64_t InOffset, void *Out, int64_t OutOffset,
                 int ElemBytes, const Strided &S, cudaStream_t Stream);

/// Pad's edge, reflect and wrap modes: every element of Out (G.OutDims)
/// read from In where pad::sourceOf says, elements of ElemBytes (1, 2, 4 or
/// 8); an element with no source (an empty input axis) gets Constant's low
/// ElemBytes bytes.
int padGather(const void *In, void *Out, int ElemBytes, const pad::Geometry &G,
              uint64_t Constant, cudaStream_t Stream);

/// Converts N elements, as the CPU's Cast: to bool x != 0; float to integer
/// truncating, saturating, NaN to 0; float16 rounded once from the source.
int cast(DType From, DType To, const void *In, void *Out, int64_t N,
         cudaStream_t Stream);

/// Fills Bytes with the PatternBytes-wide Pattern (1, 2, 4 or 8 bytes).
int fill(void *Out, uint64_t Bytes, uint64_t Pattern, int PatternBytes,
         cudaStream_t Stream);

/// Writes N int64 values given by value (Shape: the dims, at most MaxRank).
struct SmallInts {
  int N = 0;
  int64_t V[MaxRank] = {};
};
int writeInts(int64_t *Out, const SmallInts &V, cudaStream_t Stream);

/// Writes N bytes given by value (a shape value computed on the host).
struct SmallBytes {
  uint32_t N = 0;
  unsigned char B[512] = {};
};
int writeBytes(void *Out, const SmallBytes &V, cudaStream_t Stream);

/// Range: Out[i] = Start[0] + i * Delta[0] for N elements (Start and Delta
/// are device scalars of type T).
int range(DType T, const void *Start, const void *Delta, void *Out, int64_t N,
          cudaStream_t Stream);

/// Gather along an axis: Data is [Outer, AxisDim, Inner] elements of
/// ElemBytes, Index holds NIdx indices (int32 or int64; negative counts
/// from the end); Out is [Outer, NIdx, Inner]. An index out of range
/// writes zeros and sets *BadIndex (device flag) to 1.
int gather(const void *Data, const void *Index, bool Index64, void *Out,
           int64_t Outer, int64_t AxisDim, int64_t Inner, int64_t NIdx,
           int ElemBytes, int *BadIndex, cudaStream_t Stream);

/// Hardmax over the middle axis of [Outer, Axis, Inner], F32: a thread a
/// line, 1 at its first largest element.
int hardmax(const float *In, float *Out, int64_t Outer, int64_t Axis,
            int64_t Inner, cudaStream_t Stream);
/// Softmax (Log: LogSoftmax) over the middle axis of [Outer, Axis, Inner],
/// F32.
int softmax(const float *In, float *Out, int64_t Outer, int64_t Axis,
            int64_t Inner, bool Log, cudaStream_t Stream);

/// LayerNormalization over the last Cols of Rows x Cols, F32: Y = (X -
/// mean) / sqrt(var + Eps) * Scale + Bias (Bias may be null). Scale and
/// Bias have Cols elements, or one (ScaleOne, BiasOne). Mean and InvStd
/// (may be null) get Rows each.
int layerNorm(const float *X, const float *Scale, const float *Bias, float *Y,
              float *Mean, float *InvStd, int64_t Rows, int64_t Cols, float Eps,
              bool ScaleOne, bool BiasOne, cudaStream_t Stream);

/// InstanceNormalization on [N * C planes, Size], F32: each plane
/// normalized by its own mean and variance (in double), then
/// Y = x_hat * Scale[c] + Bias[c] with c = plane % C.
int instanceNorm(const float *X, const float *Scale, const float *Bias,
                 float *Y, int64_t Planes, int64_t C, int64_t Size, float Eps,
                 cudaStream_t Stream);
/// GroupNormalization on [N * G groups, PerGroup * Plane], F32: each group
/// normalized by its own mean and variance (in double), then scaled and
/// shifted per channel c = (group % G) * PerGroup + i / Plane (PerChannel,
/// opset 21) or per group g = group % G (opset 18).
int groupNorm(const float *X, const float *Scale, const float *Bias, float *Y,
              int64_t Groups, int64_t G, int64_t PerGroup, int64_t Plane,
              bool PerChannel, float Eps, cudaStream_t Stream);

/// ArgMax (IsMax) or ArgMin along the middle axis of [Outer, Len, Inner]
/// (Len >= 1); Out gets [Outer, Inner] indices. numpy's rules: NaN wins,
/// ties go to the first index unless Last. F32, F64, I32, I64.
int argReduce(bool IsMax, bool Last, DType T, const void *In, int64_t *Out,
              int64_t Outer, int64_t Len, int64_t Inner, cudaStream_t Stream);

/// CumSum along the middle axis of [Outer, Len, Inner] (Out may be In).
/// F32, F64, I32, I64.
int cumSum(DType T, const void *In, void *Out, int64_t Outer, int64_t Len,
           int64_t Inner, bool Exclusive, bool Reverse, cudaStream_t Stream);

/// Trilu on N elements of matrices Rows x Cols: upper keeps j >= i + K,
/// lower keeps j <= i + K, the rest is zero bytes.
int trilu(const void *In, void *Out, int ElemBytes, int64_t N, int64_t Rows,
          int64_t Cols, int64_t K, bool Upper, cudaStream_t Stream);

/// MaxUnpool: each index is a flat offset into the default unpooled dims
/// Def (row-major); its coordinates there address Y (YDims, YStride). An
/// offset outside Def or past Y's dims is bad (the CPU kernel's error).
struct UnpoolArgs {
  int Rank = 0;
  int64_t Def[MaxRank] = {}, YDims[MaxRank] = {}, YStride[MaxRank] = {};
  int64_t DefCount = 0;
};
/// Y, zero-filled first (YBytes), gets X's N ElemBytes-wide elements at
/// the int64 indices Idx (A); a bad index sets *BadIndex and writes
/// nothing. Indices repeated with other values leave one of them (MaxPool's
/// repeat only with the same value).
int maxUnpool(const void *X, const int64_t *Idx, void *Y, uint64_t YBytes,
              int ElemBytes, int64_t N, const UnpoolArgs &A, int *BadIndex,
              cudaStream_t Stream);

/// EyeLike: a Rows x Cols matrix of ElemBytes-wide elements, One's bits on
/// the diagonal j = i + K and zero bytes elsewhere.
int eyeLike(void *Out, int ElemBytes, int64_t Rows, int64_t Cols, int64_t K,
            uint64_t One, cudaStream_t Stream);

/// ReverseSequence of X [T, B, Inner] (TimeMajor) or [B, T, Inner],
/// ElemBytes-wide elements: row t of batch b is row Len[b] - 1 - t below
/// Len[b] (int64 lengths), else itself. A length outside [0, T] sets
/// *BadIndex and leaves its batch's rows as they are.
int reverseSequence(const void *X, void *Y, const int64_t *Len, int ElemBytes,
                    int64_t T, int64_t B, int64_t Inner, bool TimeMajor,
                    int *BadIndex, cudaStream_t Stream);

/// TopK along the middle axis of [Outer, Len, Inner]: Values (may be null)
/// and Indices (may be null) get [Outer, K, Inner], larger (or smaller)
/// values first and equal values by index, as the CPU kernel. F32, F64,
/// I32, I64.
int topK(DType T, const void *In, void *Values, int64_t *Indices, int64_t Outer,
         int64_t Len, int64_t Inner, int64_t K, bool Largest,
         cudaStream_t Stream);

/// GatherElements and ScatterElements: index element I (of an index
/// tensor with IdxDims) names data's element at I's coordinates with the
/// axis one replaced by the index (negative from the end, AxisDim long).
struct ElementsArgs {
  int Rank = 0, Axis = 0;
  int64_t AxisDim = 0;
  int64_t IdxDims[MaxRank] = {}, DataStride[MaxRank] = {};
};
/// Out (IdxDims, dense) = the named elements of Data. Int32 or int64
/// indices; one out of range gives 0 and sets *BadIndex.
int gatherElements(const ElementsArgs &A, const void *Data, const void *Index,
                   bool Index64, void *Out, int ElemBytes, int64_t N,
                   int *BadIndex, cudaStream_t Stream);
/// Out's named elements = Updates, or with Reduce 1 (add), 3 (max) or 4
/// (min) combined with them (then of type T: F32, F64, I32, I64). Out
/// already holds the data.
int scatterElements(const ElementsArgs &A, void *Out, const void *Index,
                    bool Index64, const void *Updates, int Reduce, DType T,
                    int ElemBytes, int64_t N, int *BadIndex,
                    cudaStream_t Stream);

/// ScatterND and GatherND: tuple t (K int64 indices into data's dims after
/// the batch dims, of Dims and Stride) names a slice of Slice elements;
/// N = tuples * Slice. GatherND's batch dims: tuple t belongs to batch
/// t / Tuples, whose data starts at that times DataBatch (ScatterND has
/// none and ignores them).
struct NDArgs {
  int K = 0;
  int64_t Slice = 0;
  int64_t Tuples = 0, DataBatch = 0;
  int64_t Dims[MaxRank] = {}, Stride[MaxRank] = {};
};
int scatterND(const NDArgs &A, void *Out, const int64_t *Index,
              const void *Updates, int Reduce, DType T, int ElemBytes,
              int64_t N, int *BadIndex, cudaStream_t Stream);
/// Out (dense: tuples, then each slice) = the named slices of Data; an
/// index out of range gives 0 and sets *BadIndex.
int gatherND(const NDArgs &A, const void *Data, const int64_t *Index, void *Out,
             int ElemBytes, int64_t N, int *BadIndex, cudaStream_t Stream);

/// OneHot: Out [Outer, Depth, Inner] = OnOff[1] where the index at [Outer,
/// Inner] (IndexType F32, F64, I32 or I64; a float truncated toward zero,
/// a negative one counted from Depth) equals the depth position, else
/// OnOff[0] (two elements of ElemBytes, on the device).
int oneHot(DType IndexType, const void *Index, const void *OnOff, void *Out,
           int ElemBytes, int64_t Outer, int64_t Depth, int64_t Inner,
           cudaStream_t Stream);

/// Einsum from cpu::einsumSetup: Y (dense over OutDims) = the sum over
/// SumDims of the product of the operands at their strides. At most MaxOps
/// operands. F32, F64, I32, I64.
struct EinsumArgs {
  static constexpr int MaxOps = 4;
  int NOp = 0, OutRank = 0, SumRank = 0;
  int64_t OutDims[MaxRank] = {}, SumDims[MaxRank] = {};
  int64_t OutStride[MaxOps][MaxRank] = {}, SumStride[MaxOps][MaxRank] = {};
  const void *Data[MaxOps] = {};
};
int einsum(const EinsumArgs &A, DType T, void *Y, cudaStream_t Stream);

/// MaxPool, AveragePool (float) over Planes planes of W's window, one
/// thread an output (PoolPoint.h); Indices (may be null): MaxPool's.
int directPool(const pool::Window &W, pool::Kind Kd, const float *X, float *Y,
               int64_t *Indices, int64_t Planes, cudaStream_t Stream);

/// RoiAlign (float): X [N, C, H, W], Rois [NumRois, 4] and Batch (NumRois
/// int64 or int32 indices) into Y [NumRois, C, OH, OW] (RoiAlignPoint.h);
/// a batch index out of range gives zeros and sets *BadIndex.
int roiAlign(const roialign::Params &P, const float *X, const float *Rois,
             const void *Batch, bool Batch64, float *Y, int64_t N, int64_t C,
             int64_t H, int64_t W, int64_t NumRois, int *BadIndex,
             cudaStream_t Stream);

/// DeformConv (2-D, float): every element of P.Y, a thread each
/// (DeformConvPoint.h).
int deformConv(const deform::Params &P, cudaStream_t Stream);

/// QuantizeLinear: N float elements of X into Y, int8 (Signed) or uint8,
/// with Scale and zero point Zero (Y's type, may be null) per tensor or
/// along A (QuantizePoint.h).
int quantizeLinear(const float *X, const float *Scale, const void *Zero,
                   void *Y, bool Signed, int64_t N, quant::Axis A,
                   cudaStream_t Stream);
/// DequantizeLinear: N elements of X (I8, U8 or I32) into float Y, with
/// Scale and zero point Zero (X's type, may be null) per tensor or along A.
int dequantizeLinear(const void *X, DType T, const float *Scale,
                     const void *Zero, float *Y, int64_t N, quant::Axis A,
                     cudaStream_t Stream);

/// DynamicQuantizeLinear of N float elements of X into uint8 Y: the range
/// (including 0) gives *Scale and *Zero (device memory), written first.
int dynamicQuantizeLinear(const float *X, int64_t N, uint8_t *Y, float *Scale,
                          uint8_t *Zero, cudaStream_t Stream);

/// MatMulInteger and QLinearMatMul: Batches products [M, K] x [K, N] of
/// int8 or uint8 operands less their zero points (per tensor or along an
/// axis: quant::Axis over each operand's flat index, as the CPU widens
/// them), summed exactly in 64-bit integers. Batch Bt's operands start at
/// the sum over its coordinates in YBatch of coordinate x AStride (BStride;
/// 0 on a broadcast dim). Y [Batches, M, N]: int32, or for QLinear the
/// requantized sum (the CPU's formula in double, rounded half to even),
/// its row and column for the scales taken as the CPU kernel takes them,
/// from Y's flat index over YCols and YRows.
struct QMatMulArgs {
  const void *A = nullptr, *B = nullptr, *AZero = nullptr, *BZero = nullptr;
  bool ASigned = false, BSigned = false;
  quant::Axis AZ, BZ;
  int64_t M = 0, K = 0, N = 0, Batches = 1;
  int BatchRank = 0;
  int64_t YBatch[MaxRank] = {}, AStride[MaxRank] = {}, BStride[MaxRank] = {};
  void *Y = nullptr;
  bool QLinear = false, YSigned = false;
  const float *AScale = nullptr, *BScale = nullptr, *YScale = nullptr;
  const void *YZero = nullptr;
  bool AScaleOne = true, BScaleOne = true;
  int64_t YCols = 1, YRows = 1;
};
int quantizedMatMul(const QMatMulArgs &P, cudaStream_t Stream);

/// ConvInteger and QLinearConv: X [N, C, spatial] and W [M, C / Group,
/// kernel], 8-bit, less their zero points (X's one value; W's one or one
/// per output channel, WZ over W's flat index), summed exactly in 64-bit
/// integers over each output's window (Geo: the spatial geometry, its
/// padding adding nothing, as the CPU's zero-padded widened copy). Y [N,
/// M, out]: int32, or requantized with the CPU's formula: (sum + bias) x
/// x_scale x w_scale (one or per channel) / y_scale, half to even, plus
/// y_zero_point, saturated.
struct QConvArgs {
  const void *X = nullptr, *W = nullptr, *XZero = nullptr, *WZero = nullptr;
  bool XSigned = false, WSigned = false;
  quant::Axis WZ;
  int64_t N = 0, C = 0, M = 0, Group = 1, InSize = 1, OutSize = 1;
  pool::Window Geo;
  void *Y = nullptr;
  bool QLinear = false, YSigned = false;
  const float *XScale = nullptr, *WScale = nullptr, *YScale = nullptr;
  const void *YZero = nullptr;
  bool WScaleOne = true;
  const int32_t *Bias = nullptr;
};
int quantizedConv(const QConvArgs &P, cudaStream_t Stream);

/// NonZero of N elements of X (every DType) with dims D into Y [rank, n]
/// (int64, row-major order of the input), n the count of nonzero elements,
/// written to *Count (device memory). More than Bound writes no Y.
struct NonZeroDims {
  int Rank = 0;
  int64_t Dims[MaxRank] = {};
};
int nonZero(const void *X, DType T, int64_t N, const NonZeroDims &D, int64_t *Y,
            int64_t Bound, int64_t *Count, cudaStream_t Stream);

/// Compress of X [Outer, XLen, Inner] (ElemBytes-wide elements) along its
/// middle axis by the Len <= XLen condition bytes Keep (nonzero: kept) into
/// Y [Outer, n, Inner], n the kept count, written to *Count (device
/// memory). More than BoundKept kept positions write no Y. (Compress
/// without an axis is [1, N, 1] of the flattened input.)
int compress(const void *X, int ElemBytes, const uint8_t *Keep, int64_t Len,
             int64_t XLen, int64_t Outer, int64_t Inner, void *Y,
             int64_t BoundKept, int64_t *Count, cudaStream_t Stream);

/// One direction of an RNN, GRU or LSTM (RecurrentCell.h): its cell, the
/// op's layout, and the step's workspace (the gates [B, gates*H], then the
/// hidden and cell states and two temporaries [B, H] each). SeqLens: one
/// length per batch row, int32 or int64, or null (every row runs T steps).
struct RecurrentArgs {
  recurrent::CellParams P;
  recurrent::Layout L;
  int64_t Dir = 0;
  float *Gates = nullptr, *Hs = nullptr, *Cs = nullptr, *Tmp = nullptr,
        *Tmp2 = nullptr;
  const void *SeqLens = nullptr;
  bool SeqLens64 = false;
};
/// The states before the first step: initial_h and initial_c (Y_h's and
/// Y_c's layout; either may be null: zeros).
int recurrentStart(const RecurrentArgs &A, const float *H0, const float *C0,
                   cudaStream_t Stream);
/// GRU's reset gate over the batch (recurrent::gruReset).
int recurrentReset(const RecurrentArgs &A, cudaStream_t Stream);
/// Time step Ti's state update (recurrent::update) for the rows within
/// their length, and its rows of Y (may be null; zeros past a row's
/// length). A length outside [0, T] counts as the nearest bound and sets
/// *BadIndex.
int recurrentStep(const RecurrentArgs &A, int64_t Ti, float *Y, int *BadIndex,
                  cudaStream_t Stream);
/// The final states into Y_h and Y_c (either may be null).
int recurrentFinish(const RecurrentArgs &A, float *Yh, float *Yc,
                    cudaStream_t Stream);

/// GridSample (2-D, float): X [N, C, H, W] sampled at grid [N, Ho, Wo, 2]
/// into Y [N, C, Ho, Wo] (GridSamplePoint.h).
int gridSample(const float *X, const float *Grid, float *Y, int64_t N,
               int64_t C, int64_t H, int64_t W, int64_t Ho, int64_t Wo,
               gridsample::Mode M, gridsample::Padding Pad, bool Align,
               cudaStream_t Stream);

/// Resize and Upsample (dense input and output of Rank dims).
struct ResizeArgs {
  resize::Method M;
  int Rank = 0;
  int64_t InDims[MaxRank] = {}, OutDims[MaxRank] = {}, InStride[MaxRank] = {};
  resize::Axis Axes[MaxRank];
  double Extrapolation = 0;
};
/// Any mode, F32 and F64 (the CPU's resizeTyped).
int resizeInterpolate(const ResizeArgs &A, DType T, const void *X, void *Y,
                      cudaStream_t Stream);
/// Nearest, elements of 1, 2, 4 or 8 bytes (the CPU's resizeNearestBytes).
int resizeNearest(const ResizeArgs &A, int ElemBytes, const void *X, void *Y,
                  cudaStream_t Stream);

enum class ReduceOp : int {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  SumSquare,
  L1,
  L2,
  LogSumExp,
  LogSum
};
/// Reduces the middle axis of [Outer, Axis, Inner] of T (F32, F64, I32,
/// I64; accumulated in double or int64, as the CPU kernel); Out is [Outer,
/// Inner]. GlobalAveragePool is Mean with Inner = 1.
int reduce(ReduceOp Op, DType T, const void *In, void *Out, int64_t Outer,
           int64_t Axis, int64_t Inner, cudaStream_t Stream);
/// A reduction over axes that are not one span (Reduce* over [0, 2] of a
/// [2, 3, 4]): the kept axes' sizes, strides in the input and divisors of
/// the output index (row-major), and the reduced axes' likewise over the
/// Reduced positions each output sums.
struct ReduceAxes {
  int KeptRank = 0, RedRank = 0;
  int64_t KeptDims[MaxRank] = {}, KeptStride[MaxRank] = {},
          KeptDiv[MaxRank] = {};
  int64_t RedDims[MaxRank] = {}, RedStride[MaxRank] = {}, RedDiv[MaxRank] = {};
  int64_t Outputs = 0, Reduced = 1;
};
int reduceAxes(ReduceOp Op, DType T, const void *In, void *Out,
               const ReduceAxes &A, cudaStream_t Stream);
/// MeanVarianceNormalization, F32: a block per group (an output of A, the
/// kept axes) normalizes the A.Reduced elements it holds, its mean and
/// variance summed in double.
int meanVarianceNormalize(const float *X, float *Y, const ReduceAxes &A,
                          cudaStream_t Stream);
/// LpNormalization (P 1 or 2) along the middle axis of [Outer, D, Inner],
/// F32, the norm summed in double (a zero norm gives NaN or inf, as on the
/// CPU).
int lpNormalize(const float *X, float *Y, int64_t Outer, int64_t D,
                int64_t Inner, int P, cudaStream_t Stream);
/// LRN over Total elements of X [N, C, spatial...], F32 (LRNPoint.h).
int localResponseNorm(const lrn::Params &P, const float *X, float *Y,
                      int64_t Total, cudaStream_t Stream);

/// BatchNormalization (inference) on [N, C, Spatial], F32.
int batchNorm(const float *X, const float *Scale, const float *Bias,
              const float *Mean, const float *Var, float *Y, int64_t N,
              int64_t C, int64_t Spatial, float Eps, cudaStream_t Stream);

/// Adds Bias[c] to [N, C, Spatial] in place (Conv's bias), F32.
int addChannelBias(float *Y, const float *Bias, int64_t N, int64_t C,
                   int64_t Spatial, cudaStream_t Stream);

/// The fused ops' activations (the CPU's FusedKernels.h, same formulas).
enum class Act : int {
  None,
  Relu,
  Clip,
  LeakyRelu,
  Gelu,
  GeluTanh,
  Sigmoid,
  SiLU,
  Tanh,
  HardSwish
};
/// Y = act(Y + Bias) over S's index space (Y dense; operand 0 is the bias's
/// strides, 0 on broadcast axes), F32. Bias may be null.
int epilogue(Act A, float *Y, const float *Bias, const Strided &S, float Min,
             float Max, float Alpha, cudaStream_t Stream);

/// OomplanAttention: Y = softmax(scale * Q K^T + Bias, masked) V per batch
/// index, with the operands broadcast over the batch dims (numpy rules).
/// Operand o of Q, K, V, Bias, Mask (0..4) is at Data[o] + its batch offset
/// (the sum over batch axes a of index_a * BatchStride[o][a]) + row * Row[o]
/// + col * Col[o]; K's rows are keys unless KTransposed. Y is dense
/// [Batch, Sq, Dv]. A masked score ((mask != 0) == FillWhere) becomes
/// Fill; a row with no finite score gets NaN, as the unfused Softmax.
struct AttentionArgs {
  int64_t Sq = 0, Sk = 0, D = 0, Dv = 0;
  int NB = 0; ///< Batch axes.
  int64_t BatchDims[MaxRank] = {};
  int64_t BatchStride[5][MaxRank] = {};
  int64_t Row[5] = {}, Col[5] = {};
  const void *Data[5] = {};
  bool KTransposed = false, FillWhere = true;
  float Scale = 1, Fill = 0;
  float *Y = nullptr;
  /// Query tiles sharing K and V (AttentionTiles.cu) where their shared
  /// memory fits, else a block per query row (Attention.cu).
  bool Tiles = false;
};
int attention(const AttentionArgs &A, int64_t Batch, cudaStream_t Stream);
/// AttentionTiles.cu: whether its tiles fit 48 KiB of shared memory at A's
/// head dims, and the launch (attention() calls it when A.Tiles).
bool attentionTilesFit(const AttentionArgs &A);
int attentionTiled(const AttentionArgs &A, int64_t Batch, cudaStream_t Stream);

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
