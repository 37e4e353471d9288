//===- VerifierTest.cpp - the verifier on hand-built placements -----------===//
//
// Placements built by hand, independent of any algorithm: valid ones pass,
// and each kind of violation is rejected with a message naming the buffers.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Verify/PlacementVerifier.h"
#include "gtest/gtest.h"

using namespace oomplan;
using oomplan::planner::BufferRequest;

namespace {
std::string check(llvm::ArrayRef<BufferRequest> R,
                  llvm::ArrayRef<uint64_t> Offsets, uint64_t Arena,
                  std::optional<uint64_t> Budget = std::nullopt) {
  llvm::Error E = verify::verifyPlacement(R, Offsets, Arena, Budget);
  return E ? llvm::toString(std::move(E)) : "ok";
}
} // namespace

TEST(Verifier, AcceptsReuseOfDeadBuffers) {
  // 1 and 2 never coexist (half-open), so both may use [0, 100).
  BufferRequest R[] = {{1, 100, 4, 0, 2}, {2, 100, 4, 2, 4}, {3, 8, 4, 0, 4}};
  EXPECT_EQ(check(R, {0, 0, 100}, 108), "ok");
}

TEST(Verifier, RejectsOverlapNamingBothBuffers) {
  BufferRequest R[] = {{10, 100, 1, 0, 3}, {20, 50, 1, 2, 5}};
  EXPECT_EQ(check(R, {0, 60}, 110),
            "buffer 10 (bytes [0, 100), steps [0, 3)) overlaps buffer 20 "
            "(bytes [60, 110), steps [2, 5))");
}

TEST(Verifier, RejectsOverlapFromBelow) {
  // The new buffer starts below a live one and reaches into it.
  BufferRequest R[] = {{1, 10, 1, 0, 5}, {2, 20, 1, 1, 2}};
  EXPECT_EQ(check(R, {15, 0}, 25),
            "buffer 1 (bytes [15, 25), steps [0, 5)) overlaps buffer 2 "
            "(bytes [0, 20), steps [1, 2))");
}

TEST(Verifier, FindsOverlapAmongManyLiveBuffers) {
  std::vector<BufferRequest> R;
  std::vector<uint64_t> Offsets;
  for (uint64_t I = 0; I < 1000; ++I) {
    R.push_back({I, 16, 16, 0, 10});
    Offsets.push_back(16 * I);
  }
  EXPECT_EQ(check(R, Offsets, 16000), "ok");
  R.push_back({5000, 16, 16, 9, 11});
  Offsets.push_back(16 * 500);
  EXPECT_EQ(check(R, Offsets, 16000),
            "buffer 500 (bytes [8000, 8016), steps [0, 10)) overlaps buffer "
            "5000 (bytes [8000, 8016), steps [9, 11))");
}

TEST(Verifier, ZeroSizeAndEmptyLifetimesConflictWithNothing) {
  BufferRequest R[] = {{1, 0, 1, 0, 5}, {2, 10, 1, 0, 5}, {3, 10, 1, 2, 2}};
  EXPECT_EQ(check(R, {5, 0, 0}, 10), "ok");
}

TEST(Verifier, RejectsOutsideArena) {
  BufferRequest R[] = {{1, 100, 1, 0, 1}, {4, 10, 1, 0, 1}};
  EXPECT_EQ(check(R, {0, 100}, 100),
            "buffer 4 (bytes [100, 110), steps [0, 1)) ends outside the "
            "arena of 100 bytes");
  BufferRequest Wrap[] = {{5, 2, 1, 0, 1}};
  EXPECT_EQ(check(Wrap, {UINT64_MAX}, UINT64_MAX).substr(0, 8), "buffer 5");
}

TEST(Verifier, RejectsMisalignment) {
  BufferRequest R[] = {{3, 100, 256, 0, 1}};
  EXPECT_EQ(check(R, {128}, 512),
            "buffer 3 at offset 128 is not aligned to 256 bytes");
}

TEST(Verifier, RejectsOverBudget) {
  BufferRequest R[] = {{1, 100, 1, 0, 1}, {2, 100, 1, 0, 1}};
  EXPECT_EQ(check(R, {0, 100}, 200, 200), "ok");
  EXPECT_EQ(check(R, {0, 100}, 200, 150),
            "arena of 200 bytes exceeds the budget of 150 bytes; highest is "
            "buffer 2 (bytes [100, 200), steps [0, 1))");
}

TEST(Verifier, RejectsWrongOffsetCount) {
  BufferRequest R[] = {{1, 100, 1, 0, 1}};
  EXPECT_EQ(check(R, {}, 100), "placement has 0 offsets for 1 buffers");
}
