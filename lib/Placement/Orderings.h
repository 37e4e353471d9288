//===- Orderings.h - buffer orders for greedy placement ---------*- C++ -*-===//
//-*-===//
//
// Private to lib/Placement. Greedy placement quality depends mostly on the
// order buffers are placed in; XLA runs several and keeps the best. Each
// function returns a permutation of P.Active; ties are broken by request id
// and then position, so every order is deterministic.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_PLANNER_ORDERINGS_H
#define OOMPLAN_LIB_PLANNER_ORDERINGS_H

#include "Problem.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <vector>

namespace oomplan::planner {

/// Footprint descending, then longer lifetime, then id.
std::vector<uint32_t> orderBySize(const Problem &P);
/// Footprint x duration descending, then footprint, then id.
std::vector<uint32_t> orderBySizeTimesDuration(const Problem &P);
/// Duration descending, then footprint, then id.
std::vector<uint32_t> orderByDuration(const Problem &P);
/// Start step ascending, then footprint descending, then id.
std::vector<uint32_t> orderByStart(const Problem &P);
/// Pisarchyk & Lee's greedy by breadth: sections by decreasing breadth (sum
/// of live footprints), each section's unassigned buffers largest first.
std::vector<uint32_t> orderByBreadth(const Problem &P);

/// A named ordering, for algorithms that try several.
struct Ordering {
  llvm::StringRef Name;
  std::vector<uint32_t> (*Make)(const Problem &);
};
/// All orderings above, size first.
llvm::ArrayRef<Ordering> allOrderings();

} // namespace oomplan::planner

#endif
