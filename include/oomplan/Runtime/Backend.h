//===- Backend.h - the backends the runtime can run -------------*- C++ -*-===//
//
// A backend is a kernel table indexed by the operator table (one entry per
// op type) and the Device its regions live in (Device.h). The runtime takes
// the table and the device, not the backend's code, so that the executor
// and the planner's workspace query stay backend-neutral.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_BACKEND_H
#define OOMPLAN_RUNTIME_BACKEND_H

#include "oomplan/Runtime/Executor.h"

namespace oomplan {
namespace runtime {

struct Backend {
  const KernelTable *Kernels = nullptr;
  Device *Dev = nullptr;
};

/// Opens a backend by name: "cpu" always (host memory), and any backend a
/// program added with addBackend. Errors: a name not known (unsupported,
/// listing the backends there are), or what the backend's opener returns.
llvm::Expected<Backend> openBackend(llvm::StringRef Name);

/// Makes Open the opener of backend Name. The CUDA backend lives in its own
/// library (oomplanRuntimeCUDA, CUDA.h), so that the planner library and
/// liboomplan need no CUDA libraries; a program that links it adds it:
/// addBackend("cuda", cuda::openCUDABackend). Table, when given, is its
/// kernel table without opening a device (backendKernels). Not
/// thread-safe: call before any openBackend (or link
/// oomplanRuntimeCUDARegister, which adds CUDA's before main).
using BackendOpener = llvm::Expected<Backend> (*)();
using BackendTable = const KernelTable &(*)();
void addBackend(llvm::StringRef Name, BackendOpener Open,
                BackendTable Table = nullptr);

/// The backends there are, comma-separated ("cpu, cuda").
std::string backendNames();

/// The kernel table of backend Name: its Table when it was added with one
/// (no device is opened), else openBackend(Name)'s.
llvm::Expected<const KernelTable *> backendKernels(llvm::StringRef Name);

} // namespace runtime
} // namespace oomplan

#endif
