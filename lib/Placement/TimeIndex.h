//===- TimeIndex.h - occupied bytes of placed buffers over time -*- C++ -*-===//
//
// Private to lib/Placement. Greedy placement asks, for each buffer, "which byte
// ranges are taken, at some step of this buffer's lifetime, by the buffers
// placed so far?" on up to a million buffers. Listing the placed buffers that
// overlap in time is quadratic on training schedules, where thousands of
// saved activations and gradients are live at once. Only the union of their
// byte ranges matters, and a good packing keeps that union to a few blocks.
//
// TimeIndex is a segment tree over sections. A buffer is stored at the
// O(log S) nodes that exactly cover its section range. Each node keeps two
// unions of byte ranges, as sorted, merged range lists: `Here` for the
// buffers stored at the node, `Below` for those stored in its subtree. A
// query for a section range collects `Here` of the nodes that partly overlap
// it and `Below` of the nodes inside it: O(log S) lists whose total length
// is the number of merged blocks, not the number of buffers. Insertion adds
// one range to O(log S) lists. The lists are pooled, so clear() and reuse
// (the hill climber places thousands of times) do not allocate.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_PLANNER_TIMEINDEX_H
#define OOMPLAN_LIB_PLANNER_TIMEINDEX_H

#include "Problem.h"
#include <cstdint>
#include <vector>

namespace oomplan::planner {

/// Bytes [Begin, End) of the arena.
struct ByteRange {
  uint64_t Begin, End;
  bool operator<(const ByteRange &O) const { return Begin < O.Begin; }
};

class TimeIndex {
public:
  /// Prepares an empty index over P's sections (P must outlive this).
  explicit TimeIndex(const Problem &P);

  /// Removes all buffers; storage is kept.
  void clear();

  /// Records that active buffer I takes bytes [Begin, End) over its lifetime.
  void insert(uint32_t I, uint64_t Begin, uint64_t End);

  /// Appends to Out byte ranges whose union is exactly the bytes taken by
  /// inserted buffers whose lifetimes overlap buffer I's. The ranges are
  /// unsorted and may overlap one another.
  void busy(uint32_t I, std::vector<ByteRange> &Out);

private:
  /// Sorted by Begin, pairwise disjoint and not touching.
  using RangeList = std::vector<ByteRange>;
  static void addRange(RangeList &L, uint64_t Begin, uint64_t End);
  /// The list of Node in Ids (HereId or BelowId), taken from the pool on
  /// first use.
  RangeList &listFor(std::vector<uint32_t> &Ids, uint32_t Node);
  const RangeList *find(const std::vector<uint32_t> &Ids, uint32_t Node) const;

  const Problem &P;
  uint32_t NumLeaves;
  /// Per tree node: 1 + index into Pool of its list, or 0 if empty.
  std::vector<uint32_t> HereId, BelowId;
  std::vector<RangeList> Pool;
  uint32_t PoolUsed = 0;
  /// Nodes with a list, so that clear() is proportional to use.
  std::vector<uint32_t> Touched;
  struct Frame {
    uint32_t Node, L, R;
  };
  std::vector<Frame> Stack;
};

} // namespace oomplan::planner

#endif
