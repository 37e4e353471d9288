//===- Advice.cpp - what would help, each remedy planned ------------------===//
//
// Builds the remedy list from plans: capacity results for batch and sequence
// (already searched by the caller), the caller's plan at
// --precision=bf16-mixed, and a re-plan of the schedule sharded over
// devices.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Advice.h"
#include "oomplan/Report/Formulas.h"
#include "oomplan/Report/Rescale.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::report;

llvm::StringRef report::remedyKindKey(RemedyKind K) {
  static const char *Keys[] = {"smaller-batch",
                               "shorter-sequence",
                               "lower-precision",
                               "more-devices",
                               "fit",
                               "activation-checkpointing",
                               "host-offload"};
  return Keys[static_cast<unsigned>(K)];
}

// A remedy whose plan needs After bytes (neededBytes) and fits or not (fits,
// against the same budget).
static Remedy fromBytes(RemedyKind Kind, llvm::StringRef Action,
                        std::string Detail, uint64_t After, bool Fits,
                        const DiagnosisInput &In) {
  Remedy R;
  R.Kind = Kind;
  R.Action = Action.str();
  R.Detail = std::move(Detail);
  R.BytesAfter = After;
  R.BytesSaved =
      int64_t(neededBytes(In.Limit, In.P.figures())) - int64_t(After);
  R.Fits = Fits;
  return R;
}

static std::optional<Remedy>
fromCapacity(RemedyKind Kind, llvm::StringRef Action,
             const std::optional<CapacityResult> &C, int64_t Current,
             const DiagnosisInput &In) {
  if (!C || Current <= 1 || (C->Max && *C->Max >= Current))
    return std::nullopt;
  int64_t To = C->Max ? *C->Max : 1;
  // The search's answer fits by its own fits(); without one, even 1 does
  // not.
  Remedy R = fromBytes(
      Kind, Action,
      C->Role + " " + std::to_string(Current) + " -> " + std::to_string(To) +
          (C->Max ? "" : " (still does not fit)"),
      C->Max ? C->BytesAtMax : *C->BytesAbove, C->Max.has_value(), In);
  R.Symbol = C->Role;
  R.From = Current;
  R.To = To;
  return R;
}

static llvm::Expected<Remedy> moreDevices(const DiagnosisInput &In) {
  auto N = devicesNeeded(In.P, In.C, In.Opts, In.Limit);
  if (!N)
    return N.takeError();
  unsigned Devices = N->value_or(4096);
  auto Sharded = replanSharded(In.P, In.C, Devices, In.Opts);
  if (!Sharded)
    return Sharded.takeError();
  // Inference has no gradients or optimizer state to share.
  bool Training = llvm::any_of(In.P.Sched.Steps, [](const Step &S) {
    return S.Kind == StepKind::Optimizer;
  });
  std::string Detail =
      std::to_string(Devices) + " devices sharing " +
      (Training ? "weights, gradients and optimizer state" : "the weights") +
      "; per device";
  if (!*N)
    Detail = "even 4096 devices do not fit: the rest is not model state";
  Remedy R = fromBytes(RemedyKind::MoreDevices, "more devices", Detail,
                       neededBytes(In.Limit, Sharded->figures()),
                       fits(In.Limit, Sharded->figures()), In);
  if (*N)
    R.Devices = Devices;
  return R;
}

// "lower precision" is the plan --precision=bf16-mixed gives (the caller's
// PlanAtPrecision), so the remedy and the flag agree. Not offered when the
// run is 16-bit already, when nobody can plan it, or when it saves nothing.
static llvm::Expected<std::optional<Remedy>>
lowerPrecision(const DiagnosisInput &In) {
  if (!In.PlanAtPrecision || !*In.PlanAtPrecision ||
      usesHalfPrecision(In.P, In.C))
    return std::nullopt;
  auto Half = (*In.PlanAtPrecision)(In.C.Bindings, LowerPrecisionName);
  if (!Half)
    return Half.takeError();
  uint64_t After = neededBytes(In.Limit, Half->figures());
  if (After >= neededBytes(In.Limit, In.P.figures()))
    return std::nullopt;
  bool Training = llvm::any_of(In.P.Sched.Steps, [](const Step &S) {
    return S.Kind == StepKind::Optimizer;
  });
  std::string Detail =
      Training ? std::string("--precision=") + LowerPrecisionName +
                     ": 16-bit weights, activations and gradients; fp32 "
                     "master weights and optimizer state"
               : "--precision=bf16: 16-bit weights and activations";
  Remedy R = fromBytes(RemedyKind::LowerPrecision, "lower precision", Detail,
                       After, fits(In.Limit, Half->figures()), In);
  R.Precision = Training ? LowerPrecisionName : "bf16";
  return R;
}

llvm::Expected<std::vector<Remedy>>
report::adviseRemedies(const DiagnosisInput &In) {
  std::vector<Remedy> Out;
  if (fits(In.Limit, In.P.figures()))
    return Out;
  if (auto R = fromCapacity(RemedyKind::SmallerBatch, "smaller batch", In.Batch,
                            boundValue(In.C.Bindings, In.Roles.Batch), In))
    Out.push_back(std::move(*R));
  if (auto R =
          fromCapacity(RemedyKind::ShorterSequence, "shorter sequence", In.Seq,
                       boundValue(In.C.Bindings, In.Roles.Seq), In))
    Out.push_back(std::move(*R));
  auto Low = lowerPrecision(In);
  if (!Low)
    return Low.takeError();
  if (*Low)
    Out.push_back(std::move(**Low));
  auto Dev = moreDevices(In);
  if (!Dev)
    return Dev.takeError();
  Out.push_back(std::move(*Dev));
  if (In.Fit) {
    auto F = (*In.Fit)(In.Limit);
    if (!F)
      return F.takeError();
    std::string Detail = F->Strategy;
    if (F->Fits)
      Detail +=
          llvm::formatv(", predicted +{0:f1}% step time", F->OverheadPercent)
              .str();
    Figures Fitted{F->TotalBytes, {}};
    Remedy R = fromBytes(RemedyKind::Fit, "fit (--fit)", Detail,
                         neededBytes(In.Limit, Fitted),
                         F->Fits && fits(In.Limit, Fitted), In);
    if (F->Fits) {
      R.Strategy = F->Strategy;
      R.OverheadPercent = F->OverheadPercent;
    }
    Out.push_back(std::move(R));
  } else {
    for (RemedyKind K :
         {RemedyKind::ActivationCheckpointing, RemedyKind::HostOffload}) {
      Remedy R;
      R.Kind = K;
      R.Action = K == RemedyKind::HostOffload ? "offload to host"
                                              : "activation checkpointing";
      R.Detail = "not planned here: --fit plans it (docs/fitting.md)";
      R.Planned = false;
      Out.push_back(std::move(R));
    }
  }
  std::stable_sort(
      Out.begin(), Out.end(), [](const Remedy &A, const Remedy &B) {
        return A.Planned > B.Planned ||
               (A.Planned == B.Planned && A.BytesSaved > B.BytesSaved);
      });
  return Out;
}
