//===- AllocatorInternal.h - PyTorch's caching allocator for a plan -*- C++
//-*-===//
//
// Internal to lib/Driver. A training plan predicted for --runtime=
// pytorch-cuda is seen through PyTorch's caching allocator: its tensors'
// allocations and frees, and the CUDA libraries' workspaces beside them
// (Report/CudaLibraries.h). The simulated max_memory_reserved is the figure
// that runs out first, so it is the plan's deciding figure
// (Plan::RuntimeReservedBytes): the verdict, the exit code, JSON "fits",
// the capacity searches and the fit all compare it with the budget.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_DRIVER_ALLOCATORINTERNAL_H
#define OOMPLAN_LIB_DRIVER_ALLOCATORINTERNAL_H

#include "oomplan/Driver/Session.h"
#include "oomplan/Report/AllocatorReport.h"

namespace oomplan {
namespace driver {

/// True when S's plans are predicted for PyTorch's CUDA caching allocator.
bool reservedDecides(const Session &S);

/// Sets P.RuntimeReservedBytes to the simulated max_memory_reserved of P's
/// step (steady state: two steps simulated; --step=first: one), when
/// reservedDecides(S); leaves P alone otherwise.
llvm::Error setRuntimeReserved(const Session &S, const PlanContext &C, Plan &P);

/// The report's "caching allocator" section (and JSON "cuda_allocator"):
/// the simulation without a limit and, with a budget, under it.
llvm::Expected<std::optional<report::AllocatorReport>>
simulateAllocator(const Session &S, const PlanContext &C, const Plan &P);

} // namespace driver
} // namespace oomplan

#endif
