//===- AlgorithmTest.cpp - hand-made instances and the registry -----------===//
//
// Small instances whose optimal arena is derived by hand in the comments,
// plus the registry contract: unknown names list the valid ones, invalid
// requests are errors, and the default is deterministic.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Placement/LowerBound.h"
#include "oomplan/Placement/RandomInstance.h"
#include "oomplan/Placement/Registry.h"
#include "oomplan/Verify/PlacementVerifier.h"
#include "gtest/gtest.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::planner;

namespace {
Placement run(llvm::StringRef Name, llvm::ArrayRef<BufferRequest> R) {
  llvm::Expected<Placement> P = runAlgorithm(Name, R, PlannerOptions());
  EXPECT_TRUE(bool(P)) << Name.str();
  if (!P) {
    llvm::consumeError(P.takeError());
    return {};
  }
  EXPECT_FALSE(bool(verify::verifyPlacement(R, P->Offsets, P->ArenaBytes)));
  return *P;
}
/// The message of a failed Expected, or "" if it succeeded.
std::string errorOf(llvm::Expected<Placement> P) {
  if (P)
    return "";
  return llvm::toString(P.takeError());
}
} // namespace

// A [0,2) 100 bytes, B [1,3) 50 bytes, C [2,4) 100 bytes. A and C never
// coexist, so they can share offset 0; B needs 50 more: optimum 150 = the
// lower bound (steps 1 and 2 both hold 150). Naive uses 250.
TEST(Algorithms, ThreeBuffersShareOneSlot) {
  BufferRequest R[] = {{0, 100, 1, 0, 2}, {1, 50, 1, 1, 3}, {2, 100, 1, 2, 4}};
  EXPECT_EQ(lowerBound(R), 150u);
  EXPECT_EQ(run("naive", R).ArenaBytes, 250u);
  for (const AlgorithmInfo &A : algorithms()) {
    if (A.Name == "naive")
      continue;
    EXPECT_EQ(run(A.Name, R).ArenaBytes, 150u) << A.Name.str();
  }
  Placement P = run("greedy-by-size", R);
  EXPECT_EQ(P.Offsets[0], P.Offsets[2]);
}

// A classic trap for largest-first: X [0,1) 30, Y [0,2) 20, Z [1,2) 40.
// Largest first puts Z at 0, X at 0 (they do not overlap), Y on top: 60.
// The bound is 60 (step 1: 20 + 40): optimal.
TEST(Algorithms, LargestFirstIsOptimalHere) {
  BufferRequest R[] = {{0, 30, 1, 0, 1}, {1, 20, 1, 0, 2}, {2, 40, 1, 1, 2}};
  EXPECT_EQ(lowerBound(R), 60u);
  EXPECT_EQ(run("greedy-by-size", R).ArenaBytes, 60u);
  EXPECT_EQ(run("exact", R).ArenaBytes, 60u);
}

/// The optimum of a tiny instance by brute force: every packing, pushed down
/// and sorted by offset, is rebuilt by placing its buffers in that order,
/// each at the aligned highest top of the placed buffers it overlaps; so
/// the best over all orders is optimal.
static uint64_t bruteForceArena(llvm::ArrayRef<BufferRequest> R) {
  std::vector<size_t> Order(R.size());
  for (size_t I = 0; I < R.size(); ++I)
    Order[I] = I;
  uint64_t Best = UINT64_MAX;
  do {
    std::vector<uint64_t> Top(R.size(), 0);
    uint64_t Arena = 0;
    for (size_t K = 0; K < Order.size(); ++K) {
      const BufferRequest &B = R[Order[K]];
      uint64_t At = 0;
      for (size_t J = 0; J < K; ++J) {
        const BufferRequest &C = R[Order[J]];
        if (C.StartStep < B.EndStep && B.StartStep < C.EndStep)
          At = std::max(At, Top[Order[J]]);
      }
      At = (At + B.AlignBytes - 1) / B.AlignBytes * B.AlignBytes;
      Top[Order[K]] =
          At + (B.SizeBytes + B.AlignBytes - 1) / B.AlignBytes * B.AlignBytes;
      Arena = std::max(Arena, Top[Order[K]]);
    }
    Best = std::min(Best, Arena);
  } while (std::next_permutation(Order.begin(), Order.end()));
  return Best;
}

