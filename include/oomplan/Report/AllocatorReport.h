//===- AllocatorReport.h - allocated, reserved, fragmentation ---*- C++ -*-===//
//
// --runtime=pytorch-cuda's report section: the plan's allocations run
// through the caching allocator simulation (CachingAllocator.h), once without
// a limit (max_memory_allocated, max_memory_reserved and their difference,
// fragmentation) and, with a budget, once under it (the budget less the
// fixed overhead, the CUDA context). When the tensors fit but the segments do
// not, the finding says so and tries the PYTORCH_CUDA_ALLOC_CONF settings
// users set against fragmentation.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_ALLOCATORREPORT_H
#define OOMPLAN_REPORT_ALLOCATORREPORT_H

#include "oomplan/Report/CachingAllocator.h"
#include "oomplan/Report/CudaLibraries.h"
#include "oomplan/Report/Diagnosis.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <string>

namespace llvm {
namespace json {
class OStream;
} // namespace json
} // namespace llvm

namespace oomplan {
namespace report {

struct AllocatorAlternative {
  std::string Setting; ///< "expandable_segments:True".
  AllocatorResult Unlimited, UnderBudget;
};

struct AllocatorReport {
  std::string ConfigText; ///< --cuda-alloc-conf as given ("" = defaults).
  unsigned Iterations = 2;
  size_t NumEvents = 0;
  AllocatorResult Unlimited;
  /// The budget's room (Budget::roomBytes: the capacity less the
  /// overhead), with a budget.
  std::optional<uint64_t> LimitBytes;
  Budget Limit; ///< The driver's budget.
  std::optional<AllocatorResult> UnderBudget;
  uint64_t OOMBytes = 0; ///< The request that failed under the budget.
  /// The libraries' allocations simulated beside the plan's.
  std::vector<LibraryAllocation> Libraries;
  /// Tried when UnderBudget runs out of memory.
  std::vector<AllocatorAlternative> Alternatives;

  uint64_t fragmentation() const {
    return Unlimited.PeakReserved -
           std::min(Unlimited.PeakReserved, Unlimited.PeakAllocated);
  }
  bool outOfMemory() const { return UnderBudget && UnderBudget->OOMEvent; }
  /// Out of memory under the budget although the tensors fit in it.
  bool fragmentationTipsOver() const;
};

/// Simulates P's step Iterations times (2: the first and a steady step).
/// Limit: the device budget, of which the overhead is not the allocator's.
/// Libraries: what cuBLAS and cuDNN allocate beside the plan's tensors.
AllocatorReport
buildAllocatorReport(const Plan &P, const CudaAllocConfig &Config,
                     llvm::StringRef ConfigText, unsigned Iterations,
                     const Budget &Limit,
                     std::vector<LibraryAllocation> Libraries = {});

void printAllocatorText(llvm::raw_ostream &OS, const AllocatorReport &A);
/// An object value: call inside J.attributeBegin("cuda_allocator").
void writeAllocatorJSON(llvm::json::OStream &J, const AllocatorReport &A);
/// The diagnosis's finding when fragmentationTipsOver().
Finding fragmentationFinding(const AllocatorReport &A);

} // namespace report
} // namespace oomplan

#endif
