//===- FitOptions.cpp - --fit: make the plan fit, say what it costs -------===//
//
// Options and printing for issue 6. The library (lib/Fit, lib/Cost) chooses
// the transforms; this file builds the cost model from --device, runs the
// chooser, places and verifies the chosen schedule with the ordinary
// buildPlan, and prints the inserted steps, the predicted overhead and a
// table of budgets against predicted overhead.
//
//===----------------------------------------------------------------------===//
#include "FitOptions.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Fit/Chooser.h"
#include "oomplan/Fit/MicroBatch.h"
#include "oomplan/Support/ByteSize.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/WithColor.h"
#include <chrono>
#include <map>
#include <numeric>

using namespace llvm;
using namespace oomplan;

extern cl::OptionCategory Cat;

static cl::opt<bool> FitOpt(
    "fit", cl::cat(Cat),
    cl::desc("Apply transforms (recompute, offload, weight "
             "streaming, reordering) to meet --budget at the least predicted "
             "added time (docs/fitting.md)"));
static cl::opt<std::string>
    DeviceOpt("device", cl::cat(Cat), cl::init("H100-SXM"),
              cl::value_desc("NAME|FILE.json"),
              cl::desc("Device profile for the cost model: H100-SXM, "
                       "H100-PCIe, H200, A100-40GB, A100-80GB, L4, RTX-4090, "
                       "or a JSON file; its memory is the default budget"));
static cl::opt<RematMode> RematOpt(
    "remat", cl::cat(Cat), cl::init(RematMode::Auto),
    cl::desc("Recompute in training (with --fit)"),
    cl::values(clEnumValN(RematMode::Auto, "auto",
                          "cheapest recompute that fits (default)"),
               clEnumValN(RematMode::Sqrt, "sqrt",
                          "Chen's sqrt(n) checkpointing, for comparison"),
               clEnumValN(RematMode::None, "none", "no recompute")));
static cl::opt<OffloadMode> OffloadOpt(
    "offload", cl::cat(Cat), cl::init(OffloadMode::Auto),
    cl::desc("Host offload (with --fit)"),
    cl::values(clEnumValN(OffloadMode::Auto, "auto",
                          "stream weights (inference) or park saved "
                          "activations on the host (training) when "
                          "cheapest (default)"),
               clEnumValN(OffloadMode::Weights, "weights",
                          "stream weights from host memory"),
               clEnumValN(OffloadMode::None, "none", "keep all on device")));
static cl::opt<bool> ReorderOpt("reorder", cl::cat(Cat),
                                cl::desc("Try a memory-aware step order"));
static cl::opt<unsigned> MicroBatches(
    "micro-batches", cl::cat(Cat), cl::init(1), cl::value_desc("K"),
    cl::desc("Split the batch into K passes (batch/K each); training "
             "accumulates gradients (give --grad-accum K too). Without it "
             "--fit may choose K itself; =1 forbids splitting"));
static cl::opt<bool> FitShowPlan(
    "fit-show-plan", cl::cat(Cat),
    cl::desc("With --fit: print the chosen plan's memory by class and the "
             "buffers live at its peak"));
static cl::opt<bool> TF32Opt("tf32", cl::cat(Cat),
                             cl::desc("Cost fp32 products at TF32 peak"));

bool oomplan::fitRequested() {
  return FitOpt || RematOpt == RematMode::Sqrt ||
         OffloadOpt == OffloadMode::Weights || ReorderOpt || MicroBatches != 1;
}

static std::string ms(double S) { return formatv("{0:f2} ms", S * 1e3).str(); }

static FitOptions fitOptions(const PipelineOptions &PO, uint64_t Budget) {
  FitOptions F;
  F.BudgetBytes = Budget;
  F.Remat = RematOpt;
  F.Offload = OffloadOpt;
  F.Reorder = ReorderOpt;
  F.Estimate.Liveness = PO.Liveness;
  F.Estimate.AlignBytes = PO.Placement.AlignBytes;
  F.Estimate.IOInArena = PO.Placement.IOInArena;
  return F;
}

