//===- MicroBatch.h - the batch split into passes, chosen by time -*- C++
//-*-===//
//
// Micro-batching as a chooser lever: the batch B run as k passes of B/k
// (k = 2, 4, 8, ... dividing B). Each pass's schedule comes from the caller
// (it re-plans the model at the smaller batch; in training with gradient
// accumulation, so the weight gradients persist across passes), and is
// fitted by the ordinary chooser at the same budget. The predicted time of
// the whole batch is k x the time of one pass, less k - 1 optimizer updates.
// The cheapest that fits wins, against the unsplit batch's own fit.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_MICROBATCH_H
#define OOMPLAN_FIT_MICROBATCH_H

#include "oomplan/Fit/Chooser.h"
#include <functional>
#include <optional>

namespace oomplan {

/// One pass count's fit: the chooser's result on the schedule at B/K.
struct MicroBatchFit {
  unsigned K = 1;
  FitResult R;
  /// Placed and verified within the budget (the caller places it).
  bool Placed = false;
  /// Predicted time of the device steps that run once per batch, not once
  /// per pass: the optimizer update (gradients are accumulated over the
  /// passes, the weights updated once).
  double OnceSeconds = 0;
  /// Predicted time of the whole batch: K passes, less K - 1 updates.
  double totalSeconds() const {
    return K * R.Time.TotalSeconds - (K - 1) * OnceSeconds;
  }
  bool fits() const { return R.Fits && Placed; }
};

/// OnceSeconds of schedule S: its device optimizer steps.
double onceSeconds(const Schedule &S, const CostModel &Cost);

/// The pass counts tried for batch Batch: 2, 4, 8, ... dividing it.
std::vector<unsigned> microBatchCounts(int64_t Batch);

/// Fits at each count of microBatchCounts(Batch), by FitAt (std::nullopt:
/// that count could not be planned), and returns the cheapest that fits
/// and beats Whole (K = 1) on predicted time, or std::nullopt. Stops at the
/// first count that fits without any transform: splitting further only
/// repeats the per-pass costs (weight reads) more often.
std::optional<MicroBatchFit> chooseMicroBatches(
    int64_t Batch, const MicroBatchFit &Whole,
    const std::function<std::optional<MicroBatchFit>(unsigned)> &FitAt);

} // namespace oomplan

#endif
