//===- Capacity.h - the largest batch or sequence that fits ------*- C++
//-*-===//
//
// Finds the largest value of a symbol role (batch, seq) at which a full plan
// fits the budget: exponential search from 1 (1, 2, 4, ...) then bisection,
// each probe a complete plan from the caller's pipeline (inference or
// training), so the answer is what the planner would actually produce. The
// search keeps "value lo fits, value hi does not", so when it ends with
// hi = lo + 1 the answer is verified at the answer and at the answer plus one.
// A sweep tabulates the memory at several batches and sequence lengths.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_CAPACITY_H
#define OOMPLAN_REPORT_CAPACITY_H

#include "oomplan/Plan/Plan.h"
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace oomplan {
namespace report {

/// Plans the model at the given bindings (indexed by SymbolId) with the
/// caller's pipeline; the report never assumes which one.
using PlanFn =
    std::function<llvm::Expected<Plan>(llvm::ArrayRef<std::optional<int64_t>>)>;

/// Largest value the search tries by default: 2^20.
constexpr int64_t DefaultCapacityCap = int64_t(1) << 20;

struct CapacityResult {
  std::string Role;           ///< "batch" or "seq".
  std::optional<int64_t> Max; ///< Largest value that fits; none: not even 1.
  bool AtLeast = false;       ///< The cap fits: the true maximum may be larger.
  uint64_t BytesAtMax = 0;    ///< Device bytes (plan + overhead) at Max.
  /// Device bytes at Max + 1 (at 1 when nothing fits); unset when AtLeast.
  std::optional<uint64_t> BytesAbove;
  unsigned NumPlans = 0; ///< Full plans the search made.
};

/// Largest value v in [1, Cap] of the symbols Syms (all set to v, the other
/// symbols as in Base) whose plan fits Limit (oomplan::fits). A plan that
/// overflows 64-bit sizes counts as not fitting; any other planning error
/// is returned.
llvm::Expected<CapacityResult>
findCapacity(const PlanFn &PlanAt, llvm::ArrayRef<std::optional<int64_t>> Base,
             llvm::ArrayRef<SymbolId> Syms, llvm::StringRef Role,
             const Budget &Limit, int64_t Cap = DefaultCapacityCap);

/// One cell of a sweep: device bytes (neededBytes) at (batch, seq).
struct SweepCell {
  int64_t Batch = 0;             ///< 0 when the model has no batch symbol.
  int64_t Seq = 0;               ///< 0 when the model has no sequence symbol.
  std::optional<uint64_t> Bytes; ///< Unset when the sizes overflow.
  bool Fits = false;             ///< fits() against the sweep's budget.
};

struct Sweep {
  std::vector<int64_t> Batches; ///< Row values ({0} without a batch symbol).
  std::vector<int64_t> Seqs;    ///< Column values ({0} without seq).
  std::vector<SweepCell> Cells; ///< Row-major.
};

/// Device bytes at batch 1, 2, 4, ... up to max(64, current batch) and at
/// sequence lengths 128, 256, ... up to max(4096, current seq) (powers of
/// two, from 1 when the current seq is below 128).
llvm::Expected<Sweep> sweepMemory(const PlanFn &PlanAt,
                                  llvm::ArrayRef<std::optional<int64_t>> Base,
                                  llvm::ArrayRef<SymbolId> BatchSyms,
                                  llvm::ArrayRef<SymbolId> SeqSyms,
                                  const Budget &Limit);

} // namespace report
} // namespace oomplan

#endif
