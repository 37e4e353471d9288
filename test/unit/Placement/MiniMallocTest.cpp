//===- MiniMallocTest.cpp - the CSV format and the six hard instances -----===//
//
// Parsing and its errors, and one table that pins every algorithm's arena on
// MiniMalloc's challenging instances A-F (capacity 1,048,576 bytes), so a
// quality regression shows up as a changed number. The inputs live in
// test/models/minimalloc (copied from google/minimalloc, Apache 2.0), the one
// copy that the lit tests and oomplan-bench also read.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Placement/LowerBound.h"
#include "oomplan/Placement/MiniMallocCSV.h"
#include "oomplan/Placement/Registry.h"
#include "oomplan/Verify/PlacementVerifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "gtest/gtest.h"

using namespace oomplan;
using namespace oomplan::planner;

namespace {
std::string parseError(llvm::StringRef Text) {
  auto R = parseMiniMallocCSV(Text, "t.csv", 1);
  return R ? "ok" : llvm::toString(R.takeError());
}

std::vector<BufferRequest> load(llvm::StringRef Name) {
  auto Buffer =
      llvm::MemoryBuffer::getFile(std::string(OOMPLAN_TEST_MODELS_DIR) +
                                  "/minimalloc/" + Name.str() + ".1048576.csv");
  EXPECT_TRUE(bool(Buffer)) << Name.str();
  if (!Buffer)
    return {};
  auto R = parseMiniMallocCSV((*Buffer)->getBuffer(), Name, 1);
  if (!R) {
    ADD_FAILURE() << llvm::toString(R.takeError());
    return {};
  }
  return *R;
}

constexpr uint64_t Capacity = 1048576;
} // namespace

TEST(MiniMallocCSV, ParsesAndRoundTrips) {
  auto R = parseMiniMallocCSV("id,lower,upper,size\n0,0,2,10\n1,1,3,20\n",
                              "t.csv", 4);
  ASSERT_TRUE(bool(R));
  ASSERT_EQ(R->size(), 2u);
  EXPECT_EQ((*R)[1].StartStep, 1u);
  EXPECT_EQ((*R)[1].EndStep, 3u);
  EXPECT_EQ((*R)[1].SizeBytes, 20u);
  EXPECT_EQ((*R)[1].AlignBytes, 4u);
  Placement P{{0, 12}, 32, "hand"};
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  writeMiniMallocCSV(OS, *R, P);
  EXPECT_EQ(OS.str(), "id,lower,upper,size,offset\n0,0,2,10,0\n1,1,3,20,12\n");
  EXPECT_EQ(parseError(Out), "ok"); // The offset column is accepted.
}

TEST(MiniMallocCSV, Errors) {
  EXPECT_EQ(parseError(""), "t.csv: empty file, expected header "
                            "'id,lower,upper,size'");
  EXPECT_EQ(parseError("a,b\n"), "t.csv:1: expected header "
                                 "'id,lower,upper,size[,offset]', got 'a,b'");
  EXPECT_EQ(parseError("id,lower,upper,size\n0,0,1\n"),
            "t.csv:2: expected 4 fields, got 3");
  EXPECT_EQ(parseError("id,lower,upper,size\n0,0,x,1\n"),
            "t.csv:2: upper 'x' is not a non-negative integer");
  EXPECT_EQ(parseError("id,lower,upper,size\n\n0,5,5,1\n"),
            "t.csv:3: buffer 0: upper 5 is not above lower 5");
  EXPECT_EQ(parseError("id,lower,upper,size\n0,0,1,1\n0,1,2,1\n"),
            "t.csv:3: duplicate id 0 (first on line 2)");
  // Sizes and steps past 2^63 (fuzzer inputs, issue 10).
  EXPECT_EQ(parseError("id,lower,upper,size\n0,0,1,18446744073709551615\n"),
            "t.csv:2: buffer 0: size 18446744073709551615 exceeds 2^63");
  EXPECT_EQ(parseError("id,lower,upper,size\n0,9223372036854775809,"
                       "9223372036854775810,1\n"),
            "t.csv:2: buffer 0: lower 9223372036854775809 exceeds 2^63");
}

