//===- Naive.cpp - no reuse: every buffer after the previous --------------===//
//
// The baseline every other algorithm must beat or match: buffers are laid
// out one after another in request order, so nothing is ever shared. Its
// arena is the sum of the footprints plus alignment padding.
//
//===----------------------------------------------------------------------===//
#include "Problem.h"
#include "oomplan/Placement/Algorithms.h"

using namespace llvm;

namespace oomplan::planner {

Expected<Placement> planNaive(ArrayRef<BufferRequest> Requests,
                              const PlannerOptions &) {
  Expected<Problem> P = buildProblem(Requests);
  if (!P)
    return P.takeError();
  return makePlacement(*P, naiveOffsets(*P), "naive");
}

} // namespace oomplan::planner
