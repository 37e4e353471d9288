//===- DriverFit.cpp - --fit: make the plan fit, say what it costs --------===//
//
// The library (lib/Fit, lib/Cost) chooses the transforms; this builds the
// cost model from the device, runs the chooser (and micro-batching when the
// request lets it), places and verifies the chosen schedule with the
// ordinary buildPlan, and prints the result (DriverFitPrint.cpp). Also the
// chooser as the report's "what would help" remedy.
//
//===----------------------------------------------------------------------===//
#include "FitInternal.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Fit/MicroBatch.h"
#include "oomplan/Schedule/SchedulePrinter.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include <chrono>
#include <map>
#include <numeric>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

FitOptions driver::fitOptions(const api::FitRequest &F,
                              const PipelineOptions &PO, uint64_t Budget) {
  FitOptions O;
  O.BudgetBytes = Budget;
  O.Remat = F.Remat == api::RematChoice::Sqrt   ? RematMode::Sqrt
            : F.Remat == api::RematChoice::None ? RematMode::None
                                                : RematMode::Auto;
  O.Offload = F.Offload == api::OffloadChoice::Weights ? OffloadMode::Weights
              : F.Offload == api::OffloadChoice::None  ? OffloadMode::None
                                                       : OffloadMode::Auto;
  O.Reorder = F.Reorder;
  O.Estimate.Liveness = PO.Liveness;
  O.Estimate.AlignBytes = PO.Placement.AlignBytes;
  O.Estimate.IOInArena = PO.Placement.IOInArena;
  return O;
}

Expected<Plan> driver::fitAndPlace(const Schedule &S, const CostModel &Cost,
                                   FitOptions FO, const PipelineOptions &PO,
                                   FitResult &R, PassLog *Log) {
  // Each try reports the passes of its choice; the last try's are kept.
  PassRecorder Rec;
  if (Log)
    FO.Instr = &Rec.Instr;
  // The chooser keeps the cheapest candidate whose placement (this one, at
  // the chooser's budget) fits, not only the cheapest by its lower bound. A
  // candidate whose placement fails counts as not fitting; the schedule that
  // is kept is placed again below, and its errors are reported there.
  FO.PlacementFits = [&PO, Budget = FO.BudgetBytes](const Schedule &Cand) {
    auto P = buildPlan(Cand, computeLifetimes(Cand, PO.Liveness), PO.Placement);
    if (!P) {
      consumeError(P.takeError());
      return false;
    }
    return P->totalBytes() <= Budget;
  };
  auto Fit = [&]() -> Error {
    Rec.Log.clear();
    auto F = fitSchedule(S, Cost, FO);
    if (!F)
      return F.takeError();
    R = std::move(*F);
    return Error::success();
  };
  if (Error E = Fit())
    return E;
  PlanOptions PlO = PO.Placement;
  PlO.BudgetBytes = FO.BudgetBytes;
  // The chooser's budget is what is left after any fixed overhead.
  PlO.OverheadBytes = 0;
  auto P = buildPlan(R.Sched, computeLifetimes(R.Sched, PO.Liveness), PlO);
  // Placement may exceed the chooser's lower bound; then aim lower by the
  // fragmentation seen, up to three times.
  for (int Try = 0; Try < 3 && P && R.Fits && !P->fits(); ++Try) {
    FO.Margin +=
        double(P->ArenaBytes - P->ArenaLowerBound) / FO.BudgetBytes + 0.001;
    if (Error E = Fit())
      return E;
    P = buildPlan(R.Sched, computeLifetimes(R.Sched, PO.Liveness), PlO);
  }
  if (Log)
    *Log = std::move(Rec.Log);
  return P;
}

// --micro-batches=K: the same pipeline at batch/K.
static Expected<Plan> microBatchPlan(unsigned K, const PlanContext &C,
                                     const report::PlanFn &PlanAt,
                                     std::vector<std::optional<int64_t>> &B) {
  // The symbols --batch binds (SymbolBinding.h's batch role).
  bool Any = false;
  for (SymbolId Sym : findSymbolRoles(C.G).Batch) {
    if (Sym >= B.size() || !B[Sym])
      continue;
    if (*B[Sym] % K != 0)
      return makeInputError("--micro-batches=" + Twine(K) +
                            " does not divide batch " + Twine(*B[Sym]));
    B[Sym] = *B[Sym] / K;
    Any = true;
  }
  if (!Any)
    return makeInputError("--micro-batches needs a bound batch symbol");
  return PlanAt(B);
}

