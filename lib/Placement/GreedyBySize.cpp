//===- GreedyBySize.cpp - largest first, best fit -------------------------===//
//
// The baseline that TFLite, TVM and XLA ship:
//  - sort buffers by size, largest first (ties: longer lifetime, then id);
//  - put each into the smallest gap, among the buffers already placed whose
//    lifetimes overlap it, that holds it; if none does, on top of them.
// It usually lands at or near the lower bound on real graphs.
//
//===----------------------------------------------------------------------===//
#include "BestFit.h"
#include "Orderings.h"
#include "oomplan/Placement/Algorithms.h"

using namespace llvm;

namespace oomplan::planner {

Expected<Placement> planGreedyBySize(ArrayRef<BufferRequest> Requests,
                                     const PlannerOptions &) {
  Expected<Problem> P = buildProblem(Requests);
  if (!P)
    return P.takeError();
  return makePlacement(*P,
                       placeInOrder(*P, orderBySize(*P), FitPolicy::BestFit),
                       "greedy-by-size");
}

} // namespace oomplan::planner
