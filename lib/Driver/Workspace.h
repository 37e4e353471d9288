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

#include "oomplan/IR/Graph.h"
#include "oomplan/Schedule/Schedule.h"
#include <string>

namespace oomplan {
namespace driver {

inline void addWorkspaceWrite(Schedule &S, Step &St, const Node &N,
                              uint64_t Bytes) {
  ScheduleTensor T;
  T.Name = (N.Name.empty() ? "node" + std::to_string(St.Node) : N.Name) +
           ".workspace";
  T.SizeBytes = Bytes;
  T.Type = ElementType::UInt8;
  T.Kind = TensorKind::Activation;
  St.Writes.push_back(TensorId(S.Tensors.size()));
  S.Tensors.push_back(std::move(T));
}

} // namespace driver
} // namespace oomplan

#endif
