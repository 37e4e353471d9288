//===- Exact.cpp - the smallest arena the canonical search can prove -----===//
//
// `exact` turns the feasibility probes of ExactSearch.h into an optimizer.
// With PlannerOptions::CapacityBytes set, the first probe asks for it with
// three quarters of the node budget (it is what the caller needs); without,
// it asks for the lower bound with a quarter. Later probes bisect between
// the smallest capacity not yet ruled out and the best arena found, each
// with a quarter of the budget left, so one hard capacity near the optimum
// cannot eat it all. A probe that runs out of nodes rules its capacity out
// only heuristically: the result is optimal when every probe finishes
// (small inputs), a good packing otherwise. If the goal is still missed, a
// hill climb sized by the budget is the fallback. Node budgets, not the
// clock, bound the work, so results are deterministic; TimeLimitSeconds is
// only a safety cap.
//
//===----------------------------------------------------------------------===//
#include "ExactSearch.h"
#include "MultiOrdering.h"
#include "oomplan/Placement/Algorithms.h"
#include "oomplan/Placement/LowerBound.h"

using namespace llvm;

namespace oomplan::planner {

/// Above these sizes the search is not started: building its overlap lists
/// costs O(n^2) time and O(sum of lifetimes in sections) memory before the
/// first node, which neither the node budget nor the clock can interrupt.
/// The greedy result and the (time-limited) hill climb are returned instead.
constexpr size_t SearchMaxBuffers = 10'000;
constexpr uint64_t SearchMaxLiveEntries = 20'000'000;
/// Nodes when PlannerOptions::EffortBudget is 0.
constexpr uint64_t DefaultExactNodes = 1'000'000;
/// Nodes per hill-climb iteration of the fallback: its iterations scale with
/// the budget, so small budgets (auto's, the tests') stay cheap.
constexpr uint64_t NodesPerFallbackIteration = 1'000;

namespace {
struct Incumbent {
  std::vector<uint64_t> Offsets;
  uint64_t Arena;
};
} // namespace

/// Probes capacities from Goal up to the incumbent's arena (see the top),
/// keeping the best packing found in Best. The first probe, at Goal, gets
/// FirstShare quarters of the budget; later ones a quarter of what is left.
static void probeCapacities(const Problem &P, uint64_t Goal,
                            unsigned FirstShare, uint64_t Budget,
                            CanonicalSearch::Clock::time_point Deadline,
                            Incumbent &Best) {
  CanonicalSearch Search(P);
  uint64_t Low = Goal, Left = Budget;
  uint64_t MinProbe = std::max<uint64_t>(2 * P.Active.size(), 64);
  for (bool First = true; Best.Arena > 0 && Low <= Best.Arena - 1 &&
                          Left >= MinProbe && !Search.timedOut();
       First = false) {
    uint64_t High = Best.Arena - 1;
    uint64_t Cap = First ? Low : Low + (High - Low) / 2;
    uint64_t Share = First ? Left / 4 * FirstShare : Left / 4;
    ProbeResult R = Search.probe(Cap, std::max(Share, MinProbe), Deadline);
    Left -= std::min(Left, Search.nodesSpent());
    if (R != ProbeResult::Found) {
      Low = Cap + 1; // Proven, or too hard to settle within the budget.
      continue;
    }
    Best.Offsets = Search.offsets();
    Best.Arena = arenaOf(P, Best.Offsets);
  }
}

Expected<Placement> planExact(ArrayRef<BufferRequest> Requests,
                              const PlannerOptions &Options) {
  Expected<Problem> P = buildProblem(Requests);
  if (!P)
    return P.takeError();
  uint64_t Bound = lowerBound(Requests);
  uint64_t Goal = std::max(Bound, Options.CapacityBytes);
  auto Deadline = deadlineAfter(Options.TimeLimitSeconds);
  TimeIndex Index(*P);
  OrderedPlacement Greedy = bestOfOrderings(*P, Goal, Index, Deadline);
  Incumbent Best{std::move(Greedy.Offsets), Greedy.ArenaBytes};
  if (Best.Arena <= Goal)
    return makePlacement(*P, std::move(Best.Offsets), "exact");
  uint64_t Budget =
      Options.EffortBudget ? Options.EffortBudget : DefaultExactNodes;
  uint64_t LiveEntries = 0;
  for (uint32_t I : P->Active)
    LiveEntries += P->Hi[I] - P->Lo[I];
  // A capacity is what the caller needs: give it most of the budget.
  if (P->Active.size() <= SearchMaxBuffers &&
      LiveEntries <= SearchMaxLiveEntries)
    probeCapacities(*P, Goal, Options.CapacityBytes != 0 ? 3 : 1, Budget,
                    Deadline, Best);
  uint64_t Iterations = Budget / NodesPerFallbackIteration;
  if (Best.Arena > Goal && Iterations > 0 && Clock::now() < Deadline) {
    PlannerOptions Sub = Options;
    Sub.EffortBudget = std::min<uint64_t>(Iterations, 1000);
    Sub.TimeLimitSeconds = secondsUntil(Deadline);
    Expected<Placement> Climbed = planHillClimb(Requests, Sub);
    if (!Climbed)
      return Climbed.takeError();
    if (Climbed->ArenaBytes < Best.Arena) {
      Best.Offsets = std::move(Climbed->Offsets);
      Best.Arena = Climbed->ArenaBytes;
    }
  }
  return makePlacement(*P, std::move(Best.Offsets), "exact");
}

} // namespace oomplan::planner
