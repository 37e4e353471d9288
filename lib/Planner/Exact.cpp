//===- Exact.cpp - branch and bound over canonical placements -------------===//
//
// A search in the spirit of MiniMalloc (Moffitt, ASPLOS 2023), written from
// the paper's ideas:
//  - Canonical solutions: buffers are placed in non-decreasing offset order,
//    each at its floor (the top of the placed buffers that overlap it in
//    time, rounded up to its alignment). The next offset is always the
//    lowest floor X among unplaced buffers; a buffer at floor X either goes
//    there or is lifted by an overlapping buffer that goes there.
//  - Symmetry: the buffers placed at level X form an independent set of the
//    candidates' overlap graph, and any order of placing it gives the same
//    state. We enumerate each set once: pick a pivot candidate with the
//    fewest choices; one of the pivot and its overlapping candidates must be
//    placed at X; after trying one, ban it at this level for its siblings.
//  - Bound: in every section, the unplaced buffers live there must be
//    stacked above the lowest of their floors; prune when that, or a
//    placement's top, reaches the best arena found (or the capacity).
// The search starts from the best greedy placement and stops at the lower
// bound, at CapacityBytes, at its node budget, or at the time limit, always
// returning the best placement found.
//
//===----------------------------------------------------------------------===//
#include "MultiOrdering.h"
#include "oomplan/Planner/Algorithms.h"
#include "oomplan/Planner/LowerBound.h"
#include "llvm/ADT/STLExtras.h"
#include <chrono>

using namespace llvm;

namespace oomplan::planner {

namespace {
constexpr uint64_t NoLevel = UINT64_MAX;

class ExactSearch {
public:
  ExactSearch(const Problem &P, uint64_t IncumbentBytes, uint64_t TargetBytes,
              uint64_t NodeBudget, double Seconds);
  /// Runs the search; true if it found a placement below the incumbent.
  bool run();
  /// Offsets of the best placement found (indexed like the requests).
  std::vector<uint64_t> offsets() const;
  uint64_t bestBytes() const { return BestBytes; }

private:
  void buildOverlaps();
  void dfs(uint32_t NumPlaced);
  bool boundExceeded(uint64_t Level);
  uint32_t chooseBranches(uint64_t Level, std::vector<uint32_t> &Out);
  void place(uint32_t B, uint64_t Offset);
  void unplace(uint32_t B, size_t UndoMark, uint64_t OldHeight);
  bool outOfBudget();

  const Problem &P;
  uint32_t N;
  // Per local buffer (active buffers only).
  std::vector<uint32_t> Request, Lo, Hi;
  std::vector<uint64_t> Size, Align, Floor, Offset, BanLevel, Pos;
  std::vector<uint8_t> Placed;
  std::vector<std::vector<uint32_t>> Overlaps;
  // Per section: footprint of unplaced buffers, and scratch.
  std::vector<uint64_t> Remaining, MinPos;
  std::vector<std::pair<uint32_t, uint64_t>> FloorUndo;
  uint64_t Height = 0, BestBytes, TargetBytes;
  std::vector<uint64_t> BestOffset;
  bool Improved = false, Stop = false;
  uint64_t Nodes = 0, NodeBudget;
public: uint32_t MaxDepth = 0; uint64_t nodes() const { return Nodes; } private:
  std::chrono::steady_clock::time_point Deadline;
};
} // namespace

ExactSearch::ExactSearch(const Problem &P, uint64_t IncumbentBytes,
                         uint64_t TargetBytes, uint64_t NodeBudget,
                         double Seconds)
    : P(P), N(P.Active.size()), BestBytes(IncumbentBytes),
      TargetBytes(TargetBytes), NodeBudget(NodeBudget) {
  Deadline = std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                 std::chrono::duration<double>(Seconds));
  for (uint32_t I : P.Active) {
    Request.push_back(I);
    Lo.push_back(P.Lo[I]);
    Hi.push_back(P.Hi[I]);
    Size.push_back(P.Footprint[I]);
    Align.push_back(P.align(I));
  }
  Floor.assign(N, 0);
  Offset.assign(N, 0);
  BanLevel.assign(N, NoLevel);
  Pos.assign(N, 0);
  Placed.assign(N, 0);
  Remaining.assign(P.NumSections, 0);
  MinPos.assign(P.NumSections, 0);
  for (uint32_t B = 0; B < N; ++B)
    for (uint32_t S = Lo[B]; S < Hi[B]; ++S)
      Remaining[S] += Size[B];
  buildOverlaps();
}

