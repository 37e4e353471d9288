//===- CachingAllocatorTest.cpp - the caching allocator, by hand ----------===//
//
// Each sequence is small enough to follow PyTorch's rules by hand
// (CUDACachingAllocator.cpp; lib/Report/CachingAllocator.cpp lists them);
// the comment beside each expectation is the working.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/CachingAllocator.h"
#include "TestExpected.h"
#include "gtest/gtest.h"

using namespace oomplan;
using namespace oomplan::report;

static constexpr uint64_t MiB = 1048576;

static AllocEvent A(uint32_t Id, uint64_t Bytes) { return {false, Id, Bytes}; }
static AllocEvent F(uint32_t Id) { return {true, Id, 0}; }

TEST(CachingAllocator, SmallRequestsRoundTo512FromA2MiBSegment) {
  // 100 B -> 512 B, small pool, a new 2 MiB segment, split (remainder
  // 2 MiB - 512 >= 512). 1000 B -> 1024 B from that remainder.
  auto R = simulateCachingAllocator({A(0, 100), A(1, 1000)}, {});
  EXPECT_EQ(R.PeakAllocated, 512u + 1024u);
  EXPECT_EQ(R.PeakRequested, 1100u);
  EXPECT_EQ(R.PeakReserved, 2 * MiB);
  EXPECT_EQ(R.Segments, 1u);
}

TEST(CachingAllocator, MidSizeRequestsShareA20MiBSegment) {
  // 3 MiB (> 1 MiB, < 10 MiB) -> a 20 MiB segment, split (17 MiB > 1 MiB
  // left). 5 MiB fits the 17 MiB block (12 MiB left). 18 MiB: no cached
  // block is large enough; >= 10 MiB, so a segment of 18 MiB (a multiple of
  // 2 MiB). Reserved 20 + 18 = 38 MiB; allocated 3 + 5 + 18 = 26 MiB.
  auto R = simulateCachingAllocator(
      {A(0, 3 * MiB), A(1, 5 * MiB), A(2, 18 * MiB)}, {});
  EXPECT_EQ(R.PeakReserved, 38 * MiB);
  EXPECT_EQ(R.PeakAllocated, 26 * MiB);
  EXPECT_EQ(R.Segments, 2u);
}

TEST(CachingAllocator, LargeRequestsRoundTo2MiB) {
  // 11 MiB + 1 B -> rounded to 512: 11 MiB + 512; the segment rounds to
  // 12 MiB; the remainder (1 MiB - 512) is not > 1 MiB, so the block is not
  // split and the whole 12 MiB counts as allocated.
  auto R = simulateCachingAllocator({A(0, 11 * MiB + 1)}, {});
  EXPECT_EQ(R.PeakReserved, 12 * MiB);
  EXPECT_EQ(R.PeakAllocated, 12 * MiB);
  EXPECT_EQ(R.PeakRequested, 11 * MiB + 1);
}

TEST(CachingAllocator, FreeBlocksNeverMergeAcrossSegments) {
  // Two 12 MiB segments, both freed: 24 MiB cached but in two segments, so
  // 24 MiB needs a third segment. Reserved 12 + 12 + 24 = 48 MiB while at
  // most 24 MiB is allocated at once.
  auto R = simulateCachingAllocator(
      {A(0, 12 * MiB), A(1, 12 * MiB), F(0), F(1), A(2, 24 * MiB)}, {});
  EXPECT_EQ(R.PeakReserved, 48 * MiB);
  EXPECT_EQ(R.PeakAllocated, 24 * MiB);
}

TEST(CachingAllocator, BestFitNotFirstFit) {
  // Cached: a 30 MiB segment (made first, the lower address) and a 26 MiB
  // one. 25.5 MiB takes the 26 (0.5 MiB left, not > 1 MiB: not split), then
  // 29 MiB takes the 30 (1 MiB left: not split). No new segment: reserved
  // stays 56 MiB, all of it allocated. First fit would put 25.5 in the 30
  // and need a new segment for 29.
  auto R = simulateCachingAllocator({A(0, 30 * MiB), A(1, 26 * MiB), F(0), F(1),
                                     A(2, 25 * MiB + MiB / 2), A(3, 29 * MiB)},
                                    {});
  EXPECT_EQ(R.PeakReserved, 56 * MiB);
  EXPECT_EQ(R.PeakAllocated, 56 * MiB);
  EXPECT_EQ(R.Segments, 2u);
}

