//===- Rescale.h - re-planning with tensors resized --------------*- C++
//-*-===//
//
// "What would help" answers are computed by planning, not by a rule of thumb:
// these take a plan's schedule, resize some tensors (floating-point ones to
// half precision, model state split across devices), and run liveness,
// placement and the verifier again. The schedule is reused, so they work the
// same for inference and training schedules.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_RESCALE_H
#define OOMPLAN_REPORT_RESCALE_H

#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Plan/PlanPrinter.h"
#include "oomplan/Report/Diagnosis.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace oomplan {
namespace report {

/// New size in bytes of a schedule tensor, given its id and old size.
using ResizeFn = llvm::function_ref<uint64_t(TensorId, uint64_t)>;

/// P's schedule with every tensor resized by Resize, planned again with
/// Opts (liveness, placement and verification).
llvm::Expected<Plan> replanResized(const Plan &P, ResizeFn Resize,
                                   const PipelineOptions &Opts);

/// True when P already keeps some floating-point tensor in 16 bits (a
/// --precision=bf16-mixed/fp16-mixed run, or a 16-bit model): lowering the
/// precision is then no remedy.
bool usesHalfPrecision(const Plan &P, const PlanContext &C);

/// True when tensor T is model state: a weight or constant, optimizer state,
/// or the gradient of a weight.
bool isModelState(const Plan &P, const PlanContext &C, TensorId T);

/// P with model state split evenly across Devices devices (weights,
/// gradients of weights and optimizer state each 1/Devices per device,
/// rounded up; ZeRO-3/FSDP style); the per-device plan.
llvm::Expected<Plan> replanSharded(const Plan &P, const PlanContext &C,
                                   unsigned Devices,
                                   const PipelineOptions &Opts);

} // namespace report
} // namespace oomplan

#endif
