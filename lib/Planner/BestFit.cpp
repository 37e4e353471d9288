//===- BestFit.cpp - gap search among overlapping placed buffers ----------===//
//
// For each buffer in order: fetch the placed buffers that overlap it in time
// from the TimeIndex, sort them by offset, walk the gaps between them, and
// choose a gap by the policy; if none fits, go on top of the highest.
// Best fit is TFLite's and TVM's greedy-by-size core.
//
//===----------------------------------------------------------------------===//
#include "BestFit.h"
#include "llvm/ADT/STLExtras.h"

using namespace llvm;

namespace oomplan::planner {

namespace {
struct Interval {
  uint64_t Begin, End;
  bool operator<(const Interval &O) const { return Begin < O.Begin; }
};
} // namespace

/// The offset for a buffer of Footprint bytes aligned to Align, given the
/// occupied byte ranges Busy (sorted by Begin).
static uint64_t chooseOffset(ArrayRef<Interval> Busy, uint64_t Footprint,
                             uint64_t Align, FitPolicy Policy) {
  uint64_t Cursor = 0; // Everything below Cursor is taken or skipped.
  uint64_t BestOffset = 0, BestGap = UINT64_MAX;
  for (const Interval &B : Busy) {
    if (B.Begin > Cursor) {
      uint64_t Offset = alignUp(Cursor, Align);
      if (Offset + Footprint <= B.Begin) {
        uint64_t Gap = B.Begin - Cursor;
        if (Policy == FitPolicy::FirstFit)
          return Offset;
        if (Gap < BestGap) {
          BestGap = Gap;
          BestOffset = Offset;
        }
      }
    }
    Cursor = std::max(Cursor, B.End);
  }
  if (BestGap != UINT64_MAX)
    return BestOffset;
  return alignUp(Cursor, Align);
}

std::vector<uint64_t> placeInOrder(const Problem &P, ArrayRef<uint32_t> Order,
                                   FitPolicy Policy, TimeIndex &Index) {
  std::vector<uint64_t> Offsets(P.Requests.size(), 0);
  std::vector<uint32_t> Neighbours;
  std::vector<Interval> Busy;
  Index.clear();
  for (uint32_t I : Order) {
    Neighbours.clear();
    Index.overlapping(I, Neighbours);
    Busy.clear();
    for (uint32_t J : Neighbours)
      Busy.push_back({Offsets[J], Offsets[J] + P.Footprint[J]});
    llvm::sort(Busy);
    Offsets[I] = chooseOffset(Busy, P.Footprint[I], P.align(I), Policy);
    Index.insert(I);
  }
  return Offsets;
}

std::vector<uint64_t> placeInOrder(const Problem &P, ArrayRef<uint32_t> Order,
                                   FitPolicy Policy) {
  TimeIndex Index(P);
  return placeInOrder(P, Order, Policy, Index);
}

} // namespace oomplan::planner