// With budget to spare, exact's probes all run to completion, so it returns
// the optimum; and with the optimum as its capacity, it meets it.
TEST(Algorithms, ExactIsOptimalOnTinyInstances) {
  uint64_t State = 12345;
  auto Next = [&State](uint64_t N) {
    State = State * 6364136223846793005ull + 1442695040888963407ull;
    return (State >> 33) % N;
  };
  for (int Trial = 0; Trial < 1000; ++Trial) {
    std::vector<BufferRequest> R;
    for (uint64_t I = 0, N = 2 + Next(5); I < N; ++I) {
      uint64_t Start = Next(6);
      R.push_back({I, 1 + Next(20), uint64_t(1) << Next(3), Start,
                   Start + 1 + Next(4)});
    }
    uint64_t Optimum = bruteForceArena(R);
    EXPECT_EQ(run("exact", R).ArenaBytes, Optimum) << "trial " << Trial;
    PlannerOptions AtOptimum;
    AtOptimum.CapacityBytes = Optimum;
    llvm::Expected<Placement> P = runAlgorithm("exact", R, AtOptimum);
    ASSERT_TRUE(bool(P));
    EXPECT_EQ(P->ArenaBytes, Optimum) << "trial " << Trial;
  }
}

// Alignment: 3 buffers of 1 byte aligned to 256, all live together: each
// reserves 256 bytes, arena 768.
TEST(Algorithms, AlignmentPadsFootprints) {
  BufferRequest R[] = {{0, 1, 256, 0, 1}, {1, 1, 256, 0, 1}, {2, 1, 256, 0, 1}};
  for (const AlgorithmInfo &A : algorithms()) {
    Placement P = run(A.Name, R);
    EXPECT_EQ(P.ArenaBytes, 768u) << A.Name.str();
    for (uint64_t O : P.Offsets)
      EXPECT_EQ(O % 256, 0u);
  }
}

TEST(Algorithms, ZeroSizeBuffersGetOffsetZero) {
  BufferRequest R[] = {{0, 0, 64, 0, 3}, {1, 10, 1, 0, 3}, {2, 5, 1, 4, 4}};
  for (const AlgorithmInfo &A : algorithms()) {
    Placement P = run(A.Name, R);
    EXPECT_EQ(P.Offsets[0], 0u);
    EXPECT_EQ(P.Offsets[2], 0u);
    EXPECT_EQ(P.ArenaBytes, 10u);
  }
}

TEST(Algorithms, HugeSizesDoNotWrap) {
  uint64_t Big = uint64_t(1) << 48;
  BufferRequest R[] = {{0, Big, 256, 0, 2}, {1, Big, 256, 1, 3}};
  for (const AlgorithmInfo &A : algorithms())
    EXPECT_EQ(run(A.Name, R).ArenaBytes, 2 * Big) << A.Name.str();
  // 2^63 - 10 + 100 passes 2^63 at buffer 1.
  BufferRequest Over[] = {{0, (uint64_t(1) << 63) - 10, 1, 0, 1},
                          {1, 100, 1, 0, 1}};
  EXPECT_EQ(errorOf(runAlgorithm("auto", Over, PlannerOptions())),
            "buffer 1: total size of all buffers exceeds 2^63 bytes");
  // One buffer of 2^64 - 1 bytes once made an arena equal to the searches'
  // "no solution" marker (a crash in auto and exact): every algorithm
  // rejects it.
  BufferRequest Max[] = {{3, UINT64_MAX, 1, 0, 1}};
  for (const AlgorithmInfo &A : algorithms())
    EXPECT_EQ(errorOf(runAlgorithm(A.Name, Max, PlannerOptions())),
              "buffer 3: total size of all buffers exceeds 2^63 bytes")
        << A.Name.str();
  // Exactly 2^63 is the largest accepted total.
  BufferRequest Edge[] = {{0, uint64_t(1) << 63, 1, 0, 1}};
  for (const AlgorithmInfo &A : algorithms())
    EXPECT_EQ(run(A.Name, Edge).ArenaBytes, uint64_t(1) << 63) << A.Name.str();
}

