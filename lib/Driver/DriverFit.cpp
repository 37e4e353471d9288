//===- DriverFit.cpp - --fit: make the plan fit, say what it costs --------===//
//
// The library (lib/Fit, lib/Cost) chooses the transforms; this builds the
// cost model from the device, runs the chooser (and micro-batching when the
// request lets it), places and verifies the chosen schedule with the
// ordinary buildPlan, and prints the result (DriverFitPrint.cpp). Also the
// chooser as the report's "what would help" remedy.
//
//===----------------------------------------------------------------------===//
#include "AllocatorInternal.h"
#include "FitInternal.h"
#include "oomplan/Analysis/BatchCoupling.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Fit/MicroBatch.h"
#include "oomplan/Schedule/PassRegistry.h"
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
                              const PipelineOptions &PO, const Budget &Target) {
  FitOptions O;
  O.BudgetBytes = Target.roomBytes().value_or(UINT64_MAX);
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
                                   FitOptions FO, const Budget &Target,
                                   const PipelineOptions &PO, FitResult &R,
                                   PassLog *Log,
                                   std::vector<FitAlternative> *Seen) {
  // Each try reports the passes of its choice; the last try's are kept.
  PassRecorder Rec;
  if (Log)
    FO.Instr = &Rec.Instr;
  if (Seen)
    FO.OnCandidate = [Seen](const std::string &Name, uint64_t Bytes,
                            double Secs) {
      FitAlternative A;
      A.Strategy = Name;
      A.EstimatedBytes = Bytes;
      if (Secs >= 0)
        A.Seconds = Secs;
      Seen->push_back(std::move(A));
    };
  // The chooser keeps the cheapest candidate whose placement (this one, at
  // the chooser's budget) fits, not only the cheapest by its lower bound. A
  // candidate whose placement fails counts as not fitting; the schedule that
  // is kept is placed again below, and its errors are reported there.
  FO.PlacementFits = [&PO, &Target](const Schedule &Cand) {
    auto P = buildPlan(Cand, computeLifetimes(Cand, PO.Liveness), PO.Placement);
    if (!P) {
      consumeError(P.takeError());
      return false;
    }
    return fits(Target, Figures{P->totalBytes(), {}});
  };
  auto Fit = [&]() -> Error {
    Rec.Log.clear();
    if (Seen)
      Seen->clear();
    auto F = fitSchedule(S, Cost, FO);
    if (!F)
      return F.takeError();
    R = std::move(*F);
    return Error::success();
  };
  if (Error E = Fit())
    return E;
  // Judged against the target, as the chooser's estimates were.
  PlanOptions PlO = PO.Placement;
  PlO.Limit = Target;
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

std::vector<double> driver::stepSeconds(const Schedule &S,
                                        const CostModel &Cost) {
  std::vector<double> Out;
  Out.reserve(S.Steps.size());
  for (const Step &St : S.Steps) {
    if (St.Kind != StepKind::Offload && St.Kind != StepKind::Prefetch) {
      Out.push_back(Cost.stepSeconds(S, St));
      continue;
    }
    // A copy moves what an offload reads or a prefetch writes.
    uint64_t Bytes = 0;
    for (TensorId T : St.Kind == StepKind::Offload ? St.Reads : St.Writes)
      Bytes += S.Tensors[T].SizeBytes;
    Out.push_back(Cost.transferSeconds(Bytes));
  }
  return Out;
}

// --micro-batches=K: the same pipeline at batch/K.
static Expected<Plan> microBatchPlan(unsigned K, const SymbolRoles &Roles,
                                     const report::PlanFn &PlanAt,
                                     std::vector<std::optional<int64_t>> &B) {
  // The symbols --batch binds (SymbolBinding.h's batch role).
  bool Any = false;
  for (SymbolId Sym : Roles.Batch) {
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
                                    const Plan &Base, const PipelineOptions &PO,
                                    const report::PlanFn &PlanAt,
                                    const PassesPlanFn &PlanPasses) {
  // The report passes the session's own budget, which fitPlan takes from the
  // session itself.
  return [&S, &C, &Base, PO, &PlanAt,
          &PlanPasses](const Budget &) -> Expected<report::FitOutcome> {
    auto F = fitPlan(S, C, Base, PO, PlanAt, PlanPasses);
    if (!F)
      return F.takeError();
    report::FitOutcome Out;
    Out.TotalBytes = F->P.decidingBytes();
    Out.OverheadPercent = F->overheadPercent();
    Out.Fits = F->Fits;
    Out.Strategy =
        Out.Fits ? F->R.Strategy
                 : "nothing fits" + (F->R.Why.empty() ? "" : ": " + F->R.Why);
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
  std::vector<FitAlternative> Seen;
  std::string PassStrategy; ///< The pass's own choice, before the prefix.
};

// What choosePasses decided, and every pass count it tried.
struct PassesChoice {
  std::optional<PassesFit> Best;
  std::vector<FitAlternative> Tried; ///< Each K's own choice.
  /// Why no K was tried although the fit wanted to (batch coupling).
  std::string NotTried;
};
} // namespace

// The bindings of one pass of K: every batch symbol divided by K.
static std::vector<std::optional<int64_t>>
passBindings(const PlanContext &C, const SymbolRoles &Roles, unsigned K) {
  std::vector<std::optional<int64_t>> B(C.Bindings.begin(), C.Bindings.end());
  for (SymbolId Sym : Roles.Batch)
    if (Sym < B.size() && B[Sym])
      B[Sym] = *B[Sym] / K;
  return B;
}

// Why splitting the batch into K passes would change C's results (a node
// that mixes samples), or std::nullopt.
static std::optional<std::string>
batchCoupling(const PlanContext &C, const SymbolRoles &Roles, unsigned K) {
  return batchCouplingNode(C.G, C.Shapes, C.Bindings,
                           passBindings(C, Roles, K));
}

// The largest batch every bound batch symbol is a multiple of (0: none).
static int64_t boundBatch(const PlanContext &C, const SymbolRoles &Roles) {
  int64_t G = 0;
  for (SymbolId Sym : Roles.Batch)
    if (Sym < C.Bindings.size() && C.Bindings[Sym])
      G = std::gcd(G, *C.Bindings[Sym]);
  return G;
}

// Micro-batching when the whole batch does not fit or fits only with a
// transform that costs time: k = 2, 4, ... passes, each re-planned and fitted
// at the same budget, the cheapest by k x pass time against Whole.
static PassesChoice choosePasses(
    const api::FitRequest &FR, const PlanContext &C, const SymbolRoles &Roles,
    const PipelineOptions &PO, const Budget &Target, const DeviceProfile &Dev,
    const CostOptions &CO, const PassesPlanFn &PlanPasses,
    const FitResult &Whole, bool WholePlaced, bool Log, bool Training) {
  PassesChoice Out;
  int64_t Batch = boundBatch(C, Roles);
  if (Batch < 2 || (Whole.Fits && WholePlaced && Whole.overheadSeconds() <= 0))
    return Out;
  // An inference model that mixes samples would give other results in
  // passes (training accumulates gradients over them by design).
  if (!Training)
    if (std::optional<std::string> Why = batchCoupling(C, Roles, 2)) {
      Out.NotTried = *Why;
      return Out;
    }
  std::map<unsigned, PassesFit> Tried;
  auto FitAt = [&](unsigned K) -> std::optional<MicroBatchFit> {
    PassesFit F;
    F.K = K;
    F.Bindings = passBindings(C, Roles, K);
    auto Pass = PlanPasses(F.Bindings, K);
    if (!Pass) {
      consumeError(Pass.takeError()); // This K is not offered.
      return std::nullopt;
    }
    CostModel Cost(C.G, evaluateDims(C.G, C.Shapes, F.Bindings), Dev, CO);
    auto P = fitAndPlace(Pass->Sched, Cost, fitOptions(FR, PO, Target), Target,
                         PO, F.R, Log ? &F.Log : nullptr, &F.Seen);
    if (!P) {
      consumeError(P.takeError()); // This K is not offered.
      return std::nullopt;
    }
    MicroBatchFit M{K, F.R, P->fits(), onceSeconds(F.R.Sched, Cost)};
    F.Seconds = M.totalSeconds();
    F.Pass = std::move(*Pass);
    F.Placed = std::move(*P);
    FitAlternative A;
    A.Strategy = F.R.Strategy;
    A.Passes = K;
    A.EstimatedBytes = F.R.Mem.totalBytes();
    if (M.fits())
      A.Seconds = F.Seconds;
    A.Why = M.fits() ? "slower" : "over budget";
    Out.Tried.push_back(std::move(A));
    Tried.emplace(K, std::move(F));
    return M;
  };
  auto Best =
      chooseMicroBatches(Batch, MicroBatchFit{1, Whole, WholePlaced}, FitAt);
  if (!Best)
    return Out;
  Out.Best = std::move(Tried.at(Best->K));
  PassesFit &B = *Out.Best;
  llvm::erase_if(Out.Tried,
                 [&](const FitAlternative &A) { return A.Passes == B.K; });
  B.PassStrategy = B.R.Strategy;
  B.R.Strategy = "micro-batches " + std::to_string(B.K) +
                 (B.R.Strategy == "none" ? "" : " + " + B.R.Strategy);
  return Out;
}

// Steps [LoopBegin, LoopEnd) of a pass's schedule repeat per pass: before
// them the accumulators are set up (GradAccumBuffers), after them the
// optimizer update and the copies that serve it (offloaded gradients) run
// once, after the last pass.
static void findLoop(FittedPlan &F) {
  const Schedule &S = F.P.Sched;
  F.LoopBegin = 0;
  F.LoopEnd = S.Steps.size();
  if (F.Passes < 2)
    return;
  if (!S.Steps.empty() && S.Steps[0].Kind == StepKind::Optimizer)
    F.LoopBegin = 1;
  size_t I = F.LoopBegin;
  while (I < S.Steps.size() && S.Steps[I].Kind != StepKind::Optimizer)
    ++I;
  while (I > F.LoopBegin && S.Steps[I - 1].Kind == StepKind::Offload &&
         llvm::all_of(S.Steps[I - 1].Reads, [&](TensorId T) {
           return S.Tensors[T].Kind == TensorKind::Gradient;
         }))
    --I;
  F.LoopEnd = I;
}

// The candidates of the kept fit, less the one chosen, each once (its last
// figures), as alternatives rejected: over budget by the estimate, slower,
// or cheaper but over the budget once placed.
static void addRejected(FittedPlan &F, std::vector<FitAlternative> Seen,
                        const std::string &Chosen, double ChosenPassSecs) {
  std::map<std::string, FitAlternative> ByName;
  for (FitAlternative &A : Seen)
    ByName[A.Strategy] = std::move(A);
  for (auto &[Name, A] : ByName) {
    if (Name == Chosen)
      continue;
    A.Passes = F.Passes;
    if (A.Seconds) {
      A.Why = *A.Seconds < ChosenPassSecs ? "placement over budget" : "slower";
      // Whole batch: K passes, as the chosen plan's time is.
      *A.Seconds =
          *A.Seconds * F.Passes + (F.TotalSeconds - ChosenPassSecs * F.Passes);
    } else {
      A.Why = "over budget";
    }
    F.Rejected.push_back(std::move(A));
  }
}

// One fit, with Reserve bytes of the budget kept for what PyTorch's caching
// allocator reserves beyond the plan's tensors (0 for our own executor).
static Expected<FittedPlan>
fitPlanOnce(Session &S, const PlanContext &C, const Plan &Base,
            const PipelineOptions &PO, const report::PlanFn &PlanAt,
            const PassesPlanFn &PlanPasses, uint64_t Reserve) {
  const api::FitRequest &FR = S.Req.Fit;
  const DeviceProfile &Dev = S.Device;
  FittedPlan F;
  F.Limit = S.Limit.bounded();
  F.AsIsBytes = neededBytes(S.Limit, Base.figures());
  // The transforms make room for the overhead and the allocator's reserve.
  F.AllocatorReserveBytes = Reserve;
  Budget Target = F.Limit.withHeadroom(Reserve);
  F.Passes = FR.MicroBatches.value_or(1);
  F.Bindings.assign(C.Bindings.begin(), C.Bindings.end());
  std::optional<Plan> Micro;
  if (F.Passes > 1) {
    if (!S.training())
      if (std::optional<std::string> Why = batchCoupling(C, S.Roles, F.Passes))
        S.warn("--micro-batches=" + Twine(F.Passes) +
               ": the passes' results differ from one run on the whole "
               "batch: " +
               *Why);
    auto MP = microBatchPlan(F.Passes, S.Roles, PlanAt, F.Bindings);
    if (!MP)
      return MP.takeError();
    Micro = std::move(*MP);
  }
  const Plan *Start = Micro ? &*Micro : &Base;
  CostOptions CO;
  CO.TF32 = FR.TF32;
  CostModel Full(C.G, evaluateDims(C.G, C.Shapes, C.Bindings), Dev, CO);
  std::vector<FitAlternative> Seen;
  auto P = fitAndPlace(
      Start->Sched,
      CostModel(C.G, evaluateDims(C.G, C.Shapes, F.Bindings), Dev, CO),
      fitOptions(FR, PO, Target), Target, PO, F.R,
      S.printsPasses() ? &F.Log : nullptr, &Seen);
  if (!P)
    return P.takeError();
  F.TotalSeconds = F.R.Time.TotalSeconds * F.Passes;
  // --remat=sqrt and --offload=weights ask for one transform, for
  // comparison; an explicit --micro-batches (=1 too) is the user's choice.
  PassesChoice Auto;
  if (!FR.MicroBatches && FR.Remat != api::RematChoice::Sqrt &&
      FR.Offload != api::OffloadChoice::Weights)
    Auto = choosePasses(FR, C, S.Roles, PO, Target, Dev, CO, PlanPasses, F.R,
                        P->fits(), S.printsPasses(), S.training());
  if (!Auto.NotTried.empty())
    S.note("micro-batches not tried: splitting the batch would change the "
           "results (" +
           Auto.NotTried + ")");
  // The table is over one pass; "without transforms" stays the whole batch.
  F.TableSched = Start->Sched;
  F.TablePeak = F.R.BaseMem.totalBytes();
  double PassSecs = F.R.Time.TotalSeconds;
  std::string PassStrategy = F.R.Strategy;
  if (Auto.Best) {
    PassesFit &A = *Auto.Best;
    // The whole batch's own fit is an alternative too.
    FitAlternative Whole;
    Whole.Strategy = F.R.Strategy;
    Whole.EstimatedBytes = F.R.Mem.totalBytes();
    if (F.R.Fits && P->fits())
      Whole.Seconds = F.TotalSeconds;
    Whole.Why = Whole.Seconds ? "slower" : "over budget";
    Auto.Tried.insert(Auto.Tried.begin(), std::move(Whole));
    F.Passes = A.K;
    F.TotalSeconds = A.Seconds;
    F.Bindings = A.Bindings;
    F.TableSched = A.Pass.Sched;
    F.TablePeak = A.R.BaseMem.totalBytes();
    A.R.BaseMem = F.R.BaseMem;
    F.R = std::move(A.R);
    *P = std::move(A.Placed);
    F.Log = std::move(A.Log);
    Seen = std::move(A.Seen);
    PassSecs = F.R.Time.TotalSeconds;
    PassStrategy = A.PassStrategy;
  } else if (F.Passes > 1) {
    // --micro-batches=K is a transform too: the strategy names it first, as
    // the chooser's own choice of K does.
    F.R.Strategy = "micro-batches " + std::to_string(F.Passes) +
                   (F.R.Strategy == "none" ? "" : " + " + F.R.Strategy);
  }
  F.BaseSeconds = simulate(Base.Sched, Full).TotalSeconds;
  F.P = std::move(*P);
  // The plan's verdict is the request's (the budget without the allocator's
  // reserve), the one the exit code, the JSON and the text all print.
  F.P.Limit = F.Limit;
  // PyTorch's runtime: the fitted step's reserved bytes decide.
  if (Error E =
          setRuntimeReserved(S, PlanContext{C.G, C.Shapes, F.Bindings}, F.P))
    return std::move(E);
  F.Fits = F.R.Fits && F.P.fits();
  CostModel Cost(C.G, evaluateDims(C.G, C.Shapes, F.Bindings), Dev, CO);
  F.StepSeconds = stepSeconds(F.P.Sched, Cost);
  findLoop(F);
  addRejected(F, std::move(Seen), F.Fits ? PassStrategy : "", PassSecs);
  for (FitAlternative &A : Auto.Tried)
    F.Rejected.push_back(std::move(A));
  return F;
}

Expected<FittedPlan> driver::fitPlan(Session &S, const PlanContext &C,
                                     const Plan &Base,
                                     const PipelineOptions &PO,
                                     const report::PlanFn &PlanAt,
                                     const PassesPlanFn &PlanPasses) {
  // The transforms fit tensors; under PyTorch the caching allocator reserves
  // more. When the fitted plan's reserved bytes exceed the budget, fit again
  // (twice at most) with that excess kept free.
  uint64_t Reserve = 0;
  auto F = fitPlanOnce(S, C, Base, PO, PlanAt, PlanPasses, Reserve);
  for (unsigned Try = 0; Try < 2 && F && !F->Fits && F->R.Fits &&
                         reservedDecides(S) && *F->Limit.CapacityBytes > 0;
       ++Try) {
    if (F->P.fits())
      break;
    // At least the fitted plan's own excess over its tensors, so the next
    // fit's tensors leave room for it; more when that was not enough.
    uint64_t Excess = F->P.neededBytes() - *F->Limit.CapacityBytes;
    Reserve = std::max(saturatingAdd(Reserve, Excess),
                       F->P.decidingBytes() - F->P.totalBytes());
    F = fitPlanOnce(S, C, Base, PO, PlanAt, PlanPasses, Reserve);
  }
  return F;
}

Expected<int> driver::runFit(Session &S, const PlanContext &C, const Plan &Base,
                             const PipelineOptions &PO,
                             const report::PlanFn &PlanAt,
                             const PassesPlanFn &PlanPasses,
                             const PassLog &MainLog) {
  const api::FitRequest &FR = S.Req.Fit;
  auto T0 = std::chrono::steady_clock::now();
  auto FP = fitPlan(S, C, Base, PO, PlanAt, PlanPasses);
  if (!FP)
    return FP.takeError();
  FittedPlan &F = *FP;
  double Secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
          .count();
  // --print-after: the main pipeline's passes, the batch split, the fit's.
  S.printPasses(C.G, MainLog);
  if (F.Passes > 1)
    S.printPasses(
        C.G, {PassRecord{passName(PassId::MicroBatch).str(), F.TableSched}});
  S.printPasses(C.G, F.Log);
  S.Res.TotalBytes = F.P.totalBytes();
  S.Res.BudgetBytes = F.Limit.CapacityBytes;
  S.Res.FitStrategy = F.R.Strategy;
  S.Res.FitOverheadPercent = F.overheadPercent();
  // Wall time is a note: the output stays reproducible.
  S.note("chosen in " + formatv("{0:f2}", Secs) + " s");
  bool Over = !fits(F.Limit, Figures{Base.totalBytes(), {}});
  if (S.Req.Emit == api::EmitKind::Schedule) { // The schedule placed.
    printSchedule(S.OS, F.P.Sched, &C.G);
    return F.Fits ? 0 : 2;
  }
  PlanContext PC{C.G, C.Shapes, F.Bindings};
  if (S.Req.Emit == api::EmitKind::JSON)
    return runFittedJSON(S, PC, F, PO, PlanAt, !FR.requested());
  raw_ostream &OS = S.OS;
  if (Over)
    printHeadline(OS, F);
  printSettings(S);
  OS << "fit: device " << S.Device.Name;
  uint64_t BudgetBytes = *F.Limit.CapacityBytes;
  if (S.Limit.given())
    OS << ", budget " << formatBytes(BudgetBytes) << " (" << BudgetBytes
       << " bytes)";
  else // The transforms still need a bound: the card's memory.
    OS << ", no budget given (fitted within the device's "
       << formatBytes(BudgetBytes) << ")";
  if (uint64_t Overhead = F.Limit.OverheadBytes)
    OS << ", overhead " << formatBytes(Overhead) << " (" << Overhead
       << " bytes)";
  if (F.Passes > 1)
    OS << ", " << F.Passes << " micro-batches";
  if (F.AllocatorReserveBytes) {
    OS << "; tensors within "
       << *F.Limit.withHeadroom(F.AllocatorReserveBytes).roomBytes()
       << " bytes (the budget less the overhead and "
       << formatBytes(F.AllocatorReserveBytes)
       << " PyTorch's caching allocator reserves beyond them)";
  }
  OS << '\n';
  CostOptions CO;
  CO.TF32 = FR.TF32;
  CostModel Full(C.G, evaluateDims(C.G, C.Shapes, C.Bindings), S.Device, CO);
  printSummary(OS, F, simulate(Base.Sched, Full));
  if (FR.ShowPlan)
    printPlanText(OS, F.P, PC, /*ListBuffers=*/false);
  if (!F.Fits) {
    uint64_t Reached = F.P.decidingBytes();
    OS << "does not fit: smallest budget reached " << formatBytes(Reached)
       << " (" << Reached << " bytes"
       << (F.P.RuntimeReservedBytes ? ", PyTorch's reserved" : "") << "); "
       << (F.R.Why.empty() || F.R.Fits
               ? std::string(F.R.Fits ? "the caching allocator reserves more "
                                        "than the tensors"
                                      : "placement")
               : F.R.Why)
       << '\n';
    return 2;
  }
  OS << "inserted steps:\n";
  if (F.Passes > 1)
    OS << "  micro-batch loop: steps " << F.LoopBegin << " to " << F.LoopEnd - 1
       << " run " << F.Passes << " times, each on 1/" << F.Passes
       << " of the batch"
       << (F.LoopBegin == 1
               ? ", accumulating " +
                     std::to_string(F.P.Sched.Steps[0].Writes.size()) +
                     " gradients (set up by step 0)"
               : std::string())
       << '\n';
  printInserted(OS, F.R.Sched, /*All=*/FR.ShowPlan);
  CostModel Cost(C.G, evaluateDims(C.G, C.Shapes, F.Bindings), S.Device, CO);
  printTable(OS, FR, F.TableSched, Cost, PO, F.TablePeak, F.Passes,
             F.R.BaseMem.totalBytes());
  return 0;
}
