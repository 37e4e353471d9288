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
// --poison fills a dying buffer on the queue of the step it dies after.
// Here t0 (256 bytes at arena offset 0) is written by step 0, offloaded by
// step 1 on the copy queue, read last by compute step 2, and step 3 writes
// t1 elsewhere. Without poison, step 2 and the offload only read t0: no
// event. With it, step 2's fill writes t0 while the offload may still read
// it, so step 2 waits for the offload.
TEST(LaunchPlan, PoisonFillWaitsForTheOtherQueuesRead) {
  Plan P;
  P.Sched.Tensors.resize(2);
  P.Sched.Tensors[0].SizeBytes = 256;
  P.Sched.Tensors[0].HostHome = true;
  P.Sched.Tensors[1].SizeBytes = 256;
  P.Sched.Steps.resize(4);
  P.Sched.Steps[0].Writes = {0};
  P.Sched.Steps[1].Kind = StepKind::Offload;
  P.Sched.Steps[1].Reads = {0};
  P.Sched.Steps[2].Reads = {0};
  P.Sched.Steps[3].Writes = {1};
  P.Life.Buffers.resize(2);
  P.Life.Buffers[0].Root = 0;
  P.Life.Buffers[0].SizeBytes = 256;
  P.Life.Buffers[0].StartStep = 0;
  P.Life.Buffers[0].EndStep = 3;
  P.Life.Buffers[1].Root = 1;
  P.Life.Buffers[1].SizeBytes = 256;
  P.Life.Buffers[1].StartStep = 3;
  P.Life.Buffers[1].EndStep = 4;
  P.Life.BufferOf = {0, 1};
  P.RegionOf = {Region::Arena, Region::Arena};
  P.OffsetOf = {0, 256};
  P.HostOffsetOf = {0, NoHostOffset};
  P.HostBytes = 256;
  auto Dying = poisonedAfter(P, false);
  ASSERT_EQ(Dying.size(), 4u);
  EXPECT_EQ(Dying[2], (llvm::SmallVector<BufferId, 2>{0}));
  EXPECT_TRUE(Dying[0].empty() && Dying[1].empty() && Dying[3].empty())
      << "t1 lives to the last step: never filled";
  LaunchPlan Plain = planLaunches(P);
  EXPECT_TRUE(Plain.Steps[2].Waits.empty());
  LaunchPlan L = planLaunches(P, false, /*Poison=*/true);
  ASSERT_EQ(L.Steps[2].Waits.size(), 1u);
  EXPECT_EQ(int(L.Steps[2].Waits[0]), L.Steps[1].Record);
  EXPECT_TRUE(verifies(stepAccesses(P, false, true), L));
  // The plain plan leaves the fill unordered: the checker says so.
  EXPECT_FALSE(verifies(stepAccesses(P, false, true), Plain));
  // Unplanned, by tensor id: the same wait.
  LaunchPlan U = planLaunches(P, true, true);
  EXPECT_EQ(U.Steps[2].Waits.size(), 1u);
}

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
