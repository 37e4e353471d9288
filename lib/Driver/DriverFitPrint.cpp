//===- DriverFitPrint.cpp - what --fit prints -----------------------------===//
//
// The fitted plan's summary (memory without and with transforms, predicted
// time and overhead), the inserted steps, and the trade-off table: budgets
// from 0.9P to 0.2P against predicted overhead, every plan placed and
// verified, beside sqrt(n) checkpointing for training schedules.
//
//===----------------------------------------------------------------------===//
#include "FitInternal.h"
#include "oomplan/Support/ByteSize.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include <map>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

static std::string ms(double S) { return formatv("{0:f2} ms", S * 1e3).str(); }

void driver::printInserted(raw_ostream &OS, const Schedule &S, bool All) {
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

// One row per budget: ours (placed and verified, the same as a --fit run at
// that budget would print) against sqrt(n) checkpointing, whose schedule does
// not depend on the budget: placed once, it fits or not (by its placement,
// like every other plan in the table, not by its lower bound).
// Rows are computed first so that the strategy column is as wide as its
// longest entry and the overhead column stays in line.
void driver::printTable(raw_ostream &OS, const api::FitRequest &F,
                        const Schedule &S, const CostModel &Cost,
                        const PipelineOptions &PO, uint64_t Peak,
                        unsigned Passes, uint64_t WholePeak) {
  std::optional<FitResult> Sqrt;
  uint64_t SqrtBytes = 0; ///< Sqrt placed.
  std::vector<std::pair<std::string, uint64_t>> Budgets;
  for (double Frac : {0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2})
    Budgets.push_back(
        {formatv("{0:f1}P", Frac).str(),
         static_cast<uint64_t>(static_cast<double>(Peak) * Frac)});
  if (isTrainingSchedule(S)) {
    FitOptions O = fitOptions(F, PO, Budget{});
    O.Reorder = false;
    O.Remat = RematMode::Sqrt;
    auto F = fitSchedule(S, Cost, O);
    if (F) {
      Sqrt = std::move(*F);
      auto SP =
          buildPlan(Sqrt->Sched, computeLifetimes(Sqrt->Sched, PO.Liveness),
                    PO.Placement);
      if (SP) {
        SqrtBytes = SP->totalBytes();
        Budgets.push_back({"sqrt", SqrtBytes});
      } else {
        consumeError(SP.takeError()); // The column shows "-".
        Sqrt.reset();
      }
    } else {
      consumeError(F.takeError()); // The column shows "-".
    }
    llvm::stable_sort(Budgets,
                      [](auto &A, auto &B) { return A.second > B.second; });
  }
  struct Row {
    std::string Label, Budget, Ours, Over, Sq;
  };
  std::vector<Row> Rows;
  for (auto &[Label, Bytes] : Budgets) {
    // Each row's budget is for the tensors alone: no overhead.
    Budget Target;
    Target.CapacityBytes = Bytes;
    FitOptions O = fitOptions(F, PO, Target);
    O.Reorder = false;
    FitResult R;
    auto P = fitAndPlace(S, Cost, O, Target, PO, R);
    bool Placed = P && P->fits();
    if (!P)
      consumeError(P.takeError()); // The row says "placement over".
    std::string Sq = "-";
    if (Sqrt)
      Sq = fits(Target, Figures{SqrtBytes, {}})
               ? formatv("{0:f1}%", Sqrt->overheadPercent()).str()
               : "no fit";
    Rows.push_back(
        {Label, formatBytes(Bytes) + " (" + std::to_string(Bytes) + ")",
         !R.Fits  ? "nothing fits"
         : Placed ? R.Strategy
                  : R.Strategy + " (placement over)",
         R.Fits ? formatv("{0:f1}%", R.overheadPercent()).str() : "-", Sq});
    if (!R.Fits && Sq == "no fit")
      break;
  }
  size_t BudgetW = 6, OursW = 6;
  for (const Row &R : Rows) {
    BudgetW = std::max(BudgetW, R.Budget.size());
    OursW = std::max(OursW, R.Ours.size());
  }
  OS << "trade-off (P = " << formatBytes(Peak) << " (" << Peak
     << " bytes); overhead = predicted added time; every plan placed and "
        "verified):\n";
  // Why P is not the figure above: it is the chooser's lower bound (no
  // fragmentation), and over one pass when the batch is split.
  if (Passes > 1)
    OS << "  P is one pass's lower bound without transforms (weights + io + "
          "peak live bytes, before placement), batch split in "
       << Passes << "; \"without transforms\" above is the whole batch's ("
       << WholePeak << " bytes)\n";
  else
    OS << "  P is the lower bound without transforms (weights + io + peak "
          "live bytes, before placement: the \"without transforms\" figure "
          "above); placed, a plan may need more (fragmentation)\n";
  OS << "  " << left_justify("budget", 6 + BudgetW) << "  "
     << left_justify("chosen", OursW) << "  " << left_justify("overhead", 9)
     << "  sqrt(n)\n";
  for (const Row &R : Rows)
    OS << "  " << left_justify(R.Label, 5) << ' '
       << left_justify(R.Budget, BudgetW) << "  " << left_justify(R.Ours, OursW)
       << "  " << left_justify(R.Over, 9) << "  " << R.Sq << '\n';
}

void driver::printHeadline(raw_ostream &OS, const FittedPlan &F) {
  OS << "does not fit as is (" << F.AsIsBytes << " bytes); ";
  if (!F.Fits) {
    uint64_t Reached = F.P.neededBytes();
    OS << "nothing fits: smallest budget reached " << Reached << " bytes ("
       << formatBytes(Reached) << ")\n";
    return;
  }
  double Pct = F.overheadPercent();
  OS << "fits with " << F.R.Strategy << " at " << (Pct >= 0 ? "+" : "")
     << formatv("{0:f1}", Pct) << "% predicted step time\n";
}

void driver::printSummary(raw_ostream &OS, const FittedPlan &F,
                          const TimePrediction &Base) {
  const FitResult &R = F.R;
  const Plan &P = F.P;
  const MemoryEstimate &M0 = R.BaseMem;
  OS << "without transforms: " << formatBytes(M0.totalBytes()) << " (weights "
     << formatBytes(M0.WeightBytes) << ", io " << formatBytes(M0.IOBytes)
     << ", arena lower bound " << formatBytes(M0.ArenaPeak) << "), predicted "
     << ms(Base.TotalSeconds) << '\n';
  OS << "chosen: " << R.Strategy << '\n'
     << "plan: " << formatBytes(P.totalBytes()) << " (" << P.totalBytes()
     << " bytes: weights " << P.WeightBytes << ", io " << P.IOBytes
     << ", arena " << P.ArenaBytes << ", arena lower bound "
     << P.ArenaLowerBound << "), host " << formatBytes(P.HostBytes)
     << ", verified\n";
  double Over = F.TotalSeconds - Base.TotalSeconds;
  OS << "predicted time: " << ms(F.TotalSeconds) << ", overhead " << ms(Over)
     << " ("
     << formatv("{0:f1}",
                Base.TotalSeconds > 0 ? 100 * Over / Base.TotalSeconds : 0.0)
     << "%): recompute " << ms(R.Time.RecomputeSeconds) << ", copy stalls "
     << ms(R.Time.StallSeconds) << ", transfers " << ms(R.Time.TransferSeconds)
     << '\n';
  if (P.RuntimeReservedBytes)
    OS << "PyTorch's caching allocator runs it in "
       << formatBytes(P.decidingBytes()) << " (" << P.decidingBytes()
       << " bytes): the figure the budget decides on\n";
}

// The JSON's "fit" object: docs/plan-json.md lists every key.
void driver::writeFitJSON(json::OStream &J, const FittedPlan &F,
                          bool ByDefault) {
  auto Num = [&](const char *Key, std::optional<double> V) {
    if (V)
      J.attribute(Key, *V);
    else
      J.attribute(Key, nullptr);
  };
  J.attributeObject("fit", [&] {
    J.attribute("requested", ByDefault ? "default" : "option");
    J.attribute("fits", F.Fits);
    J.attribute("as_is_bytes", static_cast<int64_t>(F.AsIsBytes));
    J.attribute("budget_bytes", static_cast<int64_t>(*F.Limit.CapacityBytes));
    J.attribute("overhead_bytes", static_cast<int64_t>(F.Limit.OverheadBytes));
    J.attribute("strategy", F.R.Strategy);
    J.attribute("estimated_bytes", static_cast<int64_t>(F.R.Mem.totalBytes()));
    J.attribute("host_bytes", static_cast<int64_t>(F.P.HostBytes));
    Num("base_seconds", F.BaseSeconds);
    Num("predicted_seconds", F.TotalSeconds);
    Num("overhead_percent", F.overheadPercent());
    Num("recompute_seconds", F.R.Time.RecomputeSeconds);
    Num("stall_seconds", F.R.Time.StallSeconds);
    Num("transfer_seconds", F.R.Time.TransferSeconds);
    if (F.Fits) {
      J.attribute("smallest_bytes", nullptr);
      J.attribute("why", nullptr);
    } else {
      J.attribute("smallest_bytes",
                  static_cast<int64_t>(
                      neededBytes(F.Limit, Figures{F.P.totalBytes(), {}})));
      J.attribute("why", F.R.Why.empty() ? "placement" : F.R.Why);
    }
    J.attributeObject("loop", [&] {
      J.attribute("passes", static_cast<int64_t>(F.Passes));
      J.attribute("begin", static_cast<int64_t>(F.LoopBegin));
      J.attribute("end", static_cast<int64_t>(F.LoopEnd));
      // The accumulators: what the first step (GradAccumBuffers) sets up.
      J.attributeArray("accumulate", [&] {
        if (F.Passes > 1 && F.LoopBegin == 1)
          for (TensorId T : F.P.Sched.Steps[0].Writes)
            J.value(F.P.Sched.Tensors[T].Name);
      });
    });
    J.attributeArray("rejected", [&] {
      for (const FitAlternative &A : F.Rejected)
        J.object([&] {
          J.attribute("strategy", A.Strategy);
          J.attribute("passes", static_cast<int64_t>(A.Passes));
          J.attribute("estimated_bytes",
                      static_cast<int64_t>(A.EstimatedBytes));
          Num("predicted_seconds", A.Seconds);
          std::optional<double> Pct;
          if (A.Seconds && F.BaseSeconds > 0)
            Pct = 100 * (*A.Seconds - F.BaseSeconds) / F.BaseSeconds;
          Num("overhead_percent", Pct);
          J.attribute("why", A.Why);
        });
    });
  });
}
