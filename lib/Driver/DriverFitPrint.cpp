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
// like every other plan in the table, not by its lower bound: issue 17).
void driver::printTable(raw_ostream &OS, const api::FitRequest &F,
                        const Schedule &S, const CostModel &Cost,
                        const PipelineOptions &PO, uint64_t Peak) {
  std::optional<FitResult> Sqrt;
  uint64_t SqrtBytes = 0; ///< Sqrt placed.
  std::vector<std::pair<std::string, uint64_t>> Rows;
  for (double Frac : {0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2})
    Rows.push_back({formatv("{0:f1}P", Frac).str(),
                    static_cast<uint64_t>(static_cast<double>(Peak) * Frac)});
  if (isTrainingSchedule(S)) {
    FitOptions O = fitOptions(F, PO, UINT64_MAX);
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
        Rows.push_back({"sqrt", SqrtBytes});
      } else {
        consumeError(SP.takeError()); // The column shows "-".
        Sqrt.reset();
      }
    } else {
      consumeError(F.takeError()); // The column shows "-".
    }
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
    FitOptions O = fitOptions(F, PO, Budget);
    O.Reorder = false;
    FitResult R;
    auto P = fitAndPlace(S, Cost, O, PO, R);
    bool Placed = P && P->fits();
    if (!P)
      consumeError(P.takeError()); // The row says "placement over".
    std::string Sq = "-";
    if (Sqrt)
      Sq = SqrtBytes <= Budget
               ? formatv("{0:f1}%", Sqrt->overheadPercent()).str()
               : "no fit";
    std::string Ours = !R.Fits  ? "nothing fits"
                       : Placed ? R.Strategy
                                : R.Strategy + " (placement over)";
    OS << "  " << left_justify(Label, 5) << ' '
       << left_justify(
              formatBytes(Budget) + " (" + std::to_string(Budget) + ")", 24)
       << left_justify(Ours, 46) << (Ours.size() >= 46 ? " " : "")
       << left_justify(
              R.Fits ? formatv("{0:f1}%", R.overheadPercent()).str() : "-", 10)
       << Sq << '\n';
    if (!R.Fits && Sq == "no fit")
      break;
  }
}

void driver::printSummary(raw_ostream &OS, const FitResult &R,
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
