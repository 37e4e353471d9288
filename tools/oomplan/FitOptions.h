//===- FitOptions.h - the --fit command-line entry point --------*- C++ -*-===//
//
// The fitting options (--fit, --device, --remat, --offload, --reorder,
// --micro-batches) live in FitOptions.cpp; oomplan.cpp calls runFit when one
// of them asks for a transform.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TOOLS_FITOPTIONS_H
#define OOMPLAN_TOOLS_FITOPTIONS_H

#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Plan/PlanPrinter.h"
#include "oomplan/Report/Capacity.h"
#include "oomplan/Report/Diagnosis.h"
#include <functional>

namespace oomplan {

/// True when the command line asks to fit a budget.
bool fitRequested();

/// Fits Base's schedule into the budget (PO.Placement.BudgetBytes, else the
/// device's memory), places and verifies the result, prints what was
/// inserted, the predicted overhead and a budget/overhead table. Returns 0
/// when it fits, 2 when nothing fits (with the smallest budget reached and
/// why), 1 on error. PlanAt re-plans at other bindings (--micro-batches);
/// PlanPasses re-plans at other bindings as one of K passes (training
/// accumulates gradients over them), for the micro-batch counts --fit tries.
using PassesPlanFn = std::function<llvm::Expected<Plan>(
    llvm::ArrayRef<std::optional<int64_t>>, unsigned K)>;
int runFit(llvm::raw_ostream &OS, const PlanContext &C, const Plan &Base,
           const PipelineOptions &PO, const report::PlanFn &PlanAt,
           const PassesPlanFn &PlanPasses);

/// The chooser as the report's "what would help" uses it: at a budget, the
/// placed plan's bytes, predicted overhead and strategy, for Base's schedule
/// on the --device profile (H100-SXM by default).
report::FitFn makeFitRemedy(const PlanContext &C, const Plan &Base,
                            const PipelineOptions &PO);

} // namespace oomplan

#endif
