//===- TimeIndex.cpp - segment tree of placed buffers over time -----------===//
//
// Implements TimeIndex: the canonical-node decomposition of section ranges,
// the counting pass that sizes each node's storage, and the pruned
// depth-first query. See TimeIndex.h for the cost model.
//
//===----------------------------------------------------------------------===//
#include "TimeIndex.h"

namespace oomplan::planner {

template <typename Fn>
void TimeIndex::forCanonicalNodes(uint32_t Lo, uint32_t Hi, Fn &&Visit) {
  // Iterative descent; Visit(Node, IsCanonical) sees every node on the way
  // (path nodes with false) so callers can maintain subtree counts.
  Stack.clear();
  Stack.push_back({1, 0, NumLeaves});
  while (!Stack.empty()) {
    Frame F = Stack.back();
    Stack.pop_back();
    if (F.R <= Lo || F.L >= Hi)
      continue;
    if (Lo <= F.L && F.R <= Hi) {
      Visit(F.Node, true);
      continue;
    }
    Visit(F.Node, false);
    uint32_t Mid = F.L + (F.R - F.L) / 2;
    Stack.push_back({2 * F.Node, F.L, Mid});
    Stack.push_back({2 * F.Node + 1, Mid, F.R});
  }
}

TimeIndex::TimeIndex(const Problem &P)
    : P(P), NumLeaves(std::max<uint32_t>(P.NumSections, 1)) {
  size_t NumNodes = 4 * size_t(NumLeaves);
  SlotBegin.assign(NumNodes + 1, 0);
  Fill.assign(NumNodes, 0);
  SubtreeCount.assign(NumNodes, 0);
  Stamp.assign(P.Requests.size(), 0);
  std::vector<uint32_t> Count(NumNodes, 0);
  for (uint32_t I : P.Active)
    forCanonicalNodes(P.Lo[I], P.Hi[I], [&](uint32_t Node, bool Canonical) {
      if (Canonical)
        ++Count[Node];
    });
  for (size_t N = 0; N < NumNodes; ++N)
    SlotBegin[N + 1] = SlotBegin[N] + Count[N];
  Slots.assign(SlotBegin[NumNodes], 0);
}

void TimeIndex::clear() {
  std::fill(Fill.begin(), Fill.end(), 0);
  std::fill(SubtreeCount.begin(), SubtreeCount.end(), 0);
}

void TimeIndex::insert(uint32_t I) {
  forCanonicalNodes(P.Lo[I], P.Hi[I], [&](uint32_t Node, bool Canonical) {
    ++SubtreeCount[Node];
    if (Canonical)
      Slots[SlotBegin[Node] + Fill[Node]++] = I;
  });
}

void TimeIndex::overlapping(uint32_t I, std::vector<uint32_t> &Out) {
  if (++QueryId == 0) { // Wrapped: reset the stamps.
    std::fill(Stamp.begin(), Stamp.end(), 0);
    QueryId = 1;
  }
  uint32_t Lo = P.Lo[I], Hi = P.Hi[I];
  Stack.clear();
  Stack.push_back({1, 0, NumLeaves});
  while (!Stack.empty()) {
    Frame F = Stack.back();
    Stack.pop_back();
    if (SubtreeCount[F.Node] == 0 || F.R <= Lo || F.L >= Hi)
      continue;
    const uint32_t *Begin = &Slots[SlotBegin[F.Node]];
    for (const uint32_t *It = Begin, *End = Begin + Fill[F.Node]; It != End;
         ++It) {
      if (Stamp[*It] == QueryId)
        continue;
      Stamp[*It] = QueryId;
      Out.push_back(*It);
    }
    if (F.R - F.L == 1)
      continue;
    uint32_t Mid = F.L + (F.R - F.L) / 2;
    Stack.push_back({2 * F.Node, F.L, Mid});
    Stack.push_back({2 * F.Node + 1, Mid, F.R});
  }
}

} // namespace oomplan::planner
