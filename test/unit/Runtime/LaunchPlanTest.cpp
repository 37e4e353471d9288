//===- LaunchPlanTest.cpp - queues, events and their checker ----*- C++ -*-===//
//
// Hand-made access lists with the expected waits worked out in comments,
// and a randomized check of the rule's two promises on many schedules: the
// independent checker accepts every launch plan (every conflicting pair on
// different queues is ordered), and every wait is needed (dropping any one
// makes the checker fail), so no copy is serialised behind compute for
// nothing.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/LaunchPlan.h"
#include "gtest/gtest.h"
#include <random>

using namespace oomplan;
using namespace oomplan::runtime;

namespace {
using Accesses = std::vector<llvm::SmallVector<Access, 6>>;

Access rd(uint64_t B, uint64_t E, Region R = Region::Arena) {
  return Access{R, B, E, false};
}
Access wr(uint64_t B, uint64_t E, Region R = Region::Arena) {
  return Access{R, B, E, true};
}
const Queue C = Queue::Compute, X = Queue::Copy;

bool verifies(const Accesses &A, const LaunchPlan &L) {
  llvm::Error E = verifyLaunchPlan(A, L);
  bool OK = !E;
  llvm::consumeError(std::move(E));
  return OK;
}

// 0: compute writes [0,100). 1: offload reads [0,100), writes host [0,100).
// 2: compute overwrites [0,100) (the planner reused the bytes). The offload
// must wait for 0 (read after write), and 2 for the offload (write after
// read): two events, recorded after steps 0 and 1.
TEST(LaunchPlan, OffloadWaitsForProducerAndReuseWaitsForOffload) {
  Accesses A = {
      {wr(0, 100)}, {rd(0, 100), wr(0, 100, Region::Host)}, {wr(0, 100)}};
  LaunchPlan L = planLaunches(A, {C, X, C});
  EXPECT_EQ(L.NumEvents, 2u);
  EXPECT_EQ(L.Steps[0].Record, 0);
  EXPECT_EQ(L.Steps[1].Waits, (llvm::SmallVector<unsigned, 2>{0}));
  EXPECT_EQ(L.Steps[1].Record, 1);
  EXPECT_EQ(L.Steps[2].Waits, (llvm::SmallVector<unsigned, 2>{1}));
  EXPECT_TRUE(verifies(A, L));
}

// 0: compute reads [0,64). 1: compute writes [64,128). 2: prefetch writes
// [0,64) (reusing 0's bytes). 3: compute reads [0,64). The prefetch waits
// for step 0, the latest step it conflicts with; step 1 touches other bytes
// and gets no event. Step 3 waits for the prefetch.
TEST(LaunchPlan, PrefetchWaitsOnlyForTheLastConflict) {
  Accesses A = {{rd(0, 64)},
                {wr(64, 128)},
                {wr(0, 64), rd(0, 64, Region::Host)},
                {rd(0, 64)}};
  LaunchPlan L = planLaunches(A, {C, C, X, C});
  EXPECT_EQ(L.Steps[0].Record, 0);
  EXPECT_EQ(L.Steps[1].Record, -1);
  EXPECT_EQ(L.Steps[2].Waits, (llvm::SmallVector<unsigned, 2>{0}));
  EXPECT_EQ(L.Steps[3].Waits, (llvm::SmallVector<unsigned, 2>{1}));
  EXPECT_TRUE(verifies(A, L));
}

// A prefetch into bytes nobody else touches overlaps compute: no event;
// two reads never conflict.
TEST(LaunchPlan, DisjointOrReadOnlyAccessesNeedNoEvent) {
  Accesses A = {{rd(0, 64), wr(64, 128)},
                {wr(128, 192), rd(0, 32, Region::Host)},
                {rd(0, 64)},
                {rd(0, 64)}};
  LaunchPlan L = planLaunches(A, {C, X, C, X});
  EXPECT_EQ(L.NumEvents, 0u);
  EXPECT_TRUE(verifies(A, L));
}

// Same offsets in different regions do not conflict.
TEST(LaunchPlan, RegionsAreSeparate) {
  Accesses A = {{wr(0, 64, Region::Arena)}, {rd(0, 64, Region::Weights)}};
  EXPECT_EQ(planLaunches(A, {C, X}).NumEvents, 0u);
}

TEST(LaunchPlan, CheckerRejectsMissingAndUnrecordedWaits) {
  Accesses A = {{wr(0, 100)}, {rd(0, 100), wr(0, 100, Region::Host)}};
  LaunchPlan L = planLaunches(A, {C, X});
  ASSERT_TRUE(verifies(A, L));
  LaunchPlan NoWait = L;
  NoWait.Steps[1].Waits.clear();
  llvm::Error E = verifyLaunchPlan(A, NoWait);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(llvm::toString(std::move(E)),
            "launch plan: steps 0 and 1 touch the same bytes on different "
            "queues and no event orders them");
  LaunchPlan NoRecord = L;
  NoRecord.Steps[0].Record = -1;
  E = verifyLaunchPlan(A, NoRecord);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(llvm::toString(std::move(E)),
            "launch plan: step 1 waits for event 0, which no earlier step "
            "records");
}

// Random schedules: 60 steps, one in four on the copy queue, each touching
// one to three random ranges of a 1 KiB arena or a host region.
TEST(LaunchPlan, RandomSchedulesAreOrderedWithNoSpareWait) {
  std::mt19937_64 Rng(12345);
  unsigned Waits = 0;
  for (int Trial = 0; Trial < 200; ++Trial) {
    Accesses A(60);
    std::vector<Queue> Q(60);
    for (size_t S = 0; S < A.size(); ++S) {
      Q[S] = Rng() % 4 == 0 ? X : C;
      for (unsigned N = 1 + Rng() % 3; N-- > 0;) {
        uint64_t B = Rng() % 1024, Len = 1 + Rng() % 256;
        Region R = Rng() % 5 == 0 ? Region::Host : Region::Arena;
        A[S].push_back(Access{R, B, B + Len, bool(Rng() % 2)});
      }
    }
    LaunchPlan L = planLaunches(A, Q);
    ASSERT_TRUE(verifies(A, L)) << "trial " << Trial;
    for (size_t S = 0; S < L.Steps.size(); ++S)
      for (size_t W = 0; W < L.Steps[S].Waits.size(); ++W) {
        LaunchPlan Less = L;
        Less.Steps[S].Waits.erase(Less.Steps[S].Waits.begin() + W);
        EXPECT_FALSE(verifies(A, Less))
            << "trial " << Trial << ": step " << S << "'s wait is spare";
        ++Waits;
      }
  }
  EXPECT_GT(Waits, 200u); // the trials did exercise waits
}

} // namespace