report::FitFn driver::makeFitRemedy(Session &S, const PlanContext &C,
                                    const Plan &Base,
                                    const PipelineOptions &PO) {
  return [&S, &C, &Base, PO](uint64_t Budget) -> Expected<report::FitOutcome> {
    CostOptions CO;
    CO.TF32 = S.Req.Fit.TF32;
    CostModel Cost(C.G, evaluateDims(C.G, C.Shapes, C.Bindings), S.Device, CO);
    FitResult R;
    auto P =
        fitAndPlace(Base.Sched, Cost, fitOptions(S.Req.Fit, PO, Budget), PO, R);
    if (!P)
      return P.takeError();
    report::FitOutcome Out;
    Out.TotalBytes = P->totalBytes();
    Out.OverheadPercent = R.overheadPercent();
    Out.Fits = R.Fits && P->totalBytes() <= Budget;
    Out.Strategy = Out.Fits ? R.Strategy
                            : "no recompute/offload fits" +
                                  (R.Why.empty() ? "" : ": " + R.Why);
    return Out;
  };
}

namespace {
// The batch split into passes by the chooser (MicroBatch.h): one pass's
// plan, its fit, and what the trade-off table needs to re-fit it.
struct PassesFit {
  unsigned K = 1;
  std::vector<std::optional<int64_t>> Bindings;
  Plan Pass;   ///< One pass, untransformed.
  Plan Placed; ///< One pass, fitted, placed and verified.
  FitResult R;
  double Seconds = 0; ///< Predicted time of all passes.
  PassLog Log;        ///< The fit's passes (when printed).
};
} // namespace

// The largest batch every bound batch symbol is a multiple of (0: none).
static int64_t boundBatch(const PlanContext &C) {
  int64_t G = 0;
  for (SymbolId Sym : findSymbolRoles(C.G).Batch)
    if (Sym < C.Bindings.size() && C.Bindings[Sym])
      G = std::gcd(G, *C.Bindings[Sym]);
  return G;
}

// Micro-batching when the whole batch does not fit or fits only with a
// transform that costs time: k = 2, 4, ... passes, each re-planned and fitted
// at the same budget, the cheapest by k x pass time against Whole.
static std::optional<PassesFit>
choosePasses(const api::FitRequest &FR, const PlanContext &C,
             const PipelineOptions &PO, uint64_t Budget,
             const DeviceProfile &Dev, const CostOptions &CO,
             const PassesPlanFn &PlanPasses, const FitResult &Whole,
             bool WholePlaced, bool Log) {
  int64_t Batch = boundBatch(C);
  if (Batch < 2 || (Whole.Fits && WholePlaced && Whole.overheadSeconds() <= 0))
    return std::nullopt;
  std::map<unsigned, PassesFit> Tried;
  auto FitAt = [&](unsigned K) -> std::optional<MicroBatchFit> {
    PassesFit F;
    F.K = K;
    F.Bindings.assign(C.Bindings.begin(), C.Bindings.end());
    for (SymbolId Sym : findSymbolRoles(C.G).Batch)
      if (Sym < F.Bindings.size() && F.Bindings[Sym])
        F.Bindings[Sym] = *F.Bindings[Sym] / K;
    auto Pass = PlanPasses(F.Bindings, K);
    if (!Pass) {
      consumeError(Pass.takeError()); // This K is not offered.
      return std::nullopt;
    }
    CostModel Cost(C.G, evaluateDims(C.G, C.Shapes, F.Bindings), Dev, CO);
    auto P = fitAndPlace(Pass->Sched, Cost, fitOptions(FR, PO, Budget), PO, F.R,
                         Log ? &F.Log : nullptr);
    if (!P) {
      consumeError(P.takeError()); // This K is not offered.
      return std::nullopt;
    }
    MicroBatchFit M{K, F.R, P->fits(), onceSeconds(F.R.Sched, Cost)};
    F.Seconds = M.totalSeconds();
    F.Pass = std::move(*Pass);
    F.Placed = std::move(*P);
    Tried.emplace(K, std::move(F));
    return M;
  };
  auto Best =
      chooseMicroBatches(Batch, MicroBatchFit{1, Whole, WholePlaced}, FitAt);
  if (!Best)
    return std::nullopt;
  PassesFit Out = std::move(Tried.at(Best->K));
  Out.R.Strategy = "micro-batches " + std::to_string(Out.K) +
                   (Out.R.Strategy == "none" ? "" : " + " + Out.R.Strategy);
  return Out;
}

