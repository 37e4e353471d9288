//===- LowerBound.h - the no-fragmentation lower bound ----------*- C++ -*-===//
//
// For a fixed schedule no placement can use fewer bytes than the largest sum
// of sizes live at one step (XLA's "no-fragmentation heap"). Every plan prints
// its arena next to this bound, and the searches stop when they reach it.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PLACEMENT_LOWERBOUND_H
#define OOMPLAN_PLACEMENT_LOWERBOUND_H

#include "oomplan/Placement/BufferRequest.h"
#include "llvm/ADT/ArrayRef.h"

namespace oomplan::planner {

/// Maximum over steps of the sum of the sizes (each rounded up to its
/// alignment) of the buffers live at that step, in bytes. Saturates at
/// UINT64_MAX instead of wrapping. O(n log n).
uint64_t lowerBound(llvm::ArrayRef<BufferRequest> Requests);

} // namespace oomplan::planner

#endif
