//===- LiveProfile.h - bytes live at every step -----------------*- C++ -*-===//
//
// The one sweep behind every "peak" oomplan prints: the plan's peak step, the
// estimates the fit transforms and choosers compare, the report's timeline.
// Each buffer counts its size rounded up to the alignment, in the region the
// region rule (Region.h) gives it; the resident regions (weights, io) count
// for the whole run, arena buffers over [StartStep, EndStep). Before this,
// four layers each had a sweep of their own, and a change to one (the io
// region, the alignment) silently split their answers.
//
// The planner's lowerBound (Placement/LowerBound.h) sweeps its flat list of
// requests independently, on purpose: buildPlan checks that the two agree.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SCHEDULE_LIVEPROFILE_H
#define OOMPLAN_SCHEDULE_LIVEPROFILE_H

#include "oomplan/Schedule/Liveness.h"
#include "oomplan/Schedule/Region.h"
#include <array>
#include <cstdint>
#include <vector>

namespace oomplan {

/// Number of TensorKind values (for arrays indexed by kind).
constexpr unsigned NumTensorKinds = unsigned(TensorKind::OptimizerState) + 1;
using KindBytes = std::array<uint64_t, NumTensorKinds>;

struct ProfileOptions {
  uint64_t AlignBytes = 256;
  bool IOInArena = false;
  /// Also break every step down by TensorKind (the timeline's areas).
  bool ByKind = false;
};

struct LiveProfile {
  uint64_t WeightBytes = 0; ///< The weights region (whole run).
  uint64_t IOBytes = 0;     ///< The io region (whole run).
  /// Arena bytes live at step S, S in [0, NumSteps]. Sums past 2^64 - 1
  /// saturate, so an absurd schedule compares as too large, never small.
  std::vector<uint64_t> Arena;
  uint64_t Peak = 0;     ///< Max of Arena.
  uint64_t PeakStep = 0; ///< First step where Arena reaches Peak.
  /// With ByKind: Arena split by tensor kind, and the resident regions' bytes
  /// by kind.
  std::vector<KindBytes> ArenaByKind;
  KindBytes ResidentByKind{};

  /// Weights + io + the arena's peak (saturating).
  uint64_t totalBytes() const;
  /// Sum over steps of the bytes (resident + arena) above Target: 0 when
  /// every step fits. Falls when any over-budget step gets lower, so a
  /// chooser can see progress on a plateau of equal peaks.
  uint64_t excessOver(uint64_t Target) const;
};

/// The profile of L, regions by the region rule.
LiveProfile computeLiveProfile(const Lifetimes &L, const ProfileOptions &Opts);

} // namespace oomplan

#endif