// 2^64 - 1 and 2^64 - 2 are DenseSet's reserved keys; they are valid ids.
TEST(MiniMallocCSV, LargestIdsAreNotDuplicates) {
  auto R = parseMiniMallocCSV("id,lower,upper,size\n18446744073709551615,0,1,"
                              "1\n18446744073709551614,0,1,1\n",
                              "t.csv", 1);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->size(), 2u);
  EXPECT_EQ((*R)[0].Id, UINT64_MAX);
  EXPECT_EQ((*R)[1].Id, UINT64_MAX - 1);
}

// Size 2^63 is the largest accepted; rounding up to a power-of-two
// alignment cannot pass it (2^63 is a multiple of every such alignment up to
// 2^63); a bad alignment is an error, not a division by zero.
TEST(MiniMallocCSV, AlignmentRoundingIsChecked) {
  EXPECT_TRUE(bool(parseMiniMallocCSV(
      "id,lower,upper,size\n0,0,1,9223372036854775808\n", "t.csv", 1)));
  EXPECT_TRUE(bool(parseMiniMallocCSV(
      "id,lower,upper,size\n0,0,1,9223372036854775807\n", "t.csv", 16)));
  auto Zero = parseMiniMallocCSV("id,lower,upper,size\n", "t.csv", 0);
  ASSERT_FALSE(bool(Zero));
  EXPECT_EQ(toString(Zero.takeError()),
            "t.csv: alignment 0 is not a power of two");
}

// Arena per algorithm and instance. Greedy values are exact pins; searches
// run with fixed effort budgets, so their values are deterministic too.
TEST(MiniMallocInstances, PinnedArenas) {
  struct Row {
    const char *Name;
    uint64_t Bound, GreedyBySize, GreedyByBreadth, MultiOrdering;
  };
  const Row Rows[] = {
      {"A", 1048576, 1374208, 1611776, 1374208},
      {"B", 1048576, 1412096, 1681408, 1412096},
      {"C", 1039360, 1417216, 1752064, 1417216},
      {"D", 986112, 1304576, 1511424, 1304576},
      {"E", 1048576, 1469440, 1759232, 1469440},
      {"F", 1048576, 1433600, 1436672, 1177600},
  };
  PlannerOptions Options;
  for (const Row &Row : Rows) {
    std::vector<BufferRequest> R = load(Row.Name);
    EXPECT_EQ(lowerBound(R), Row.Bound) << Row.Name;
    auto Arena = [&](llvm::StringRef Algo) -> uint64_t {
      auto P = runAlgorithm(Algo, R, Options);
      EXPECT_TRUE(bool(P));
      if (!P) {
        llvm::consumeError(P.takeError());
        return 0;
      }
      EXPECT_FALSE(bool(verify::verifyPlacement(R, P->Offsets, P->ArenaBytes)));
      return P->ArenaBytes;
    };
    EXPECT_EQ(Arena("greedy-by-size"), Row.GreedyBySize) << Row.Name;
    EXPECT_EQ(Arena("greedy-by-breadth"), Row.GreedyByBreadth) << Row.Name;
    EXPECT_EQ(Arena("multi-ordering"), Row.MultiOrdering) << Row.Name;
  }
}

// With the capacity as its goal, the exact search packs all six instances
// into 1 MiB (MiniMalloc's result) within a fixed node budget: 12,000 to
// 155,000 nodes, at most about 0.6 s each on the development machine. The
// budget, not the generous time limit, bounds the search, so the arenas are
// deterministic.
TEST(MiniMallocInstances, ExactFitsCapacity) {
  const std::pair<const char *, uint64_t> Rows[] = {
      {"A", 1048576}, {"B", 1048576}, {"C", 1047552},
      {"D", 1048576}, {"E", 1048576}, {"F", 1048576},
  };
  PlannerOptions Options;
  Options.CapacityBytes = Capacity;
  Options.EffortBudget = 1'000'000;
  Options.TimeLimitSeconds = 60;
  for (const auto &[Name, Arena] : Rows) {
    std::vector<BufferRequest> R = load(Name);
    auto P = runAlgorithm("exact", R, Options);
    ASSERT_TRUE(bool(P));
    EXPECT_EQ(P->ArenaBytes, Arena) << Name;
    EXPECT_FALSE(
        bool(verify::verifyPlacement(R, P->Offsets, P->ArenaBytes, Capacity)))
        << Name;
  }
}
