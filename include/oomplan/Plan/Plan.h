//===- Plan.h - a verified memory plan --------------------------*- C++ -*-===//
//
// A Plan says everything an executor needs: the schedule (order of steps,
// including recompute/offload steps a transform added), every buffer's region
// and offset, and the sizes of the regions. Weights and constants have their
// own region, graph inputs and outputs another (unless placed in the arena),
// and everything else shares the arena that the planner packs.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PLAN_PLAN_H
#define OOMPLAN_PLAN_PLAN_H

#include "oomplan/Placement/BufferRequest.h"
#include "oomplan/Schedule/Liveness.h"
#include "oomplan/Schedule/Region.h"
#include "oomplan/Schedule/Schedule.h"
#include "oomplan/Support/Budget.h"
#include "oomplan/Support/CheckedMath.h"
#include "llvm/Support/Error.h"
#include <algorithm>
#include <optional>
#include <string>

namespace oomplan {

struct PlanOptions {
  std::string Algorithm = "auto"; ///< A name from the planner registry.
  uint64_t AlignBytes = 256;      ///< Offsets and sizes round up to this.
  double TimeLimitSeconds = 2.0;  ///< Safety cap for search algorithms.
  bool IOInArena = false;         ///< Place graph inputs/outputs in the arena.
  /// The budget the plan is judged against (the driver's, a fit's target).
  Budget Limit;
};

struct Plan {
  Schedule Sched;
  Lifetimes Life;
  uint64_t AlignBytes = 256;
  bool IOInArena = false;         ///< Graph inputs/outputs in the arena.
  std::vector<Region> RegionOf;   ///< Per buffer.
  std::vector<uint64_t> OffsetOf; ///< Per buffer, within its region.
  uint64_t WeightBytes = 0;       ///< Size of the weights region.
  uint64_t IOBytes = 0;           ///< Size of the inputs/outputs region.
  uint64_t ArenaBytes = 0;        ///< Size of the arena.
  /// Size of the host region: the homes of host-home tensors (PlanHost.cpp),
  /// host memory, not counted in totalBytes().
  uint64_t HostBytes = 0;
  /// Per tensor: its home's offset in the host region; NoHostOffset for a
  /// tensor without a host home.
  std::vector<uint64_t> HostOffsetOf;
  /// Max over steps of the aligned bytes of arena buffers live at the step.
  uint64_t ArenaLowerBound = 0;
  std::string Algorithm; ///< The algorithm whose placement was kept.
  uint64_t PeakStep = 0; ///< A step where arena live bytes reach the bound.
  Budget Limit; ///< What the plan is judged against (PlanOptions::Limit).
  /// A plan predicted for PyTorch's CUDA runtime: the least memory its
  /// caching allocator runs the step in (its tensors and the libraries'
  /// workspaces, simulated with the cap's release-and-retry:
  /// Report/CachingAllocator.h), between max_memory_allocated and the
  /// uncapped max_memory_reserved. Reserved bytes are what runs out first.
  /// Unset: the plan's total decides (our own executor allocates exactly
  /// it).
  std::optional<uint64_t> RuntimeReservedBytes;

  /// Weights + IO + arena: the device memory the plan needs. buildPlan
  /// rejects totals past 2^63 - 1; saturating keeps any other Plan honest.
  uint64_t totalBytes() const {
    return saturatingAdd(saturatingAdd(WeightBytes, IOBytes), ArenaBytes);
  }
  /// What a budget judges of this plan.
  Figures figures() const { return {totalBytes(), RuntimeReservedBytes}; }
  /// The figure the budget is compared with: the runtime's reserved bytes
  /// where the plan has them and they decide (never below the total), else
  /// the total.
  uint64_t decidingBytes() const {
    return oomplan::decidingBytes(Limit, figures());
  }
  /// The deciding figure plus Limit's overhead and headroom (bytes).
  uint64_t neededBytes() const {
    return oomplan::neededBytes(Limit, figures());
  }
  /// The verdict: oomplan::fits against Limit.
  bool fits() const { return oomplan::fits(Limit, figures()); }
  /// Arena buffers live at Step, largest first.
  std::vector<BufferId> buffersLiveAt(uint64_t Step) const;
};

/// HostOffsetOf's value for a tensor without a host home.
constexpr uint64_t NoHostOffset = UINT64_MAX;

/// Lays out P's host region (PlanHost.cpp): every host-home tensor's home,
/// end to end in tensor order, aligned; copies of one graph value share a
/// home. Buffers with no device bytes whose tensor has a home become
/// Region::Host buffers at that offset. Then verifyHostRegion.
llvm::Error layOutHostRegion(Plan &P);

/// Checks that no two host homes overlap and all lie within HostBytes (an
/// internal error otherwise).
llvm::Error verifyHostRegion(const Plan &P);

/// Placement requests for the arena buffers of L, in buffer order, each
/// aligned to AlignBytes; their buffer ids go to Ids when given. This is the
/// planner's whole view of a model (the CSV emitter and the benchmark use it).
std::vector<planner::BufferRequest>
arenaRequests(const Lifetimes &L, uint64_t AlignBytes, bool IOInArena,
              std::vector<BufferId> *Ids = nullptr);

/// Places the buffers of L and verifies the result with the independent
/// verifier; an error if any check fails (a bug, never the user's fault).
llvm::Expected<Plan> buildPlan(Schedule S, Lifetimes L,
                               const PlanOptions &Opts);

} // namespace oomplan

#endif
