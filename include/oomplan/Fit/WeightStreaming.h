//===- WeightStreaming.h - weights streamed from host memory ----*- C++ -*-===//
//
// Inference of a model whose weights exceed the budget: chosen weights live
// in host memory and a Prefetch step copies each into an arena buffer before
// its first use; the buffer dies after its last use. A weight used in two
// distant places (a tied embedding) is streamed twice, as "<name>#2". The
// prefetch is placed as late as the copy engine allows without delaying
// compute (as-late-as-possible on the link, from the cost model's step
// times), and never more than MaxAhead streamed weights ahead of its use, so
// memory can be traded for stalls.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_WEIGHTSTREAMING_H
#define OOMPLAN_FIT_WEIGHTSTREAMING_H

#include "oomplan/Cost/CostModel.h"

namespace oomplan {

/// Weight tensors of S that steps read, largest first.
std::vector<TensorId> streamableWeights(const Schedule &S);

/// S with Weights streamed. MaxAhead: how many other streamed weights' first
/// uses may lie between a prefetch and its use (UINT32_MAX: no limit).
Schedule streamWeights(const Schedule &S, llvm::ArrayRef<TensorId> Weights,
                       const CostModel &Cost, unsigned MaxAhead);

} // namespace oomplan

#endif
