//===- Workspace.h - a step's scratch tensor --------------------*- C++ -*-===//
//
// A kernel's workspace is one more write of its step: an activation of
// NODE.workspace, dead after the step, so the planner places it like any
// other buffer. Both the planner-only path (DriverFusion.cpp, from the fused
// ops' formulas) and the executable path (DriverExecutable.cpp, from the
// kernels) add it this way.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_DRIVER_WORKSPACE_H
#define OOMPLAN_LIB_DRIVER_WORKSPACE_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/IR/Graph.h"
#include "oomplan/Schedule/Schedule.h"
#include "llvm/Support/Error.h"
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace oomplan {
namespace driver {

/// Formula, when given, is Bytes as a formula of the symbols (the report's
/// class formulas then hold at other bindings); else Bytes is a constant.
inline void addWorkspaceWrite(Schedule &S, Step &St, const Node &N,
                              uint64_t Bytes, uint64_t Scratch = 0,
                              std::optional<SymExpr> Formula = std::nullopt) {
  ScheduleTensor T;
  T.Name = (N.Name.empty() ? "node" + std::to_string(St.Node) : N.Name) +
           ".workspace";
  T.SizeBytes = Bytes;
  T.Type = ElementType::UInt8;
  T.Kind = TensorKind::Activation;
  T.ScratchBytes = std::min(Scratch, Bytes);
  T.SizeFormula = std::move(Formula);
  St.Writes.push_back(TensorId(S.Tensors.size()));
  S.Tensors.push_back(std::move(T));
}

/// Dims of V at bindings B (a negative one as 0), for a workspace that is
/// a formula of its node's shapes.
inline llvm::Expected<std::vector<uint64_t>>
dimsAt(const ShapeInfo &Shapes, llvm::ArrayRef<std::optional<int64_t>> B,
       ValueId V) {
  std::vector<uint64_t> Out;
  for (const SymExpr &D : Shapes.Values[V].Dims) {
    auto N = D.evaluate(B, Shapes.SymbolNames);
    if (!N)
      return N.takeError();
    Out.push_back(static_cast<uint64_t>(std::max<int64_t>(*N, 0)));
  }
  return Out;
}

} // namespace driver
} // namespace oomplan

#endif
