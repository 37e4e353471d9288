//===- CPUKernels.h - the CPU backend's kernel families ---------*- C++ -*-===//
//
// One register function per kernel family (one file each under Kernels/).
// cpuKernels() calls them all once and keeps the table; a family adds its
// kernels with addKernel, which rejects an op type the operator table lacks
// (every kernel must have a record: the planner has to know its shape rule
// and aliasing before the runtime can run it).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_CPUKERNELS_H
#define OOMPLAN_LIB_RUNTIME_CPU_CPUKERNELS_H

#include "oomplan/IR/OpTable.h"
#include "oomplan/Runtime/Kernel.h"

namespace oomplan {
namespace runtime {
namespace cpu {

using CPUKernelTable = ops::KernelTable<Kernel>;

/// Adds K for OpType; a fatal programming error when OpType has no record.
void addKernel(CPUKernelTable &T, llvm::StringRef OpType, Kernel K);

// Kernels/Unary.cpp: unary math and activations (Relu, Sigmoid, Exp, ...).
void registerUnaryKernels(CPUKernelTable &T);
// Kernels/Binary.cpp: broadcast arithmetic, comparisons, logic, Where, PRelu.
void registerBinaryKernels(CPUKernelTable &T);
// Kernels/Reduce.cpp: Reduce*, ArgMax/ArgMin, Softmax family, CumSum.
void registerReduceKernels(CPUKernelTable &T);
// Kernels/Cast.cpp: Cast, CastLike, Identity, Dropout (inference), Clip, ...
void registerCastKernels(CPUKernelTable &T);
// Kernels/MatMul.cpp: MatMul, Gemm, Einsum (OpenBLAS).
void registerMatMulKernels(CPUKernelTable &T);
// Kernels/Conv.cpp: Conv, ConvTranspose (im2col + OpenBLAS).
void registerConvKernels(CPUKernelTable &T);
// Kernels/Pool.cpp: MaxPool, AveragePool, Global*Pool, LpPool.
void registerPoolKernels(CPUKernelTable &T);
// Kernels/Norm.cpp: BatchNormalization, LayerNormalization, InstanceNorm, LRN.
void registerNormKernels(CPUKernelTable &T);
// Kernels/Shape.cpp: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand,
// Shape, Size, Constant, ConstantOfShape, Range, EyeLike.
void registerShapeKernels(CPUKernelTable &T);
// Kernels/Indexing.cpp: Gather*, Scatter*, Slice, Concat, Split, Tile, Pad,
// OneHot, DepthToSpace, SpaceToDepth, Resize, TopK.
void registerIndexingKernels(CPUKernelTable &T);
// Kernels/Recurrent.cpp: RNN, GRU, LSTM (GEMM per time step).
void registerRecurrentKernels(CPUKernelTable &T);
// Kernels/Fused*.cpp: OomplanAttention, OomplanConv, OomplanMatMul.
void registerFusedKernels(CPUKernelTable &T);

/// The CPU backend's table, built once (thread-safe).
const CPUKernelTable &cpuKernels();

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
