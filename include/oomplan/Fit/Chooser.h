//===- Chooser.h - fitting a schedule into a memory budget ------*- C++ -*-===//
//
// Tries the transforms the options allow on a schedule, estimates each
// candidate's memory (MemoryEstimate.h) and time (Simulate.h), and keeps the
// candidate that fits the budget with the least predicted added time:
//
// - training schedules (with backward steps): recompute (RematChooser.h:
//   the greedy chains, validated against the budget step by step, and its
//   shortest prefix that fits) compared with Chen's sqrt(n) checkpointing;
//   saved activations offloaded to the host (ActivationOffload.h), alone
//   or on top of the leanest recompute; --remat=sqrt keeps only sqrt(n);
//   the optimizer step and its state on the host (OptimizerOffload.h),
//   alone and under each of the above;
// - inference schedules: weight streaming (WeightStreaming.h), the fewest
//   largest weights that fit, for a few prefetch depths; cheap long-lived
//   values recomputed before their late reads (InferenceRecompute.h), alone
//   and under weight streaming (--offload=weights: streaming alone);
// - optionally memory-aware reordering first (Reorder.h).
//
// The levers are those of the pass registry (Schedule/PassRegistry.h),
// enumerated in its order; Chooser.cpp's table gives each its cost hook.
//
// When nothing fits, the result says the smallest total any candidate
// reached and why.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_CHOOSER_H
#define OOMPLAN_FIT_CHOOSER_H

#include "oomplan/Cost/CostModel.h"
#include "oomplan/Fit/MemoryEstimate.h"
#include "oomplan/Fit/Simulate.h"
#include "oomplan/Schedule/PassInstrumentation.h"
#include <functional>
#include <string>

namespace oomplan {

enum class RematMode : uint8_t { Auto, Sqrt, None };
enum class OffloadMode : uint8_t { Auto, Weights, None };

struct FitOptions {
  uint64_t BudgetBytes = 0;
  RematMode Remat = RematMode::Auto;
  OffloadMode Offload = OffloadMode::Auto;
  bool Reorder = false;
  /// Aim this fraction below the budget (placement may exceed the bound).
  double Margin = 0.0;
  EstimateOptions Estimate;
  /// Told the passes of the schedule the chooser keeps, in the order they
  /// were applied ("reorder", "recompute", ...), after each is verified.
  const PassInstrumentation *Instr = nullptr;
  /// When set: whether the caller's placement of a schedule fits the budget.
  /// The estimate is a lower bound that placement may exceed (fragmentation),
  /// so the chooser then keeps the cheapest candidate whose placement fits,
  /// trying them cheapest first (lib/Fit does not place: the caller does).
  /// Without it, or when no candidate places, the estimate decides.
  std::function<bool(const Schedule &)> PlacementFits;
  /// When set: told every candidate weighed, with its estimated total bytes
  /// and, when the estimate is within the budget, its predicted seconds
  /// (else negative: over budget candidates are not timed). The driver
  /// reports the alternatives the chooser rejected this way.
  std::function<void(const std::string &Name, uint64_t TotalBytes,
                     double Seconds)>
      OnCandidate;
};

struct FitResult {
  Schedule Sched;     ///< The chosen schedule (the input if nothing fits).
  MemoryEstimate Mem; ///< Its memory, lower bound.
  MemoryEstimate BaseMem;
  TimePrediction Base; ///< The untransformed schedule.
  TimePrediction Time; ///< The chosen schedule.
  bool Fits = false;
  std::string Strategy; ///< "none", "recompute (greedy)", ...
  /// When nothing fits: the smallest total bytes reached, and why no
  /// transform gets lower.
  uint64_t SmallestBytes = 0;
  std::string Why;
  double overheadSeconds() const {
    return Time.TotalSeconds - Base.TotalSeconds;
  }
  double overheadPercent() const {
    return Base.TotalSeconds > 0 ? 100 * overheadSeconds() / Base.TotalSeconds
                                 : 0;
  }
};

/// The cheapest candidate that fits Opts.BudgetBytes. Every candidate is
/// checked by the schedule verifier; a broken one is an internal error
/// naming the transform that made it.
llvm::Expected<FitResult> fitSchedule(const Schedule &S, const CostModel &Cost,
                                      const FitOptions &Opts);

/// True when S has a backward pass.
bool isTrainingSchedule(const Schedule &S);

} // namespace oomplan

#endif
