//===- Backend.h - the kernel tables the runtime can run --------*- C++ -*-===//
//
// A backend is a kernel table indexed by the operator table (one entry per
// op type). The runtime takes the table, not the backend's code, so that
// the executor and the planner's workspace query stay backend-neutral.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_BACKEND_H
#define OOMPLAN_RUNTIME_BACKEND_H

#include "oomplan/Runtime/Executor.h"

namespace oomplan {
namespace runtime {

/// "cpu": the CPU backend. Any other name ("cuda") is an unsupported error
/// listing the backends this build has.
llvm::Expected<const KernelTable *> backendKernels(llvm::StringRef Name);

} // namespace runtime
} // namespace oomplan

#endif
