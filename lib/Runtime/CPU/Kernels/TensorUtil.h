//===- TensorUtil.h - helpers the layout and GEMM kernels share -*- C++ -*-===//
//
// Small pieces the MatMul, Conv, Pool, Norm, Shape and Indexing families all
// need: reading an integer input (shape, axes, indices are int32 or int64),
// normalizing an axis, row-major strides, and dispatching on the element
// type to a template. Data-movement kernels work on element bytes and do not
// dispatch at all, so they handle every fixed-width type alike.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_TENSORUTIL_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_TENSORUTIL_H

#include "AffineGridPoint.h"
#include "DFTPoint.h"
#include "DeformConvPoint.h"
#include "GridSamplePoint.h"
#include "LRNPoint.h"
#include "PadSource.h"
#include "QuantizePoint.h"
#include "RecurrentCell.h"
#include "ResizeTaps.h"
#include "RoiAlignPoint.h"
#include "oomplan/IR/OpTable.h"
#include "oomplan/Runtime/Kernel.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace oomplan {
namespace runtime {
namespace cpu {

using DimVector = llvm::SmallVector<int64_t, 6>;

/// Bytes of one element (Bool is one byte); 0 for String/Undefined.
inline uint64_t elemBytes(ElementType T) { return elementBits(T) / 8; }

/// True when input I exists and is not omitted.
inline bool hasInput(const KernelContext &C, unsigned I) {
  return I < C.Inputs.size() && C.Inputs[I].present();
}
inline bool hasOutput(const KernelContext &C, unsigned I) {
  return I < C.Outputs.size() && C.Outputs[I].present();
}

/// An input error unless inputs 0..N-1 are all present: a malformed model
/// must get an error, never an out-of-range read.
inline llvm::Error requireInputs(const KernelContext &C, unsigned N) {
  for (unsigned I = 0; I < N; ++I)
    if (!hasInput(C, I) &&
        !(I < C.Inputs.size() && C.Inputs[I].numElements() == 0))
      return C.badInput("input " + llvm::Twine(I) + " is missing");
  if (C.Outputs.empty())
    return C.badInput("the node has no output");
  return llvm::Error::success();
}

/// The values of an integer tensor (any integer or bool type) as int64.
/// False when the type is not an integer type.
inline bool readInts(const TensorRef &T, llvm::SmallVectorImpl<int64_t> &Out) {
  uint64_t N = T.numElements();
  Out.resize(N);
  if (N && !T.Data)
    return false;
  switch (T.Type) {
#define OOMPLAN_READ(ET, CT)                                                   \
  case ElementType::ET:                                                        \
    for (uint64_t I = 0; I < N; ++I)                                           \
      Out[I] = int64_t(T.data<const CT>()[I]);                                 \
    return true;
    OOMPLAN_READ(Int64, int64_t)
    OOMPLAN_READ(Int32, int32_t)
    OOMPLAN_READ(Int16, int16_t)
    OOMPLAN_READ(Int8, int8_t)
    OOMPLAN_READ(UInt8, uint8_t)
    OOMPLAN_READ(UInt16, uint16_t)
    OOMPLAN_READ(UInt32, uint32_t)
    OOMPLAN_READ(UInt64, uint64_t)
    OOMPLAN_READ(Bool, uint8_t)
#undef OOMPLAN_READ
  default:
    return false;
  }
}

/// Reads one element of an integer tensor at flat index I.
inline int64_t intAt(const TensorRef &T, uint64_t I) {
  switch (T.Type) {
  case ElementType::Int32:
    return T.data<const int32_t>()[I];
  case ElementType::Int64:
    return T.data<const int64_t>()[I];
  case ElementType::Int16:
    return T.data<const int16_t>()[I];
  case ElementType::Int8:
    return T.data<const int8_t>()[I];
  case ElementType::UInt8:
  case ElementType::Bool:
    return T.data<const uint8_t>()[I];
  case ElementType::UInt16:
    return T.data<const uint16_t>()[I];
  case ElementType::UInt32:
    return T.data<const uint32_t>()[I];
  case ElementType::UInt64:
    return int64_t(T.data<const uint64_t>()[I]);
  default:
    return 0;
  }
}

/// Reads one element of a numeric tensor as double (for scalar inputs such
/// as Range's start or Pad's constant_value).
inline double numberAt(const TensorRef &T, uint64_t I) {
  switch (T.Type) {
  case ElementType::Float:
    return T.data<const float>()[I];
  case ElementType::Double:
    return T.data<const double>()[I];
  default:
    return double(intAt(T, I));
  }
}

/// Axis A of a rank-R tensor, negative counting from the end; false when
/// out of range. Rank R+1 for Unsqueeze-like ops is the caller's choice.
inline bool normAxis(int64_t &A, int64_t R) {
  if (A < 0)
    A += R;
  return A >= 0 && A < R;
}

/// Row-major strides in elements.
inline DimVector stridesOf(llvm::ArrayRef<int64_t> Dims) {
  DimVector S(Dims.size(), 1);
  for (int64_t I = int64_t(Dims.size()) - 2; I >= 0; --I)
    S[I] = S[I + 1] * Dims[I + 1];
  return S;
}

inline int64_t productOf(llvm::ArrayRef<int64_t> Dims, size_t Begin,
                         size_t End) {
  int64_t P = 1;
  for (size_t I = Begin; I < End && I < Dims.size(); ++I)
    P *= Dims[I];
  return P;
}

/// Copies input 0 to output 0 unless the planner aliased them (view ops).
/// OomplanIf's result I (a flattened If, IR/Graph.h), shared by the CPU and
/// CUDA kernels: the taken branch's input the output copies, after the
/// checks (null when the output is omitted). Planned for the larger branch
/// when the condition was not known, the output then takes the taken
/// branch's dims, reported through ActualDims.
inline llvm::Expected<const TensorRef *> ifSelectSource(const KernelContext &C,
                                                        bool Cond, size_t I) {
  size_t K = C.Outputs.size();
  const TensorRef &From = C.Inputs[Cond ? 1 + I : 1 + K + I];
  const TensorRef &To = C.Outputs[I];
  if (!To.present())
    return nullptr;
  if (elementBits(From.Type) == 0 || From.Type != To.Type)
    return C.unsupported("result " + llvm::Twine(I) + " of type " +
                         elementTypeName(From.Type));
  if (From.Dims != To.Dims) {
    if (!C.ActualDims || From.Dims.size() != To.Dims.size() ||
        From.numElements() > To.numElements())
      return C.badInput("result " + llvm::Twine(I) +
                        " is larger than the plan reserved for it");
    C.ActualDims[I].assign(From.Dims.begin(), From.Dims.end());
  }
  return &From;
}

inline void copyUnlessAliased(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  if (Out.Data != In.Data && Out.Data && In.Data)
    std::memmove(Out.Data, In.Data, std::min(In.bytes(), Out.bytes()));
}

/// Calls F(T{}) with T the C++ type of Type, for the numeric types ONNX's
/// tests use; returns false for any other type (the caller reports it).
template <typename F> bool visitNumeric(ElementType Type, F &&Fn) {
  switch (Type) {
  case ElementType::Float:
    Fn(float{});
    return true;
  case ElementType::Double:
    Fn(double{});
    return true;
  case ElementType::Int64:
    Fn(int64_t{});
    return true;
  case ElementType::Int32:
    Fn(int32_t{});
    return true;
  case ElementType::Int16:
    Fn(int16_t{});
    return true;
  case ElementType::Int8:
    Fn(int8_t{});
    return true;
  case ElementType::UInt8:
    Fn(uint8_t{});
    return true;
  case ElementType::UInt16:
    Fn(uint16_t{});
    return true;
  case ElementType::UInt32:
    Fn(uint32_t{});
    return true;
  case ElementType::UInt64:
    Fn(uint64_t{});
    return true;
  default:
    return false;
  }
}

/// Numeric types plus Bool (stored as one byte, visited as bool).
template <typename F> bool visitNumericOrBool(ElementType Type, F &&Fn) {
  if (Type == ElementType::Bool) {
    Fn(bool{});
    return true;
  }
  return visitNumeric(Type, Fn);
}

/// Every numeric and bool type.
inline llvm::SmallVector<ElementType, 4> numericTypes() {
  return {ElementType::Float,  ElementType::Double, ElementType::Int64,
          ElementType::Int32,  ElementType::Int16,  ElementType::Int8,
          ElementType::UInt8,  ElementType::UInt16, ElementType::UInt32,
          ElementType::UInt64, ElementType::Bool};
}
inline llvm::SmallVector<ElementType, 4> floatTypes() {
  return {ElementType::Float, ElementType::Double};
}

/// Copies N elements of EB bytes each; a typed loop is much faster than
/// MatMul's numpy geometry (1-d operands promoted, batch dims broadcast to
/// the longer of the two), shared by the CPU and CUDA kernels.
struct MatMulShape {
  int64_t M = 0, K = 0, N = 0;
  /// Per batch axis, right-aligned: each operand's dim (1 when it has
  /// none) and the product's.
  DimVector ABatch, BBatch, YBatch;
  int64_t batches() const { return productOf(YBatch, 0, YBatch.size()); }
};
/// False when the inner dims differ or the batch dims do not broadcast.
inline bool matMulShape(llvm::ArrayRef<int64_t> ADims,
                        llvm::ArrayRef<int64_t> BDims, MatMulShape &S) {
  DimVector AD(ADims.begin(), ADims.end()), BD(BDims.begin(), BDims.end());
  if (AD.empty() || BD.empty())
    return false;
  if (AD.size() == 1)
    AD.insert(AD.begin(), 1);
  if (BD.size() == 1)
    BD.push_back(1);
  S.M = AD[AD.size() - 2];
  S.K = AD.back();
  S.N = BD.back();
  if (BD[BD.size() - 2] != S.K)
    return false;
  const size_t BR = std::max(AD.size(), BD.size()) - 2;
  S.ABatch.assign(BR, 1);
  S.BBatch.assign(BR, 1);
  S.YBatch.assign(BR, 1);
  for (size_t I = 0; I + 2 < AD.size(); ++I)
    S.ABatch[BR - (AD.size() - 2) + I] = AD[I];
  for (size_t I = 0; I + 2 < BD.size(); ++I)
    S.BBatch[BR - (BD.size() - 2) + I] = BD[I];
  for (size_t I = 0; I < BR; ++I) {
    if (S.ABatch[I] != S.BBatch[I] && S.ABatch[I] != 1 && S.BBatch[I] != 1)
      return false;
    S.YBatch[I] = std::max(S.ABatch[I], S.BBatch[I]);
  }
  return true;
}

/// Shape's [start, end) of a rank-R input (opset 15's attributes, clamped).
inline std::pair<int64_t, int64_t> shapeRange(const Node &N, int64_t R) {
  int64_t Start = N.getInt("start", 0), End = N.getInt("end", R);
  if (Start < 0)
    Start += R;
  if (End < 0)
    End += R;
  Start = std::clamp<int64_t>(Start, 0, R);
  End = std::clamp<int64_t>(End, Start, R);
  return {Start, End};
}

/// memcpy per element for the small sizes the gathers move.
inline void copyElems(void *Dst, const void *Src, uint64_t N, uint64_t EB) {
  std::memcpy(Dst, Src, N * EB);
}

// Files of a family beyond its main file, whose register function calls
// these (Indexing.cpp the first seven, MatMul.cpp the three after, Conv.cpp
// Col2Im and DeformConv), so CPUKernels.cpp needs no entry per file.
void registerGatherKernels(ops::KernelTable<Kernel> &T);
void registerResizeKernels(ops::KernelTable<Kernel> &T);
void registerTopKKernels(ops::KernelTable<Kernel> &T);
void registerGridSampleKernels(ops::KernelTable<Kernel> &T);
void registerCenterCropPadKernels(ops::KernelTable<Kernel> &T);
void registerTensorScatterKernels(ops::KernelTable<Kernel> &T);
void registerGatherBlockQuantizedKernels(ops::KernelTable<Kernel> &T);
void registerCol2ImKernels(ops::KernelTable<Kernel> &T);
void registerDeformConvKernels(ops::KernelTable<Kernel> &T);
void registerQuantizedKernels(ops::KernelTable<Kernel> &T); // Quantized.cpp
void registerMatMulNBitsKernels(ops::KernelTable<Kernel> &T);
void registerGroupQueryAttentionKernels(ops::KernelTable<Kernel> &T);

/// Einsum as one loop: the output's dims and the summed labels' sizes, and
/// each operand's stride per output axis and per summed axis (0 where the
/// operand lacks the label; repeated labels add up: a diagonal).
struct EinsumSetup {
  DimVector OutDims, SumDims;
  std::vector<DimVector> OutStrides, SumStrides;
};
/// Parses the equation against the operands' dims (Einsum.cpp, shared with
/// the CUDA kernel); bad-input errors name the node.
llvm::Error einsumSetup(const KernelContext &C, EinsumSetup &E);

/// GridSample's checks (2-D float X and grid, the output's dims) and its
/// attributes (GridSample.cpp, shared with the CUDA kernel).
llvm::Error gridSampleSetup(const KernelContext &C, gridsample::Mode &M,
                            gridsample::Padding &Pad, bool &Align);

/// GatherND's and ScatterND's shape: Batch (batch_dims) leading dims
/// shared by data and indices, index tuples of K values, Tuples of them
/// per batch, each naming a slice of Slice elements of data; Batches
/// batches of DataBatch elements of data each.
struct NDShape {
  int64_t Batch = 0, K = 0, Tuples = 0, Slice = 0, Batches = 1, DataBatch = 0;
};
/// Checks data's and indices' dims against batch_dims Batch and fills S
/// (Gather.cpp, shared with the CUDA kernels); bad-input errors name the
/// node.
llvm::Error ndShape(const KernelContext &C, const TensorRef &Data,
                    const TensorRef &Idx, int64_t Batch, NDShape &S);

/// RoiAlign's checks (4-D float X, float rois [num_rois, 4], one batch
/// index a roi, Y [num_rois, C, h, w]) and its attributes (RoiAlign.cpp,
/// shared with the CUDA kernel). The batch indices' range is checked where
/// they are read.
llvm::Error roiAlignSetup(const KernelContext &C, roialign::Params &P);

/// LRN's checks (rank 3 or more, a positive size) and attributes
/// (Norm.cpp, shared with the CUDA kernel).
llvm::Error lrnSetup(const KernelContext &C, lrn::Params &P);

/// ReverseSequence's time and batch axes (0 and 1, either way) and one
/// sequence length per batch row (Indexing.cpp, shared with the CUDA
/// kernel); the lengths' range is checked where they are read.
llvm::Error reverseSequenceAxes(const KernelContext &C, int64_t &TA,
                                int64_t &BA);

/// MaxUnpool's checks (rank 3 or more, as many indices as X's elements,
/// kernel_shape, strides and pads one per spatial axis) and Def, the
/// default unpooled dims its indices are flat offsets into (Pool.cpp,
/// shared with the CUDA kernel).
llvm::Error maxUnpoolShape(const KernelContext &C, DimVector &Def);

/// LpNormalization's axis (normalized) and p (1 or 2) (Norm.cpp, shared
/// with the CUDA kernel).
llvm::Error lpNormSetup(const KernelContext &C, int64_t &Axis, int64_t &P);

/// MeanVarianceNormalization's reduced axes of a rank-Rank input
/// (attribute axes, default [0, 2, 3]), normalized; false when one is out
/// of range (Norm.cpp, shared with the CUDA kernel).
bool mvnAxes(const Node &N, int64_t Rank, DimVector &Axes);

/// QuantizeLinear's and DequantizeLinear's scale (or zero point) Param:
/// per tensor when it holds one value, else along the axis attribute
/// (default 1), which it must match (Quantize.cpp, shared with the CUDA
/// kernels).
llvm::Error quantAxis(const KernelContext &C, const TensorRef &Param,
                      quant::Axis &Out);
/// quantAxis of the scale (input 1), after checking that a zero point
/// (input 2) holds as many values.
llvm::Error quantParams(const KernelContext &C, quant::Axis &Out);

/// GroupNormalization's groups (Groups = N * G of PerGroup channels of
/// Plane elements each), scale and bias per channel (opset 21) or per group
/// (18), checked (Norm.cpp, shared with the CUDA kernel).
struct GroupNormDims {
  int64_t G = 0, PerGroup = 0, Plane = 0, Groups = 0;
  bool PerChannel = false;
};
llvm::Error groupNormDims(const KernelContext &C, GroupNormDims &D);

/// AffineGrid's operands and the grid's size (Size: input 1's values,
/// read by the caller), checked (GridSample.cpp, shared with the CUDA
/// kernel).
llvm::Error affineGridParams(const KernelContext &C,
                             llvm::ArrayRef<int64_t> Size, affine::Params &A);

/// Col2Im's geometry for image_shape Image and block_shape Block (read by
/// the caller), checked (Col2Im.cpp, shared with the CUDA kernel).
struct Col2ImGeometry {
  llvm::SmallVector<int64_t, 6> Image, Block, Strides, Dilations, PadBegin,
      Blocks;
  int64_t Channels = 0, Cells = 1, Columns = 1;
};
llvm::Error col2ImShape(const KernelContext &C, llvm::ArrayRef<int64_t> Image,
                        llvm::ArrayRef<int64_t> Block, Col2ImGeometry &G);

/// TensorScatter's geometry: update [Prefix, Seq, Row] into the cache
/// [Prefix, Max, Row] (Prefix the dims before the axis, PerBatch of them a
/// batch row), checked (TensorScatter.cpp, shared with the CUDA kernel).
struct ScatterGeometry {
  int64_t Max = 0, Seq = 0, Row = 0, Prefix = 0, PerBatch = 1;
  bool Circular = false;
};
llvm::Error tensorScatterShape(const KernelContext &C, ScatterGeometry &G);

/// CenterCropPad's shape input (Shape, read by the caller) against the
/// axes attribute and the planned output (CenterCropPad.cpp, shared with
/// the CUDA kernel).
llvm::Error centerCropCheck(const KernelContext &C,
                            llvm::ArrayRef<int64_t> Shape);

/// DFT's geometry along its axis attribute (Length: dft_length, read by
/// the caller; none: the axis's length), and STFT's (Step: frame_step;
/// FrameLength: frame_length, used without a window), checked (DFT.cpp,
/// Signal.cpp; shared with the CUDA kernel).
llvm::Error dftParams(const KernelContext &C, std::optional<int64_t> Length,
                      dft::Params &D);
llvm::Error stftParams(const KernelContext &C, int64_t Step,
                       int64_t FrameLength, dft::STFTParams &S);

/// MatMulNBits' geometry: A [M, K] (any leading dims), W [N, K] as Blocks
/// blocks of Block values of Bits bits a row (Blob bytes each), zero points
/// packed (ZpRowBytes a row) or typed; the operands' sizes checked against
/// it (MatMulNBits.cpp, shared with the CUDA kernel).
struct NBitsGeometry {
  int64_t K = 0, N = 0, M = 0, Bits = 4, Block = 0, Blocks = 0, Blob = 0,
          ZpRowBytes = 0;
  bool ZpPacked = false;
};
llvm::Error nbitsGeometry(const KernelContext &C, NBitsGeometry &S);

/// GatherBlockQuantized's geometry: data [V, Rows..., P bytes] of Width =
/// P * 8 / Bits values a row in Blocks blocks of Block, ZpRow bytes of
/// packed zero points a row; the operands' sizes checked against it
/// (GatherBlockQuantized.cpp, shared with the CUDA kernel).
struct GBQGeometry {
  int64_t V = 0, P = 0, Rows = 0, Width = 0, Blocks = 0, ZpRow = 0, Bits = 4,
          Block = 0;
};
llvm::Error gbqGeometry(const KernelContext &C, GBQGeometry &G);

/// GroupQueryAttention's dims: query [B, S, Hq * D] (Packed: [B, S, (Hq +
/// 2 Hkv) * D]), past caches [B, Hkv, Past, D], present [B, Hkv, Present,
/// D], rotary caches [positions, Rot / 2]; every operand checked against
/// them, what the data decides left to the run (GroupQueryAttention.cpp,
/// shared with the CUDA kernel).
struct GQAGeometry {
  int64_t B = 0, S = 0, Hq = 0, Hkv = 0, D = 0, Past = 0, Present = 0, Rot = 0;
  bool Packed = false;
};
llvm::Error gqaGeometry(const KernelContext &C, GQAGeometry &G);
/// The dims alone, from refs that may carry no data (a workspace query or
/// a refusal; absent inputs by an Undefined type).
GQAGeometry gqaDims(const Node &N, llvm::ArrayRef<TensorRef> In,
                    llvm::ArrayRef<TensorRef> Out);

/// DeformConv's operands and geometry, checked (DeformConv.cpp, shared with
/// the CUDA kernel).
llvm::Error deformParams(const KernelContext &C, deform::Params &P);

/// A quantized operand Q's zero point Zp (null: none, {1, 1}): one value,
/// or one per index along Axis of Q (MatMulInteger: A's rows, B's
/// columns; ConvInteger: W's output channels), as quant::Axis over Q's
/// elements (Quantized.cpp, shared with the CUDA kernel).
llvm::Error zeroPointAxis(const KernelContext &C, const TensorRef &Q,
                          const TensorRef *Zp, int64_t Axis, quant::Axis &Out);
/// QLinearMatMul's and QLinearConv's requantization parameters: a_scale
/// one value or (MatMul) one per output row, b_scale one or one per output
/// column (Conv: per output channel), y_scale and y_zero_point at least
/// one, Conv's bias one per channel. Rows and Cols (Conv: 1 and the
/// channels) are what the kernels index them by (Quantized.cpp, shared
/// with the CUDA kernel).
llvm::Error qlinearParams(const KernelContext &C, bool Conv, int64_t Rows,
                          int64_t Cols);

/// A recurrent op's sizes and attributes (RecurrentCell.h): Acts holds
/// activationsOf(K) per direction, forward first.
struct RecurrentSetup {
  recurrent::Cell K = recurrent::Cell::RNN;
  recurrent::Layout L;
  llvm::SmallVector<recurrent::Act, 6> Acts;
  float Clip = 0;
  bool LinearBeforeReset = false, InputForget = false;
  bool Reverse = false; ///< direction "reverse" (one direction, backwards).