void ExactSearch::buildOverlaps() {
  // Sweep by start: a buffer overlaps the earlier-starting ones still live.
  std::vector<uint32_t> ByStart(N);
  for (uint32_t B = 0; B < N; ++B)
    ByStart[B] = B;
  llvm::sort(ByStart, [&](uint32_t A, uint32_t B) { return Lo[A] < Lo[B]; });
  Overlaps.assign(N, {});
  std::vector<uint32_t> Live;
  for (uint32_t B : ByStart) {
    llvm::erase_if(Live, [&](uint32_t A) { return Hi[A] <= Lo[B]; });
    for (uint32_t A : Live) {
      Overlaps[A].push_back(B);
      Overlaps[B].push_back(A);
    }
    Live.push_back(B);
  }
}

bool ExactSearch::outOfBudget() {
  if (++Nodes > NodeBudget)
    return true;
  // Each node costs O(n) anyway, so reading the clock every time is cheap.
  return std::chrono::steady_clock::now() > Deadline;
}

bool ExactSearch::run() {
  if (BestBytes > TargetBytes && N > 0)
    dfs(0);
  return Improved;
}

std::vector<uint64_t> ExactSearch::offsets() const {
  std::vector<uint64_t> Out(P.Requests.size(), 0);
  for (uint32_t B = 0; B < N && Improved; ++B)
    Out[Request[B]] = BestOffset[B];
  return Out;
}

bool ExactSearch::boundExceeded(uint64_t Level) {
  std::fill(MinPos.begin(), MinPos.end(), UINT64_MAX);
  for (uint32_t B = 0; B < N; ++B) {
    if (Placed[B])
      continue;
    for (uint32_t S = Lo[B]; S < Hi[B]; ++S)
      MinPos[S] = std::min(MinPos[S], Pos[B]);
  }
  for (uint32_t S = 0, E = MinPos.size(); S < E; ++S)
    if (MinPos[S] != UINT64_MAX &&
        std::max(MinPos[S], Level) + Remaining[S] >= BestBytes)
      return true;
  return false;
}

uint32_t ExactSearch::chooseBranches(uint64_t Level,
                                     std::vector<uint32_t> &Out) {
  // Pivot: the candidate whose closed neighbourhood has the fewest
  // unbanned candidates.
  auto Branchable = [&](uint32_t B) {
    return !Placed[B] && Pos[B] == Level && BanLevel[B] != Level;
  };
  uint32_t BestPivot = N, BestCount = UINT32_MAX;
  for (uint32_t B = 0; B < N && BestCount > 0; ++B) {
    if (Placed[B] || Pos[B] != Level)
      continue;
    uint32_t Count = Branchable(B);
    for (uint32_t C : Overlaps[B])
      Count += Branchable(C);
    if (Count < BestCount) {
      BestCount = Count;
      BestPivot = B;
    }
  }
  Out.clear();
  if (BestCount == 0)
    return 0;
  if (Branchable(BestPivot))
    Out.push_back(BestPivot);
  for (uint32_t C : Overlaps[BestPivot])
    if (Branchable(C))
      Out.push_back(C);
  llvm::sort(Out, [&](uint32_t A, uint32_t B) {
    if (Size[A] != Size[B])
      return Size[A] > Size[B];
    if (Hi[A] - Lo[A] != Hi[B] - Lo[B])
      return Hi[A] - Lo[A] > Hi[B] - Lo[B];
    return A < B;
  });
  return Out.size();
}

