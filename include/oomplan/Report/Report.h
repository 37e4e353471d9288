//===- Report.h - the memory report: assembly, text and JSON -----*- C++
//-*-===//
//
// What a person reads after `oomplan model.onnx --budget 24G --batch 32 --seq
// 2048`: the breakdown by memory class, the peak listing, and when the plan
// does not fit, the ranked diagnosis and the planned remedies; on request the
// largest batch and sequence that fit and a sweep table. buildReport computes
// everything (it plans again through the caller's PlanFn as needed); the
// printers only format. docs/report.md explains every section.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_REPORT_H
#define OOMPLAN_REPORT_REPORT_H

#include "oomplan/Report/Advice.h"
#include "oomplan/Report/Breakdown.h"
#include "oomplan/Report/Capacity.h"
#include "oomplan/Report/Diagnosis.h"
#include "oomplan/Report/Peak.h"

namespace llvm {
namespace json {
class OStream;
} // namespace json
} // namespace llvm

namespace oomplan {
namespace report {

struct ReportOptions {
  /// The driver's budget: every verdict of the report is fits() against it.
  Budget Limit;
  bool Diagnose = true;  ///< Diagnosis and remedies when it does not fit.
  bool MaxBatch = false; ///< Search the largest batch that fits.
  bool MaxSeq = false;   ///< Search the longest sequence that fits.
  bool Sweep = false;    ///< Tabulate memory over batch and seq.
  int64_t CapacityCap = DefaultCapacityCap;
  FitFn Fit; ///< Optional: plans checkpointing/offload for "what would help".
  /// Optional: plans the model at another --precision ("bf16-mixed"); the
  /// "lower precision" remedy is offered only with it (Diagnosis.h).
  PrecisionPlanFn PlanAtPrecision;
};

struct MemoryReport {
  Budget Limit;             ///< ReportOptions::Limit.
  uint64_t DeviceBytes = 0; ///< neededBytes: the deciding figure + overhead.
  bool Fits = true;         ///< fits(Limit, the plan's figures).
  Breakdown Classes;
  PeakReport Peak;
  /// Capacity searches: made when asked, or to diagnose a plan that does not
  /// fit (when the model has the symbol).
  std::optional<CapacityResult> Batch, Seq;
  bool BatchAsked = false, SeqAsked = false;
  std::optional<Sweep> SweepTable;
  std::vector<Finding> Findings;            ///< Ranked; empty when it fits.
  std::vector<Remedy> Remedies;             ///< Largest saving first.
  int64_t CurrentBatch = 0, CurrentSeq = 0; ///< 0: no such symbol bound.
};

/// Computes the report for plan P. PlanAt plans the same model at other
/// bindings (the caller's pipeline: inference or training); Opts are the
/// options P was planned with (for re-planning resized schedules). Errors:
/// a capacity search without a budget or without the symbol, re-planning.
llvm::Expected<MemoryReport> buildReport(const Plan &P, const PlanContext &C,
                                         const SymbolRoles &Roles,
                                         const PlanFn &PlanAt,
                                         const PipelineOptions &Opts,
                                         const ReportOptions &RO);

/// The report for people: aligned columns, human units beside exact bytes,
/// colour when OS is a terminal. MaxPeakRows limits the peak listing.
void printReportText(llvm::raw_ostream &OS, const MemoryReport &R,
                     const Plan &P, const PlanContext &C,
                     unsigned MaxPeakRows = 20);

/// The same content as a JSON object value (written where J expects a value:
/// call it inside J.attributeBegin("report") ... J.attributeEnd()).
void writeReportJSON(llvm::json::OStream &J, const MemoryReport &R,
                     const PlanContext &C);

} // namespace report
} // namespace oomplan

#endif
