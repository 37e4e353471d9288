//===- PropertyTest.cpp - every algorithm on thousands of random inputs ---===//
//
// For every registered algorithm and thousands of random instances (mixed
// sizes, lifetimes, alignments, empty buffers): the verifier accepts the
// placement, the arena is at least the lower bound and at most naive's.
// Search algorithms get small effort budgets to keep the suite fast.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Placement/LowerBound.h"
#include "oomplan/Placement/RandomInstance.h"
#include "oomplan/Placement/Registry.h"
#include "oomplan/Verify/PlacementVerifier.h"
#include "gtest/gtest.h"

using namespace oomplan;
using namespace oomplan::planner;

namespace {
class EveryAlgorithm : public testing::TestWithParam<const AlgorithmInfo *> {};

std::vector<BufferRequest> instance(uint64_t Seed) {
  RandomInstanceOptions O;
  O.Seed = Seed;
  O.NumBuffers = 1 + Seed % 40;
  O.MaxSizeBytes = Seed % 3 == 0 ? 4096 : (1ull << 40);
  O.AlignBytes = Seed % 2 ? 0 : 64; // 0: random powers of two up to 256.
  O.ZeroSizePercent = 10;
  O.MaxLongLifetimeSteps = 1 + Seed % 50;
  return makeRandomRequests(O);
}
} // namespace

TEST_P(EveryAlgorithm, RandomInstancesAreValidAndBounded) {
  const AlgorithmInfo &A = *GetParam();
  PlannerOptions Options;
  Options.EffortBudget = 200; // Exact nodes / hill-climb iterations.
  Options.TimeLimitSeconds = 10;
  for (uint64_t Seed = 1; Seed <= 2000; ++Seed) {
    std::vector<BufferRequest> R = instance(Seed);
    Options.Seed = Seed;
    llvm::Expected<Placement> P = A.Run(R, Options);
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    llvm::Expected<Placement> Naive = runAlgorithm("naive", R, Options);
    ASSERT_TRUE(bool(Naive));
    ASSERT_EQ(P->Offsets.size(), R.size());
    llvm::Error E = verify::verifyPlacement(R, P->Offsets, P->ArenaBytes);
    ASSERT_FALSE(bool(E)) << "seed " << Seed << ": "
                          << llvm::toString(std::move(E));
    ASSERT_GE(P->ArenaBytes, lowerBound(R)) << "seed " << Seed;
    ASSERT_LE(P->ArenaBytes, Naive->ArenaBytes) << "seed " << Seed;
  }
}

TEST_P(EveryAlgorithm, CapacityStopsSearchesAndStaysValid) {
  RandomInstanceOptions O;
  O.NumBuffers = 500;
  O.Seed = 7;
  std::vector<BufferRequest> R = makeRandomRequests(O);
  PlannerOptions Options;
  Options.CapacityBytes = UINT64_MAX;
  llvm::Expected<Placement> P = GetParam()->Run(R, Options);
  ASSERT_TRUE(bool(P));
  EXPECT_FALSE(bool(verify::verifyPlacement(R, P->Offsets, P->ArenaBytes)));
}

INSTANTIATE_TEST_SUITE_P(
    Planner, EveryAlgorithm, testing::ValuesIn([] {
      std::vector<const AlgorithmInfo *> All;
      for (const AlgorithmInfo &A : algorithms())
        All.push_back(&A);
      return All;
    }()),
    [](const testing::TestParamInfo<const AlgorithmInfo *> &Info) {
      std::string Name = Info.param->Name.str();
      for (char &C : Name)
        if (C == '-')
          C = '_';
      return Name;
    });
