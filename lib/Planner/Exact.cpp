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
  ExactSearch(const Problem &P, uint64_t TargetBytes, double Seconds);
  /// Searches for a placement below IncumbentBytes with at most NodeLimit
  /// nodes, trying candidates in the order of Strategy (see setStrategy);
  /// true if it found one.
  bool run(uint64_t IncumbentBytes, uint64_t NodeLimit, unsigned Strategy);
  bool timedOut() const { return TimedOut; }
  /// Offsets of the best placement found (indexed like the requests).
  std::vector<uint64_t> offsets() const;
  uint64_t bestBytes() const { return BestBytes; }
  uint64_t nodes() const { return Nodes; }

private:
  struct Scope {
    uint32_t Lo, Hi;       // Sections [Lo, Hi).
    uint32_t CreatorDepth; // Depth of the node that split it off.
  };
  void dfs(uint32_t Depth);
  bool findSegment(const Scope &In, uint64_t &Level, uint32_t &SegLo,
                   uint32_t &SegHi) const;
  void continueAfter(const Scope &Done, uint32_t Depth);
  bool decompose(const Scope &S, uint32_t Depth);
  bool boundExceeded();
  void candidates(uint64_t Level, uint32_t SegLo, uint32_t SegHi,
                  std::vector<uint32_t> &Out) const;
  void branchPlace(uint32_t B, uint64_t Level, uint32_t Depth);
  void branchClose(uint64_t Level, uint32_t SegLo, uint32_t SegHi,
                   uint32_t Depth);
  void recordSolution();
  bool outOfBudget();
  void setStrategy(unsigned Strategy);

  const Problem &P;
  uint32_t N, NumSections;
  // Per local buffer (active buffers only).
  std::vector<uint32_t> Request, Lo, Hi;
  std::vector<uint64_t> Size, Align, Offset, BanLevel;
  std::vector<uint8_t> Placed;
  // Per section: skyline height and footprint of unplaced buffers live there.
  std::vector<uint64_t> Skyline, Remaining, MinFloor;
  std::vector<uint32_t> CrossingScratch;
  uint32_t NumPlaced = 0;
  /// Independent parts still to solve; the back one is being solved.
  std::vector<Scope> Scopes;
  /// Frames deeper than this unwind at once (see continueAfter).
  uint32_t CutDepth = UINT32_MAX;
  uint64_t Solutions = 0;
  uint64_t Height = 0, BestBytes, TargetBytes;
  std::vector<uint64_t> BestOffset;
  bool Improved = false, Stop = false, TimedOut = false, LeftEdgeFirst = false;
  uint64_t Nodes = 0, NodeBudget = 0;
  /// Candidates with a higher priority are tried first.
  std::vector<uint64_t> Priority;
  std::chrono::steady_clock::time_point Deadline;
};
} // namespace

ExactSearch::ExactSearch(const Problem &P, uint64_t TargetBytes, double Seconds)
    : P(P), N(P.Active.size()), NumSections(P.NumSections),
      TargetBytes(TargetBytes) {
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
  Offset.assign(N, 0);
  BanLevel.assign(N, NoLevel);
  Placed.assign(N, 0);
  Priority.assign(N, 0);
  Skyline.assign(NumSections, 0);
  Remaining.assign(NumSections, 0);
  MinFloor.assign(NumSections, 0);
  for (uint32_t B = 0; B < N; ++B)
    for (uint32_t S = Lo[B]; S < Hi[B]; ++S)
      Remaining[S] += Size[B];
}

bool ExactSearch::outOfBudget() {
  if (++Nodes > NodeBudget)
    return true;
  // Each node costs O(n) anyway, so reading the clock every time is cheap.
  TimedOut = std::chrono::steady_clock::now() > Deadline;
  return TimedOut;
}

