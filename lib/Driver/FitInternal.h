//===- FitInternal.h - the fitted plan, shared inside lib/Driver ----------===//
//
// The chooser's decision placed and verified (FittedPlan), the function that
// makes it (fitPlan), the whole request made into its final plan (planModel,
// which the runtime's executable entry calls), and the printers of the fit's
// output: the headline, the summary, the inserted steps, the trade-off table
// and the JSON "fit" object. Private to lib/Driver.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_DRIVER_FITINTERNAL_H
#define OOMPLAN_LIB_DRIVER_FITINTERNAL_H

#include "oomplan/Driver/Session.h"
#include "oomplan/Fit/Chooser.h"
#include <memory>

namespace llvm {
namespace json {
class OStream;
} // namespace json
} // namespace llvm

namespace oomplan {
namespace driver {

/// The chooser's options for the request against Target: its budget is
/// Target's room (Budget::roomBytes; all of memory without a capacity).
FitOptions fitOptions(const api::FitRequest &F, const PipelineOptions &PO,
                      const Budget &Target);

/// One candidate the chooser weighed and did not keep.
struct FitAlternative {
  std::string Strategy;
  unsigned Passes = 1;
  uint64_t EstimatedBytes = 0; ///< The chooser's lower bound (one pass).
  /// Predicted seconds of the whole batch; none when the estimate is over
  /// the budget (the chooser does not time those).
  std::optional<double> Seconds;
  std::string Why; ///< "over budget", "slower", "placement over budget".
};

/// The fit of a request: the chosen plan, placed and verified, and what it
/// costs. With Passes > 1 the plan is one pass of batch/Passes; steps
/// [LoopBegin, LoopEnd) run once per pass, the steps before once before the
/// first pass, the steps from LoopEnd on once after the last.
struct FittedPlan {
  Plan P;
  FitResult R;
  unsigned Passes = 1;
  std::vector<std::optional<int64_t>> Bindings; ///< Of one pass.
  /// The session's budget, bounded (Budget::bounded): the fit works within
  /// the device's memory when no budget is given. P is judged against it.
  Budget Limit;
  /// The plan without transforms: its neededBytes (deciding figure plus
  /// overhead).
  uint64_t AsIsBytes = 0;
  double BaseSeconds = 0;          ///< The whole batch without transforms.
  double TotalSeconds = 0;         ///< The whole batch as fitted.
  std::vector<double> StepSeconds; ///< Per step of P.Sched (its queue).
  size_t LoopBegin = 0, LoopEnd = 0;
  bool Fits = false; ///< The chooser fits and P.fits().
  /// Of the budget, what the transforms left free for PyTorch's caching
  /// allocator to reserve beyond the tensors (0 off --runtime=pytorch-cuda):
  /// the headroom of the transforms' target, Limit.withHeadroom(this).
  uint64_t AllocatorReserveBytes = 0;
  std::vector<FitAlternative> Rejected;
  /// What the trade-off table refits: the (one pass) schedule before the
  /// fit, and its lower bound without transforms.
  Schedule TableSched;
  uint64_t TablePeak = 0;
  PassLog Log; ///< The fit's passes, when --print-after asks.
  double overheadPercent() const {
    return BaseSeconds > 0 ? 100 * (TotalSeconds - BaseSeconds) / BaseSeconds
                           : 0.0;
  }
};

/// Fits Base into the request's budget (less its overhead), with
/// micro-batching when the request lets the chooser pick it.
llvm::Expected<FittedPlan> fitPlan(Session &S, const PlanContext &C,
                                   const Plan &Base, const PipelineOptions &PO,
                                   const report::PlanFn &PlanAt,
                                   const PassesPlanFn &PlanPasses);

/// A request made into the plan run() would emit.
struct PlannedModel {
  std::unique_ptr<Graph> G;
  ShapeInfo Shapes;
  /// The bindings of Final: one pass's when micro-batched.
  std::vector<std::optional<int64_t>> Bindings;
  Plan Final;                    ///< Fitted when fitting ran.
  std::optional<FittedPlan> Fit; ///< Set when fitting ran (Fit->P is Final).
};

/// Import, infer, bind, plan, and fit when run() would: the plan is over the
/// budget and --no-fit is not given, or a fit option asks. Call
/// resolveOptions(S) first. For the runtime (HR) and any program that runs
/// the plan it gets.
llvm::Expected<PlannedModel> planModel(Session &S);

/// True when run() fits this request's plan P: a fit option asks, or P is
/// over the budget, --no-fit is not given and the output is one a fitted
/// plan has (report, plan, JSON, schedule) with no report-only option.
bool fitRuns(const Session &S, const Plan &P);

/// Fits S within Target (FO from fitOptions at Target), then places and
/// verifies the result (buildPlan verifies) with the plan judged against
/// Target; aims lower by the fragmentation seen when placement exceeds it.
/// Log, when set, receives the passes of the schedule that is kept; Seen,
/// when set, every candidate of the last try (name, bytes, seconds).
llvm::Expected<Plan> fitAndPlace(const Schedule &S, const CostModel &Cost,
                                 FitOptions FO, const Budget &Target,
                                 const PipelineOptions &PO, FitResult &R,
                                 PassLog *Log = nullptr,
                                 std::vector<FitAlternative> *Seen = nullptr);

/// Per step of S: its predicted seconds on its own queue (the compute
/// stream, a copy engine for offload and prefetch, the host CPU).
std::vector<double> stepSeconds(const Schedule &S, const CostModel &Cost);

/// The fitted plan as JSON with its report (diagnosis off) and "fit"
/// object; returns the exit code. PC: the context of F's bindings.
llvm::Expected<int> runFittedJSON(Session &S, const PlanContext &PC,
                                  const FittedPlan &F,
                                  const PipelineOptions &PO,
                                  const report::PlanFn &PlanAt, bool ByDefault);

/// The device and training settings the numbers depend on (first lines).
void printSettings(Session &S);

/// "does not fit as is (X bytes); fits with <what> at +Y% predicted step
/// time", or "...; nothing fits: smallest budget reached ...".
void printHeadline(llvm::raw_ostream &OS, const FittedPlan &F);

/// "  step 12: recompute x (Relu) 1.0 MiB" lines and totals by kind.
void printInserted(llvm::raw_ostream &OS, const Schedule &S, bool All);

/// "without transforms: ...", "chosen: ...", "plan: ...", "predicted time".
void printSummary(llvm::raw_ostream &OS, const FittedPlan &F,
                  const TimePrediction &Base);

/// Budgets from 0.9 to 0.2 of Peak against the predicted overhead, each
/// plan placed and verified, beside sqrt(n) checkpointing in training.
/// Passes: the micro-batches the table's schedule is one pass of.
void printTable(llvm::raw_ostream &OS, const api::FitRequest &F,
                const Schedule &S, const CostModel &Cost,
                const PipelineOptions &PO, uint64_t Peak, unsigned Passes,
                uint64_t WholePeak);

/// The JSON plan's "fit" object (docs/plan-json.md): the decision, its
/// figures, the micro-batch loop and the alternatives rejected.
void writeFitJSON(llvm::json::OStream &J, const FittedPlan &F, bool ByDefault);

} // namespace driver
} // namespace oomplan

#endif