static void printInserted(raw_ostream &OS, const Schedule &S, bool All) {
  std::map<std::string, std::pair<unsigned, uint64_t>> ByKind;
  unsigned Listed = 0;
  for (size_t I = 0; I < S.Steps.size(); ++I) {
    const Step &St = S.Steps[I];
    const char *K = St.Kind == StepKind::Recompute  ? "recompute"
                    : St.Kind == StepKind::Prefetch ? "prefetch"
                    : St.Kind == StepKind::Offload  ? "offload"
                                                    : nullptr;
    if (!K)
      continue;
    // An Offload step moves what it reads; the others what they write.
    const std::vector<TensorId> &Moved =
        St.Kind == StepKind::Offload ? St.Reads : St.Writes;
    uint64_t Bytes = 0;
    for (TensorId W : Moved)
      Bytes += S.Tensors[W].SizeBytes;
    auto &E = ByKind[std::string(K) + " " + St.Op];
    ++E.first;
    E.second += Bytes;
    if (All || Listed < 12) {
      OS << "  step " << I << ": " << K << ' '
         << (Moved.empty() ? "" : S.Tensors[Moved[0]].Name) << " (" << St.Op
         << ") " << formatBytes(Bytes) << '\n';
      ++Listed;
    }
  }
  if (!All && Listed == 12)
    OS << "  ... (--fit-show-plan lists every inserted step)\n";
  OS << "inserted steps by kind:\n";
  for (auto &[Name, E] : ByKind)
    OS << "  " << left_justify(Name, 32) << format("%6u", E.first) << "  "
       << formatBytes(E.second) << '\n';
}

// The chooser's result placed and verified (buildPlan verifies). Placement
// may exceed the chooser's lower bound; then aim lower by the fragmentation
// seen, up to three times.
static Expected<Plan> fitAndPlace(const Schedule &S, const CostModel &Cost,
                                  FitOptions FO, const PipelineOptions &PO,
                                  FitResult &R) {
  R = fitSchedule(S, Cost, FO);
  PlanOptions PlO = PO.Placement;
  PlO.BudgetBytes = FO.BudgetBytes;
  auto P = buildPlan(R.Sched, computeLifetimes(R.Sched, PO.Liveness), PlO);
  for (int Try = 0; Try < 3 && P && R.Fits && !P->fits(); ++Try) {
    FO.Margin +=
        double(P->ArenaBytes - P->ArenaLowerBound) / FO.BudgetBytes + 0.001;
    R = fitSchedule(S, Cost, FO);
    P = buildPlan(R.Sched, computeLifetimes(R.Sched, PO.Liveness), PlO);
  }
  return P;
}

// One row per budget: ours (placed and verified, the same as a --fit run at
// that budget would print) against sqrt(n) checkpointing, whose schedule does
// not depend on the budget: it fits or not.
static void printTable(raw_ostream &OS, const Schedule &S,
                       const CostModel &Cost, const PipelineOptions &PO,
                       uint64_t Peak) {
  std::optional<FitResult> Sqrt;
  std::vector<std::pair<std::string, uint64_t>> Rows;
  for (double F : {0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2})
    Rows.push_back({formatv("{0:f1}P", F).str(),
                    static_cast<uint64_t>(static_cast<double>(Peak) * F)});
  if (isTrainingSchedule(S)) {
    FitOptions O = fitOptions(PO, UINT64_MAX);
    O.Reorder = false;
    O.Remat = RematMode::Sqrt;
    Sqrt = fitSchedule(S, Cost, O);
    Rows.push_back({"sqrt", Sqrt->Mem.totalBytes()});
    llvm::stable_sort(Rows,
                      [](auto &A, auto &B) { return A.second > B.second; });
  }
  OS << "trade-off (P = " << formatBytes(Peak)
     << " without transforms; overhead = predicted added time; every plan "
        "placed and verified):\n"
     << "  budget                        chosen                                "
        "   "
        "     overhead  sqrt(n)\n";
  for (auto &[Label, Budget] : Rows) {
    FitOptions O = fitOptions(PO, Budget);
    O.Reorder = false;
    FitResult R;
    auto P = fitAndPlace(S, Cost, O, PO, R);
    bool Placed = P && P->fits();
    if (!P)
      consumeError(P.takeError());
    std::string Sq = "-";
    if (Sqrt)
      Sq = Sqrt->Mem.totalBytes() <= Budget
               ? formatv("{0:f1}%", Sqrt->overheadPercent()).str()
               : "no fit";
    std::string Ours = !R.Fits  ? "nothing fits"
                       : Placed ? R.Strategy
                                : R.Strategy + " (placement over)";
    OS << "  " << left_justify(Label, 5) << ' '
       << left_justify(
              formatBytes(Budget) + " (" + std::to_string(Budget) + ")", 24)
       << left_justify(Ours, 46)
       << left_justify(
              R.Fits ? formatv("{0:f1}%", R.overheadPercent()).str() : "-", 10)
       << Sq << '\n';
    if (!R.Fits && Sq == "no fit")
      break;
  }
}