TEST(Algorithms, InvalidRequestsAreErrors) {
  BufferRequest BadAlign[] = {{7, 10, 3, 0, 1}};
  EXPECT_EQ(errorOf(runAlgorithm("greedy-by-size", BadAlign, PlannerOptions())),
            "buffer 7: alignment 3 is not a power of two");
  BufferRequest Reversed[] = {{9, 10, 1, 5, 2}};
  EXPECT_EQ(errorOf(runAlgorithm("exact", Reversed, PlannerOptions())),
            "buffer 9: lifetime [5, 2) ends before it "
            "starts");
}

TEST(Registry, NamesAreUniqueAndFindable) {
  EXPECT_EQ(algorithms().front().Name, DefaultAlgorithm);
  for (const AlgorithmInfo &A : algorithms()) {
    EXPECT_EQ(findAlgorithm(A.Name), &A);
    EXPECT_FALSE(A.Description.empty());
  }
  EXPECT_EQ(findAlgorithm("no-such"), nullptr);
  EXPECT_EQ(algorithms().size(), 7u);
}

TEST(Registry, UnknownNameListsValidOnes) {
  EXPECT_EQ(errorOf(runAlgorithm("best", {}, PlannerOptions())),
            "unknown placement algorithm 'best' (valid: auto, naive, "
            "greedy-by-size, greedy-by-breadth, multi-ordering, hill-climb, "
            "exact)");
}

TEST(Registry, AutoIsDeterministic) {
  RandomInstanceOptions O;
  O.NumBuffers = 300;
  O.Seed = 42;
  std::vector<BufferRequest> R = makeRandomRequests(O);
  Placement A = run("auto", R), B = run("auto", R);
  EXPECT_EQ(A.Offsets, B.Offsets);
  EXPECT_EQ(A.Algorithm, B.Algorithm);
}

// The shape of a training step (issue 10.8): n saved activations nested
// around the turn, activation i live over [i, 2n - i), and n gradients, the
// i-th live from 2n - i (when activation i dies) to the optimizer step 2n.
// Every buffer is 1 KiB. At a step t in [n, 2n) there are 2n - t
// activations and t - n gradients live, n in all (at t < n, t + 1 <= n), so
// the lower bound is n KiB; gradient i can take activation i's slot, so it
// is also the optimum. Every algorithm must return a valid placement with a
// zero time limit. (Timing is not asserted; this shape is also the worst
// case of TimeIndex, see docs/planner.md.)
TEST(Algorithms, TrainingShapedChainScales) {
  constexpr uint64_t N = 2000, KiB = 1024;
  std::vector<BufferRequest> R;
  for (uint64_t I = 0; I < N; ++I) {
    R.push_back({2 * I, KiB, 256, I, 2 * N - I});
    R.push_back({2 * I + 1, KiB, 256, 2 * N - I, 2 * N + 1});
  }
  EXPECT_EQ(lowerBound(R), N * KiB);
  EXPECT_EQ(run("greedy-by-size", R).ArenaBytes, N * KiB);
  EXPECT_EQ(run("auto", R).ArenaBytes, N * KiB);
  PlannerOptions Quick;
  Quick.TimeLimitSeconds = 0;
  for (const AlgorithmInfo &A : algorithms()) {
    llvm::Expected<Placement> P = runAlgorithm(A.Name, R, Quick);
    ASSERT_TRUE(bool(P)) << A.Name.str();
    EXPECT_FALSE(bool(verify::verifyPlacement(R, P->Offsets, P->ArenaBytes)))
        << A.Name.str();
    EXPECT_LE(P->ArenaBytes, 2 * N * KiB) << A.Name.str();
  }
}
