//===- TimeIndex.h - placed buffers indexed by lifetime ---------*- C++ -*-===//
//
// Private to lib/Planner. Greedy placement asks, for each buffer, "which
// already-placed buffers are live at the same time as this one?" on up to a
// million buffers, so a scan of all placed buffers is too slow. TimeIndex is
// a segment tree over sections: a buffer is stored at the O(log S) nodes that
// exactly cover its section range, and each node counts the buffers stored
// in its subtree so that a query skips empty subtrees. A query costs about
// O(log S + k log S) for k results. Storage is preallocated per node from the
// full request list (every active buffer is inserted at most once per run),
// so insertion never allocates.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_PLANNER_TIMEINDEX_H
#define OOMPLAN_LIB_PLANNER_TIMEINDEX_H

#include "Problem.h"
#include "llvm/ADT/SmallVector.h"
#include <cstdint>
#include <vector>

namespace oomplan::planner {

class TimeIndex {
public:
  /// Prepares storage for every active buffer of P (P must outlive this).
  explicit TimeIndex(const Problem &P);

  /// Removes all buffers; storage is kept.
  void clear();

  /// Adds active buffer I (at most once between clears).
  void insert(uint32_t I);

  /// Appends to Out every inserted buffer whose lifetime overlaps buffer I's.
  void overlapping(uint32_t I, std::vector<uint32_t> &Out);

private:
  template <typename Fn>
  void forCanonicalNodes(uint32_t Lo, uint32_t Hi, Fn &&Visit);

  const Problem &P;
  uint32_t NumLeaves;
  /// Node N stores its buffers in Slots[SlotBegin[N], SlotBegin[N]+Fill[N]).
  std::vector<uint32_t> SlotBegin, Fill, SubtreeCount, Slots;
  /// Deduplication of query results: Stamp[I] == QueryId once reported.
  std::vector<uint32_t> Stamp;
  uint32_t QueryId = 0;
  struct Frame {
    uint32_t Node, L, R;
  };
  std::vector<Frame> Stack;
};

} // namespace oomplan::planner

#endif
