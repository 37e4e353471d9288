//===- MultiOrdering.cpp - XLA-style best of several orderings ------------===//
//
// XLA's heap simulator runs its best-fit placement under several buffer
// orderings and keeps the smallest heap. We do the same with the orderings
// of Orderings.h: size, size x duration, duration, start, breadth. Cost is
// five greedy runs; it stops early once one reaches the lower bound, and
// starts no new run once the time limit has passed.
//
//===----------------------------------------------------------------------===//
#include "MultiOrdering.h"
#include "BestFit.h"
#include "Orderings.h"
#include "oomplan/Placement/Algorithms.h"
#include "oomplan/Placement/LowerBound.h"

using namespace llvm;

namespace oomplan::planner {

OrderedPlacement bestOfOrderings(const Problem &P, uint64_t LowerBoundBytes,
                                 TimeIndex &Index, Clock::time_point Deadline,
                                 size_t MaxOrderings) {
  OrderedPlacement Best;
  for (const Ordering &O : allOrderings().take_front(
           std::min(MaxOrderings, allOrderings().size()))) {
    if (!Best.Offsets.empty() && Clock::now() > Deadline)
      break;
    std::vector<uint32_t> Order = O.Make(P);
    std::vector<uint64_t> Offsets =
        placeInOrder(P, Order, FitPolicy::BestFit, Index);
    uint64_t Arena = arenaOf(P, Offsets);
    // The first ordering always counts, whatever its arena: Best must hold
    // offsets even if no arena is below the initial marker.
    if (Best.Offsets.empty() || Arena < Best.ArenaBytes) {
      Best = {std::move(Order), std::move(Offsets), Arena, O.Name.str()};
      if (Arena <= LowerBoundBytes)
        break;
    }
  }
  return Best;
}

Expected<Placement> planMultiOrdering(ArrayRef<BufferRequest> Requests,
                                      const PlannerOptions &Options) {
  Expected<Problem> P = buildProblem(Requests);
  if (!P)
    return P.takeError();
  TimeIndex Index(*P);
  OrderedPlacement Best = bestOfOrderings(
      *P, lowerBound(Requests), Index, deadlineAfter(Options.TimeLimitSeconds));
  if (P->Active.empty())
    Best.Offsets.assign(Requests.size(), 0);
  return makePlacement(*P, std::move(Best.Offsets), "multi-ordering");
}

} // namespace oomplan::planner
