//===- FitInternal.h - shared by DriverFit.cpp and DriverFitPrint.cpp -----===//
//
// The chooser's result placed and verified, and the printers of --fit's
// output (inserted steps, summary, trade-off table). Private to lib/Driver.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_DRIVER_FITINTERNAL_H
#define OOMPLAN_LIB_DRIVER_FITINTERNAL_H

#include "oomplan/Driver/Session.h"
#include "oomplan/Fit/Chooser.h"

namespace oomplan {
namespace driver {

/// The chooser's options for the request at Budget.
FitOptions fitOptions(const api::FitRequest &F, const PipelineOptions &PO,
                      uint64_t Budget);

/// Fits S, then places and verifies the result (buildPlan verifies); aims
/// lower by the fragmentation seen when placement exceeds the budget.
/// Log, when set, receives the passes of the schedule that is kept.
llvm::Expected<Plan> fitAndPlace(const Schedule &S, const CostModel &Cost,
                                 FitOptions FO, const PipelineOptions &PO,
                                 FitResult &R, PassLog *Log = nullptr);

/// "  step 12: recompute x (Relu) 1.0 MiB" lines and totals by kind.
void printInserted(llvm::raw_ostream &OS, const Schedule &S, bool All);

/// "without transforms: ...", "chosen: ...", "plan: ...", "predicted time".
void printSummary(llvm::raw_ostream &OS, const FitResult &R,
                  const TimePrediction &Base, double Total, const Plan &P);

/// Budgets from 0.9 to 0.2 of Peak against the predicted overhead, each
/// plan placed and verified, beside sqrt(n) checkpointing in training.
void printTable(llvm::raw_ostream &OS, const api::FitRequest &F,
                const Schedule &S, const CostModel &Cost,
                const PipelineOptions &PO, uint64_t Peak);

} // namespace driver
} // namespace oomplan

#endif
