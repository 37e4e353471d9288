//===- TrainingDropout.h - dropout an eval-mode export lost -----*- C++ -*-===//
//
// Internal to lib/Transforms. An export in eval mode (Hugging Face's dynamo
// exports, torch.onnx.export of model.eval()) has no Dropout nodes, though
// the model trains with them: each keeps a mask of one byte per element for
// its backward. --dropout=P puts them back where PyTorch's transformer
// models put them (docs/training.md "Eval-mode exports"):
//   - after the embeddings: an Add of two embedding lookups (Gathers);
//   - on each residual branch before its add: Add(x, branch) where the
//     branch is a product's output (through its bias add) of x's shape;
//   - after the attention softmax, in blocks trained op by op (the fused
//     kernel draws its dropout from a seed and keeps no mask).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_TRANSFORMS_TRAININGDROPOUT_H
#define OOMPLAN_LIB_TRANSFORMS_TRAININGDROPOUT_H

#include "oomplan/IR/Graph.h"
#include <vector>

namespace oomplan {
namespace training {

/// An Add whose input Masked is dropped out first: the mask is Masked's
/// size in elements, kept until the Add's backward.
struct DropoutSite {
  NodeId Add = NoId;
  ValueId Masked = NoId;
};

/// The embedding and residual-branch sites of G, in node order.
std::vector<DropoutSite> findDropoutSites(const Graph &G);

/// The number of Dropout nodes of G.
unsigned countDropouts(const Graph &G);

} // namespace training
} // namespace oomplan

#endif
