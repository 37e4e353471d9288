//===- ReportOptions.cpp - the report's options and entry point -----------===//
//
// Parses the report's options, builds the report through the library
// (lib/Report), prints it, writes the pictures, and picks the exit code. The
// fixed overhead counts against the budget, so the exit code of a plan with
// --overhead is decided on plan total + overhead.
//
//===----------------------------------------------------------------------===//
#include "ReportOptions.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Report/Report.h"
#include "oomplan/Report/Timeline.h"
#include "oomplan/Support/ByteSize.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace oomplan;

extern cl::OptionCategory Cat;

static cl::opt<std::string> Overhead(
    "overhead", cl::cat(Cat), cl::value_desc("SIZE"), cl::init("0"),
    cl::desc("Fixed per-device allowance (CUDA context, library workspaces) "
             "counted against the budget; shown as its own line"));
static cl::opt<bool>
    MaxBatch("max-batch", cl::cat(Cat),
             cl::desc("Find the largest batch that fits the budget"));
static cl::opt<bool>
    MaxSeq("max-seq", cl::cat(Cat),
           cl::desc("Find the longest sequence that fits the budget"));
static cl::opt<bool>
    SweepOpt("sweep", cl::cat(Cat),
             cl::desc("Tabulate memory at batch 1,2,4,... and several "
                      "sequence lengths"));
static cl::opt<std::string>
    TimelinePath("timeline", cl::cat(Cat), cl::value_desc("FILE.svg|.html"),
                 cl::desc("Write the memory timeline (SVG, or HTML)"));
static cl::opt<std::string>
    TracePath("trace", cl::cat(Cat), cl::value_desc("FILE.json"),
              cl::desc("Write the plan as Chrome trace / Perfetto JSON"));

std::vector<std::string> oomplan::reportOptionsGiven() {
  std::vector<std::string> Given;
  for (cl::Option *O : std::initializer_list<cl::Option *>{
           &Overhead, &MaxBatch, &MaxSeq, &SweepOpt, &TimelinePath, &TracePath})
    if (O->getNumOccurrences())
      Given.push_back(("--" + O->ArgStr).str());
  return Given;
}

static int reportError(Error E) {
  WithColor::error(errs(), "oomplan") << toString(std::move(E)) << '\n';
  return 1;
}

static Error writeFile(StringRef Path,
                       function_ref<void(raw_ostream &)> Write) {
  std::error_code EC;
  raw_fd_ostream Out(Path, EC, sys::fs::OF_None);
  if (EC)
    return createStringError(EC, Path + ": " + EC.message());
  Write(Out);
  Out.close();
  if (Out.has_error())
    return createStringError(Out.error(), Path + ": " + Out.error().message());
  return Error::success();
}

static Error writePictures(const Plan &P, const PlanContext &C,
                           const report::MemoryReport &R) {
  if (!TimelinePath.empty()) {
    bool HTML = StringRef(TimelinePath).endswith_insensitive(".html") ||
                StringRef(TimelinePath).endswith_insensitive(".htm");
    if (Error E = writeFile(TimelinePath, [&](raw_ostream &OS) {
          if (HTML)
            report::writeTimelineHTML(OS, P, C, R);
          else
            report::writeTimelineSVG(OS, P, C, R);
        }))
      return E;
  }
  if (!TracePath.empty())
    return writeFile(TracePath, [&](raw_ostream &OS) {
      report::writeChromeTrace(OS, P, C, R);
    });
  return Error::success();
}

int oomplan::runReport(raw_ostream &OS, const PlanContext &C, const Plan &P,
                       const PipelineOptions &PO, const report::PlanFn &PlanAt,
                       bool JSON, const report::FitFn &Fit) {
  report::ReportOptions RO;
  RO.Fit = Fit;
  RO.BudgetBytes = P.BudgetBytes;
  auto OverheadBytes = parseByteSize(Overhead);
  if (!OverheadBytes)
    return reportError(OverheadBytes.takeError());
  // The report's formulas and JSON carry bytes as signed 64-bit numbers.
  if (*OverheadBytes > uint64_t(INT64_MAX))
    return reportError(createStringError(inconvertibleErrorCode(),
                                         "--overhead " + Overhead +
                                             " is too large (at most 8 EiB)"));
  RO.OverheadBytes = *OverheadBytes;
  RO.MaxBatch = MaxBatch;
  RO.MaxSeq = MaxSeq;
  RO.Sweep = SweepOpt;
  SymbolRoles Roles = findSymbolRoles(C.G);
  auto R = report::buildReport(P, C, Roles, PlanAt, PO, RO);
  if (!R)
    return reportError(R.takeError());
  if (JSON)
    printPlanJSON(OS, P, C, [&](json::OStream &J) {
      J.attributeBegin("report");
      report::writeReportJSON(J, *R, C);
      J.attributeEnd();
    });
  else
    report::printReportText(OS, *R, P, C);
  if (Error E = writePictures(P, C, *R))
    return reportError(std::move(E));
  return R->Fits ? 0 : 2;
}