/// Search is heavy-tailed: each candidate order solves some instances at
/// once and stalls on others, so run() is restarted with several orders.
void ExactSearch::setStrategy(unsigned Strategy) {
  LeftEdgeFirst = Strategy % 5 == 0;
  uint64_t Mix = 0x9e3779b97f4a7c15ull * (Strategy + 1);
  for (uint32_t B = 0; B < N; ++B) {
    const BufferRequest &R = P.Requests[Request[B]];
    uint64_t Steps = R.EndStep - R.StartStep;
    switch (Strategy % 5) {
    case 0: // Long first (after the left edge), then large.
      Priority[B] = (uint64_t(Hi[B] - Lo[B]) << 40) | (Size[B] >> 24);
      break;
    case 1: // Large first.
      Priority[B] = Size[B];
      break;
    case 2: // Large area first.
      Priority[B] = uint64_t(
          std::min<long double>(1.8e19L, (long double)Size[B] * Steps));
      break;
    case 3: // Long first.
      Priority[B] = Steps;
      break;
    default: // Early first.
      Priority[B] = ~uint64_t(Lo[B]);
      break;
    }
    // Later rounds shuffle ties and near-ties deterministically.
    if (Strategy >= 5) {
      uint64_t Z = (Mix += 0x9e3779b97f4a7c15ull);
      Z = (Z ^ (Z >> 31)) * 0xbf58476d1ce4e5b9ull;
      Priority[B] = Priority[B] / 4 * 3 + Priority[B] / 4 / 64 * (Z % 64);
    }
  }
}

bool ExactSearch::run(uint64_t IncumbentBytes, uint64_t NodeLimit,
                      unsigned Strategy) {
  BestBytes = IncumbentBytes;
  Nodes = 0;
  NodeBudget = NodeLimit;
  Stop = Improved = false;
  CutDepth = UINT32_MAX;
  setStrategy(Strategy);
  if (BestBytes > TargetBytes && N > 0) {
    Scopes.assign(1, {0, NumSections, 0});
    dfs(1);
  }
  return Improved;
}

std::vector<uint64_t> ExactSearch::offsets() const {
  std::vector<uint64_t> Out(P.Requests.size(), 0);
  for (uint32_t B = 0; B < N && Improved; ++B)
    Out[Request[B]] = BestOffset[B];
  return Out;
}

/// The lowest run of sections that still have unplaced buffers, leftmost
/// among equals; false when every buffer is placed.
bool ExactSearch::findSegment(const Scope &In, uint64_t &Level, uint32_t &SegLo,
                              uint32_t &SegHi) const {
  Level = UINT64_MAX;
  for (uint32_t S = In.Lo; S < In.Hi; ++S)
    if (Remaining[S] > 0 && Skyline[S] < Level) {
      Level = Skyline[S];
      SegLo = S;
    }
  if (Level == UINT64_MAX)
    return false;
  SegHi = SegLo + 1;
  while (SegHi < In.Hi && Remaining[SegHi] > 0 && Skyline[SegHi] == Level)
    ++SegHi;
  return true;
}

/// The unplaced buffers live in a section stack above the lowest of their
/// floors (a buffer's floor is the highest skyline over its lifetime).
bool ExactSearch::boundExceeded() {
  std::fill(MinFloor.begin(), MinFloor.end(), UINT64_MAX);
  for (uint32_t B = 0; B < N; ++B) {
    if (Placed[B])
      continue;
    uint64_t Floor = 0;
    for (uint32_t S = Lo[B]; S < Hi[B]; ++S)
      Floor = std::max(Floor, Skyline[S]);
    if (Floor + Size[B] >= BestBytes)
      return true;
    for (uint32_t S = Lo[B]; S < Hi[B]; ++S)
      MinFloor[S] = std::min(MinFloor[S], Floor);
  }
  for (uint32_t S = 0; S < NumSections; ++S)
    if (Remaining[S] > 0 && MinFloor[S] + Remaining[S] >= BestBytes)
      return true;
  return false;
}

