//===- Recompute.h - recompute forward values in the backward pass -*- C++
//-*-===//
//
// Activation checkpointing as a schedule transform. Given the forward steps
// to recompute, every later (backward) read of a tensor those steps write is
// redirected to a fresh copy, "recompute(<name>)", written by a Recompute
// step inserted just before the first step that needs it. A Recompute step
// re-runs its forward node on the values it read: kept originals, or copies
// recomputed first (chains are rebuilt in forward order). The original
// tensor then dies after its last forward read; the copy lives from its
// Recompute step to its last read. Liveness, placement and the verifier see
// ordinary steps and tensors.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_RECOMPUTE_H
#define OOMPLAN_FIT_RECOMPUTE_H

#include "oomplan/Schedule/Schedule.h"
#include <vector>

namespace oomplan {

/// Index of the first Backward step (the loss step of a training schedule);
/// S.Steps.size() for an inference schedule. Compute steps before it are the
/// forward pass.
size_t forwardEnd(const Schedule &S);

/// Per tensor: the step that first writes it, or SIZE_MAX.
std::vector<size_t> producerSteps(const Schedule &S);

/// S with the forward steps marked in Recompute (indexed by step, size
/// forwardEnd(S) or more) re-run before their backward readers. Unmarked
/// steps' outputs are kept as before.
Schedule applyRecompute(const Schedule &S, const std::vector<bool> &Recompute);

} // namespace oomplan

#endif
