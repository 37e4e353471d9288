//===- HillClimb.cpp - local search over the placement order --------------===//
//
// TVM USMP's hill climb: greedy placement is only as good as its order, so
// search over orders. Start from the best multi-ordering order; each step
// perturbs the order (most often moving a buffer that touches the top of
// the arena earlier, otherwise swapping or moving random buffers), re-runs
// best fit, and keeps the new order if the arena did not grow. The
// pseudo-random choices come from Seed, and the search is bounded by an
// iteration budget, so results are reproducible; the time limit is only a
// safety cap.
//
//===----------------------------------------------------------------------===//
#include "BestFit.h"
#include "MultiOrdering.h"
#include "SplitMix64.h"
#include "oomplan/Placement/Algorithms.h"
#include "oomplan/Placement/LowerBound.h"
#include <chrono>

using namespace llvm;

namespace oomplan::planner {

/// Moves Order[From] to position To, shifting the elements between.
static void moveElement(std::vector<uint32_t> &Order, size_t From, size_t To) {
  uint32_t X = Order[From];
  if (From < To)
    std::copy(Order.begin() + From + 1, Order.begin() + To + 1,
              Order.begin() + From);
  else
    std::copy_backward(Order.begin() + To, Order.begin() + From,
                       Order.begin() + From + 1);
  Order[To] = X;
}

static void perturb(const Problem &P, std::vector<uint32_t> &Order,
                    ArrayRef<uint64_t> Offsets, uint64_t Arena, SplitMix64 &R) {
  size_t N = Order.size();
  uint64_t Kind = R.below(4);
  if (Kind <= 1) {
    // Move a buffer that reaches the top of the arena earlier.
    std::vector<size_t> Top;
    for (size_t K = 0; K < N; ++K)
      if (Offsets[Order[K]] + P.Footprint[Order[K]] == Arena && K > 0)
        Top.push_back(K);
    if (!Top.empty()) {
      size_t From = Top[R.below(Top.size())];
      moveElement(Order, From, R.below(From));
      return;
    }
  }
  size_t A = R.below(N), B = R.below(N);
  if (Kind == 2)
    std::swap(Order[A], Order[B]);
  else
    moveElement(Order, A, B);
}

Expected<Placement> planHillClimb(ArrayRef<BufferRequest> Requests,
                                  const PlannerOptions &Options) {
  Expected<Problem> P = buildProblem(Requests);
  if (!P)
    return P.takeError();
  uint64_t Target = std::max(lowerBound(Requests), Options.CapacityBytes);
  auto Deadline = deadlineAfter(Options.TimeLimitSeconds);
  TimeIndex Index(*P);
  OrderedPlacement Best = bestOfOrderings(*P, Target, Index, Deadline);
  size_t N = P->Active.size();
  uint64_t Iterations = Options.EffortBudget;
  if (Iterations == 0)
    Iterations = std::clamp<uint64_t>(400'000 / (N + 1), 20, 1000);
  SplitMix64 R(Options.Seed);
  std::vector<uint32_t> Order = Best.Order;
  std::vector<uint64_t> Offsets = Best.Offsets;
  uint64_t Arena = Best.ArenaBytes;
  for (uint64_t It = 0; It < Iterations && N > 1 && Best.ArenaBytes > Target;
       ++It) {
    if (Clock::now() > Deadline)
      break;
    std::vector<uint32_t> Candidate = Order;
    perturb(*P, Candidate, Offsets, Arena, R);
    std::vector<uint64_t> NewOffsets =
        placeInOrder(*P, Candidate, FitPolicy::BestFit, Index);
    uint64_t NewArena = arenaOf(*P, NewOffsets);
    if (NewArena > Arena)
      continue;
    Order = std::move(Candidate);
    Offsets = std::move(NewOffsets);
    Arena = NewArena;
    if (Arena < Best.ArenaBytes) {
      Best.ArenaBytes = Arena;
      Best.Offsets = Offsets;
    }
  }
  return makePlacement(*P, std::move(Best.Offsets), "hill-climb");
}

} // namespace oomplan::planner
