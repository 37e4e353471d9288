//===- ConvEntry.h - Conv's GEMM path, callable by the fused Conv --*- C++
//-*-===//
//
// OomplanConv (FusedConv.cpp) is Conv + residual + activation. Rather than a
// second im2col/GEMM, it calls Conv.cpp's own path with Accumulate set: the
// output already holds the residual, the bias is added into it and the GEMM
// accumulates with beta 1, so the residual buffer can be the output (the
// planner's in-place write) and one activation tensor never exists.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_CONVENTRY_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_CONVENTRY_H

#include "oomplan/Runtime/Kernel.h"

namespace oomplan {
namespace runtime {
namespace cpu {

/// Called when the output's planes [Plane0, Plane1) (image * channels +
/// channel) are final over columns [N0, N1) of each: a fused epilogue runs
/// there, on the thread that wrote them and while they are in cache,
/// instead of in a pass of its own over the whole output.
using ConvTileFn = llvm::function_ref<void(int64_t Plane0, int64_t Plane1,
                                           int64_t N0, int64_t N1)>;

/// A clamp of each output, y < Lo ? Lo : (Hi < y ? Hi : y): the Relu (Lo 0,
/// Hi +inf) and Clip epilogues, NaN kept as their unfused kernels keep it.
struct ConvClamp {
  float Lo, Hi;
};

/// Conv of C's inputs 0 (X), 1 (W), 2 (optional B) into output 0. Accumulate
/// false: Y = conv + B (the Conv kernel). True: Y += conv + B, Y read before
/// each element is written. Post, when given, sees every part of Y once,
/// after it is final. Clamp, when given, says that Post is that clamp and
/// nothing else: the paths whose GEMM is convGemm apply it as they store
/// each tile and skip Post (a pass over the tile less); the others call
/// Post.
llvm::Error runConvInto(const KernelContext &C, bool Accumulate,
                        ConvTileFn Post = {}, const ConvClamp *Clamp = nullptr);

/// Bytes of Conv's im2col workspace for these refs (0 for pointwise and
/// depthwise convolutions, which need none).
uint64_t convWorkspaceBytes(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                            llvm::ArrayRef<TensorRef> Outputs);

/// Conv's roomy workspace (Kernel::RoomyWorkspace): every image's im2col
/// columns and their product, for deep float convolutions on small maps;
/// 0 where the plain workspace is all the kernel uses.
uint64_t convRoomyWorkspaceBytes(const Node &N,
                                 llvm::ArrayRef<TensorRef> Inputs,
                                 llvm::ArrayRef<TensorRef> Outputs);

/// Conv's roomier workspace (Kernel::RoomierWorkspace): the roomy one, or
/// Winograd's where a 3x3 convolution on a small map can take it (at a
/// large batch smaller than the batched path's; the kernel takes
/// Winograd wherever the workspace holds it).
uint64_t convRoomierWorkspaceBytes(const Node &N,
                                   llvm::ArrayRef<TensorRef> Inputs,
                                   llvm::ArrayRef<TensorRef> Outputs);

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