Expected<int> driver::runFit(Session &S, const PlanContext &C, const Plan &Base,
                             const PipelineOptions &PO,
                             const report::PlanFn &PlanAt,
                             const PassesPlanFn &PlanPasses,
                             const PassLog &MainLog) {
  const api::FitRequest &FR = S.Req.Fit;
  const DeviceProfile &Dev = S.Device;
  uint64_t Budget = S.Budget.value_or(Dev.MemoryBytes);
  unsigned Passes = FR.MicroBatches.value_or(1);
  std::vector<std::optional<int64_t>> B(C.Bindings.begin(), C.Bindings.end());
  std::optional<Plan> Micro;
  if (Passes > 1) {
    auto MP = microBatchPlan(Passes, C, PlanAt, B);
    if (!MP)
      return MP.takeError();
    Micro = std::move(*MP);
  }
  const Plan *Start = Micro ? &*Micro : &Base;
  CostOptions CO;
  CO.TF32 = FR.TF32;
  CostModel Full(C.G, evaluateDims(C.G, C.Shapes, C.Bindings), Dev, CO);
  auto T0 = std::chrono::steady_clock::now();
  FitResult R;
  PassLog FitLog;
  auto P = fitAndPlace(Start->Sched,
                       CostModel(C.G, evaluateDims(C.G, C.Shapes, B), Dev, CO),
                       fitOptions(FR, PO, Budget), PO, R, &FitLog);
  if (!P)
    return P.takeError();
  double Total = R.Time.TotalSeconds * Passes;
  // --remat=sqrt and --offload=weights ask for one transform, for
  // comparison; an explicit --micro-batches (=1 too) is the user's choice.
  std::optional<PassesFit> Auto;
  if (FR.Fit && !FR.MicroBatches && FR.Remat != api::RematChoice::Sqrt &&
      FR.Offload != api::OffloadChoice::Weights)
    Auto = choosePasses(FR, C, PO, Budget, Dev, CO, PlanPasses, R, P->fits(),
                        S.printsPasses());
  // The table is over one pass; "without transforms" stays the whole batch.
  uint64_t TablePeak = R.BaseMem.totalBytes();
  if (Auto) {
    Passes = Auto->K;
    Total = Auto->Seconds;
    B = Auto->Bindings;
    Start = &Auto->Pass;
    TablePeak = Auto->R.BaseMem.totalBytes();
    Auto->R.BaseMem = R.BaseMem;
    R = Auto->R;
    *P = std::move(Auto->Placed);
    FitLog = std::move(Auto->Log);
  }
  // --print-after: the main pipeline's passes, the batch split, the fit's.
  S.printPasses(C.G, MainLog);
  if (Passes > 1)
    S.printPasses(C.G, {PassRecord{"micro-batch", Start->Sched}});
  S.printPasses(C.G, FitLog);
  CostModel Cost(C.G, evaluateDims(C.G, C.Shapes, B), Dev, CO);
  double Secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
          .count();
  TimePrediction BaseTime = simulate(Base.Sched, Full);
  bool Fits = R.Fits && P->fits();
  if (S.Req.Emit == api::EmitKind::Schedule) { // The schedule placed.
    S.Res.TotalBytes = P->totalBytes();
    S.Res.BudgetBytes = Budget;
    printSchedule(S.OS, P->Sched, &C.G);
    return Fits ? 0 : 2;
  }
  raw_ostream &OS = S.OS;
  OS << "fit: device " << Dev.Name << ", budget " << formatBytes(Budget) << " ("
     << Budget << " bytes)";
  if (Passes > 1)
    OS << ", " << Passes << " micro-batches";
  OS << '\n';
  printSummary(OS, R, BaseTime, Total, *P);
  S.Res.TotalBytes = P->totalBytes();
  S.Res.BudgetBytes = Budget;
  S.Res.FitStrategy = R.Strategy;
  S.Res.FitOverheadPercent =
      BaseTime.TotalSeconds > 0
          ? 100 * (Total - BaseTime.TotalSeconds) / BaseTime.TotalSeconds
          : 0.0;
  // Wall time is a note: the output stays reproducible.
  S.note("chosen in " + formatv("{0:f2}", Secs) + " s");
  if (FR.ShowPlan)
    printPlanText(OS, *P, C, /*ListBuffers=*/false);
  if (!Fits) {
    OS << "does not fit: smallest budget reached "
       << formatBytes(P->totalBytes()) << " (" << P->totalBytes() << " bytes); "
       << (R.Why.empty() ? "placement" : R.Why) << '\n';
    return 2;
  }
  OS << "inserted steps:\n";
  printInserted(OS, R.Sched, /*All=*/FR.ShowPlan);
  printTable(OS, FR, Start->Sched, Cost, PO, TablePeak);
  return 0;
}
