//===- GreedyByBreadth.cpp - Pisarchyk & Lee's greedy by breadth ----------===//
//
// Pisarchyk and Lee, "Efficient Memory Management for Deep Neural Net
// Inference" (2020), greedy by breadth:
//  - the breadth of a step is the sum of the sizes live at it;
//  - visit steps by decreasing breadth; at each, assign its not yet assigned
//    buffers largest first, each by best fit among overlapping placed ones.
// The crowded steps are packed first, while the arena is still empty.
//
//===----------------------------------------------------------------------===//
#include "BestFit.h"
#include "Orderings.h"
#include "oomplan/Placement/Algorithms.h"

using namespace llvm;

namespace oomplan::planner {

Expected<Placement> planGreedyByBreadth(ArrayRef<BufferRequest> Requests,
                                        const PlannerOptions &) {
  Expected<Problem> P = buildProblem(Requests);
  if (!P)
    return P.takeError();
  return makePlacement(*P,
                       placeInOrder(*P, orderByBreadth(*P), FitPolicy::BestFit),
                       "greedy-by-breadth");
}

} // namespace oomplan::planner
