//===- PlacementVerifier.h - independent check of a placement ---*- C++ -*-===//
//
// Every plan is checked by code that shares nothing with the algorithms that
// made it: a sweep over time that keeps the live buffers ordered by offset,
// so a bug in a planner's data structure cannot hide in the checker too.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_VERIFY_PLACEMENTVERIFIER_H
#define OOMPLAN_VERIFY_PLACEMENTVERIFIER_H

#include "oomplan/Placement/BufferRequest.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>

namespace oomplan::verify {

/// Checks that Offsets (indexed like Requests) form a valid placement: every
/// offset is a multiple of its buffer's alignment, every buffer lies inside
/// [0, ArenaBytes), no two buffers with overlapping lifetimes share a byte,
/// and, if BudgetBytes is given, ArenaBytes <= BudgetBytes. Buffers of size 0
/// or with empty lifetimes conflict with nothing. The error names the buffer
/// ids, their byte ranges and their step ranges. O(n log n).
llvm::Error verifyPlacement(llvm::ArrayRef<planner::BufferRequest> Requests,
                            llvm::ArrayRef<uint64_t> Offsets,
                            uint64_t ArenaBytes,
                            std::optional<uint64_t> BudgetBytes = std::nullopt);

} // namespace oomplan::verify

#endif
