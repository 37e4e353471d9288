//===- BestFit.h - placing buffers one by one in a given order --*- C++ -*-===//
//
// Private to lib/Placement. The core shared by the greedy algorithms and the
// hill climber: take buffers in a given order and put each into a gap left by
// the already-placed buffers whose lifetimes overlap it (the smallest gap
// that fits for best fit, the lowest for first fit), or on top of them.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_PLANNER_BESTFIT_H
#define OOMPLAN_LIB_PLANNER_BESTFIT_H

#include "Problem.h"
#include "TimeIndex.h"
#include "llvm/ADT/ArrayRef.h"
#include <cstdint>
#include <vector>

namespace oomplan::planner {

enum class FitPolicy { BestFit, FirstFit };

/// Places P's buffers in Order (a permutation of P.Active); returns offsets
/// for all requests (0 for inactive ones). Index is reused scratch state.
std::vector<uint64_t> placeInOrder(const Problem &P,
                                   llvm::ArrayRef<uint32_t> Order,
                                   FitPolicy Policy, TimeIndex &Index);

/// Same, with a fresh index.
std::vector<uint64_t> placeInOrder(const Problem &P,
                                   llvm::ArrayRef<uint32_t> Order,
                                   FitPolicy Policy);

} // namespace oomplan::planner

#endif