  /// Direction Dir's cell, its biases and peepholes offset into the op's
  /// B and P (either may be null).
  recurrent::CellParams cell(int64_t Dir, const float *B, const float *P) const;
};
/// RNN's, GRU's and LSTM's checks (float operands, W, R, B and
/// sequence_lens dims against X and hidden_size, direction, activations)
/// and attributes (Recurrent.cpp, shared with the CUDA kernel). Reads no
/// tensor's values: sequence_lens' range is checked where it is read.
llvm::Error recurrentSetup(const KernelContext &C, RecurrentSetup &S);
/// sequence_lens' values (Lens, in host memory) within [0, L.T].
llvm::Error recurrentLengths(const KernelContext &C, const TensorRef &Lens,
                             const recurrent::Layout &L);
/// Bytes of the step's gates, hidden and cell states and two temporaries
/// (B x H each but the gates' B x gates*H), in floats; 0 for operands
/// recurrentSetup would refuse. The CPU kernel's whole workspace, and the
/// CUDA kernel's before cuBLAS's.
uint64_t recurrentStateBytes(const Node &N, llvm::ArrayRef<TensorRef> Inputs);

/// Resize's and Upsample's method and axes (ResizeTaps.h).
struct ResizeSetup {
  resize::Method M;
  double Extrapolation = 0;
  llvm::SmallVector<resize::Axis, 6> Axes;
};
/// Input I's values as doubles, read wherever the backend keeps them.
using ResizeNumbers = llvm::function_ref<llvm::Error(
    unsigned I, llvm::SmallVectorImpl<double> &)>;
/// Reads Resize's attributes and its scales and roi (through Numbers) into
/// S; unsupported or bad-input errors name the node (Resize.cpp, shared
/// with the CUDA kernel).
llvm::Error resizeSetup(const KernelContext &C, ResizeNumbers Numbers,
                        ResizeSetup &S);

/// Split's axis, normalized, once the outputs are checked to tile the
/// input along it (Indexing.cpp; the CUDA kernel makes the same check).
llvm::Error splitAxis(const KernelContext &C, int64_t &Axis);

/// DepthToSpace (ToSpace) and SpaceToDepth as a strided copy: Dims are the
/// output's in the copy's order, Src the input's strides (Indexing.cpp; the
/// CUDA kernels make the same copy).
llvm::Error depthSpaceView(const KernelContext &C, bool ToSpace,
                           DimVector &Dims, DimVector &Src);

/// Dst[i] = Src[offset(i)] for every index i of OutDims in row-major order,
/// offset(i) = sum of i_k * SrcStrides[k] (in elements; negative and zero
/// strides allowed: reversed slices, broadcasts). Transpose, Expand, Slice
/// and DepthToSpace are all this copy. Pool may be null. StridedCopy.cpp.
void stridedCopy(void *Dst, const void *Src, llvm::ArrayRef<int64_t> OutDims,
                 llvm::ArrayRef<int64_t> SrcStrides, uint64_t ElemBytes,
                 ThreadPool *Pool);

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
