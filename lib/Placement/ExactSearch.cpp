//===- ExactSearch.cpp - canonical depth-first search for a packing -------===//
//
// Written from the ideas of MiniMalloc (Moffitt, ASPLOS 2023), not its code.
//
// Canonical packings: push every buffer of a packing down until it rests on
// offset 0 or on the top of another buffer (this never grows the arena),
// then list the buffers by (offset, rank). Placing them in that order, each
// at its lowest legal offset (the highest top among placed buffers that
// overlap it in time, aligned up: its MinOffset), rebuilds the packing. So
// the search only needs placements in non-decreasing (offset, rank) order,
// each at the buffer's MinOffset: every set of buffers is enumerated in one
// order only.
//
// Pruning:
//  - Section inference: in every section, the unplaced buffers live there
//    stack above the section's floor (the top of the last buffer placed
//    there, the lowest MinOffset among them, and the offset of the last
//    placement, since later ones go no lower); floor + their total size
//    must fit the capacity.
//  - Dominance: if some unplaced buffer would fit entirely below offset X
//    (MinOffset + size <= X), placing anything at X is pointless: that
//    buffer could always be moved down into the gap, so those packings are
//    found through the branch that places it first.
//  - Decomposition: once no unplaced buffer is live on both sides of a
//    section boundary, the two sides are independent problems, solved one
//    after the other (least slack first); if one fails, no choice in the
//    others can help, so the search backtracks past all of them.
//
//===----------------------------------------------------------------------===//
#include "ExactSearch.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>

using namespace llvm;

