//===- MemoryEstimate.h - device bytes of a schedule, without placing -*- C++
//-*-===//
//
// The transforms and the chooser compare many candidate schedules; placing
// each would be slow, so they compare lower bounds: the weights and io
// regions (laid out one after another, as Plan.cpp does) plus the arena's
// peak of live bytes (the no-fragmentation lower bound). Placement of the
// chosen schedule reaches or nearly reaches this bound.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_MEMORYESTIMATE_H
#define OOMPLAN_FIT_MEMORYESTIMATE_H

#include "oomplan/Schedule/Liveness.h"
#include "oomplan/Schedule/Schedule.h"
#include "oomplan/Support/CheckedMath.h"

namespace oomplan {

struct MemoryEstimate {
  uint64_t WeightBytes = 0; ///< Weights and constants region, aligned.
  uint64_t IOBytes = 0;     ///< Graph inputs/outputs region, aligned.
  uint64_t ArenaPeak = 0;   ///< Max over steps of aligned live arena bytes.
  uint64_t PeakStep = 0;    ///< First step where ArenaPeak is reached.
  /// Bytes whose home is the host (HostHome tensors), counted once each.
  uint64_t HostBytes = 0;
  /// Saturating: an estimate past 2^64 must compare as too large.
  uint64_t totalBytes() const {
    return saturatingAdd(saturatingAdd(WeightBytes, IOBytes), ArenaPeak);
  }
};

struct EstimateOptions {
  LivenessOptions Liveness;
  uint64_t AlignBytes = 256;
  bool IOInArena = false;
};

/// Liveness of S, then the region sizes and the arena peak.
MemoryEstimate estimateMemory(const Schedule &S, const EstimateOptions &Opts);

/// How far S is from fitting Target total bytes: the sum over steps of the
/// bytes (regions plus live arena bytes) above Target; 0 when it fits. Unlike
/// the peak it falls when any over-budget step gets lower, so a chooser can
/// tell progress on a plateau of equal peaks.
uint64_t excessBytes(const Schedule &S, const EstimateOptions &Opts,
                     uint64_t Target);

/// The same from lifetimes already computed for S.
MemoryEstimate estimateMemory(const Schedule &S, const Lifetimes &L,
                              const EstimateOptions &Opts);

} // namespace oomplan

#endif
