//===- RunReport.h - what oomplan-run measured, as text or JSON -*- C++ -*-===//
//
// The numbers of one run (phase times, per-region high-water against the
// plan, RSS growth, the unplanned check) and their two renderings: a table
// for people and one JSON object for scripts (--json).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TOOLS_RUNREPORT_H
#define OOMPLAN_TOOLS_RUNREPORT_H

#include "oomplan/Runtime/Executor.h"
#include "llvm/Support/raw_ostream.h"
#include <optional>

namespace oomplan {
namespace run {

struct RunReport {
  double PlanSeconds = 0, LoadSeconds = 0, RunSeconds = 0;
  /// --repeat: the time of each warm run after the first.
  std::vector<double> RepeatSeconds;
  /// The steps alone (Executor::lastStepsSeconds, summed over the passes):
  /// the first run's, and each warm run's; absent where the device could
  /// not time them.
  std::optional<double> StepsSeconds;
  std::vector<double> RepeatStepsSeconds;
  /// --profile: per op type over ProfiledRuns runs.
  std::vector<runtime::OpTime> Ops;
  /// --profile: per step, in schedule order (--json's step_seconds).
  std::vector<runtime::StepTime> Steps;
  unsigned ProfiledRuns = 1;
  std::vector<runtime::RegionUse> Regions;
  /// A device backend (not the CPU): what the device measured, against the
  /// plan. ok() requires the allocations to equal the
  /// plan's device regions to the byte.
  std::optional<runtime::DeviceUse> Device;
  uint64_t PlanDeviceBytes = 0; ///< Weights + IO + arena.
  /// VmHWM after the runs (every run; the first alone) - VmRSS before them,
  /// with VmHWM reset after loading.
  std::optional<uint64_t> RSSGrowth, RSSGrowthFirst;
  /// The whole process: its peak from before the model was read to the end
  /// of the runs (every run; the first alone) - VmRSS before the model.
  std::optional<uint64_t> ProcessGrowth, ProcessGrowthFirst;
  uint64_t PlanTotal = 0;
  std::optional<uint64_t> Budget; ///< --budget (or the device's memory).
  bool Fits = true;               ///< The plan's total + overhead fit it.
  bool Fitted = false;
  unsigned Passes = 1; ///< Micro-batch passes run.
  bool Poisoned = false;
  bool CheckRan = false;
  std::string CheckDifference; ///< Empty: identical.

  /// Every region's aligned high-water equals the plan's bytes.
  bool highWaterMatches() const;
  /// RSS growth less the arena and the outputs' bytes: the constant
  /// docs/runtime.md explains (0 when the growth is smaller).
  uint64_t rssBeyondPlan(llvm::ArrayRef<runtime::TensorRef> Outputs) const;
  /// Median of RepeatSeconds (RunSeconds without repeats).
  double warmSeconds() const;
  /// Median of RepeatStepsSeconds (StepsSeconds without repeats).
  std::optional<double> warmStepsSeconds() const;
  bool deviceMatches() const {
    return !Device || Device->AllocatedBytes == PlanDeviceBytes;
  }
  bool ok() const {
    return highWaterMatches() && deviceMatches() && CheckDifference.empty();
  }
  /// Outputs: the whole batch's, in graph-output order.
  void print(llvm::raw_ostream &OS, const Graph &G,
             llvm::ArrayRef<runtime::TensorRef> Outputs, bool JSON) const;
};

} // namespace run
} // namespace oomplan

#endif
