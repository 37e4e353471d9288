//===- BatchCoupling.h - does a model mix samples across the batch? -*- C++
//-*-===//
//
// Micro-batching runs a model on batch/K samples K times and concatenates
// the outputs; that equals one run on the whole batch only when no op
// combines different samples. Inference models almost never do, but a
// reduction over the batch axis (a global mean), a product contracting it,
// a softmax or normalization across it, a sort or selection along it
// (TopK, NonZero, Gather of chosen samples) or a concatenation along it
// does, and for such a model "fits with micro-batches" would be an answer
// that changes its results.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_ANALYSIS_BATCHCOUPLING_H
#define OOMPLAN_ANALYSIS_BATCHCOUPLING_H

#include "oomplan/Analysis/ShapeInference.h"
#include <optional>
#include <string>

namespace oomplan {

/// The first node (described, with the axis and why) that mixes samples
/// along an axis whose size changes between the Whole bindings and the Pass
/// bindings (the batch symbols divided): that axis carries the batch.
/// std::nullopt when no node does. A dim that cannot be evaluated counts
/// as not carrying the batch.
std::optional<std::string>
batchCouplingNode(const Graph &G, const ShapeInfo &Shapes,
                  llvm::ArrayRef<std::optional<int64_t>> Whole,
                  llvm::ArrayRef<std::optional<int64_t>> Pass);

} // namespace oomplan

#endif
