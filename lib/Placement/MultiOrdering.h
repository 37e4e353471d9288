//===- MultiOrdering.h - best of several greedy orderings -------*- C++ -*-===//
//
// Private to lib/Placement: the multi-ordering core, shared with hill-climb
// (which starts from its best order) and auto.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_PLANNER_MULTIORDERING_H
#define OOMPLAN_LIB_PLANNER_MULTIORDERING_H

#include "Problem.h"
#include "TimeIndex.h"
#include <string>
#include <vector>

namespace oomplan::planner {

/// The best order found, its offsets and arena, and the ordering's name.
struct OrderedPlacement {
  std::vector<uint32_t> Order;
  std::vector<uint64_t> Offsets;
  uint64_t ArenaBytes = UINT64_MAX;
  std::string OrderingName;
};

/// Best fit under every ordering of allOrderings(); the smallest arena wins,
/// ties to the earlier ordering. Stops early at LowerBoundBytes. Tries only
/// the first MaxOrderings orderings, and no further ordering once Deadline
/// has passed (the first always runs, so there is always a result).
OrderedPlacement
bestOfOrderings(const Problem &P, uint64_t LowerBoundBytes, TimeIndex &Index,
                Clock::time_point Deadline = Clock::time_point::max(),
                size_t MaxOrderings = SIZE_MAX);

} // namespace oomplan::planner

#endif
