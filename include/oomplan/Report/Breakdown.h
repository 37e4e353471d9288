//===- Breakdown.h - where the bytes go, by memory class ---------*- C++
//-*-===//
//
// The device memory a plan needs, split into the classes people reason about:
// weights, activations, gradients, optimizer state, graph inputs/outputs and a
// fixed overhead (CUDA context, library workspaces) that the user states with
// --overhead. The rows always add up to the total. Resident regions count
// every buffer; the arena counts the buffers live at the peak step, and its
// fragmentation (arena minus lower bound) goes to the activations row.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_BREAKDOWN_H
#define OOMPLAN_REPORT_BREAKDOWN_H

#include "oomplan/Analysis/SymExpr.h"
#include "oomplan/Plan/PlanPrinter.h"
#include <cstdint>
#include <string>
#include <vector>

namespace oomplan {
namespace report {

enum class MemoryClass : uint8_t {
  Weights,
  Activations,
  Gradients,
  OptimizerState,
  /// Temporaries of the optimizer step (foreach Adam's fp32 copy of the
  /// second moments): gone after it, but often the step's peak.
  OptimizerScratch,
  InputsOutputs,
  Overhead,
};
constexpr unsigned NumMemoryClasses = 7;

/// "weights", "activations", "gradients", "optimizer state",
/// "optimizer scratch", "inputs+outputs", "fixed overhead".
llvm::StringRef memoryClassName(MemoryClass K);
/// The same as an identifier for JSON ("optimizer_state", ...).
llvm::StringRef memoryClassKey(MemoryClass K);
/// The class a buffer of kind K belongs to.
MemoryClass memoryClassOf(TensorKind K);
/// The class of buffer L of P: by its kind, except that an activation the
/// optimizer step writes is optimizer scratch.
MemoryClass memoryClassOf(const Plan &P, const LiveBuffer &L);

struct ClassRow {
  MemoryClass Class = MemoryClass::Weights;
  uint64_t Bytes = 0;  ///< Exact bytes, alignment included.
  std::string Formula; ///< Bytes as a formula of the symbols.
  /// Formula as an expression: programs evaluate it at other bindings.
  SymExpr Expr;
  std::string Note; ///< Caveat on the formula ("at peak step 101"), or "".
};

struct Breakdown {
  std::vector<ClassRow> Rows; ///< One per MemoryClass, in enum order.
  uint64_t TotalBytes = 0;    ///< Plan total plus the overhead.
  /// Fraction of TotalBytes in row K (0 when the total is 0).
  double share(MemoryClass K) const;
  uint64_t bytes(MemoryClass K) const {
    return Rows[static_cast<unsigned>(K)].Bytes;
  }
};

/// The plan's memory by class with OverheadBytes (bytes) added as its own row.
Breakdown computeBreakdown(const Plan &P, const PlanContext &C,
                           uint64_t OverheadBytes);

/// Aligned bytes of arena buffers of each class live at Step.
std::vector<uint64_t> arenaBytesByClassAt(const Plan &P, uint64_t Step);

/// "1.59 GiB (1702459904 bytes)": human units beside the exact count.
std::string describeBytes(uint64_t Bytes);

} // namespace report
} // namespace oomplan

#endif
