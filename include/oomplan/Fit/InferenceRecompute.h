//===- InferenceRecompute.h - recompute cheap long-lived values -*- C++ -*-===//
//
// Inference has no backward pass, but a value produced early and read again
// much later (a causal mask, position ids, an embedding output read by a
// later layer) holds its bytes through everything in between. When its
// producer is cheap (not a matmul or convolution: isComputeIntensiveOp) and
// what it reads is still live at the late read (resident weights and inputs,
// or values read then anyway), the value can die after its early reads and be
// recomputed by a Recompute step, writing "recompute(<name>)", just before the
// late read. Liveness, placement and the verifier see ordinary steps.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_INFERENCERECOMPUTE_H
#define OOMPLAN_FIT_INFERENCERECOMPUTE_H

#include "oomplan/Schedule/Schedule.h"
#include "llvm/ADT/ArrayRef.h"
#include <vector>

namespace oomplan {

struct InferenceRemat {
  TensorId Value = 0;  ///< The long-lived value.
  size_t Producer = 0; ///< The step that writes it.
  size_t From = 0;     ///< First read served by the recomputed copy.
  size_t Span = 0;     ///< Steps it is no longer live: From - earlier read.
  uint64_t Bytes = 0;
  double Seconds = 0; ///< Predicted time of the Recompute step.
};

/// The values of inference schedule S that may be recomputed at their
/// longest gap between reads, best bytes x span per second first.
/// InputsResident: graph inputs live for the whole run (not in the arena).
std::vector<InferenceRemat>
inferenceRematCandidates(const Schedule &S,
                         const std::vector<double> &StepSeconds,
                         bool InputsResident);

/// S with each of Chosen recomputed before its From step. A candidate whose
/// producer reads another chosen value, or is read by one, is skipped: its
/// inputs would no longer be live.
Schedule applyInferenceRecompute(const Schedule &S,
                                 llvm::ArrayRef<InferenceRemat> Chosen);

} // namespace oomplan

#endif