namespace oomplan::planner {

namespace {
/// Static orders tried in turn (MiniMalloc's round robin): each letter is a
/// key compared in decreasing order: W lifetime, A area (size x lifetime),
/// T the largest total size live in one of the buffer's sections.
constexpr const char *Heuristics[] = {"WAT", "TAW", "TWA"};
constexpr unsigned NumHeuristics = std::size(Heuristics);
} // namespace

CanonicalSearch::CanonicalSearch(const Problem &P)
    : P(P), N(P.Active.size()), S(P.NumSections) {
  for (uint32_t I : P.Active) {
    Request.push_back(I);
    Lo.push_back(P.Lo[I]);
    Hi.push_back(P.Hi[I]);
    Size.push_back(P.Footprint[I]);
    Align.push_back(P.align(I));
    Steps.push_back(P.duration(I));
  }
  Rank.assign(N, 0);
  MinOffset.assign(N, 0);
  Offset.assign(N, 0);
  Solution.assign(N, 0);
  Placed.assign(N, 0);
  Floor.assign(S, 0);
  Total.assign(S, 0);
  Cuts.assign(S, 0);
  for (uint32_t B = 0; B < N; ++B) {
    for (uint32_t X = Lo[B]; X < Hi[B]; ++X)
      Total[X] += Size[B];
    for (uint32_t K = Lo[B]; K + 1 < Hi[B]; ++K)
      ++Cuts[K];
  }
  buildAdjacency();
}

void CanonicalSearch::buildAdjacency() {
  LiveStart.assign(S + 1, 0);
  for (uint32_t B = 0; B < N; ++B)
    for (uint32_t X = Lo[B]; X < Hi[B]; ++X)
      ++LiveStart[X + 1];
  for (uint32_t X = 0; X < S; ++X)
    LiveStart[X + 1] += LiveStart[X];
  Live.resize(LiveStart[S]);
  std::vector<uint32_t> Fill(LiveStart.begin(), LiveStart.end() - 1);
  for (uint32_t B = 0; B < N; ++B)
    for (uint32_t X = Lo[B]; X < Hi[B]; ++X)
      Live[Fill[X]++] = B;
  AdjStart.assign(N + 1, 0);
  for (uint32_t B = 0; B < N; ++B) {
    for (uint32_t O = 0; O < N; ++O)
      if (O != B && Lo[O] < Hi[B] && Lo[B] < Hi[O])
        Adjacent.push_back(O);
    AdjStart[B + 1] = Adjacent.size();
  }
}

/// Ranks the buffers of one independent part by the current heuristic;
/// totals are the current ones, so a part is ranked by what is left in it.
void CanonicalSearch::rankBuffers(const std::vector<uint32_t> &Buffers) {
  struct Key {
    uint64_t W, T;
    long double A;
    uint32_t B;
  };
  std::vector<Key> Keys;
  for (uint32_t B : Buffers) {
    uint64_t T = 0;
    for (uint32_t X = Lo[B]; X < Hi[B]; ++X)
      T = std::max(T, Total[X]);
    Keys.push_back({Steps[B], T, (long double)Size[B] * Steps[B], B});
  }
  const char *H = Heuristics[Heuristic];
  llvm::sort(Keys, [H](const Key &L, const Key &R) {
    for (const char *C = H; *C; ++C) {
      if (*C == 'W' && L.W != R.W)
        return L.W > R.W;
      if (*C == 'A' && L.A != R.A)
        return L.A > R.A;
      if (*C == 'T' && L.T != R.T)
        return L.T > R.T;
    }
    return L.B < R.B;
  });
  for (uint32_t K = 0; K < Keys.size(); ++K)
    Rank[Keys[K].B] = K;
}

ProbeResult CanonicalSearch::probe(uint64_t Cap, uint64_t NodeBudget,
                                   Clock::time_point Until) {
  Capacity = Cap;
  Deadline = Until;
  Spent = 0;
  TimedOut = Clock::now() > Deadline;
  for (uint32_t X = 0; X < S; ++X)
    if (Total[X] > Capacity)
      return ProbeResult::Infeasible;
  Order All;
  for (uint32_t B = 0; B < N; ++B)
    All.push_back({0, 0, B});
  // Each static order solves some instances at once and stalls on others
  // (the search is heavy-tailed), so take turns with a node limit that
  // doubles every round.
  for (uint64_t Limit = std::max<uint64_t>(2 * N, 64);; Limit *= 2) {
    for (Heuristic = 0; Heuristic < NumHeuristics; ++Heuristic) {
      if (Spent >= NodeBudget || TimedOut)
        return ProbeResult::Unknown;
      NodesLeft = std::min(Limit, NodeBudget - Spent);
      uint64_t Given = NodesLeft;
      Status St = solveRange(0, S, All);
      Spent += Given - NodesLeft;
      if (St == Status::Found) {
        HaveSolution = true;
        return ProbeResult::Found;
      }
      if (St == Status::NotFound)
        return ProbeResult::Infeasible;
    }
  }
}

std::vector<uint64_t> CanonicalSearch::offsets() const {
  std::vector<uint64_t> Out(P.Requests.size(), 0);
  for (uint32_t B = 0; B < N && HaveSolution; ++B)
    Out[Request[B]] = Solution[B];
  return Out;
}

bool CanonicalSearch::outOfBudget() {
  if (NodesLeft == 0)
    return true;
  --NodesLeft;
  // A node costs microseconds; reading the clock every 256 is plenty.
  if ((NodesLeft & 255) == 0 && Clock::now() > Deadline)
    TimedOut = true;
  return TimedOut;
}

/// Splits [SecLo, SecHi) at the boundaries no unplaced buffer crosses and
/// solves the parts, the one with the least slack first (it is the likeliest
/// to fail, and a failure anywhere fails them all).
CanonicalSearch::Status CanonicalSearch::solveRange(uint32_t SecLo,
                                                    uint32_t SecHi,
                                                    const Order &Unplaced) {
  std::vector<uint32_t> Bounds = {SecLo};
  for (uint32_t K = SecLo; K + 1 < SecHi; ++K)
    if (Cuts[K] == 0)
      Bounds.push_back(K + 1);
  std::vector<Order> Parts(Bounds.size());
  for (const Candidate &C : Unplaced)
    if (!Placed[C.Buffer])
      Parts[llvm::upper_bound(Bounds, Lo[C.Buffer]) - Bounds.begin() - 1]
          .push_back(C);
  std::vector<std::pair<uint64_t, uint32_t>> BySlack; // (slack, part)
  for (uint32_t I = 0; I < Parts.size(); ++I) {
    if (Parts[I].empty())
      continue;
    uint32_t End = I + 1 < Bounds.size() ? Bounds[I + 1] : SecHi;
    uint64_t Slack = UINT64_MAX;
    for (uint32_t X = Bounds[I]; X < End; ++X)
      Slack =
          std::min(Slack, Capacity - std::min(Capacity, Floor[X] + Total[X]));
    BySlack.push_back({Slack, I});
  }
  llvm::sort(BySlack);
  for (const auto &Part : BySlack) {
    Status St = solvePart(Parts[Part.second]);
    if (St != Status::Found)
      return St;
  }
  return Status::Found;
}

/// Solves one independent part from scratch: ranks its buffers, then
/// searches canonical packings of it (their order starts over, since its
/// buffers do not interact with anything placed after the split).
CanonicalSearch::Status CanonicalSearch::solvePart(const Order &Part) {
  std::vector<uint32_t> Buffers, OldRank;
  uint32_t SecLo = UINT32_MAX, SecHi = 0;
  for (const Candidate &C : Part) {
    Buffers.push_back(C.Buffer);
    OldRank.push_back(Rank[C.Buffer]);
    SecLo = std::min(SecLo, Lo[C.Buffer]);
    SecHi = std::max(SecHi, Hi[C.Buffer]);
  }
  rankBuffers(Buffers);
  Order Start = Part;
  Status St = search(SecLo, SecHi, Start, 0, 0);
  // Ancestors' orders still hold the old ranks.
  for (uint32_t I = 0; I < Buffers.size(); ++I)
    Rank[Buffers[I]] = OldRank[I];
  return St;
}

CanonicalSearch::Status CanonicalSearch::search(uint32_t SecLo, uint32_t SecHi,
                                                const Order &Prev,
                                                uint64_t LastOffset,
                                                uint32_t LastRank) {
  if (outOfBudget())
    return Status::Abort;
  Order Current;
  Current.reserve(Prev.size());
  for (const Candidate &C : Prev)
    if (!Placed[C.Buffer])
      Current.push_back({MinOffset[C.Buffer], Rank[C.Buffer], C.Buffer});
  if (Current.empty())
    return Status::Found;
  // The parent's order changed only where offsets rose: insertion sort is
  // near-linear here.
  for (size_t I = 1; I < Current.size(); ++I) {
    Candidate C = Current[I];
    size_t J = I;
    for (; J > 0 && (Current[J - 1].Offset > C.Offset ||
                     (Current[J - 1].Offset == C.Offset &&
                      Current[J - 1].Rank > C.Rank));
         --J)
      Current[J] = Current[J - 1];
    Current[J] = C;
  }
  uint64_t MinHeight = UINT64_MAX;
  for (const Candidate &C : Current)
    MinHeight = std::min(MinHeight, C.Offset + Size[C.Buffer]);
  uint64_t MaxAt;
  if (!highestFittingOffset(SecLo, SecHi, MaxAt))
    return Status::NotFound;
  for (const Candidate &C : Current) {
    if (C.Offset >= MinHeight || C.Offset > MaxAt)
      break; // Dominated (see the top), or too high to fit.
    if (C.Offset < LastOffset || (C.Offset == LastOffset && C.Rank < LastRank))
      continue; // Not canonical: placed out of (offset, rank) order.
    Status St = tryPlace(SecLo, SecHi, Current, C);
    if (St != Status::NotFound)
      return St;
  }
  return Status::NotFound;
}

CanonicalSearch::Status CanonicalSearch::tryPlace(uint32_t SecLo,
                                                  uint32_t SecHi,
                                                  const Order &Current,
                                                  const Candidate &C) {
  uint32_t B = C.Buffer;
  size_t OffsetMark = OffsetLog.size(), FloorMark = FloorLog.size();
  place(B, C.Offset);
  Status St = Status::NotFound;
  if (fits(SecLo, SecHi)) {
    bool Split = false;
    for (uint32_t K = Lo[B]; K + 1 < Hi[B] && !Split; ++K)
      Split = Cuts[K] == 0;
    St = Split ? solveRange(SecLo, SecHi, Current)
               : search(SecLo, SecHi, Current, C.Offset, C.Rank);
  }
  unplace(B, OffsetMark, FloorMark);
  // The state unwinds on success too; each buffer on the path records
  // its offset on the way up.
  if (St == Status::Found)
    Solution[B] = C.Offset;
  return St;
}

void CanonicalSearch::place(uint32_t B, uint64_t At) {
  uint64_t Top = At + Size[B];
  Placed[B] = 1;
  Offset[B] = At;
  // Sections whose unplaced buffers' MinOffsets may change: all overlap B,
  // so their lifetimes and B's form one interval.
  uint32_t AffLo = Lo[B], AffHi = Hi[B];
  for (uint32_t I = AdjStart[B]; I < AdjStart[B + 1]; ++I) {
    uint32_t O = Adjacent[I];
    if (Placed[O] || MinOffset[O] >= Top)
      continue;
    OffsetLog.push_back({O, MinOffset[O]});
    MinOffset[O] = alignUp(Top, Align[O]);
    AffLo = std::min(AffLo, Lo[O]);
    AffHi = std::max(AffHi, Hi[O]);
  }
  for (uint32_t X = Lo[B]; X < Hi[B]; ++X) {
    FloorLog.push_back({X, Floor[X]});
    Floor[X] = Top;
    Total[X] -= Size[B];
  }
  for (uint32_t K = Lo[B]; K + 1 < Hi[B]; ++K)
    --Cuts[K];
  Affected = {AffLo, AffHi};
}

void CanonicalSearch::unplace(uint32_t B, size_t OffsetMark, size_t FloorMark) {
  for (size_t I = FloorLog.size(); I > FloorMark; --I)
    Floor[FloorLog[I - 1].first] = FloorLog[I - 1].second;
  FloorLog.resize(FloorMark);
  for (size_t I = OffsetLog.size(); I > OffsetMark; --I)
    MinOffset[OffsetLog[I - 1].first] = OffsetLog[I - 1].second;
  OffsetLog.resize(OffsetMark);
  for (uint32_t X = Lo[B]; X < Hi[B]; ++X)
    Total[X] += Size[B];
  for (uint32_t K = Lo[B]; K + 1 < Hi[B]; ++K)
    ++Cuts[K];
  Placed[B] = 0;
}

/// Section inference: every unplaced buffer goes at or above its section's
/// floor and at or above the offset of the latest placement (placements
/// never go lower), so the total left in a section must fit above the
/// higher of the two. For a placement at At, that holds iff At is at most
/// MaxAt, computed once per node: in the placed buffer's own
/// sections, floor + total after placing it equals At + total before. Sums
/// stay below Problem::SafeTotalBytes, so they cannot overflow.
bool CanonicalSearch::highestFittingOffset(uint32_t SecLo, uint32_t SecHi,
                                           uint64_t &MaxAt) const {
  MaxAt = Capacity;
  for (uint32_t X = SecLo; X < SecHi; ++X) {
    if (Floor[X] + Total[X] > Capacity)
      return false; // Only the root can see this; fits() guards the rest.
    MaxAt = std::min(MaxAt, Capacity - Total[X]);
  }
  return true;
}

/// The rest of section inference, after placing a buffer: each unplaced
/// buffer also goes at or above its MinOffset, so a section's total must fit
/// above the lowest MinOffset there. MinOffsets rose only in the affected
/// sections; elsewhere the parent node's check still holds. The scan stops
/// at the first unplaced buffer low enough, so the lowest MinOffset is never
/// computed in full (nor stored: computing it costs more than it saves).
bool CanonicalSearch::fits(uint32_t SecLo, uint32_t SecHi) const {
  for (uint32_t X = std::max(SecLo, Affected.first),
                E = std::min(SecHi, Affected.second);
       X < E; ++X) {
    if (Total[X] == 0)
      continue;
    uint64_t Threshold = Capacity - Total[X];
    bool Low = false;
    for (uint32_t I = LiveStart[X]; I < LiveStart[X + 1] && !Low; ++I)
      Low = !Placed[Live[I]] && MinOffset[Live[I]] <= Threshold;
    if (!Low)
      return false;
  }
  return true;
}

} // namespace oomplan::planner
