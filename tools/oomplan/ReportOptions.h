//===- ReportOptions.h - the report's command-line entry point ---*- C++
//-*-===//
//
// The report's options (--overhead, --max-batch, --max-seq, --sweep,
// --timeline, --trace) live in ReportOptions.cpp; oomplan.cpp calls runReport
// for --emit=report and --emit=json.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TOOLS_REPORTOPTIONS_H
#define OOMPLAN_TOOLS_REPORTOPTIONS_H

#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Plan/PlanPrinter.h"
#include "oomplan/Report/Capacity.h"
#include "oomplan/Report/Diagnosis.h"

namespace oomplan {

/// Builds the report of P, prints it (text, or the JSON plan with its
/// "report" object when JSON), writes --timeline and --trace files, and
/// returns the exit code: 0 fits (or no budget), 2 does not fit, 1 error.
/// PlanAt plans the same model at other bindings with the same pipeline
/// (inference or training) and options PO.
/// Fit, when set, plans recompute/offload for "what would help".
int runReport(llvm::raw_ostream &OS, const PlanContext &C, const Plan &P,
              const PipelineOptions &PO, const report::PlanFn &PlanAt,
              bool JSON, const report::FitFn &Fit = nullptr);

/// The report options given on the command line ("--max-batch", ...), for
/// modes such as --fit that do not honour them and must say so.
std::vector<std::string> reportOptionsGiven();

} // namespace oomplan

#endif
