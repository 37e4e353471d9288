//===- ActivationOffload.h - saved activations parked in host memory -*- C++
//-*-===//
//
// Training: a forward tensor the backward pass reads (a saved activation)
// can be copied to host memory during the forward pass and copied back
// before its first backward reader, instead of occupying device memory in
// between. The transform inserts an Offload step (reads the tensor; its
// buffer dies there) and a Prefetch step writing a fresh tensor,
// "prefetched(<name>)", with a host home, which every backward read then
// uses. Both copies run on the copy engines (Fit/Simulate.h):
//
// - the Offload step sits at the first step by which the device-to-host
//   copy, started when the tensor is written and queued behind earlier
//   offloads, is predicted to be done (never before its last forward read),
//   so compute does not wait for it;
// - the Prefetch is placed as late as the host-to-device link allows
//   without delaying its reader (working back from the last, as weight
//   streaming does), never before the backward pass.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_ACTIVATIONOFFLOAD_H
#define OOMPLAN_FIT_ACTIVATIONOFFLOAD_H

#include "oomplan/Cost/CostModel.h"

namespace oomplan {

/// Saved activations of S that can be offloaded, most bytes x steps off
/// the device first: arena tensors written once by a forward step that is
/// not a view, and read after the forward pass.
std::vector<TensorId> offloadableActivations(const Schedule &S);

/// S with Ts offloaded during the forward pass and prefetched for the
/// backward pass. MaxAhead: how many other offloaded tensors' first
/// backward reads may lie between a prefetch and its reader; below
/// UINT32_MAX offloads are also eager (right after the last forward read),
/// trading stalls for memory.
Schedule offloadActivations(const Schedule &S, llvm::ArrayRef<TensorId> Ts,
                            const CostModel &Cost,
                            unsigned MaxAhead = UINT32_MAX);

} // namespace oomplan

#endif
