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

/// Bytes per element after lowering precision: float and double become
/// 16-bit (fp16/bf16); other types keep their width. ElementType::Undefined
/// when unchanged.
ElementType lowerPrecisionType(ElementType T);

/// P with floating-point tensors in Half (Float16 or BFloat16: weights,
/// activations, graph inputs/outputs), each tensor's type set to Half.
/// Synthetic tensors follow the value their name wraps; optimizer state and
/// tensors already typed otherwise keep their bytes. For inference plans (a
/// model exported in 16 bits); a training step at mixed precision is planned
/// by the training transform itself (--precision).
llvm::Expected<Plan>
replanHalfPrecision(const Plan &P, const PlanContext &C,
                    const PipelineOptions &Opts,
                    ElementType Half = ElementType::Float16);

/// A PrecisionPlanFn for inference: PlanAt at the bindings, then
/// replanHalfPrecision (bf16 for a precision starting with "bf16", else
/// fp16). C's graph and shapes must outlive the function; PlanAt is copied.
PrecisionPlanFn inferencePrecisionPlanner(const PlanFn &PlanAt,
                                          const PlanContext &C,
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
