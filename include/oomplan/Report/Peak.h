//===- Peak.h - the peak step and the buffers live there ---------*- C++
//-*-===//
//
// In the manner of XLA's out-of-memory report: the step where the arena's live
// bytes peak, the node and op running there, and every arena buffer live at
// that step, largest first, with its producer, type, size formula and bytes,
// and how much of it is quadratic in the sequence length.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_PEAK_H
#define OOMPLAN_REPORT_PEAK_H

#include "oomplan/Analysis/SymExpr.h"
#include "oomplan/Plan/PlanPrinter.h"
#include <string>
#include <vector>

namespace oomplan {
namespace report {

struct PeakBuffer {
  BufferId Buffer = 0;
  std::string Name;     ///< The buffer's first tensor.
  std::string Node;     ///< Producing node's name ("" for synthetic tensors).
  std::string Op;       ///< Producing op ("" for weights, inputs, synthetic).
  std::string Producer; ///< producerText of the buffer's first tensor.
  /// "float[12*batch,seq,seq]": the type the bytes were counted in, or
  /// "-" (Plan/TensorInfo.h).
  std::string Type;
  /// Why the type differs from the graph's ("mask kept in the input's
  /// type, ..."), or "".
  std::string TypeNote;
  TensorKind Kind = TensorKind::Activation;
  SymExpr Formula;            ///< Bytes as a formula of the symbols.
  uint64_t Bytes = 0;         ///< Exact size (unaligned).
  int64_t QuadraticBytes = 0; ///< Part of Bytes quadratic in seq.
  /// The last two dims both grow with seq ([..., seq, seq]): attention
  /// scores, their softmax, masks.
  bool SeqBySeq = false;
};

struct PeakReport {
  uint64_t Step = 0;
  std::string Node; ///< Name of the node running at the peak step, or "".
  std::string Op;   ///< The step's op: "MatMul", "MatMul.grad", "Adam".
  /// "node 'name' (MatMul.grad)" or "node #12 (Op)" with the step's op; the
  /// op alone, "(Adam)", for steps that run no graph node.
  std::string Where;
  uint64_t LiveBytes = 0; ///< Aligned arena bytes live (= lower bound).
  uint64_t ArenaBytes = 0;
  uint64_t LowerBound = 0;
  uint64_t Fragmentation = 0;      ///< ArenaBytes - LowerBound.
  std::vector<PeakBuffer> Buffers; ///< Largest first.
  /// Sum of the live buffers' formulas: the arena at the peak (unaligned).
  SymExpr Formula;
  int64_t QuadraticBytes = 0; ///< Sum over Buffers.
};

/// The peak of P; SeqSyms are the sequence symbols (may be empty).
PeakReport computePeak(const Plan &P, const PlanContext &C,
                       llvm::ArrayRef<SymbolId> SeqSyms);

/// "node 'x' (Op)" style producer text of tensor T, "initializer",
/// "graph-input", or the step that writes a synthetic tensor.
std::string producerText(const Plan &P, const PlanContext &C, TensorId T);

} // namespace report
} // namespace oomplan

#endif
