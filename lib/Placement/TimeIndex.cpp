//===- TimeIndex.cpp - segment tree of byte-range unions over time --------===//
//
// Implements TimeIndex: merged insertion into a sorted range list, the
// descent that stores a buffer at its canonical nodes (and in the `Below`
// lists of their ancestors), and the pruned query. See TimeIndex.h for why
// unions of byte ranges rather than buffer lists.
//
//===----------------------------------------------------------------------===//
#include "TimeIndex.h"
#include <algorithm>

namespace oomplan::planner {

TimeIndex::TimeIndex(const Problem &P)
    : P(P), NumLeaves(std::max<uint32_t>(P.NumSections, 1)) {
  size_t NumNodes = 4 * size_t(NumLeaves);
  HereId.assign(NumNodes, 0);
  BelowId.assign(NumNodes, 0);
}

void TimeIndex::clear() {
  for (uint32_t Node : Touched)
    HereId[Node] = BelowId[Node] = 0;
  Touched.clear();
  PoolUsed = 0;
}

void TimeIndex::addRange(RangeList &L, uint64_t Begin, uint64_t End) {
  // The first range that ends at or after Begin; it and the ones after it
  // that start at or before End touch [Begin, End) and merge with it.
  auto First = std::lower_bound(
      L.begin(), L.end(), Begin,
      [](const ByteRange &R, uint64_t B) { return R.End < B; });
  auto Last = First;
  for (; Last != L.end() && Last->Begin <= End; ++Last) {
    Begin = std::min(Begin, Last->Begin);
    End = std::max(End, Last->End);
  }
  if (First == Last) {
    L.insert(First, {Begin, End});
    return;
  }
  *First = {Begin, End};
  L.erase(First + 1, Last);
}

TimeIndex::RangeList &TimeIndex::listFor(std::vector<uint32_t> &Ids,
                                         uint32_t Node) {
  if (Ids[Node] == 0) {
    if (HereId[Node] == 0 && BelowId[Node] == 0)
      Touched.push_back(Node);
    if (PoolUsed == Pool.size())
      Pool.emplace_back();
    Pool[PoolUsed].clear(); // Keeps its capacity from earlier runs.
    Ids[Node] = ++PoolUsed;
  }
  return Pool[Ids[Node] - 1];
}

const TimeIndex::RangeList *TimeIndex::find(const std::vector<uint32_t> &Ids,
                                            uint32_t Node) const {
  return Ids[Node] ? &Pool[Ids[Node] - 1] : nullptr;
}

void TimeIndex::insert(uint32_t I, uint64_t Begin, uint64_t End) {
  if (Begin == End)
    return;
  uint32_t Lo = P.Lo[I], Hi = P.Hi[I];
  Stack.clear();
  Stack.push_back({1, 0, NumLeaves});
  while (!Stack.empty()) {
    Frame F = Stack.back();
    Stack.pop_back();
    if (F.R <= Lo || F.L >= Hi)
      continue;
    // Every node the descent reaches has the buffer in its subtree.
    addRange(listFor(BelowId, F.Node), Begin, End);
    if (Lo <= F.L && F.R <= Hi) {
      addRange(listFor(HereId, F.Node), Begin, End);
      continue;
    }
    uint32_t Mid = F.L + (F.R - F.L) / 2;
    Stack.push_back({2 * F.Node, F.L, Mid});
    Stack.push_back({2 * F.Node + 1, Mid, F.R});
  }
}

void TimeIndex::busy(uint32_t I, std::vector<ByteRange> &Out) {
  uint32_t Lo = P.Lo[I], Hi = P.Hi[I];
  auto Append = [&](const RangeList *L) {
    if (L)
      Out.insert(Out.end(), L->begin(), L->end());
  };
  Stack.clear();
  Stack.push_back({1, 0, NumLeaves});
  while (!Stack.empty()) {
    Frame F = Stack.back();
    Stack.pop_back();
    if (BelowId[F.Node] == 0 || F.R <= Lo || F.L >= Hi)
      continue;
    if (Lo <= F.L && F.R <= Hi) {
      // Inside the query: everything stored in the subtree overlaps it.
      Append(find(BelowId, F.Node));
      continue;
    }
    // Partly overlapping: buffers stored here cover this node's whole
    // range, so they overlap the query; the subtree is searched below.
    Append(find(HereId, F.Node));
    uint32_t Mid = F.L + (F.R - F.L) / 2;
    Stack.push_back({2 * F.Node, F.L, Mid});
    Stack.push_back({2 * F.Node + 1, Mid, F.R});
  }
}

} // namespace oomplan::planner
