//===- ProcessMemory.h - the process's resident-set high-water --*- C++ -*-===//
//
// Linux's VmHWM, reset by writing 5 to /proc/self/clear_refs, measures the
// peak resident set of a phase: the RSS growth of a run is VmHWM after it
// minus VmRSS before it. Used to show that a run needs only the planned
// bytes plus a small constant (docs/runtime.md).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_PROCESSMEMORY_H
#define OOMPLAN_RUNTIME_PROCESSMEMORY_H

#include "llvm/Support/Error.h"
#include <cstdint>

namespace oomplan {
namespace runtime {

struct ProcessMemory {
  uint64_t RSSBytes = 0; ///< VmRSS.
  uint64_t HWMBytes = 0; ///< VmHWM.
};

/// Reads VmRSS and VmHWM from /proc/self/status.
llvm::Expected<ProcessMemory> readProcessMemory();

/// Resets VmHWM to the current RSS.
llvm::Error resetPeakRSS();

} // namespace runtime
} // namespace oomplan

#endif
