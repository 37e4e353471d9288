//===- PlanHostTest.cpp - the host region's layout and its check ----------===//
//
// Host homes laid out by hand-written schedules: every offset and size below
// is worked out from the tensor sizes and the 256-byte alignment.
//
//===----------------------------------------------------------------------===//
#include "ScheduleBuilder.h"
#include "TestExpected.h"
#include "oomplan/Plan/Plan.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {

// W is a weight streamed in twice (W and W#2: one graph value, two device
// copies), S is state with a host home that no step writes on the device.
TEST(PlanHost, HomesEndToEndCopiesShareOne) {
  test::ScheduleBuilder B;
  TensorId X = B.tensor("x", 512, TensorKind::GraphInput);
  TensorId W = B.tensor("W", 1000, TensorKind::Activation, /*Host=*/true);
  B.S.Tensors[W].Value = 7;
  TensorId W2 = B.tensor("W#2", 1000, TensorKind::Activation, true);
  B.S.Tensors[W2].Value = 7;
  TensorId St = B.tensor("S", 300, TensorKind::OptimizerState, true);
  TensorId A = B.tensor("a", 512);
  TensorId Y = B.tensor("y", 512, TensorKind::GraphOutput);
  B.step(StepKind::Prefetch, "Prefetch", {}, {W});
  B.step(StepKind::Compute, "MatMul", {X, W}, {A});
  B.step(StepKind::Prefetch, "Prefetch", {}, {W2});
  B.step(StepKind::Compute, "MatMul", {A, W2}, {Y});
  PlanOptions PO;
  PO.AlignBytes = 256;
  auto P = buildPlan(B.S, computeLifetimes(B.S, {}), PO);
  ASSERT_TRUE(bool(P)) << toString(P.takeError());
  // W: 1000 bytes -> 1024 at 0; W#2 shares it; S: 300 -> 512 at 1024.
  EXPECT_EQ(P->HostOffsetOf[W], 0u);
  EXPECT_EQ(P->HostOffsetOf[W2], 0u);
  EXPECT_EQ(P->HostOffsetOf[St], 1024u);
  EXPECT_EQ(P->HostBytes, 1536u);
  EXPECT_EQ(P->HostOffsetOf[X], NoHostOffset);
  EXPECT_EQ(P->HostOffsetOf[A], NoHostOffset);
  // S has no device bytes: a host buffer at its home.
  BufferId SB = P->Life.BufferOf[St];
  EXPECT_EQ(P->RegionOf[SB], Region::Host);
  EXPECT_EQ(P->OffsetOf[SB], 1024u);
  EXPECT_EQ(regionName(Region::Host), "host");
  // The device copies of W are arena buffers (from their Prefetch), and
  // the host region is not device memory.
  EXPECT_EQ(P->RegionOf[P->Life.BufferOf[W]], Region::Arena);
  EXPECT_EQ(P->totalBytes(), P->WeightBytes + P->IOBytes + P->ArenaBytes);
}

TEST(PlanHost, VerifierRejectsOverlapAndOverrun) {
  Plan P;
  ScheduleTensor T;
  T.HostHome = true;
  T.SizeBytes = 600;
  T.Name = "m";
  P.Sched.Tensors.push_back(T);
  T.Name = "v";
  P.Sched.Tensors.push_back(T);
  // m at [0, 600), v at [512, 1112): overlap.
  P.HostOffsetOf = {0, 512};
  P.HostBytes = 1200;
  llvm::Error E = verifyHostRegion(P);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("'m' and 'v' overlap"),
            std::string::npos);
  // Apart, but v ends at 768 + 600 = 1368 > 1200.
  P.HostOffsetOf = {0, 768};
  E = verifyHostRegion(P);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("past the host region"),
            std::string::npos);
  P.HostBytes = 1368;
  EXPECT_FALSE(bool(verifyHostRegion(P)));
}

} // namespace
