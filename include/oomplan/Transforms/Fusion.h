//===- Fusion.h - rewriting patterns into oomplan's fused ops ---*- C++ -*-===//
//
// A fused op plans below the unfused graph's lower bound because tensors of
// the pattern never exist: fused attention has no Sq x Sk scores, a conv with
// its residual writes into the residual's buffer, a matmul with its
// activation epilogue has no pre-activation copy (docs/fusion.md). The
// transform runs after shape inference on inference graphs and returns a new
// Graph in which each matched pattern is one node of type OomplanAttention,
// OomplanConv, OomplanConvDepthwise or OomplanMatMul (IR/FusedOps.h); its
// output is the pattern's
// last value (same name, same shape), and its intermediates are gone. The
// caller re-runs shape inference on it, so the fused graph is planned, swept
// and reported like any other. Patterns whose intermediates are read outside
// the pattern, or are graph outputs, are left alone.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TRANSFORMS_FUSION_H
#define OOMPLAN_TRANSFORMS_FUSION_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/IR/Graph.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <memory>

namespace oomplan {

struct FusionOptions {
  /// Whether an executor can run a fused op type (OomplanAttention, ...);
  /// null: every type (the planner-only path).
  std::function<bool(llvm::StringRef)> Supported;
  /// Give each OomplanAttention a second output, its log-sum-exp per query
  /// row, which a training step keeps for the backward (the report's fused
  /// attention estimate for training).
  bool AttentionLogSumExp = false;
};

struct FusionStats {
  unsigned Attention = 0;    ///< OomplanAttention nodes made.
  unsigned Conv = 0;         ///< OomplanConv nodes made.
  unsigned ConvResidual = 0; ///< ... of which add a residual.
  /// OomplanConvDepthwise nodes made (a pointwise conv and its depthwise).
  unsigned ConvDepthwise = 0;
  unsigned MatMul = 0;       ///< OomplanMatMul nodes made.
  unsigned NodesRemoved = 0; ///< Nodes of the input graph replaced.
  unsigned total() const { return Attention + Conv + MatMul + ConvDepthwise; }
};

struct FusedGraph {
  /// The rewritten graph; null when nothing matched (use the input).
  std::unique_ptr<Graph> G;
  FusionStats Stats;
};

/// Rewrites every match in G (Shapes: G's inferred shapes). Errors only when
/// the rewritten graph fails GraphBuilder's checks (an internal error).
llvm::Expected<FusedGraph> fuseGraph(const Graph &G, const ShapeInfo &Shapes,
                                     const FusionOptions &Opts);

} // namespace oomplan

#endif
