//===- ExactSearch.h - does a packing fit a capacity? ----------*- C++ -*-===//
//
// Private to lib/Placement. The feasibility search behind `exact`, written
// from the ideas of MiniMalloc (Moffitt, ASPLOS 2023): a depth-first search
// over canonical packings with section inference, a dominance rule and
// dynamic temporal decomposition. See Exact.cpp for how probes are combined
// into an optimizer, and docs/planner.md for the rules.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_PLANNER_EXACTSEARCH_H
#define OOMPLAN_LIB_PLANNER_EXACTSEARCH_H

#include "Problem.h"
#include <chrono>
#include <cstdint>
#include <vector>

namespace oomplan::planner {

/// What one probe established about a capacity.
enum class ProbeResult {
  Found,      ///< A packing within the capacity (see offsets()).
  Infeasible, ///< Proven: no packing fits (the search ran to completion).
  Unknown,    ///< The node budget or the time limit ran out first.
};

class CanonicalSearch {
public:
  using Clock = std::chrono::steady_clock;
  explicit CanonicalSearch(const Problem &P);
  /// Looks for a packing of the active buffers whose arena is at most
  /// Capacity, spending at most NodeBudget search nodes over all orderings
  /// and stopping at Deadline.
  ProbeResult probe(uint64_t Capacity, uint64_t NodeBudget,
                    Clock::time_point Deadline);
  /// Offsets (indexed like the requests) of the last packing found.
  std::vector<uint64_t> offsets() const;
  /// Nodes spent by the last probe.
  uint64_t nodesSpent() const { return Spent; }
  bool timedOut() const { return TimedOut; }

private:
  enum class Status { Found, NotFound, Abort };
  /// A buffer in the dynamic order: lowest offset, then static rank.
  struct Candidate {
    uint64_t Offset;
    uint32_t Rank, Buffer;
  };
  using Order = std::vector<Candidate>;

  void buildAdjacency();
  void rankBuffers(const std::vector<uint32_t> &Buffers);
  Status solveRange(uint32_t SecLo, uint32_t SecHi, const Order &Unplaced);
  Status solvePart(const Order &Part);
  Status search(uint32_t SecLo, uint32_t SecHi, const Order &Prev,
                uint64_t LastOffset, uint32_t LastRank);
  Status tryPlace(uint32_t SecLo, uint32_t SecHi, const Order &Current,
                  const Candidate &C);
  void place(uint32_t B, uint64_t At);
  void unplace(uint32_t B, size_t OffsetMark, size_t FloorMark);
  bool highestFittingOffset(uint32_t SecLo, uint32_t SecHi,
                            uint64_t &MaxAt) const;
  bool fits(uint32_t SecLo, uint32_t SecHi) const;
  bool outOfBudget();

  const Problem &P;
  uint32_t N, S;
  // Per buffer (active buffers only, indexed 0..N-1).
  std::vector<uint32_t> Request, Lo, Hi, Rank;
  std::vector<uint64_t> Size, Align, Steps;
  /// Buffers overlapping buffer B in time: Adjacent[AdjStart[B]..[B+1]).
  std::vector<uint32_t> AdjStart, Adjacent;
  /// Buffers live in section X: Live[LiveStart[X]..[X+1]).
  std::vector<uint32_t> LiveStart, Live;
  // Search state.
  std::vector<uint64_t> MinOffset, Offset, Solution;
  std::vector<uint8_t> Placed;
  /// Per section: lowest offset any unplaced buffer live there can take,
  /// and the sum of those buffers' footprints.
  std::vector<uint64_t> Floor, Total;
  /// Cuts[K]: unplaced buffers live in both section K and K + 1.
  std::vector<uint32_t> Cuts;
  /// Undo logs: (buffer, old MinOffset) and (section, old Floor).
  std::vector<std::pair<uint32_t, uint64_t>> OffsetLog, FloorLog;
  /// Sections [first, second) whose unplaced buffers' MinOffsets the last
  /// place() may have raised.
  std::pair<uint32_t, uint32_t> Affected;
  unsigned Heuristic = 0;
  uint64_t Capacity = 0, NodesLeft = 0, Spent = 0;
  Clock::time_point Deadline;
  bool TimedOut = false, HaveSolution = false;
};

} // namespace oomplan::planner

#endif