TEST(CachingAllocator, MaxSplitSizeKeepsLargeBlocksWhole) {
  // A cached 40 MiB segment. Default: 8 MiB splits it (32 MiB left):
  // reserved 40 MiB. With max_split_size_mb:20 an 8 MiB request may not use
  // a block of 20 MiB or more: a new 20 MiB segment, reserved 60 MiB.
  std::vector<AllocEvent> Ev = {A(0, 40 * MiB), F(0), A(1, 8 * MiB)};
  EXPECT_EQ(simulateCachingAllocator(Ev, {}).PeakReserved, 40 * MiB);
  CudaAllocConfig C;
  C.MaxSplitSize = 20 * MiB;
  EXPECT_EQ(simulateCachingAllocator(Ev, C).PeakReserved, 60 * MiB);
  // An oversize request reuses an oversize block less than 20 MiB larger,
  // whole: 30 MiB in the 40 MiB block (40 < 30 + 20), allocated 40 MiB.
  auto R = simulateCachingAllocator({A(0, 40 * MiB), F(0), A(1, 30 * MiB)}, C);
  EXPECT_EQ(R.PeakReserved, 40 * MiB);
  EXPECT_EQ(R.PeakAllocated, 40 * MiB);
}

TEST(CachingAllocator, ExpandableSegmentsMergeWhatSegmentsCannot) {
  // Large pool pages are 20 MiB. 12 MiB maps one page (8 MiB left at the
  // end); the second 12 MiB grows the end by one page (8 + 20 = 28 MiB,
  // 16 left). Freeing both merges everything into one 40 MiB block, so 24
  // MiB fits without mapping: reserved 40 MiB, against 48 MiB with
  // separate segments (FreeBlocksNeverMergeAcrossSegments).
  CudaAllocConfig C;
  C.ExpandableSegments = true;
  auto R = simulateCachingAllocator(
      {A(0, 12 * MiB), A(1, 12 * MiB), F(0), F(1), A(2, 24 * MiB)}, C);
  EXPECT_EQ(R.PeakReserved, 40 * MiB);
  EXPECT_EQ(R.PeakAllocated, 24 * MiB);
}

TEST(CachingAllocator, ExpandableWithMaxSplitMapsANewBlockPastARefusedTail) {
  // Expandable, max_split_size_mb:20. 200 MiB maps ten 20 MiB pages and is
  // freed: a 200 MiB free block at the segment's end. 30 MiB (>= 20 MiB)
  // may not take it: 200 >= 30 + 20 (an oversize block is only used for a
  // near-exact request). The tail already holds more than 30 MiB, so it is
  // not extended (Size - tail would wrap); a new 40 MiB (two pages) block
  // is mapped after it: reserved 200 + 40 = 240 MiB, no OOM.
  CudaAllocConfig C;
  C.ExpandableSegments = true;
  C.MaxSplitSize = 20 * MiB;
  auto R = simulateCachingAllocator({A(0, 200 * MiB), F(0), A(1, 30 * MiB)}, C);
  EXPECT_EQ(R.PeakReserved, 240 * MiB);
  EXPECT_EQ(R.PeakAllocated, 200 * MiB);
  EXPECT_FALSE(R.OOMEvent.has_value());
}

TEST(CachingAllocator, LimitReleasesWholeFreeSegmentsFirst) {
  // Limit 36 MiB: 24 MiB would make 48 MiB reserved; both 12 MiB segments
  // are free and whole, so they are released (0 reserved) and 24 fits.
  auto R = simulateCachingAllocator(
      {A(0, 12 * MiB), A(1, 12 * MiB), F(0), F(1), A(2, 24 * MiB)}, {},
      36 * MiB);
  EXPECT_FALSE(R.OOMEvent);
  EXPECT_EQ(R.PeakReserved, 24 * MiB);
}

TEST(CachingAllocator, FragmentationRunsOutBeforeTheTensorsDo) {
  // 3 MiB and 3 MiB from one 20 MiB segment (14 MiB left at its end); the
  // first is freed: free blocks of 3 and 14 MiB, both parts of a segment
  // still in use, so neither can be released. 15 MiB needs a new 16 MiB
  // segment: 20 + 16 = 36 MiB > 30 MiB. Out of memory at event 3 with only
  // 3 MiB allocated; 3 + 15 = 18 MiB of tensors would fit.
  auto R = simulateCachingAllocator(
      {A(0, 3 * MiB), A(1, 3 * MiB), F(0), A(2, 15 * MiB)}, {}, 30 * MiB);
  ASSERT_TRUE(R.OOMEvent);
  EXPECT_EQ(*R.OOMEvent, 3u);
  EXPECT_EQ(R.AllocatedAtOOM, 3 * MiB);
  EXPECT_EQ(R.ReservedAtOOM, 20 * MiB);
}

TEST(CachingAllocator, ParsesAllocConf) {
  auto C = parseCudaAllocConf("max_split_size_mb:128,expandable_segments:True");
  ASSERT_TRUE(bool(C));
  EXPECT_EQ(C->MaxSplitSize, 128 * MiB);
  EXPECT_TRUE(C->ExpandableSegments);
  auto Bad = parseCudaAllocConf("roundup_power2_divisions:4");
  ASSERT_FALSE(bool(Bad));
  llvm::consumeError(Bad.takeError());
}
