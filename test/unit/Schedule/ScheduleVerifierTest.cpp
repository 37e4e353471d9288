//===- ScheduleVerifierTest.cpp - hand-broken schedules are rejected ------===//
//
// Each test builds a small schedule by hand that breaks exactly one rule of
// ScheduleVerifier.h, checks that the verifier names that rule, the step
// index, the op and the tensor, and that the same schedule with the one
// defect repaired passes (so the test cannot pass for another reason).
// The legal special cases (Prefetch re-writes, host steps, recomputed
// copies, Constant steps) are accepted.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/ScheduleVerifier.h"
#include "ScheduleBuilder.h"
#include "oomplan/Support/Error.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {
using Builder = test::ScheduleBuilder;

// The message of S's verifier error, or "" when S passes. An error must be
// internal: a broken schedule is oomplan's bug, not the user's.
std::string failure(const Schedule &S) {
  llvm::Error E = verifySchedule(S);
  if (!E)
    return "";
  EXPECT_EQ(errorCategory(E), ErrorCategory::Internal);
  return llvm::toString(std::move(E));
}

#define EXPECT_CONTAINS(Str, Part)                                             \
  EXPECT_NE(std::string(Str).find(Part), std::string::npos) << (Str)
} // namespace

// A chain x -> Relu -> y -> Tanh -> z over a weight: the legal baseline.
TEST(ScheduleVerifier, AcceptsLegalChain) {
  Builder B;
  TensorId W = B.tensor("w", 64, TensorKind::Weight);
  TensorId X = B.tensor("x", 64, TensorKind::GraphInput);
  TensorId Y = B.tensor("y", 64);
  TensorId Z = B.tensor("z", 64, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Add", {X, W}, {Y}).MayWriteInPlace = true;
  B.step(StepKind::Compute, "Tanh", {Y}, {Z}).MayWriteInPlace = true;
  EXPECT_EQ(failure(B.S), "");
}

// Rule 1: step 0 reads y, which only step 1 writes.
TEST(ScheduleVerifier, RejectsReadBeforeWrite) {
  Builder B;
  TensorId X = B.tensor("x", 64, TensorKind::GraphInput);
  TensorId Y = B.tensor("y", 64);
  TensorId Z = B.tensor("z", 64, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Tanh", {Y}, {Z});
  B.step(StepKind::Compute, "Relu", {X}, {Y});
  std::string M = failure(B.S);
  EXPECT_CONTAINS(M, "schedule step 0 (Tanh): [read-before-write]");
  EXPECT_CONTAINS(M, "'y'");
  std::swap(B.S.Steps[0], B.S.Steps[1]);
  EXPECT_EQ(failure(B.S), "");
}

// Rule 2, views: Reshape's ViewOf points past its one read.
TEST(ScheduleVerifier, RejectsViewOfMissingRead) {
  Builder B;
  TensorId X = B.tensor("x", 64, TensorKind::GraphInput);
  TensorId Y = B.tensor("y", 64, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Reshape", {X}, {Y}).ViewOf = 1;
  std::string M = failure(B.S);
  EXPECT_CONTAINS(M, "schedule step 0 (Reshape): [view/in-place] ViewOf 1");
  B.S.Steps[0].ViewOf = 0;
  EXPECT_EQ(failure(B.S), "");
}

// Rule 2, in place: Add may overwrite a dying read only of its own size;
// here the output is 128 bytes and both reads 64 (a broadcasting Add).
TEST(ScheduleVerifier, RejectsInPlaceWithoutSameSizeRead) {
  Builder B;
  TensorId X = B.tensor("x", 64, TensorKind::GraphInput);
  TensorId Y = B.tensor("y", 64);
  TensorId Z = B.tensor("z", 128, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Relu", {X}, {Y});
  B.step(StepKind::Compute, "Add", {X, Y}, {Z}).MayWriteInPlace = true;
  std::string M = failure(B.S);
  EXPECT_CONTAINS(M, "schedule step 1 (Add): [view/in-place]");
  EXPECT_CONTAINS(M, "'z' (128 bytes)");
  B.S.Steps[1].MayWriteInPlace = false;
  EXPECT_EQ(failure(B.S), "");
}

// Rule 3: a streamed weight (host home) read by MatMul before the Prefetch
// that brings it to the device.
TEST(ScheduleVerifier, RejectsHostResidentReadBeforePrefetch) {
  Builder B;
  TensorId X = B.tensor("x", 64, TensorKind::GraphInput);
  TensorId W = B.tensor("w", 256, TensorKind::Activation, /*Host=*/true);
  TensorId Y = B.tensor("y", 64, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "MatMul", {X, W}, {Y});
  B.step(StepKind::Prefetch, "Prefetch", {}, {W});
  std::string M = failure(B.S);
  EXPECT_CONTAINS(M, "schedule step 0 (MatMul): [host-resident]");
  EXPECT_CONTAINS(M, "'w'");
  std::swap(B.S.Steps[0], B.S.Steps[1]);
  EXPECT_EQ(failure(B.S), "");
}

// Rule 3, the other way round: an activation offloaded at step 1 and read
// on the device at step 2 with no Prefetch in between.
TEST(ScheduleVerifier, RejectsReadOfOffloadedTensor) {
  Builder B;
  TensorId X = B.tensor("x", 64, TensorKind::GraphInput);
  TensorId A = B.tensor("a", 64);
  TensorId Back = B.tensor("prefetched(a)", 64, TensorKind::Activation, true);
  TensorId Y = B.tensor("y", 64, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Relu", {X}, {A});
  B.step(StepKind::Offload, "Offload", {A}, {});
  B.step(StepKind::Prefetch, "Prefetch", {}, {Back});
  B.step(StepKind::Backward, "Relu.grad", {A}, {Y});
  std::string M = failure(B.S);
  EXPECT_CONTAINS(M, "schedule step 3 (Relu.grad): [host-resident]");
  EXPECT_CONTAINS(M, "'a' after an Offload");
  B.S.Steps[3].Reads = {Back};
  EXPECT_EQ(failure(B.S), "");
}

// Rule 4: both forward steps are recomputed (nodes 0 and 1), but the
// Recompute of b = Tanh(a) at step 4 reads the original a, not recompute(a):
// a's last ordinary read was step 1, so it is dead there.
TEST(ScheduleVerifier, RejectsRecomputeOfDeadValue) {
  Builder B;
  TensorId X = B.tensor("x", 64, TensorKind::GraphInput);
  TensorId A = B.tensor("a", 64);
  TensorId Bv = B.tensor("b", 64);
  TensorId CopyA = B.tensor("recompute(a)", 64);
  TensorId CopyB = B.tensor("recompute(b)", 64);
  TensorId Y = B.tensor("y", 64, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Relu", {X}, {A}).Node = 0;
  B.step(StepKind::Compute, "Tanh", {A}, {Bv}).Node = 1;
  B.step(StepKind::Backward, "Loss", {Bv}, {Y});
  B.step(StepKind::Recompute, "Relu", {X}, {CopyA}).Node = 0;
  B.step(StepKind::Recompute, "Tanh", {A}, {CopyB}).Node = 1;
  B.step(StepKind::Backward, "Tanh.grad", {CopyB, CopyA}, {});
  std::string M = failure(B.S);
  EXPECT_CONTAINS(M, "schedule step 4 (Tanh): [recompute-live]");
  EXPECT_CONTAINS(M, "'a', which is recomputed itself and so dead here (its "
                     "last ordinary read is step 1)");
  B.S.Steps[4].Reads = {CopyA};
  EXPECT_EQ(failure(B.S), "");
}

// Rule 4, offload: a Recompute reads an activation that an Offload moved to
// the host. A kept checkpoint (nothing recomputes it) is live at its
// Recompute reader, however late.
TEST(ScheduleVerifier, RejectsRecomputeOfOffloadedValue) {
  Builder B;
  TensorId X = B.tensor("x", 64, TensorKind::GraphInput);
  TensorId A = B.tensor("a", 64);
  TensorId Bv = B.tensor("b", 64);
  TensorId CopyB = B.tensor("recompute(b)", 64);
  B.step(StepKind::Compute, "Relu", {X}, {A}).Node = 0;
  B.step(StepKind::Compute, "Tanh", {A}, {Bv}).Node = 1;
  B.step(StepKind::Offload, "Offload", {A}, {});
  B.step(StepKind::Recompute, "Tanh", {A}, {CopyB}).Node = 1;
  B.step(StepKind::Backward, "Tanh.grad", {CopyB}, {});
  EXPECT_CONTAINS(failure(B.S), "schedule step 3 (Tanh): [recompute-live] "
                                "recompute reads 'a', which an Offload moved");
  B.S.Steps.erase(B.S.Steps.begin() + 2);
  EXPECT_EQ(failure(B.S), "");
}

// Rule 5: two compute steps write y.
TEST(ScheduleVerifier, RejectsSecondWrite) {
  Builder B;
  TensorId X = B.tensor("x", 64, TensorKind::GraphInput);
  TensorId Y = B.tensor("y", 64, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Relu", {X}, {Y});
  B.step(StepKind::Compute, "Neg", {X}, {Y});
  std::string M = failure(B.S);
  EXPECT_CONTAINS(M, "schedule step 1 (Neg): [write-once] writes 'y'");
  B.S.Steps.pop_back();
  EXPECT_EQ(failure(B.S), "");
}

// Rule 5 on resident tensors: a weight exists before step 0, so a compute
// step may not write it; a Prefetch (the update done on the host coming
// back) may.
TEST(ScheduleVerifier, WeightWrittenOnlyByPrefetch) {
  Builder B;
  TensorId W = B.tensor("w", 64, TensorKind::Weight);
  TensorId X = B.tensor("x", 64, TensorKind::GraphInput);
  B.step(StepKind::Optimizer, "SGD", {X}, {W});
  EXPECT_CONTAINS(failure(B.S), "[write-once] writes 'w', which is resident");
  B.S.Steps[0].Kind = StepKind::Prefetch;
  B.S.Steps[0].Reads.clear();
  EXPECT_EQ(failure(B.S), "");
}

// The host optimizer of OptimizerOffload.h: Offload of the gradient, a host
// step reading only host-home tensors, a Prefetch of the parameter. A host
// step that reads a device tensor breaks rule 3.
TEST(ScheduleVerifier, HostStepReadsHostTensorsOnly) {
  Builder B;
  TensorId P = B.tensor("p", 64, TensorKind::Weight);
  TensorId G = B.tensor("grad(p)", 64, TensorKind::Gradient);
  TensorId HG = B.tensor("host(grad(p))", 64, TensorKind::Gradient, true);
  TensorId M = B.tensor("adam.m(p)", 64, TensorKind::OptimizerState, true);
  B.step(StepKind::Backward, "Loss", {P}, {G});
  B.step(StepKind::Offload, "Offload", {G}, {});
  B.step(StepKind::Optimizer, "HostAdam", {HG, M}, {}).OnHost = true;
  B.step(StepKind::Prefetch, "Prefetch", {}, {P});
  EXPECT_EQ(failure(B.S), "");
  B.S.Steps[2].Reads.push_back(P);
  EXPECT_CONTAINS(failure(B.S),
                  "schedule step 2 (HostAdam): [host-resident] host step "
                  "reads 'p'");
}

// Constant nodes keep a step that writes their (resident) output once.
TEST(ScheduleVerifier, ConstantWrittenOnceByItsStep) {
  Builder B;
  TensorId C = B.tensor("c", 8, TensorKind::Constant);
  TensorId X = B.tensor("x", 8, TensorKind::GraphInput);
  TensorId Y = B.tensor("y", 8, TensorKind::GraphOutput);
  B.step(StepKind::Compute, "Constant", {}, {C});
  B.step(StepKind::Compute, "Add", {X, C}, {Y});
  EXPECT_EQ(failure(B.S), "");
  B.step(StepKind::Compute, "Constant", {}, {C});
  EXPECT_CONTAINS(failure(B.S), "schedule step 2 (Constant): [write-once]");
}

// Ids past the tensor table are caught before anything indexes with them.
TEST(ScheduleVerifier, RejectsTensorIdOutOfRange) {
  Builder B;
  TensorId X = B.tensor("x", 8, TensorKind::GraphInput);
  B.step(StepKind::Compute, "Relu", {X}, {7});
  EXPECT_CONTAINS(failure(B.S), "tensor id 7 out of range (1 tensors)");
}

// The pass name leads the message when a pipeline reports it.
TEST(ScheduleVerifier, AfterNamesThePass) {
  Builder B;
  TensorId Y = B.tensor("y", 8);
  B.step(StepKind::Compute, "Relu", {Y}, {});
  llvm::Error E = verifyScheduleAfter("recompute", B.S);
  ASSERT_TRUE(!!E);
  EXPECT_CONTAINS(llvm::toString(std::move(E)),
                  "after the recompute transform: schedule step 0 (Relu)");
}
