//===- ByteSizeTest.cpp - size parsing and printing -----------------------===//
#include "oomplan/Support/ByteSize.h"
#include "gtest/gtest.h"

using namespace oomplan;

static uint64_t parse(const char *S) {
  auto R = parseByteSize(S);
  EXPECT_TRUE(static_cast<bool>(R)) << S;
  if (!R) {
    llvm::consumeError(R.takeError());
    return 0;
  }
  return *R;
}

static bool rejects(const char *S) {
  auto R = parseByteSize(S);
  if (R)
    return false;
  llvm::consumeError(R.takeError());
  return true;
}

TEST(ByteSize, BinaryUnits) {
  EXPECT_EQ(parse("24G"), 24ull << 30);
  EXPECT_EQ(parse("24GiB"), 24ull << 30);
  EXPECT_EQ(parse("24g"), 24ull << 30);
  EXPECT_EQ(parse("512M"), 512ull << 20);
  EXPECT_EQ(parse("1.5T"), 3ull << 39); // 1.5 * 2^40
  EXPECT_EQ(parse("64K"), 65536u);
  // Above 2^63 bytes (where llround would overflow): 8388608.5 TiB = 2^63 +
  // 2^39.
  EXPECT_EQ(parse("8388608.5T"), (8388608ull << 40) + (1ull << 39));
}

TEST(ByteSize, DecimalUnitsAndBytes) {
  EXPECT_EQ(parse("300MB"), 300000000u);
  EXPECT_EQ(parse("2GB"), 2000000000u);
  EXPECT_EQ(parse("4096"), 4096u);
  EXPECT_EQ(parse("4096B"), 4096u);
  EXPECT_EQ(parse(" 7 "), 7u);
}

TEST(ByteSize, Rejects) {
  EXPECT_TRUE(rejects(""));
  EXPECT_TRUE(rejects("-1G"));
  EXPECT_TRUE(rejects("12X"));
  EXPECT_TRUE(rejects("G"));
  EXPECT_TRUE(rejects("1.2.3G"));
  EXPECT_TRUE(rejects("99999999999999999999"));
  EXPECT_TRUE(rejects("17179869184G")); // 2^34 GiB = 2^64 bytes
  EXPECT_TRUE(rejects("16777216.5T"));  // (2^24 + 0.5) TiB > 2^64 bytes
}

TEST(ByteSize, Format) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(999), "999 B");
  // Three significant digits: 1000 or more moves to the next unit (issue 17:
  // "1008 MiB" beside GiB figures). 1023/1024 = 0.999 KiB.
  EXPECT_EQ(formatBytes(1023), "1.00 KiB");
  EXPECT_EQ(formatBytes(1000ull << 20), "0.98 GiB"); // 0.9766 GiB
  EXPECT_EQ(formatBytes(1008ull << 20), "0.98 GiB"); // 0.9844 GiB
  EXPECT_EQ(formatBytes(1047950540), "999 MiB");     // 999.40 MiB
  // 10735393024 B = 9.998 GiB: the precision follows the rounded value.
  EXPECT_EQ(formatBytes(10735393024ull), "10.0 GiB");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(24ull << 30), "24.0 GiB");
  EXPECT_EQ(formatBytes(100ull << 20), "100 MiB");
}