void ExactSearch::place(uint32_t B, uint64_t At) {
  Placed[B] = 1;
  Offset[B] = At;
  Height = std::max(Height, At + Size[B]);
  for (uint32_t S = Lo[B]; S < Hi[B]; ++S)
    Remaining[S] -= Size[B];
  for (uint32_t C : Overlaps[B])
    if (!Placed[C] && Floor[C] < At + Size[B]) {
      FloorUndo.push_back({C, Floor[C]});
      Floor[C] = At + Size[B];
    }
}

void ExactSearch::unplace(uint32_t B, size_t UndoMark, uint64_t OldHeight) {
  while (FloorUndo.size() > UndoMark) {
    Floor[FloorUndo.back().first] = FloorUndo.back().second;
    FloorUndo.pop_back();
  }
  for (uint32_t S = Lo[B]; S < Hi[B]; ++S)
    Remaining[S] += Size[B];
  Height = OldHeight;
  Placed[B] = 0;
}

void ExactSearch::dfs(uint32_t NumPlaced) {
  if (Stop || (Stop = outOfBudget()))
    return;
  if (NumPlaced > MaxDepth) MaxDepth = NumPlaced;
  if (NumPlaced == N) {
    BestBytes = Height;
    BestOffset = Offset;
    Improved = true;
    Stop = BestBytes <= TargetBytes;
    return;
  }
  uint64_t Level = UINT64_MAX;
  for (uint32_t B = 0; B < N; ++B)
    if (!Placed[B]) {
      Pos[B] = (Floor[B] + Align[B] - 1) & ~(Align[B] - 1);
      Level = std::min(Level, Pos[B]);
    }
  if (boundExceeded(Level))
    return;
  std::vector<uint32_t> Branches;
  chooseBranches(Level, Branches);
  std::vector<std::pair<uint32_t, uint64_t>> Bans;
  for (uint32_t B : Branches) {
    if (Level + Size[B] < BestBytes) {
      size_t Mark = FloorUndo.size();
      uint64_t OldHeight = Height;
      place(B, Level);
      dfs(NumPlaced + 1);
      unplace(B, Mark, OldHeight);
      if (Stop)
        break;
      // Pos of unplaced buffers is recomputed by the child; restore ours.
      for (uint32_t C = 0; C < N; ++C)
        if (!Placed[C])
          Pos[C] = (Floor[C] + Align[C] - 1) & ~(Align[C] - 1);
    }
    Bans.push_back({B, BanLevel[B]});
    BanLevel[B] = Level;
  }
  for (auto It = Bans.rbegin(); It != Bans.rend(); ++It)
    BanLevel[It->first] = It->second;
}

Expected<Placement> planExact(ArrayRef<BufferRequest> Requests,
                              const PlannerOptions &Options) {
  Expected<Problem> P = buildProblem(Requests);
  if (!P)
    return P.takeError();
  uint64_t Target = std::max(lowerBound(Requests), Options.CapacityBytes);
  TimeIndex Index(*P);
  OrderedPlacement Greedy = bestOfOrderings(*P, Target, Index);
  // With a capacity, look only for placements that fit it: the bound then
  // prunes much harder than against the greedy arena.
  uint64_t Incumbent = Greedy.ArenaBytes;
  if (Options.CapacityBytes != 0 && Options.CapacityBytes < Incumbent)
    Incumbent = Options.CapacityBytes + 1;
  uint64_t Budget = Options.EffortBudget ? Options.EffortBudget : 50'000'000;
  ExactSearch Search(*P, Incumbent, Target, Budget, Options.TimeLimitSeconds);
  bool Found = Search.run();
  if (getenv("EXACT_DEBUG")) fprintf(stderr, "nodes %llu maxdepth %u of %zu\n", (unsigned long long)Search.nodes(), Search.MaxDepth, P->Active.size());
  if (Found && Search.bestBytes() < Greedy.ArenaBytes)
    return makePlacement(*P, Search.offsets(), "exact");
  return makePlacement(*P, std::move(Greedy.Offsets), "exact");
}

} // namespace oomplan::planner
