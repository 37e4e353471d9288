//===- CapacityTest.cpp - the KV cache arithmetic against hand figures ----===//
//
// The paged cache's blocks, tokens and concurrency, the start-up check and
// the longest context, on small figures worked out by hand in each test
// (and, for the bisection, against a plain scan over every length).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Serve/Serving.h"
#include "gtest/gtest.h"

using namespace oomplan;
using namespace oomplan::serve;

namespace {

Fraction util(const char *Text) {
  auto F = parseUtilization(Text);
  EXPECT_TRUE(bool(F)) << llvm::toString(F.takeError());
  return F ? *F : Fraction();
}

// usable 1000000 x 0.5 = 500000; weights 100000, step 50000, overhead
// 10000: 340000 bytes of cache; blocks of 16 tokens x 1000 bytes = 16000
// bytes: 21 blocks (336000 bytes), 336 tokens.
ServeConfig config(uint64_t Len) {
  ServeConfig C;
  C.MaxModelLen = Len;
  C.MaxBatchedTokens = 2048;
  C.MaxNumSeqs = 256;
  C.BlockSize = 16;
  C.Utilization = util("0.5");
  C.Limit.CapacityBytes = 1000000;
  C.Limit.OverheadBytes = 10000;
  return C;
}

ServeFigures figures() {
  ServeFigures F;
  F.WeightBytes = 100000;
  F.StepBytes = 50000;
  F.KVBytesPerToken = 1000;
  return F;
}

} // namespace

TEST(ServeCapacity, UtilizationIsAnExactDecimal) {
  Fraction F = util("0.9");
  EXPECT_EQ(F.Num, 9u);
  EXPECT_EQ(F.Den, 10u);
  // 24 GiB x 0.9 = 23192823398.4, rounded down.
  EXPECT_EQ(scaleBytes(25769803776ull, F), 23192823398ull);
  EXPECT_EQ(scaleBytes(UINT64_MAX, util("1")), UINT64_MAX);
  EXPECT_EQ(scaleBytes(1000, util(".25")), 250u);
  EXPECT_EQ(scaleBytes(1000, util("0.955")), 955u);
  for (const char *Bad : {"0", "0.0", "1.5", "2", "abc", "-0.5", "", ".",
                          "0.1234567891", "0.9x", "+0.5"}) {
    auto E = parseUtilization(Bad);
    EXPECT_FALSE(bool(E)) << Bad;
    if (!E)
      llvm::consumeError(E.takeError());
  }
}

TEST(ServeCapacity, BlocksTokensAndConcurrency) {
  Capacity C = computeCapacity(config(100), figures());
  EXPECT_EQ(C.UsableBytes, 500000u);
  EXPECT_EQ(C.KVCacheBytes, 340000);
  EXPECT_EQ(C.BlockBytes, 16000u);
  EXPECT_EQ(C.Blocks, 21u);
  EXPECT_EQ(C.Tokens, 336u);
  // ceil(100 / 16) = 7 blocks a sequence: 21 / 7 = 3.
  EXPECT_EQ(C.BlocksPerSequence, 7u);
  EXPECT_EQ(C.Sequences, 3u);
  EXPECT_DOUBLE_EQ(C.MaxConcurrency, 3.0);
  EXPECT_TRUE(C.Starts);
}

TEST(ServeCapacity, OneSequenceMustFit) {
  // 336 tokens are 21 blocks, exactly what there is; 337 need 22.
  EXPECT_TRUE(computeCapacity(config(336), figures()).Starts);
  Capacity C = computeCapacity(config(337), figures());
  EXPECT_FALSE(C.Starts);
  EXPECT_NE(C.Why.find("needs 22 blocks"), std::string::npos) << C.Why;
}

TEST(ServeCapacity, NoMemoryForTheCache) {
  ServeFigures F = figures();
  F.WeightBytes = 600000; // 500000 - 600000 - 50000 - 10000 < 0
  Capacity C = computeCapacity(config(100), F);
  EXPECT_EQ(C.KVCacheBytes, -160000);
  EXPECT_EQ(C.Blocks, 0u);
  EXPECT_FALSE(C.Starts);
  EXPECT_NE(C.Why.find("no memory for the KV cache"), std::string::npos);
}

TEST(ServeCapacity, SlidingWindowCapsASequence) {
  ServeConfig C = config(32768);
  // Mistral: window 4096 and a chunk of 2048 keep 4095 + 2048 = 6143
  // tokens: ceil(6143 / 16) + 1 = 385 blocks, not 32768 / 16 = 2048.
  EXPECT_EQ(blocksPerSequence(C, 32768, 4096u), 385u);
  // A sequence shorter than that keeps all of itself, and a block more.
  EXPECT_EQ(blocksPerSequence(C, 1000, 4096u), 64u);
  EXPECT_EQ(blocksPerSequence(C, 1000, std::nullopt), 63u);
}

TEST(ServeCapacity, LongestContextWithAFixedStep) {
  bool Unbounded = true;
  auto L = longestContext(
      config(100), figures(),
      [](uint64_t) -> llvm::Expected<uint64_t> { return 50000; }, &Unbounded);
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  ASSERT_TRUE(L->has_value());
  EXPECT_EQ(**L, 336u); // 21 blocks x 16
  EXPECT_FALSE(Unbounded);
}

TEST(ServeCapacity, LongestContextWhenTheStepGrows) {
  // A step of 50000 + 100 bytes per token of context: scan every length
  // for the last that starts, by the formula written out here.
  auto Step = [](uint64_t Len) { return 50000 + 100 * Len; };
  uint64_t Want = 0;
  for (uint64_t Len = 1; Len < 1000; ++Len) {
    int64_t KV = 500000 - 100000 - int64_t(Step(Len)) - 10000;
    uint64_t Blocks = KV > 0 ? uint64_t(KV) / 16000 : 0;
    if (Blocks >= (Len + 15) / 16)
      Want = Len;
  }
  ASSERT_GT(Want, 0u);
  bool Unbounded = true;
  auto L = longestContext(
      config(100), figures(),
      [&](uint64_t Len) -> llvm::Expected<uint64_t> { return Step(Len); },
      &Unbounded);
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  ASSERT_TRUE(L->has_value());
  EXPECT_EQ(**L, Want);
}

TEST(ServeCapacity, NothingFits) {
  ServeFigures F = figures();
  F.WeightBytes = 600000;
  bool Unbounded = true;
  auto L = longestContext(
      config(100), F,
      [](uint64_t) -> llvm::Expected<uint64_t> { return 50000; }, &Unbounded);
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  EXPECT_FALSE(L->has_value());
  EXPECT_FALSE(Unbounded);
}

TEST(ServeCapacity, AWindowSmallerThanTheCacheIsUnbounded) {
  // Window 32 and chunk 16 keep at most 47 tokens: ceil(47 / 16) + 1 = 4
  // blocks of the 21, whatever the length.
  ServeConfig C = config(100);
  C.MaxBatchedTokens = 16;
  ServeFigures F = figures();
  F.Window = 32;
  bool Unbounded = false;
  auto L = longestContext(
      C, F, [](uint64_t) -> llvm::Expected<uint64_t> { return 50000; },
      &Unbounded);
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  EXPECT_TRUE(Unbounded);
  EXPECT_FALSE(L->has_value());
}
