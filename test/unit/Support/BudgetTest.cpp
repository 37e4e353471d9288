//===- BudgetTest.cpp - the one "does it fit" -----------------------------===//
//
// fits() decides every verdict: deciding figure + overhead + headroom <=
// capacity, never wrapping. Each case's numbers are worked out in its
// comment.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Support/Budget.h"
#include "gtest/gtest.h"

using namespace oomplan;

static Budget budget(uint64_t Capacity, uint64_t Overhead = 0) {
  Budget B;
  B.CapacityBytes = Capacity;
  B.OverheadBytes = Overhead;
  return B;
}

static Figures total(uint64_t Bytes) { return Figures{Bytes, std::nullopt}; }

TEST(Budget, ExactlyAtTheBudgetFits) {
  // 1000 bytes with 200 of overhead: a plan of 800 needs exactly 1000.
  Budget B = budget(1000, 200);
  EXPECT_TRUE(fits(B, total(800)));
  EXPECT_EQ(neededBytes(B, total(800)), 1000u);
  EXPECT_EQ(spareBytes(B, total(800)), 0);
  // One byte more is over by one.
  EXPECT_FALSE(fits(B, total(801)));
  EXPECT_EQ(spareBytes(B, total(801)), -1);
  EXPECT_EQ(*B.roomBytes(), 800u);
}

TEST(Budget, OverheadLargerThanTheDevice) {
  // 2 GiB of context on a 1 GiB budget: nothing fits, not even an empty
  // plan, and the room left for tensors is 0 (not a wrapped 2^64 - 1 GiB).
  Budget B = budget(uint64_t(1) << 30, uint64_t(2) << 30);
  EXPECT_FALSE(fits(B, total(0)));
  EXPECT_FALSE(fits(B, total(1)));
  EXPECT_EQ(*B.roomBytes(), 0u);
  EXPECT_EQ(spareBytes(B, total(0)), -(int64_t(1) << 30));
  EXPECT_EQ(neededBytes(B, total(0)), uint64_t(2) << 30);
}

TEST(Budget, NoBudgetGivenEverythingFits) {
  Budget B;
  B.OverheadBytes = 100;
  B.DeviceBytes = 80;
  EXPECT_FALSE(B.given());
  EXPECT_TRUE(fits(B, total(UINT64_MAX)));
  EXPECT_FALSE(B.roomBytes().has_value());
  // The figure a run needs is still counted: 50 + 100.
  EXPECT_EQ(neededBytes(B, total(50)), 150u);
  // A fit works within the device's memory instead: 80 - 100 leaves none.
  Budget Bounded = B.bounded();
  ASSERT_TRUE(Bounded.given());
  EXPECT_EQ(*Bounded.CapacityBytes, 80u);
  EXPECT_EQ(*Bounded.roomBytes(), 0u);
  // A given capacity is kept.
  EXPECT_EQ(*budget(500).bounded().CapacityBytes, 500u);
}

TEST(Budget, AllocatorHeadroomIsKeptFree) {
  // 1000 bytes, 100 overhead, 150 kept for the allocator: 750 for tensors.
  Budget B = budget(1000, 100).withHeadroom(150);
  EXPECT_EQ(B.HeadroomBytes, 150u);
  EXPECT_EQ(*B.roomBytes(), 750u);
  EXPECT_TRUE(fits(B, total(750)));
  EXPECT_FALSE(fits(B, total(751)));
  EXPECT_EQ(neededBytes(B, total(750)), 1000u);
  // Headroom adds up, and saturates rather than wraps.
  EXPECT_EQ(B.withHeadroom(50).HeadroomBytes, 200u);
  EXPECT_EQ(B.withHeadroom(UINT64_MAX).HeadroomBytes, UINT64_MAX);
  EXPECT_FALSE(fits(B.withHeadroom(UINT64_MAX), total(0)));
}

TEST(Budget, TheRuntimesFigureDecides) {
  // Tensors of 600 bytes that PyTorch's caching allocator reserves 900 for,
  // on 1000 bytes with 200 of overhead: the tensors fit (800), the reserved
  // bytes do not (1100).
  Figures F{600, 900};
  Budget Ours = budget(1000, 200);
  EXPECT_EQ(decidingBytes(Ours, F), 600u);
  EXPECT_TRUE(fits(Ours, F));
  Budget PyTorch = Ours;
  PyTorch.Decides = DecidingFigure::Reserved;
  EXPECT_EQ(decidingBytes(PyTorch, F), 900u);
  EXPECT_EQ(neededBytes(PyTorch, F), 1100u);
  EXPECT_FALSE(fits(PyTorch, F));
  // Reserved bytes are never below the tensors'; unsimulated, the total.
  EXPECT_EQ(decidingBytes(PyTorch, Figures{600, 500}), 600u);
  EXPECT_EQ(decidingBytes(PyTorch, total(600)), 600u);
}

TEST(Budget, SumsNeverWrap) {
  // 2^64 - 1 + 1 of overhead would wrap to 0 and fit a 10-byte budget.
  Budget B = budget(10, 1);
  EXPECT_FALSE(fits(B, total(UINT64_MAX)));
  EXPECT_EQ(neededBytes(B, total(UINT64_MAX)), UINT64_MAX);
  EXPECT_EQ(spareBytes(B, total(UINT64_MAX)), INT64_MIN);
  // A capacity past 2^63 clamps the spare bytes to int64_t's maximum.
  EXPECT_EQ(spareBytes(budget(UINT64_MAX), total(0)), INT64_MAX);
}
