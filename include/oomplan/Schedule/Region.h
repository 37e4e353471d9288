//===- Region.h - which memory region a buffer lives in ---------*- C++ -*-===//
//
// The one region rule. Weights and constants are resident in their own
// region, graph inputs and outputs are the caller's (unless placed in the
// arena), everything else shares the arena the planner packs. It sits in
// the Schedule layer because the plan (Plan/), the estimates the fit
// transforms compare (Fit/), the live-bytes profile and the report all
// decide regions, and must decide them the same way.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SCHEDULE_REGION_H
#define OOMPLAN_SCHEDULE_REGION_H

#include "oomplan/Schedule/Schedule.h"
#include "llvm/ADT/StringRef.h"

namespace oomplan {

enum class Region : uint8_t {
  Weights, ///< Weights and constants, resident, laid out one after another.
  IO,      ///< Graph inputs and outputs, owned by the caller.
  Arena,   ///< Everything else, packed by the planner.
  /// Host memory: a buffer with no device bytes whose tensor's home is the
  /// host (Plan's HostOffsetOf; optimizer state the host updates). Never
  /// chosen by regionFor: the plan assigns it (PlanHost.cpp).
  Host,
};

/// "weights", "io", "arena", "host".
llvm::StringRef regionName(Region R);

/// The region a buffer of kind K goes to.
Region regionFor(TensorKind K, bool IOInArena);

} // namespace oomplan

#endif
