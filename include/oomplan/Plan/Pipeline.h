//===- Pipeline.h - from an analysed graph to a verified plan ---*- C++ -*-===//
//
// The stages after shape inference, in one call: sizes at the bound symbols,
// the default schedule, liveness, placement and verification. Tools, the
// benchmark and capacity searches (largest batch that fits) all call this.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PLAN_PIPELINE_H
#define OOMPLAN_PLAN_PIPELINE_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Plan/Plan.h"
#include "oomplan/Schedule/Liveness.h"
#include "oomplan/Schedule/PassInstrumentation.h"
#include <functional>

namespace oomplan {

struct PipelineOptions {
  PlanOptions Placement;
  LivenessOptions Liveness;
  /// Told each schedule transform's result (training), once verified.
  const PassInstrumentation *Instr = nullptr;
  /// Edits the default schedule before liveness, at the bindings planned:
  /// the runtime adds each step's kernel workspace here so that the plan
  /// counts it (Driver/Executable.h). Null: no edit.
  std::function<llvm::Error(const Graph &, const ShapeInfo &,
                            llvm::ArrayRef<std::optional<int64_t>>, Schedule &)>
      EditSchedule;
};

/// Byte size of every value at Bindings (indexed like Shapes.SymbolNames).
/// Errors name the value and the unbound symbols; a value whose size is
/// unknown and which something reads is an error, never 0.
llvm::Expected<std::vector<uint64_t>>
evaluateValueBytes(const Graph &G, const ShapeInfo &Shapes,
                   llvm::ArrayRef<std::optional<int64_t>> Bindings);

/// Schedule, liveness, placement and verification of G at Bindings. The
/// schedule is checked by the schedule verifier before placement.
llvm::Expected<Plan> planGraph(const Graph &G, const ShapeInfo &Shapes,
                               llvm::ArrayRef<std::optional<int64_t>> Bindings,
                               const PipelineOptions &Opts);

} // namespace oomplan

#endif
