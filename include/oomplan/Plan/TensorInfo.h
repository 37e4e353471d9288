//===- TensorInfo.h - what a plan tensor holds, which step runs -*- C++ -*-===//
//
// One description of a schedule tensor for every printer (text plan, JSON,
// report, pictures): the graph value whose dims it has, the element type of
// the bytes that were counted (16-bit under mixed precision, a Dropout mask
// kept in its input's type), that type with its dims, and its size formula.
// The type and the formula are given only when dims x element size equals
// the bytes counted at the bound symbols, so a printed formula always
// evaluates to the bytes printed beside it. describeStep names a step by the
// op it really runs ("MatMul.grad" for a backward step).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PLAN_TENSORINFO_H
#define OOMPLAN_PLAN_TENSORINFO_H

#include "oomplan/Analysis/SymExpr.h"
#include "oomplan/Plan/PlanPrinter.h"
#include <string>

namespace oomplan {

/// The graph value whose shape tensor T of S has: its own value, or for a
/// synthetic tensor named "f(<value>)" (any f, nested) the named value.
/// NoId when neither exists.
ValueId describedValue(const Schedule &S, const Graph &G, TensorId T);

struct TensorDescription {
  ValueId Value = NoId; ///< describedValue.
  /// Element type of the bytes counted (Undefined when unknown).
  ElementType Type = ElementType::Undefined;
  /// "bfloat16[12*batch,seq,seq]"; "-" when the dims and type do not give
  /// the bytes counted.
  std::string TypeText = "-";
  /// Bytes as a formula of the symbols; the constant size when no formula
  /// gives the bytes counted (then HasFormula is false).
  SymExpr Formula;
  bool HasFormula = false;
  /// Why the type differs from the graph's, when it is not a precision
  /// change ("mask counted in the input's type, as PyTorch on the CPU keeps
  /// it ...").
  std::string Note;
};

/// The description of tensor T of P at C's bindings.
TensorDescription describeTensor(const Plan &P, const PlanContext &C,
                                 TensorId T);

/// "node 'name' (MatMul.grad)": the node a step runs with the op it really
/// runs (the step's op: a backward step is "<Op>.grad", a recompute step
/// "recompute <Op>"); the op alone, "(Adam)", for steps without a node.
std::string describeStep(const Schedule &S, const Graph &G, uint64_t Step);

} // namespace oomplan

#endif
