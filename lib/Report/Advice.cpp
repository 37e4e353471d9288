//===- Advice.cpp - what would help, each remedy planned ------------------===//
//
// Builds the remedy list from plans: capacity results for batch and sequence
// (already searched by the caller), and fresh re-plans of the schedule at
// 16-bit precision and sharded over devices.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Advice.h"
#include "oomplan/Report/Formulas.h"
#include "oomplan/Report/Rescale.h"
#include "llvm/Support/FormatVariadic.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::report;

static Remedy fromBytes(llvm::StringRef Action, std::string Detail,
                        uint64_t After, const DiagnosisInput &In) {
  Remedy R;
  R.Action = Action.str();
  R.Detail = std::move(Detail);
  R.BytesAfter = After;
  R.BytesSaved = int64_t(deviceBytes(In.P, In.OverheadBytes)) - int64_t(After);
  R.Fits = After <= In.BudgetBytes;
  return R;
}

static std::optional<Remedy>
fromCapacity(llvm::StringRef Action, const std::optional<CapacityResult> &C,
             int64_t Current, const DiagnosisInput &In) {
  if (!C || Current <= 1)
    return std::nullopt;
  if (!C->Max)
    return fromBytes(Action,
                     C->Role + " " + std::to_string(Current) +
                         " -> 1 (still does not fit)",
                     *C->BytesAbove, In);
  if (*C->Max >= Current)
    return std::nullopt;
  return fromBytes(Action,
                   C->Role + " " + std::to_string(Current) + " -> " +
                       std::to_string(*C->Max),
                   C->BytesAtMax, In);
}

static llvm::Expected<Remedy> moreDevices(const DiagnosisInput &In) {
  auto N = devicesNeeded(In.P, In.C, In.Opts, In.BudgetBytes, In.OverheadBytes);
  if (!N)
    return N.takeError();
  unsigned Devices = N->value_or(4096);
  auto Sharded = replanSharded(In.P, In.C, Devices, In.Opts);
  if (!Sharded)
    return Sharded.takeError();
  std::string Detail = std::to_string(Devices) +
                       " devices sharing weights, gradients and optimizer "
                       "state; per device";
  if (!*N)
    Detail = "even 4096 devices do not fit: the rest is not model state";
  return fromBytes("more devices", Detail,
                   deviceBytes(*Sharded, In.OverheadBytes), In);
}

llvm::Expected<std::vector<Remedy>>
report::adviseRemedies(const DiagnosisInput &In) {
  std::vector<Remedy> Out;
  if (fitsBudget(In.P, In.OverheadBytes, In.BudgetBytes))
    return Out;
  if (auto R = fromCapacity("smaller batch", In.Batch,
                            boundValue(In.C.Bindings, In.Roles.Batch), In))
    Out.push_back(std::move(*R));
  if (auto R = fromCapacity("shorter sequence", In.Seq,
                            boundValue(In.C.Bindings, In.Roles.Seq), In))
    Out.push_back(std::move(*R));
  auto Half = replanHalfPrecision(In.P, In.C, In.Opts);
  if (!Half)
    return Half.takeError();
  Out.push_back(fromBytes("lower precision",
                          "fp16/bf16 weights, activations and gradients",
                          deviceBytes(*Half, In.OverheadBytes), In));
  auto Dev = moreDevices(In);
  if (!Dev)
    return Dev.takeError();
  Out.push_back(std::move(*Dev));
  if (In.Fit) {
    // The budget the chooser must meet leaves room for the fixed overhead.
    uint64_t Room = In.BudgetBytes > In.OverheadBytes
                        ? In.BudgetBytes - In.OverheadBytes
                        : 0;
    auto F = (*In.Fit)(Room);
    if (!F)
      return F.takeError();
    std::string Detail = F->Strategy;
    if (F->Fits)
      Detail +=
          llvm::formatv(", predicted +{0:f1}% step time", F->OverheadPercent)
              .str();
    Remedy R = fromBytes("recompute/offload (--fit)", Detail,
                         F->TotalBytes + In.OverheadBytes, In);
    R.Fits = R.Fits && F->Fits;
    Out.push_back(std::move(R));
  } else {
    for (const char *Name : {"activation checkpointing", "offload to host"}) {
      Remedy R;
      R.Action = Name;
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
