//===- PassRegistryTest.cpp - the one table of schedule passes ------------===//
//
// The registry's rows are in PassId order, its names are unique and are
// what --print-after takes, fusion and training are the only transforms
// (every other pass is a fit lever the chooser or the driver weighs), and a
// pass's verifier names the pass in its message.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/PassRegistry.h"
#include "ScheduleBuilder.h"
#include "gtest/gtest.h"
#include <set>
#include <string>

using namespace oomplan;

namespace {

TEST(PassRegistry, RowsInPassIdOrder) {
  llvm::ArrayRef<PassInfo> Passes = schedulePasses();
  ASSERT_EQ(Passes.size(), 9u);
  for (size_t I = 0; I < Passes.size(); ++I) {
    EXPECT_EQ(static_cast<size_t>(Passes[I].Id), I);
    EXPECT_EQ(&passInfo(Passes[I].Id), &Passes[I]);
  }
}

TEST(PassRegistry, NamesAreUniqueAndLookedUp) {
  std::set<std::string> Seen;
  for (const PassInfo &P : schedulePasses()) {
    EXPECT_TRUE(Seen.insert(P.Name).second) << P.Name;
    EXPECT_EQ(lookupPass(P.Name), &P);
    EXPECT_NE(std::string(P.Description), "");
    EXPECT_NE(P.Verify, nullptr);
  }
  EXPECT_EQ(lookupPass("remat"), nullptr);
  EXPECT_EQ(passName(PassId::ActivationOffload), "activation-offload");
}

TEST(PassRegistry, OnlyFusionAndTrainingAreTransforms) {
  std::vector<std::string> Transforms, Levers;
  for (const PassInfo &P : schedulePasses())
    (P.Kind == PassKind::Transform ? Transforms : Levers).push_back(P.Name);
  EXPECT_EQ(Transforms, (std::vector<std::string>{"fusion", "training"}));
  EXPECT_EQ(Levers, (std::vector<std::string>{
                        "reorder", "recompute", "activation-offload",
                        "weight-streaming", "optimizer-offload", "micro-batch",
                        "inference-recompute"}));
  EXPECT_EQ(passKindName(PassKind::FitLever), "fit lever");
}

TEST(PassRegistry, VerifierNamesThePass) {
  test::ScheduleBuilder B;
  TensorId Y = B.tensor("y", 8);
  B.step(StepKind::Compute, "Relu", {Y}, {});
  llvm::Error E = verifyAfter(PassId::WeightStreaming, B.S);
  ASSERT_TRUE(!!E);
  EXPECT_NE(llvm::toString(std::move(E))
                .find("after the weight-streaming transform: schedule step 0"),
            std::string::npos);
  test::ScheduleBuilder Good;
  TensorId X = Good.tensor("x", 8, TensorKind::GraphInput);
  Good.step(StepKind::Compute, "Relu", {X}, {Good.tensor("r", 8)});
  EXPECT_FALSE(!!verifyAfter(PassId::Fusion, Good.S));
}

} // namespace
