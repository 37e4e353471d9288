//===- Auto.cpp - the default: cheap first, search only if needed ---------===//
//
// The default algorithm. Runs the greedy orderings (multi-ordering, which
// includes greedy by size and by breadth); if that reaches the lower bound
// (or the capacity), it is returned at once, as it is on most real graphs.
// Otherwise, on inputs small enough, the exact search and then the hill
// climber run with fixed effort budgets, and the smallest arena wins (ties
// to the earlier). Budgets, not wall-clock time, bound the work, so the same
// input gives the same offsets on any machine; the time limit is only a
// safety cap on pathological inputs, shared by all the steps: a step that
// starts after it has passed is skipped.
//
//===----------------------------------------------------------------------===//
#include "MultiOrdering.h"
#include "oomplan/Placement/Algorithms.h"
#include "oomplan/Placement/LowerBound.h"
#include "oomplan/Placement/Registry.h"

using namespace llvm;

namespace oomplan::planner {

/// Searches are skipped above these sizes: greedy is near-optimal there and
/// the searches' cost grows faster than n.
constexpr size_t ExactMaxBuffers = 1000;
constexpr size_t HillClimbMaxBuffers = 20000;
/// Above this many buffers only the size ordering runs (the others rarely
/// win on large inputs and each costs a full greedy run).
constexpr size_t AllOrderingsMaxBuffers = 50000;
/// Effort budgets (exact-search nodes, hill-climb iterations) used by auto
/// unless PlannerOptions::EffortBudget overrides both.
constexpr uint64_t AutoExactNodes = 20'000;
constexpr uint64_t AutoHillClimbIterations = 300;

Expected<Placement> planAuto(ArrayRef<BufferRequest> Requests,
                             const PlannerOptions &Options) {
  Expected<Problem> P = buildProblem(Requests);
  if (!P)
    return P.takeError();
  uint64_t Target = std::max(lowerBound(Requests), Options.CapacityBytes);
  // One deadline for the whole run: each later step gets what is left.
  Clock::time_point Deadline = deadlineAfter(Options.TimeLimitSeconds);
  TimeIndex Index(*P);
  OrderedPlacement Greedy =
      bestOfOrderings(*P, Target, Index, Deadline,
                      P->Active.size() > AllOrderingsMaxBuffers ? 1 : SIZE_MAX);
  Placement Best = makePlacement(*P, std::move(Greedy.Offsets),
                                 "auto:" + Greedy.OrderingName);
  size_t N = P->Active.size();
  struct Step {
    size_t MaxBuffers;
    uint64_t Effort;
    PlanFunction Run;
    StringRef Name;
  };
  const Step Steps[] = {
      {ExactMaxBuffers, AutoExactNodes, planExact, "auto:exact"},
      {HillClimbMaxBuffers, AutoHillClimbIterations, planHillClimb,
       "auto:hill-climb"},
  };
  for (const Step &S : Steps) {
    if (Best.ArenaBytes <= Target || N > S.MaxBuffers ||
        Clock::now() > Deadline)
      break;
    PlannerOptions Sub = Options;
    Sub.TimeLimitSeconds = secondsUntil(Deadline);
    Sub.EffortBudget = Options.EffortBudget ? Options.EffortBudget : S.Effort;
    Expected<Placement> Result = S.Run(Requests, Sub);
    if (!Result)
      return Result.takeError();
    if (Result->ArenaBytes < Best.ArenaBytes) {
      Best = std::move(*Result);
      Best.Algorithm = S.Name.str();
    }
  }
  return Best;
}

} // namespace oomplan::planner
