//===- OptimizerOffload.h - the optimizer step on the host ------*- C++ -*-===//
//
// Training, ZeRO-Offload style: the optimizer state (Adam's moments,
// momentum, master weights) lives in host memory and each parameter's
// update runs on the host CPU. The device optimizer step is replaced, per
// parameter in the order the backward pass finishes their gradients, by
//
// - an Offload step reading grad(P): its device-to-host copy starts as soon
//   as the gradient is final, overlapping the rest of the backward pass;
// - a host step (Step::OnHost, op "Host<optimizer>") reading the host-home
//   tensors host(grad(P)), host(P) (the host's fp32 copy of the parameter,
//   unless a master copy is state already) and the state; each is read and
//   written once at the host's memory bandwidth;
// - a Prefetch step writing P: the updated parameter back to the device.
//
// The device saves the state bytes and the step's scratch; the weights and
// gradients stay on the device.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_OPTIMIZEROFFLOAD_H
#define OOMPLAN_FIT_OPTIMIZEROFFLOAD_H

#include "oomplan/Schedule/Schedule.h"

namespace oomplan {

/// True when S has a device optimizer step with state to move.
bool hasOptimizerState(const Schedule &S);

/// S with its optimizer step on the host (S itself if there is none).
Schedule offloadOptimizerState(const Schedule &S);

} // namespace oomplan

#endif
