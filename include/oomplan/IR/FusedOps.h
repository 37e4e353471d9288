//===- FusedOps.h - names and scratch formula of oomplan's fused ops -*- C++
//-*-===//
//
// The fusion transform (lib/Transforms/Fusion*.cpp) rewrites patterns into
// op types of the default domain, prefixed "Oomplan" so that they never
// clash with ONNX: OomplanAttention, OomplanConv, OomplanConvDepthwise and
// OomplanMatMul (their semantics: docs/fusion.md). This
// header holds what several layers must agree on: the names, and the one
// formula of the attention kernel's scratch, which the CPU kernel declares as
// its workspace and the planner-only path counts, so that `oomplan` and
// `oomplan-run` plan the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_IR_FUSEDOPS_H
#define OOMPLAN_IR_FUSEDOPS_H

#include "oomplan/Support/CheckedMath.h"
#include "llvm/ADT/StringRef.h"
#include <algorithm>
#include <cstdint>

namespace oomplan {
namespace fused {

constexpr llvm::StringLiteral AttentionOp = "OomplanAttention";
constexpr llvm::StringLiteral ConvOp = "OomplanConv";
constexpr llvm::StringLiteral MatMulOp = "OomplanMatMul";
/// act(DepthwiseConv(act(PointwiseConv(X, W1, B1)), W2, B2)): a 1x1 convolution
/// and the depthwise one that reads it (MobileNet's expansion and its 3x3),
/// inputs X, W1, B1, W2, B2 (biases optional); the depthwise conv's
/// attributes, `activation` (and `activation_min`/`max`) after it and
/// `pointwise_activation` (`pointwise_activation_min`/`max`) between. The
/// expanded tensor, the block's largest, never exists: the kernel makes it a
/// band of rows at a time.
constexpr llvm::StringLiteral ConvDepthwiseOp = "OomplanConvDepthwise";
/// The widest input OomplanConvDepthwise is made for: the kernel's band of
/// rows, at least three rows of six channels, lives in a fixed buffer.
constexpr int64_t ConvDepthwiseMaxWidth = 1024;

/// OomplanConv's per-channel affine between the convolution and its
/// activation: inputs 4 to 7 are a BatchNormalization's scale, bias, mean
/// and variance (attribute `epsilon`), and the attributes `post_scale` and
/// `post_shift` multiply and shift after it (constant scalar Mul, Add, Sub
/// and Div that follow). The fusion asks FusionOptions::Supported for this
/// name before absorbing either, so that an executor whose kernel lacks it
/// gets the plain pattern.
constexpr llvm::StringLiteral ConvAffineFeature = "OomplanConv.affine";

/// True for the fused op types.
inline bool isFusedOp(llvm::StringRef OpType) {
  return OpType == AttentionOp || OpType == ConvOp || OpType == MatMulOp ||
         OpType == ConvDepthwiseOp;
}

/// Query rows and key columns of one attention tile.
constexpr uint64_t AttentionBlockRows = 64, AttentionBlockCols = 64;
/// Parallel slots of the attention kernel, whatever the machine's thread
/// count: the plan must not depend on where it runs.
constexpr uint64_t AttentionMaxWorkers = 16;

/// Bytes of OomplanAttention's scratch: per worker a Br x Bc float32 score
/// tile, a Br x Dv accumulator and the running row max and row sum (the
/// online softmax), never an Sq x Sk tensor. BatchHeads is the product of
/// the output's dims before the last two; Sq and Dv are its last two dims; Sk
/// is V's dim -2. Saturates at UINT64_MAX (the planner then refuses it).
inline uint64_t attentionWorkspaceBytes(uint64_t BatchHeads, uint64_t Sq,
                                        uint64_t Sk, uint64_t Dv) {
  if (BatchHeads == 0 || Sq == 0 || Sk == 0)
    return 0;
  uint64_t Br = std::min(AttentionBlockRows, Sq);
  uint64_t Bc = std::min(AttentionBlockCols, Sk);
  uint64_t Tasks = saturatingMul(BatchHeads, (Sq + Br - 1) / Br);
  uint64_t Workers = std::min(AttentionMaxWorkers, Tasks);
  uint64_t PerWorker =
      saturatingAdd(Br * Bc, saturatingAdd(saturatingMul(Br, Dv), 2 * Br));
  return saturatingMul(saturatingMul(Workers, 4), PerWorker);
}

} // namespace fused
} // namespace oomplan

#endif
