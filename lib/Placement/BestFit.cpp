//===- BestFit.cpp - gap search among overlapping placed buffers ----------===//
//
// For each buffer in order: fetch the byte ranges taken by placed buffers
// that overlap it in time from the TimeIndex (merged unions, not one range
// per buffer, so a step with thousands of live buffers costs a few ranges),
// sort them by offset, walk the gaps between them, and choose a gap by the
// policy; if none fits, go on top of the highest. Best fit is TFLite's and
// TVM's greedy-by-size core.
//
//===----------------------------------------------------------------------===//
#include "BestFit.h"
#include "llvm/ADT/STLExtras.h"

using namespace llvm;

namespace oomplan::planner {

/// The offset for a buffer of Footprint bytes aligned to Align, given the
/// occupied byte ranges Busy (sorted by Begin).
static uint64_t chooseOffset(ArrayRef<ByteRange> Busy, uint64_t Footprint,
                             uint64_t Align, FitPolicy Policy) {
  uint64_t Cursor = 0; // Everything below Cursor is taken or skipped.
  uint64_t BestOffset = 0, BestGap = UINT64_MAX;
  for (const ByteRange &B : Busy) {
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
  std::vector<ByteRange> Busy;
  Index.clear();
  for (uint32_t I : Order) {
    Busy.clear();
    Index.busy(I, Busy);
    llvm::sort(Busy);
    Offsets[I] = chooseOffset(Busy, P.Footprint[I], P.align(I), Policy);
    Index.insert(I, Offsets[I], Offsets[I] + P.Footprint[I]);
  }
  return Offsets;
}

std::vector<uint64_t> placeInOrder(const Problem &P, ArrayRef<uint32_t> Order,
                                   FitPolicy Policy) {
  TimeIndex Index(P);
  return placeInOrder(P, Order, Policy, Index);
}

} // namespace oomplan::planner
