//===- LowerBoundTest.cpp - the no-fragmentation bound by hand ------------===//
//
// Values computed by hand: half-open lifetimes, sizes rounded up to their
// alignment, saturation instead of wrap-around.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Placement/LowerBound.h"
#include "gtest/gtest.h"

using namespace oomplan::planner;

TEST(LowerBound, Empty) { EXPECT_EQ(lowerBound({}), 0u); }

TEST(LowerBound, HalfOpenLifetimesDoNotOverlap) {
  // [0,2) and [2,4) never coexist: the peak is the larger one.
  BufferRequest R[] = {{0, 100, 1, 0, 2}, {1, 60, 1, 2, 4}};
  EXPECT_EQ(lowerBound(R), 100u);
}

TEST(LowerBound, PeakStep) {
  // Step 1 has all three live: 10 + 20 + 30.
  BufferRequest R[] = {{0, 10, 1, 0, 2}, {1, 20, 1, 1, 3}, {2, 30, 1, 1, 2}};
  EXPECT_EQ(lowerBound(R), 60u);
}

TEST(LowerBound, SizesRoundUpToAlignment) {
  // 100 -> 256 and 1 -> 256 with 256-byte alignment.
  BufferRequest R[] = {{0, 100, 256, 0, 1}, {1, 1, 256, 0, 1}};
  EXPECT_EQ(lowerBound(R), 512u);
}

TEST(LowerBound, ZeroSizeAndEmptyLifetimeCostNothing) {
  BufferRequest R[] = {{0, 0, 1, 0, 5}, {1, 50, 1, 3, 3}, {2, 7, 1, 0, 1}};
  EXPECT_EQ(lowerBound(R), 7u);
}

TEST(LowerBound, Saturates) {
  BufferRequest R[] = {{0, UINT64_MAX / 2 + 1, 1, 0, 1},
                       {1, UINT64_MAX / 2 + 1, 1, 0, 1}};
  EXPECT_EQ(lowerBound(R), UINT64_MAX);
}