void ExactSearch::candidates(uint64_t Level, uint32_t SegLo, uint32_t SegHi,
                             std::vector<uint32_t> &Out) const {
  Out.clear();
  for (uint32_t B = 0; B < N; ++B)
    if (!Placed[B] && Lo[B] >= SegLo && Hi[B] <= SegHi &&
        BanLevel[B] != Level &&
        ((Level + Align[B] - 1) & ~(Align[B] - 1)) + Size[B] < BestBytes)
      Out.push_back(B);
  llvm::sort(Out, [&](uint32_t A, uint32_t B) {
    if (LeftEdgeFirst && (Lo[A] == SegLo) != (Lo[B] == SegLo))
      return Lo[A] == SegLo;
    if (Priority[A] != Priority[B])
      return Priority[A] > Priority[B];
    return A < B;
  });
}

void ExactSearch::recordSolution() {
  BestBytes = Height;
  BestOffset = Offset;
  Improved = true;
  ++Solutions;
  Stop = BestBytes <= TargetBytes;
}

void ExactSearch::branchPlace(uint32_t B, uint64_t Level, uint32_t Depth) {
  uint64_t At = (Level + Align[B] - 1) & ~(Align[B] - 1);
  uint64_t OldHeight = Height;
  Placed[B] = 1;
  Offset[B] = At;
  Height = std::max(Height, At + Size[B]);
  ++NumPlaced;
  for (uint32_t S = Lo[B]; S < Hi[B]; ++S) {
    Remaining[S] -= Size[B];
    Skyline[S] = At + Size[B];
  }
  dfs(Depth + 1);
  for (uint32_t S = Lo[B]; S < Hi[B]; ++S) {
    Remaining[S] += Size[B];
    Skyline[S] = Level;
  }
  --NumPlaced;
  Height = OldHeight;
  Placed[B] = 0;
}

/// Nothing more goes at Level in the segment: raise it to the lower of its
/// neighbours (anything placed there later rests on them or above).
void ExactSearch::branchClose(uint64_t Level, uint32_t SegLo, uint32_t SegHi,
                              uint32_t Depth) {
  uint64_t Left = UINT64_MAX, Right = UINT64_MAX;
  const Scope &In = Scopes.back();
  if (SegLo > In.Lo && Remaining[SegLo - 1] > 0)
    Left = Skyline[SegLo - 1];
  if (SegHi < In.Hi && Remaining[SegHi] > 0)
    Right = Skyline[SegHi];
  uint64_t Raised = std::min(Left, Right);
  if (Raised == UINT64_MAX)
    return; // Every buffer here lies inside the segment: one must go at Level.
  for (uint32_t S = SegLo; S < SegHi; ++S)
    Skyline[S] = Raised;
  dfs(Depth + 1);
  for (uint32_t S = SegLo; S < SegHi; ++S)
    Skyline[S] = Level;
}

/// The scope Done is solved; solve the rest. The rest touches only sections
/// untouched since its scopes were split off, so if it fails, no other way
/// of solving the scopes solved since then can help: unwind to the split.
void ExactSearch::continueAfter(const Scope &Done, uint32_t Depth) {
  Scopes.pop_back();
  uint32_t Target = 0;
  for (const Scope &S : Scopes)
    Target = std::max(Target, S.CreatorDepth);
  uint64_t Before = Solutions;
  dfs(Depth + 1);
  Scopes.push_back(Done);
  if (Solutions == Before && !Scopes.empty() && Scopes.size() > 1)
    CutDepth = std::min(CutDepth, Target);
}

