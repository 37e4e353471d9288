//===- CUDAKernels.h - the CUDA backend's kernel families -------*- C++ -*-===//
//
// One register function per family (one file each); cudaKernels() calls
// them once. The families are host code: they read attributes and dims,
// then call a launcher (Kernels/Launch.h) or cuBLAS/cuDNN on the compute
// stream. A kernel returns once its work is queued; failures that happen
// on the device surface at the executor's synchronize().
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_CUDAKERNELS_H
#define OOMPLAN_LIB_RUNTIME_CUDA_CUDAKERNELS_H

#include "Kernels/GQAMath.h"
#include "Kernels/Launch.h"
#include "Kernels/LowBitMath.h"
#include "Kernels/NewerOpsMath.h"
#include "oomplan/IR/OpTable.h"
#include "oomplan/Runtime/Kernel.h"
#include <optional>

namespace oomplan {
namespace runtime {
namespace cuda {

using CUDAKernelTable = ops::KernelTable<Kernel>;

/// Adds K for OpType; a fatal programming error when OpType has no record.
void addKernel(CUDAKernelTable &T, llvm::StringRef OpType, Kernel K);

// EltwiseKernels.cpp: unary math (Gelu and Mish included), broadcast
// binary ops, the bitwise ops, Where, Cast, Clip, Identity and Dropout.
void registerEltwiseKernels(CUDAKernelTable &T);
// DataKernels.cpp: views (Reshape, Flatten, Squeeze, Unsqueeze), Transpose,
// Expand, Concat, Slice, Gather, Pad, Shape, Size, ConstantOfShape, Range.
void registerDataKernels(CUDAKernelTable &T);
// LayoutKernels.cpp: Split, Tile, DepthToSpace, SpaceToDepth.
void registerLayoutKernels(CUDAKernelTable &T);
// IndexKernels.cpp: ArgMax, ArgMin, CumSum, Trilu, TopK, Einsum, GridSample,
// RoiAlign, NonZero, Resize, Upsample.
void registerIndexKernels(CUDAKernelTable &T);
// GatherScatterKernels.cpp: GatherElements, ScatterElements, ScatterND.
void registerGatherScatterKernels(CUDAKernelTable &T);
// NormKernels.cpp: Softmax, LogSoftmax, LayerNormalization,
// BatchNormalization, InstanceNormalization, GroupNormalization, LRN, Reduce*,
// GlobalAveragePool, GlobalMaxPool.
void registerNormKernels(CUDAKernelTable &T);
// BlasKernels.cpp: MatMul and Gemm (cuBLAS).
void registerBlasKernels(CUDAKernelTable &T);
// DnnKernels.cpp: Conv, MaxPool, AveragePool (cuDNN), LpPool and
// GlobalLpPool (our pool kernel).
void registerDnnKernels(CUDAKernelTable &T);

// ConvTransposeKernels.cpp: ConvTranspose (cuDNN's data gradient).
void registerConvTransposeKernels(CUDAKernelTable &T);

// FusedKernels.cpp: OomplanConv, OomplanMatMul, OomplanAttention.
void registerFusedKernels(CUDAKernelTable &T);

// RecurrentKernels.cpp: RNN, GRU, LSTM (cuBLAS and Recurrent.cu).
void registerRecurrentKernels(CUDAKernelTable &T);
// QuantizeKernels.cpp: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear.
void registerQuantizeKernels(CUDAKernelTable &T);
// QLinearKernels.cpp: MatMulInteger, QLinearMatMul (QuantizedMatMul.cu),
// ConvInteger, QLinearConv (QuantizedConv.cu).
void registerQLinearKernels(CUDAKernelTable &T);
/// The quantized MatMul's and convolution's launch arguments for node C
/// (their checks are the CPU kernel's); the operands' pointers are C's
/// (host memory in ThreadMathTest.cpp, which runs the kernels' threads on
/// the host).
llvm::Error qMatMulArgs(const KernelContext &C, QMatMulArgs &P);
llvm::Error qConvArgs(const KernelContext &C, QConvArgs &P);

// LowBitKernels.cpp: MatMulNBits, GatherBlockQuantized (LowBit.cu).
void registerLowBitKernels(CUDAKernelTable &T);
// GQAKernels.cpp: GroupQueryAttention (GroupQueryAttention.cu).
void registerGQAKernels(CUDAKernelTable &T);
/// Their launch arguments for node C, after the CPU kernel's checks (host
/// pointers in LowBitThreadTest.cpp, which runs the threads on the host).
llvm::Error nbitsArgs(const KernelContext &C, lowbit::NBitsArgs &P);
/// ScaleType: 0 float, 1 float16, 2 bfloat16 (the scales' and Y's).
llvm::Error gbqArgs(const KernelContext &C, lowbit::GBQArgs &A, int &ScaleType);
/// Type: 0 float, 1 float16, 2 bfloat16 (the query's).
llvm::Error gqaArgs(const KernelContext &C, gqa::GQAArgs &A, int &Type);

// NewerOpsKernels.cpp: TensorScatter, AffineGrid, Col2Im (NewerOps.cu),
// DeformConv (DeformConv.cu), DFT, STFT (Signal.cu), CenterCropPad.
void registerNewerOpsKernels(CUDAKernelTable &T);
/// Their launch arguments after the CPU kernels' checks (host pointers in
/// NewerOpsThreadTest.cpp); Image and Block are the shape inputs' values,
/// read by the caller.
llvm::Error scatterArgs(const KernelContext &C, newer::ScatterArgs &A);
llvm::Error col2ImArgs(const KernelContext &C, llvm::ArrayRef<int64_t> Image,
                       llvm::ArrayRef<int64_t> Block, newer::Col2ImArgs &A);

const CUDAKernelTable &cudaKernels();

// Shared by the fused kernels: the product and its workspace, and the
// convolution without its bias (Accumulate: Y += Conv(X, W)).
llvm::Error runMatMul(const KernelContext &C);
llvm::Error runGemm(const KernelContext &C);
uint64_t blasWorkspace(const Node &N, llvm::ArrayRef<TensorRef> In,
                       llvm::ArrayRef<TensorRef> Out);
/// Makes Bytes at Ptr (its 256-byte aligned part) cuBLAS's only workspace
/// for the products that follow; a null Ptr leaves it none.
llvm::Error useBlasWorkspace(const KernelContext &C, void *Ptr, uint64_t Bytes);
llvm::Error convForward(const KernelContext &C, bool Accumulate);
/// What cuDNN's convolution cannot express for this Conv-like node
/// (asymmetric padding, a window of rank above 3), or "" (Kernel::Refuses).
std::string convRefuses(const Node &N, llvm::ArrayRef<TensorRef> In,
                        llvm::ArrayRef<TensorRef> Out);
uint64_t convWorkspace(const Node &N, llvm::ArrayRef<TensorRef> In,
                       llvm::ArrayRef<TensorRef> Out);

/// The launcher type of an element type, or none.
std::optional<DType> dtypeOf(ElementType T);

/// Operand strides of Dims broadcast (numpy rules) to Out's dims, as
/// operand Op of S; S.Rank and S.Dims are Out's. False: rank > MaxRank or
/// dims that do not broadcast.
bool setBroadcast(Strided &S, unsigned Op, llvm::ArrayRef<int64_t> Dims,
                  llvm::ArrayRef<int64_t> Out);

/// Success for launcher code 0, else an error naming the node.
llvm::Error launched(const KernelContext &C, int Code, const char *What);

/// Copies input 0 to output 0 on the compute stream unless they share
/// bytes (a view the planner aliased).
llvm::Error copyUnlessAliased(const KernelContext &C);

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
