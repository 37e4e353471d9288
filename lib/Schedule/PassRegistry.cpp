//===- PassRegistry.cpp - every schedule transform and fit lever ----------===//
//
// The one table of schedule passes (PassRegistry.h). Row order is pipeline
// order, and a row's position is its PassId.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/PassRegistry.h"
#include "oomplan/Schedule/ScheduleVerifier.h"
#include <cassert>

using namespace oomplan;

namespace {
constexpr PassKind Transform = PassKind::Transform;
constexpr PassKind Lever = PassKind::FitLever;

const PassInfo Passes[] = {
    {PassId::Fusion, "fusion", Transform,
     "fused attention, convolutions (with a residual, or a pointwise one "
     "with its depthwise one) and matmul epilogues where a backend has the "
     "kernel",
     verifyScheduleAfter},
    {PassId::Training, "training", Transform,
     "the backward pass, saved tensors and optimizer step of --train",
     verifyScheduleAfter},
    {PassId::Reorder, "reorder", Lever,
     "a topological order with a lower live-bytes peak", verifyScheduleAfter},
    {PassId::Recompute, "recompute", Lever,
     "activations dropped after the forward pass and recomputed for backward",
     verifyScheduleAfter},
    {PassId::ActivationOffload, "activation-offload", Lever,
     "saved activations copied to the host and prefetched for backward",
     verifyScheduleAfter},
    {PassId::WeightStreaming, "weight-streaming", Lever,
     "weights kept on the host and prefetched before their use",
     verifyScheduleAfter},
    {PassId::OptimizerOffload, "optimizer-offload", Lever,
     "the optimizer step and its state on the host", verifyScheduleAfter},
    {PassId::MicroBatch, "micro-batch", Lever,
     "the batch split into passes run one after the other",
     verifyScheduleAfter},
    {PassId::InferenceRecompute, "inference-recompute", Lever,
     "cheap long-lived values recomputed before their late reads",
     verifyScheduleAfter},
};
} // namespace

llvm::ArrayRef<PassInfo> oomplan::schedulePasses() { return Passes; }

const PassInfo &oomplan::passInfo(PassId Id) {
  const PassInfo &P = Passes[static_cast<size_t>(Id)];
  assert(P.Id == Id && "the registry's rows are in PassId order");
  return P;
}

llvm::StringRef oomplan::passName(PassId Id) { return passInfo(Id).Name; }

const PassInfo *oomplan::lookupPass(llvm::StringRef Name) {
  for (const PassInfo &P : Passes)
    if (Name == P.Name)
      return &P;
  return nullptr;
}

llvm::StringRef oomplan::passKindName(PassKind K) {
  return K == PassKind::Transform ? "transform" : "fit lever";
}

llvm::Error oomplan::verifyAfter(PassId Id, const Schedule &S) {
  const PassInfo &P = passInfo(Id);
  return P.Verify(P.Name, S);
}
