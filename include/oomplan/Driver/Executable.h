//===- Executable.h - a request planned for a run ---------------*- C++ -*-===//
//
// The runtime's entry into the driver: the same import, binding, planning
// and fitting as `oomplan` (so a run executes exactly the plan the tool
// reports), plus what a run needs and a report does not: each step's kernel
// workspace added to the schedule before liveness (so the plan counts it)
// and every schedule tensor's concrete dims at the bound symbols.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_DRIVER_EXECUTABLE_H
#define OOMPLAN_DRIVER_EXECUTABLE_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Plan/Plan.h"
#include "oomplan/Runtime/Executor.h"
#include "oomplan/oomplan.h"
#include <memory>

namespace oomplan {
namespace driver {

struct Executable {
  std::unique_ptr<Graph> G;
  ShapeInfo Shapes;
  std::vector<std::optional<int64_t>> Bindings;
  Plan P; ///< The final plan (fitted when fitting ran).
  runtime::RunInfo Info;
  bool Fitted = false;
  /// Micro-batch passes: the plan runs once per pass on batch / Passes.
  unsigned Passes = 1;
  /// Per graph input and output (G->Inputs, G->Outputs order): the dims of
  /// the whole batch, and the axis the passes split (-1: none; with one
  /// pass, or an input every pass reads whole).
  std::vector<llvm::SmallVector<int64_t, 6>> WholeInputDims, WholeOutputDims;
  std::vector<int> InputAxis, OutputAxis;
  /// Notes and warnings of planning, in order.
  std::vector<api::Diagnostic> Diagnostics;
};

/// Plans R (inference only) for a run with Kernels' workspaces: their plain
/// ones, or, where some kernel has a roomier one, a second plan with those
/// when neither plan needed fitting and the second's arena is no larger.
/// Kernels are the backend: R.Backend (oomplan's --backend, whose estimated
/// library workspaces serve a planner without kernels) is not read, so
/// nothing is counted twice. Errors:
/// the driver's, and unsupported for what the runtime cannot run yet
/// (training, data-dependent sizes, a batch that does not split evenly).
llvm::Expected<Executable> planExecutable(const api::Request &R,
                                          const runtime::KernelTable &Kernels);

/// The schedule edit planExecutable installs: a workspace tensor (bytes,
/// uint8) written by each compute step whose kernel declares scratch, as
/// the write after the node's outputs. Roomy, a level (kernelWorkspace):
/// 0 the plain workspaces, 1 the kernels' roomy ones (Kernel::
/// RoomyWorkspace) where they ask for more, 2 their roomier ones.
/// *Levels, when given, gets bit L set for each level L at which some
/// step's workspace differs from the level below's. Exposed for tests.
llvm::Error addWorkspaces(const runtime::KernelTable &Kernels, const Graph &G,
                          const ShapeInfo &Shapes,
                          llvm::ArrayRef<std::optional<int64_t>> Bindings,
                          Schedule &S, unsigned Roomy = 0,
                          unsigned *Levels = nullptr);

/// Every schedule tensor's dims and type at Bindings, and each step's
/// workspace tensor (the write after its node's outputs).
llvm::Expected<runtime::RunInfo>
makeRunInfo(const Graph &G, const ShapeInfo &Shapes,
            llvm::ArrayRef<std::optional<int64_t>> Bindings, const Schedule &S);

} // namespace driver
} // namespace oomplan

#endif
