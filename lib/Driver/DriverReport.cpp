//===- DriverReport.cpp - the memory report, its JSON and pictures --------===//
//
// Builds the report through lib/Report (capacity searches, sweep, diagnosis
// and remedies as the request asks), prints it as text or as the JSON plan
// with its "report" object, writes the timeline and trace files, and returns
// the verdict: the fixed overhead counts against the budget, so the exit code
// is decided on plan total + overhead, by the same function as the JSON.
//
//===----------------------------------------------------------------------===//
#include "AllocatorInternal.h"
#include "FitInternal.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Driver/Session.h"
#include "oomplan/Plan/TrainingPipeline.h"
#include "oomplan/Report/AllocatorReport.h"
#include "oomplan/Report/Report.h"
#include "oomplan/Report/Rescale.h"
#include "oomplan/Report/Timeline.h"
#include "oomplan/Support/Error.h"
#include "oomplan/Transforms/InferencePrecision.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

std::vector<std::string> driver::reportOptionsGiven(const api::Request &R) {
  std::vector<std::string> Given;
  if (R.Overhead)
    Given.push_back("--overhead");
  if (R.Report.MaxBatch)
    Given.push_back("--max-batch");
  if (R.Report.MaxSeq)
    Given.push_back("--max-seq");
  if (R.Report.Sweep)
    Given.push_back("--sweep");
  if (!R.Report.TimelinePath.empty())
    Given.push_back("--timeline");
  if (!R.Report.TracePath.empty())
    Given.push_back("--trace");
  return Given;
}

static Error writeFile(StringRef Path,
                       function_ref<void(raw_ostream &)> Write) {
  std::error_code EC;
  raw_fd_ostream Out(Path, EC, sys::fs::OF_None);
  if (EC)
    return makeIOError(Path + ": " + EC.message());
  Write(Out);
  Out.close();
  if (Out.has_error()) {
    std::string Msg = Out.error().message();
    Out.clear_error();
    return makeIOError(Path + ": " + Msg);
  }
  return Error::success();
}

static Error writePictures(const api::ReportRequest &RR, const Plan &P,
                           const PlanContext &C,
                           const report::MemoryReport &R) {
  StringRef Timeline = RR.TimelinePath;
  if (!Timeline.empty()) {
    bool HTML = Timeline.endswith_insensitive(".html") ||
                Timeline.endswith_insensitive(".htm");
    if (Error E = writeFile(Timeline, [&](raw_ostream &OS) {
          if (HTML)
            report::writeTimelineHTML(OS, P, C, R);
          else
            report::writeTimelineSVG(OS, P, C, R);
        }))
      return E;
  }
  if (!RR.TracePath.empty())
    return writeFile(RR.TracePath, [&](raw_ostream &OS) {
      report::writeChromeTrace(OS, P, C, R);
    });
  return Error::success();
}

static api::CapacityAnswer answer(const report::CapacityResult &C) {
  api::CapacityAnswer A;
  A.Max = C.Max;
  A.AtLeast = C.AtLeast;
  A.BytesAtMax = C.BytesAtMax;
  A.BytesAbove = C.BytesAbove;
  return A;
}

