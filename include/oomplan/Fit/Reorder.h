//===- Reorder.h - a topological order with a lower peak --------*- C++ -*-===//
//
// Memory-aware list scheduling: among the steps whose inputs are ready, run
// the one that allocates the fewest bytes net of what it frees (its last
// reads), ties broken by the original order; then a few randomised tries
// (scores perturbed by a seeded generator, deterministic). The order with the
// lowest estimated total is kept; the original order competes too. Only the
// order of steps changes: dependencies through tensors (read after write,
// write after read, write after write) are kept.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_REORDER_H
#define OOMPLAN_FIT_REORDER_H

#include "oomplan/Fit/MemoryEstimate.h"

namespace oomplan {

/// The best order found; S itself when nothing is lower. Tries: randomised
/// attempts after the deterministic one.
Schedule reorderForMemory(const Schedule &S, const EstimateOptions &Opts,
                          unsigned Tries = 4);

} // namespace oomplan

#endif