static int fitError(const Twine &Msg) {
  WithColor::error(errs(), "oomplan") << Msg << '\n';
  return 1;
}

// --micro-batches=K: the same pipeline at batch/K.
static Expected<Plan> microBatchPlan(const PlanContext &C,
                                     const report::PlanFn &PlanAt,
                                     std::vector<std::optional<int64_t>> &B) {
  // The symbols --batch binds (SymbolBinding.h's batch role).
  bool Any = false;
  for (SymbolId Sym : findSymbolRoles(C.G).Batch) {
    if (Sym >= B.size() || !B[Sym])
      continue;
    if (*B[Sym] % MicroBatches != 0)
      return createStringError(
          inconvertibleErrorCode(),
          "--micro-batches=" + Twine(MicroBatches.getValue()) +
              " does not divide batch " + Twine(*B[Sym]));
    B[Sym] = *B[Sym] / MicroBatches;
    Any = true;
  }
  if (!Any)
    return createStringError(inconvertibleErrorCode(),
                             "--micro-batches needs a bound batch symbol");
  return PlanAt(B);
}

static void printSummary(raw_ostream &OS, const FitResult &R,
                         const TimePrediction &Base, double Total,
                         const Plan &P) {
  const MemoryEstimate &M0 = R.BaseMem;
  OS << "without transforms: " << formatBytes(M0.totalBytes()) << " (weights "
     << formatBytes(M0.WeightBytes) << ", io " << formatBytes(M0.IOBytes)
     << ", arena lower bound " << formatBytes(M0.ArenaPeak) << "), predicted "
     << ms(Base.TotalSeconds) << '\n';
  OS << "chosen: " << R.Strategy << '\n'
     << "plan: " << formatBytes(P.totalBytes()) << " (" << P.totalBytes()
     << " bytes: weights " << P.WeightBytes << ", io " << P.IOBytes
     << ", arena " << P.ArenaBytes << ", arena lower bound "
     << P.ArenaLowerBound << "), host " << formatBytes(R.Mem.HostBytes)
     << ", verified\n";
  double Over = Total - Base.TotalSeconds;
  OS << "predicted time: " << ms(Total) << ", overhead " << ms(Over) << " ("
     << formatv("{0:f1}",
                Base.TotalSeconds > 0 ? 100 * Over / Base.TotalSeconds : 0.0)
     << "%): recompute " << ms(R.Time.RecomputeSeconds) << ", copy stalls "
     << ms(R.Time.StallSeconds) << ", transfers " << ms(R.Time.TransferSeconds)
     << '\n';
}

