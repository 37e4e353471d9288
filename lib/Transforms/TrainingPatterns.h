//===- TrainingPatterns.h - exporter decompositions of fused ops -*- C++
//-*-===//
//
// Internal to lib/Transforms. Exporters spell some ops that frameworks run
// as one kernel as several ONNX nodes (GELU through Erf; LayerNorm before
// opset 17 as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div). Taken node by
// node, the backward pass would keep every intermediate; the framework keeps
// only what its fused kernel keeps. A FusedGroup gives the backward step of
// such a pattern as one step with the framework's saved tensors.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_TRANSFORMS_TRAININGPATTERNS_H
#define OOMPLAN_LIB_TRANSFORMS_TRAININGPATTERNS_H

#include "oomplan/IR/Graph.h"
#include <optional>
#include <vector>

namespace oomplan {
namespace training {

struct FusedGroup {
  const char *Pattern = "";  ///< "gelu-erf", "silu", "groupnorm", ...
  const char *Op = "";       ///< The fused op: "Gelu", "SiLU", "GroupNorm"...
  std::vector<NodeId> Nodes; ///< In schedule order; the last makes Output.
  /// Values from outside the group that may receive a gradient (the data
  /// input first, then scale and bias).
  std::vector<ValueId> Inputs;
  ValueId Output = NoId;
  /// Forward values the fused kernel keeps (the input, mean, rstd).
  std::vector<ValueId> Saved;
  /// A node of the group whose saved(...) statistics the fused kernel keeps
  /// too (GroupNorm's InstanceNormalization: per-group mean and rstd).
  NodeId AuxOf = NoId;
  /// The group is an identity (Dropout with ratio 0, or not training): its
  /// forward output is a view of Inputs[0] and its gradient passes through
  /// as a view, as PyTorch returns the input itself.
  bool Identity = false;
};

/// Every recognised pattern of G; a node belongs to at most one group.
std::vector<FusedGroup> findFusedGroups(const Graph &G);

/// The value of V when it is a one-element constant: an initializer's data
/// or a Constant node's value (Dropout's ratio and training_mode, Clip's
/// bounds). None otherwise, and for NoId.
std::optional<double> scalarConstant(const Graph &G, ValueId V);

} // namespace training
} // namespace oomplan

#endif
