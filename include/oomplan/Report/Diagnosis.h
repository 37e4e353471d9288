//===- Diagnosis.h - why a plan does not fit ---------------------*- C++
//-*-===//
//
// Four causes, each with a rule (docs/report.md) and the evidence for it:
//   model too large      the plan at batch 1, sequence 1 does not fit: no
//                        batch or sequence change can fix it (weights, and in
//                        training gradients and optimizer state, dominate);
//                        says how many devices or what precision would fit;
//   sequence too long    terms quadratic in seq hold at least half of the
//                        arena's peak and a fifth of the total; names them and
//                        gives the longest sequence that fits;
//   batch too large      the plan fits at batch 1; gives the largest batch;
//   activation explosion at most three tensors (or the outputs of one node)
//                        hold at least half of the arena's peak; names them.
// Ranked in that order (the first cannot be fixed by the others' remedies; a
// specific cause outranks the generic "shrink the batch").
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_DIAGNOSIS_H
#define OOMPLAN_REPORT_DIAGNOSIS_H

#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Report/Breakdown.h"
#include "oomplan/Report/Capacity.h"
#include "oomplan/Report/Peak.h"
#include <functional>

namespace oomplan {
namespace report {

enum class Cause : uint8_t {
  ModelTooLarge,
  SequenceTooLong,
  BatchTooLarge,
  ActivationExplosion,
  /// The tensors fit but PyTorch's caching allocator's segments do not
  /// (AllocatorReport.h; --runtime=pytorch-cuda).
  Fragmentation,
};

/// "model too large", "sequence too long", ...
llvm::StringRef causeName(Cause C);
/// "model_too_large", ... for JSON.
llvm::StringRef causeKey(Cause C);

struct Finding {
  Cause Kind = Cause::ModelTooLarge;
  std::string Summary;               ///< One line: the verdict and the remedy.
  std::vector<std::string> Evidence; ///< The numbers behind it.
  std::vector<std::string> Tensors;  ///< Tensors it names, largest first.
  /// The answer it gives: largest batch, longest seq, or devices needed.
  std::optional<int64_t> Value;
};

/// What the diagnosis reads; capacity results may be absent (no symbol).
/// What the budget-fitting chooser (--fit) reaches at a budget, placed and
/// verified: the plan's device bytes (without overhead), its predicted added
/// time, and the transforms it chose.
struct FitOutcome {
  uint64_t TotalBytes = 0;
  double OverheadPercent = 0; ///< Predicted added time, % of the step.
  std::string Strategy;       ///< "recompute (greedy)", "stream weights", ...
  bool Fits = false;
};
/// Runs the chooser against a budget (the caller wires lib/Fit in, so the
/// report does not depend on it).
using FitFn = std::function<llvm::Expected<FitOutcome>(const Budget &Limit)>;

/// Plans the same model at Bindings with another --precision value
/// ("bf16-mixed"): the caller's pipeline (training: the training step at that
/// precision, fp32 master weights and moments included; inference: the
/// model at --precision=bf16, Transforms/InferencePrecision.h). The report's
/// "lower precision" remedy and the diagnosis's 16-bit evidence are these
/// plans.
using PrecisionPlanFn = std::function<llvm::Expected<Plan>(
    llvm::ArrayRef<std::optional<int64_t>> Bindings,
    llvm::StringRef Precision)>;

/// The --precision value the "lower precision" remedy plans.
constexpr const char *LowerPrecisionName = "bf16-mixed";

struct DiagnosisInput {
  const Plan &P;
  const PlanContext &C;
  const SymbolRoles &Roles;
  const PlanFn &PlanAt;
  const PipelineOptions &Opts; ///< For re-planning resized schedules.
  /// The driver's budget (a capacity is given: nothing is diagnosed
  /// without one).
  const Budget &Limit;
  const PeakReport &Peak;
  const std::optional<CapacityResult> &Batch;
  const std::optional<CapacityResult> &Seq;
  /// The chooser, when the caller provides one; else checkpointing and
  /// offload are listed as not planned.
  const FitFn *Fit = nullptr;
  /// Plans at another precision; null or empty: no "lower precision"
  /// remedy and no 16-bit evidence.
  const PrecisionPlanFn *PlanAtPrecision = nullptr;
};

/// The causes that apply to a plan that does not fit, ranked; empty when it
/// fits. Errors come from re-planning only.
llvm::Expected<std::vector<Finding>> diagnose(const DiagnosisInput &In);

/// Smallest number of devices in [1, 4096] over which sharding P's model
/// state (replanSharded) fits Limit; std::nullopt when even 4096 do not.
llvm::Expected<std::optional<unsigned>>
devicesNeeded(const Plan &P, const PlanContext &C, const PipelineOptions &Opts,
              const Budget &Limit);

} // namespace report
} // namespace oomplan

#endif