report::FitFn oomplan::makeFitRemedy(const PlanContext &C, const Plan &Base,
                                     const PipelineOptions &PO) {
  return [&C, &Base, PO](uint64_t Budget) -> Expected<report::FitOutcome> {
    auto Dev = loadDevice(DeviceOpt);
    if (!Dev)
      return Dev.takeError();
    CostOptions CO;
    CO.TF32 = TF32Opt;
    CostModel Cost(C.G, evaluateDims(C.G, C.Shapes, C.Bindings), *Dev, CO);
    FitResult R;
    auto P = fitAndPlace(Base.Sched, Cost, fitOptions(PO, Budget), PO, R);
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

// The batch split into passes by the chooser (MicroBatch.h): one pass's
// plan, its fit, and what the trade-off table needs to re-fit it.
struct PassesFit {
  unsigned K = 1;
  std::vector<std::optional<int64_t>> Bindings;
  Plan Pass;   ///< One pass, untransformed.
  Plan Placed; ///< One pass, fitted, placed and verified.
  FitResult R;
  double Seconds = 0; ///< Predicted time of all passes.
};

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
choosePasses(const PlanContext &C, const PipelineOptions &PO, uint64_t Budget,
             const DeviceProfile &Dev, const CostOptions &CO,
             const PassesPlanFn &PlanPasses, const FitResult &Whole,
             bool WholePlaced) {
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
      consumeError(Pass.takeError());
      return std::nullopt;
    }
    CostModel Cost(C.G, evaluateDims(C.G, C.Shapes, F.Bindings), Dev, CO);
    auto P = fitAndPlace(Pass->Sched, Cost, fitOptions(PO, Budget), PO, F.R);
    if (!P) {
      consumeError(P.takeError());
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

int oomplan::runFit(raw_ostream &OS, const PlanContext &C, const Plan &Base,
                    const PipelineOptions &PO, const report::PlanFn &PlanAt,
                    const PassesPlanFn &PlanPasses) {
  if (MicroBatches == 0)
    return fitError("--micro-batches must be at least 1");
  auto Dev = loadDevice(DeviceOpt);
  if (!Dev)
    return fitError(toString(Dev.takeError()));
  uint64_t Budget = PO.Placement.BudgetBytes.value_or(Dev->MemoryBytes);
  std::vector<std::optional<int64_t>> B(C.Bindings.begin(), C.Bindings.end());
  std::optional<Plan> Micro;
  if (MicroBatches > 1) {
    auto MP = microBatchPlan(C, PlanAt, B);
    if (!MP)
      return fitError(toString(MP.takeError()));
    Micro = std::move(*MP);
  }
  const Plan *Start = Micro ? &*Micro : &Base;
  CostOptions CO;
  CO.TF32 = TF32Opt;
  CostModel Full(C.G, evaluateDims(C.G, C.Shapes, C.Bindings), *Dev, CO);
  auto T0 = std::chrono::steady_clock::now();
  FitResult R;
  auto P = fitAndPlace(Start->Sched,
                       CostModel(C.G, evaluateDims(C.G, C.Shapes, B), *Dev, CO),
                       fitOptions(PO, Budget), PO, R);
  if (!P)
    return fitError(toString(P.takeError()));
  unsigned Passes = MicroBatches;
  double Total = R.Time.TotalSeconds * Passes;
  // --remat=sqrt and --offload=weights ask for one transform, for
  // comparison; an explicit --micro-batches (=1 too) is the user's choice.
  std::optional<PassesFit> Auto;
  if (FitOpt && MicroBatches.getNumOccurrences() == 0 &&
      RematOpt != RematMode::Sqrt && OffloadOpt != OffloadMode::Weights)
    Auto = choosePasses(C, PO, Budget, *Dev, CO, PlanPasses, R, P->fits());
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
  }
  CostModel Cost(C.G, evaluateDims(C.G, C.Shapes, B), *Dev, CO);
  double Secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
          .count();
  TimePrediction BaseTime = simulate(Base.Sched, Full);
  OS << "fit: device " << Dev->Name << ", budget " << formatBytes(Budget)
     << " (" << Budget << " bytes)";
  if (Passes > 1)
    OS << ", " << Passes << " micro-batches";
  OS << '\n';
  printSummary(OS, R, BaseTime, Total, *P);
  // Wall time goes to standard error: standard output stays reproducible.
  WithColor::note(errs(), "oomplan")
      << "chosen in " << formatv("{0:f2}", Secs) << " s\n";
  if (FitShowPlan)
    printPlanText(OS, *P, C, /*ListBuffers=*/false);
  if (!R.Fits || !P->fits()) {
    OS << "does not fit: smallest budget reached "
       << formatBytes(P->totalBytes()) << " (" << P->totalBytes() << " bytes); "
       << (R.Why.empty() ? "placement" : R.Why) << '\n';
    return 2;
  }
  OS << "inserted steps:\n";
  printInserted(OS, R.Sched, /*All=*/FitShowPlan);
  printTable(OS, Start->Sched, Cost, PO, TablePeak);
  return 0;
}