/// Splits S where no unplaced buffer crosses a section boundary; the parts
/// are independent. Solves them most constrained first. False if S is one
/// part.
bool ExactSearch::decompose(const Scope &S, uint32_t Depth) {
  // Crossing[K]: unplaced buffers spanning the boundary between K-1 and K.
  std::vector<uint32_t> &Crossing = CrossingScratch;
  Crossing.assign(S.Hi - S.Lo + 1, 0);
  for (uint32_t B = 0; B < N; ++B)
    if (!Placed[B] && Lo[B] >= S.Lo && Hi[B] <= S.Hi) {
      ++Crossing[Lo[B] + 1 - S.Lo];
      --Crossing[Hi[B] - S.Lo];
    }
  std::vector<std::pair<uint64_t, Scope>> Parts; // (slack, part)
  uint32_t Running = 0, PartLo = UINT32_MAX;
  for (uint32_t K = S.Lo; K <= S.Hi; ++K) {
    if (K > S.Lo)
      Running += Crossing[K - S.Lo];
    bool Open = K < S.Hi && Remaining[K] > 0;
    if (PartLo != UINT32_MAX && (!Open || Running == 0)) {
      uint64_t Slack = UINT64_MAX;
      for (uint32_t X = PartLo; X < K; ++X)
        Slack = std::min(Slack, BestBytes - Skyline[X] - Remaining[X]);
      Parts.push_back({Slack, {PartLo, K, Depth}});
      PartLo = UINT32_MAX;
    }
    if (Open && PartLo == UINT32_MAX)
      PartLo = K;
  }
  if (Parts.size() < 2)
    return false;
  llvm::stable_sort(Parts, [](const auto &A, const auto &B) {
    return A.first > B.first; // The least slack ends up on top.
  });
  Scopes.pop_back();
  for (const auto &Part : Parts)
    Scopes.push_back(Part.second);
  dfs(Depth + 1);
  Scopes.resize(Scopes.size() - Parts.size());
  Scopes.push_back(S);
  if (CutDepth == Depth)
    CutDepth = UINT32_MAX;
  return true;
}

void ExactSearch::dfs(uint32_t Depth) {
  if (Stop || (Stop = outOfBudget()))
    return;
  if (Scopes.empty()) {
    recordSolution();
    return;
  }
  Scope Current = Scopes.back();
  uint64_t Level;
  uint32_t SegLo = 0, SegHi = 0;
  if (!findSegment(Current, Level, SegLo, SegHi))
    return continueAfter(Current, Depth);
  if (boundExceeded() || decompose(Current, Depth))
    return;
  std::vector<uint32_t> Branches;
  candidates(Level, SegLo, SegHi, Branches);
  // Each set of buffers placed at Level is enumerated once: a buffer tried
  // in one branch is banned at this level in the later ones.
  std::vector<std::pair<uint32_t, uint64_t>> Bans;
  for (uint32_t B : Branches) {
    branchPlace(B, Level, Depth);
    if (Stop || CutDepth < Depth)
      break;
    Bans.push_back({B, BanLevel[B]});
    BanLevel[B] = Level;
  }
  if (!Stop && CutDepth >= Depth)
    branchClose(Level, SegLo, SegHi, Depth);
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
  uint64_t Budget = Options.EffortBudget ? Options.EffortBudget : 20'000'000;
  ExactSearch Search(*P, Target, Options.TimeLimitSeconds);
  // Restarts: every order gets a node limit that doubles each round, until
  // the total budget or the time limit runs out.
  uint64_t Spent = 0;
  std::vector<uint64_t> Offsets = std::move(Greedy.Offsets);
  for (uint64_t Limit = 2000;
       Spent < Budget && Incumbent > Target && !Search.timedOut(); Limit *= 2) {
    for (unsigned Strategy = 0; Strategy < 10 && Spent < Budget &&
                                Incumbent > Target && !Search.timedOut();
         ++Strategy) {
      uint64_t Nodes = std::min(Limit, Budget - Spent);
      bool Found = Search.run(Incumbent, Nodes, Strategy);
      Spent += Nodes;
      if (!Found)
        continue;
      Incumbent = Search.bestBytes();
      Offsets = Search.offsets();
    }
  }
  return makePlacement(*P, std::move(Offsets), "exact");
}

} // namespace oomplan::planner