Expected<int> driver::runReport(Session &S, const PlanContext &C, const Plan &P,
                                const PipelineOptions &PO,
                                const report::PlanFn &PlanAt, bool JSON,
                                const report::FitFn &Fit) {
  report::ReportOptions RO;
  RO.Fit = Fit;
  RO.Limit = S.Limit;
  RO.MaxBatch = S.Req.Report.MaxBatch;
  RO.MaxSeq = S.Req.Report.MaxSeq;
  RO.Sweep = S.Req.Report.Sweep;
  // "lower precision" is the plan --precision=bf16-mixed gives (contract 3):
  // training re-plans the step at that precision; inference with every
  // floating-point tensor in 16 bits.
  if (S.training())
    RO.PlanAtPrecision = [&S, &C, PO](ArrayRef<std::optional<int64_t>> B,
                                      StringRef Precision) -> Expected<Plan> {
      auto Prec = parsePrecision(Precision);
      if (!Prec)
        return Prec.takeError();
      TrainingOptions T = S.Train;
      T.Precision = *Prec;
      std::vector<std::string> Warnings; // said once, by the main plan
      auto P = planTrainingGraph(C.G, C.Shapes, B, PO, T, Warnings);
      if (P)
        if (Error E = setRuntimeReserved(S, PlanContext{C.G, C.Shapes, B}, *P))
          return std::move(E);
      return P;
    };
  else
    // The plan --precision=bf16 makes: the conversion runs first, the
    // workspaces and fusions installed after it see 16-bit tensors.
    RO.PlanAtPrecision = [&C, PO, HG = S.HalfGraph, HS = S.HalfShapes](
                             ArrayRef<std::optional<int64_t>> B,
                             StringRef Precision) -> Expected<Plan> {
      PipelineOptions Half = PO;
      ElementType T = Precision.startswith("bf16") ? ElementType::BFloat16
                                                   : ElementType::Float16;
      Half.EditSchedule =
          [T, Rest = PO.EditSchedule](const Graph &G, const ShapeInfo &Shapes,
                                      ArrayRef<std::optional<int64_t>> B,
                                      Schedule &Sched) -> Error {
        applyInferencePrecision(Shapes, T, Sched);
        return Rest ? Rest(G, Shapes, B, Sched) : Error::success();
      };
      if (HG)
        return planGraph(*HG, *HS, B, Half);
      return planGraph(C.G, C.Shapes, B, Half);
    };
  auto R = report::buildReport(P, C, S.Roles, PlanAt, PO, RO);
  if (!R)
    return R.takeError();
  if (R->Batch && R->BatchAsked)
    S.Res.MaxBatch = answer(*R->Batch);
  if (R->Seq && R->SeqAsked)
    S.Res.MaxSeq = answer(*R->Seq);
  auto Alloc = simulateAllocator(S, C, P);
  if (!Alloc)
    return Alloc.takeError();
  if (JSON) {
    // Each step's predicted time, as a fitted plan has it (null on steps of
    // a model whose dims the cost model cannot evaluate: none bound).
    CostOptions CO;
    CO.TF32 = S.Req.Fit.TF32;
    PlanJSONOptions JO;
    std::vector<double> Secs = stepSeconds(
        P.Sched,
        CostModel(C.G, evaluateDims(C.G, C.Shapes, C.Bindings), S.Device, CO));
    JO.StepSeconds = Secs;
    printPlanJSON(
        S.OS, P, C,
        [&](json::OStream &J) {
          J.attribute("fit", nullptr); // No fit ran: the plan as is.
          writeBackendJSON(S, J);
          J.attributeBegin("device"); // what the steps' seconds assume
          writeDeviceJSON(J, S.Device);
          J.attributeEnd();
          J.attributeBegin("report");
          report::writeReportJSON(J, *R, C);
          J.attributeEnd();
          if (*Alloc) {
            J.attributeBegin("cuda_allocator");
            report::writeAllocatorJSON(J, **Alloc);
            J.attributeEnd();
          }
        },
        JO);
  } else {
    report::printReportText(S.OS, *R, P, C);
    if (*Alloc)
      report::printAllocatorText(S.OS, **Alloc);
  }
  if (Error E = writePictures(S.Req.Report, P, C, *R))
    return E;
  return R->Fits ? 0 : 2;
}

Expected<int> driver::runFittedJSON(Session &S, const PlanContext &PC,
                                    const FittedPlan &F,
                                    const PipelineOptions &PO,
                                    const report::PlanFn &PlanAt,
                                    bool ByDefault) {
  // The report of the fitted plan (its classes and peak); no diagnosis: the
  // "fit" object says what was done, or what the fit reached.
  report::ReportOptions RO;
  RO.Limit = F.Limit;
  RO.Diagnose = false;
  auto R = report::buildReport(F.P, PC, S.Roles, PlanAt, PO, RO);
  if (!R)
    return R.takeError();
  PlanJSONOptions JO;
  JO.StepSeconds = F.StepSeconds;
  printPlanJSON(
      S.OS, F.P, PC,
      [&](json::OStream &J) {
        writeFitJSON(J, F, ByDefault);
        writeBackendJSON(S, J);
        J.attributeBegin("device"); // what the steps' seconds assume
        writeDeviceJSON(J, S.Device);
        J.attributeEnd();
        J.attributeBegin("report");
        report::writeReportJSON(J, *R, PC);
        J.attributeEnd();
      },
      JO);
  return R->Fits && F.Fits ? 0 : 2;
}
