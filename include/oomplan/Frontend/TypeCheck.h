//===- TypeCheck.h - operand types against the ONNX schemas -----*- C++ -*-===//
//
// Part of oomplan. The frontend owns the ONNX schemas; this checks, once
// shape inference has given every value its element type, that each input
// of a default-domain node has a type its schema allows (and the same type
// as the other inputs of its type parameter). Exporters sometimes write
// models ONNX's checker and every runtime refuse (torch 1.13 exports RAFT
// with a Sqrt of an int64 tensor); the plan is still an answer, so these
// are warnings, said before anything runs.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FRONTEND_TYPECHECK_H
#define OOMPLAN_FRONTEND_TYPECHECK_H

#include "oomplan/IR/Graph.h"
#include "llvm/ADT/ArrayRef.h"
#include <string>
#include <vector>

namespace oomplan {

/// One input whose type the schema does not allow.
struct OperandTypeIssue {
  std::string Message; ///< Names the node, the input and the types.
  /// A kernel would read the input as a type it does not have, so a run
  /// must refuse it (it would read past a smaller operand): the input
  /// disagrees with an earlier input of its type parameter (Clip's max int8
  /// for an int64 input), or it is not input 0 and has a type its parameter
  /// does not allow (InstanceNormalization's scale int16 for a float input)
  /// other than input 0's type under input 0's parameter. False for input
  /// 0, whose type the kernel checks itself (Kernel::Types), and for a
  /// later input that shares input 0's parameter and type.
  bool RefusedForRun = false;
};

/// One issue per input whose type ValueTypes (by ValueId; Undefined when
/// unknown) says the schema of its node's op, at the model's opset, does
/// not allow. Nodes without a schema (oomplan's own ops, unknown domains)
/// are not checked. Deterministic: node order, then input order.
std::vector<OperandTypeIssue>
checkOperandTypes(const Graph &G, llvm::ArrayRef<ElementType> ValueTypes);

} // namespace oomplan

#endif
