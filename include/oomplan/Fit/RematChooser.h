//===- RematChooser.h - which forward values to recompute -------*- C++ -*-===//
//
// Two ways to pick the forward steps applyRecompute re-runs:
//
// - greedyRematOrder: a ratio greedy over "chains". A chain starts at a
//   forward step whose output is kept for the backward pass and grows
//   through inputs that are not kept otherwise (recomputing them is needed to
//   free anything), stopping at kept, resident or non-recomputable values.
//   Its gain is the kept bytes it frees minus the bytes it makes kept; its
//   cost the predicted seconds of its steps. Chains are taken best gain per
//   second first (re-evaluated lazily as the kept set changes), in two tiers:
//   first without compute-intensive ops whose output is not larger than their
//   inputs (matmuls, convolutions) and reductions that shrink their input more
//   than 4x (PyTorch's partitioner rule), then with them. The chooser takes
//   the shortest prefix of this order that fits.
// - sqrtCheckpoints: Chen et al. (2016), sqrt(n) checkpointing: the forward
//   pass cut into sqrt(n) segments of equal kept bytes; the last step of each
//   segment is kept, every other forward step is recomputed.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_REMATCHOOSER_H
#define OOMPLAN_FIT_REMATCHOOSER_H

#include "oomplan/Schedule/Schedule.h"
#include <vector>

namespace oomplan {

struct RematChain {
  std::vector<size_t> Steps; ///< Forward steps, in any order.
  int64_t GainBytes = 0;     ///< Kept bytes freed, estimated.
  double Seconds = 0;        ///< Predicted recompute time.
  bool Restricted = false;   ///< Needed the second tier (matmul, reduction).
};

/// The greedy order. StepSeconds: predicted time of every step of S.
std::vector<RematChain>
greedyRematOrder(const Schedule &S, const std::vector<double> &StepSeconds);

/// Marks (per step) of the first K chains of Order.
std::vector<bool> marksOfPrefix(const Schedule &S,
                                const std::vector<RematChain> &Order, size_t K);

/// Chen's sqrt(n) checkpointing marks; Segments 0 means sqrt(n), n the
/// number of forward steps that can be recomputed.
std::vector<bool> sqrtCheckpoints(const Schedule &S, unsigned Segments = 0);

/// May forward step I of S be recomputed at all (deterministic, not a
/// graph output, not a constant)?
bool isRecomputable(const Schedule &S, size_t I);

} // namespace oomplan

#endif
