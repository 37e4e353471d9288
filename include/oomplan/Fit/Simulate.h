//===- Simulate.h - predicted run time of a schedule ------------*- C++ -*-===//
//
// Replays a schedule on four queues: the compute stream runs compute,
// backward, recompute and optimizer steps in order; one copy engine per
// direction runs Prefetch (host to device) and Offload (device to host)
// steps. A Prefetch is issued when compute reaches its position and the
// engine is free; a step that reads the prefetched tensor waits for it. An
// Offload copies its tensor as soon as it is written (the tensor no longer
// changes) and the compute stream waits at the Offload step until the copy is
// done, because the bytes are released there. A step that runs on the host
// (Step::OnHost) goes on a fourth queue, the host CPU: it starts when the
// device-to-host copies issued before it are done, and a Prefetch issued
// after it waits for it (it uploads what the host computed). The difference
// with the untransformed schedule's time is the transform's predicted
// overhead.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_SIMULATE_H
#define OOMPLAN_FIT_SIMULATE_H

#include "oomplan/Cost/CostModel.h"

namespace oomplan {

struct TimePrediction {
  double TotalSeconds = 0;     ///< End of the last step.
  double ComputeSeconds = 0;   ///< Sum of compute-stream step times.
  double RecomputeSeconds = 0; ///< Part of ComputeSeconds in Recompute steps.
  double StallSeconds = 0;     ///< Compute stream waiting for copies.
  double TransferSeconds = 0;  ///< Busy time of both copy engines.
  double HostSeconds = 0;      ///< Busy time of the host CPU.
};

TimePrediction simulate(const Schedule &S, const CostModel &Cost);

} // namespace oomplan

#endif
