//===- MicroBatch.cpp - how many passes the batch is split into -----------===//
//
// Powers of two only: they are what users pick, they keep the search to
// log2(B) re-plans, and each re-plan (planning plus the whole chooser) is
// the expensive part.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/MicroBatch.h"

using namespace oomplan;

std::vector<unsigned> oomplan::microBatchCounts(int64_t Batch) {
  std::vector<unsigned> Ks;
  for (int64_t K = 2; K <= Batch && Batch % K == 0; K *= 2)
    Ks.push_back(static_cast<unsigned>(K));
  return Ks;
}

double oomplan::onceSeconds(const Schedule &S, const CostModel &Cost) {
  // Host steps run on their own queue, overlapped: not counted, so the
  // saving is never overstated.
  double Secs = 0;
  for (const Step &St : S.Steps)
    if (St.Kind == StepKind::Optimizer && !St.OnHost)
      Secs += Cost.stepSeconds(S, St);
  return Secs;
}

std::optional<MicroBatchFit> oomplan::chooseMicroBatches(
    int64_t Batch, const MicroBatchFit &Whole,
    const std::function<std::optional<MicroBatchFit>(unsigned)> &FitAt) {
  std::optional<MicroBatchFit> Best;
  auto Cheaper = [&](const MicroBatchFit &F) {
    if (Best)
      return F.totalSeconds() < Best->totalSeconds();
    return !Whole.fits() || F.totalSeconds() < Whole.totalSeconds();
  };
  for (unsigned K : microBatchCounts(Batch)) {
    std::optional<MicroBatchFit> F = FitAt(K);
    if (!F || !F->fits())
      continue;
    bool Untransformed = F->R.Strategy == "none";
    if (Cheaper(*F))
      Best = std::move(F);
    if (Untransformed)
      break;
  }
  return Best;
}
