//===- MultiOrdering.cpp - XLA-style best of several orderings ------------===//
//
// XLA's heap simulator runs its best-fit placement under several buffer
// orderings and keeps the smallest heap. We do the same with the orderings
// of Orderings.h: size, size x duration, duration, start, breadth. Cost is
// five greedy runs; it stops early once one reaches the lower bound.
//
//===----------------------------------------------------------------------===//
#include "MultiOrdering.h"
#include "BestFit.h"
#include "Orderings.h"
#include "oomplan/Planner/Algorithms.h"
#include "oomplan/Planner/LowerBound.h"

using namespace llvm;

namespace oomplan::planner {

OrderedPlacement bestOfOrderings(const Problem &P, uint64_t LowerBoundBytes,
                                 TimeIndex &Index, size_t MaxOrderings) {
  OrderedPlacement Best;
  for (const Ordering &O : allOrderings().take_front(
           std::min(MaxOrderings, allOrderings().size()))) {
    std::vector<uint32_t> Order = O.Make(P);
    std::vector<uint64_t> Offsets =
        placeInOrder(P, Order, FitPolicy::BestFit, Index);
    uint64_t Arena = arenaOf(P, Offsets);
    if (Arena < Best.ArenaBytes) {
      Best = {std::move(Order), std::move(Offsets), Arena, O.Name.str()};
      if (Arena <= LowerBoundBytes)
        break;
    }
  }
  return Best;
}

Expected<Placement> planMultiOrdering(ArrayRef<BufferRequest> Requests,
                                      const PlannerOptions &) {
  Expected<Problem> P = buildProblem(Requests);
  if (!P)
    return P.takeError();
  TimeIndex Index(*P);
  OrderedPlacement Best = bestOfOrderings(*P, lowerBound(Requests), Index);
  if (P->Active.empty())
    Best.Offsets.assign(Requests.size(), 0);
  return makePlacement(*P, std::move(Best.Offsets), "multi-ordering");
}

} // namespace oomplan::planner
