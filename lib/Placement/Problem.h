//===- Problem.h - validated, compressed form of a request list -*- C++ -*-===//
//
// Private to lib/Placement. Every algorithm starts by turning the request list
// into a Problem: requests are validated once (alignment, lifetimes,
// overflow), sizes become footprints (size rounded up to alignment), and
// step ranges become ranges of "sections", the elementary intervals between
// consecutive distinct start/end steps. Two buffers overlap in time exactly
// when their section ranges intersect.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_PLANNER_PROBLEM_H
#define OOMPLAN_LIB_PLANNER_PROBLEM_H

#include "oomplan/Placement/BufferRequest.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace oomplan::planner {

/// A validated request list. Indices are request positions.
struct Problem {
  llvm::ArrayRef<BufferRequest> Requests;
  /// Bytes reserved by buffer i: size rounded up to alignment.
  std::vector<uint64_t> Footprint;
  /// Section range [Lo[i], Hi[i]) of buffer i.
  std::vector<uint32_t> Lo, Hi;
  /// Number of sections.
  uint32_t NumSections = 0;
  /// Buffers that need space (footprint > 0 and a non-empty lifetime).
  std::vector<uint32_t> Active;
  /// Sum over active buffers of footprint + alignment - 1: no arena made by
  /// placing buffers at aligned offsets at or below the tops of others can
  /// exceed it, so arithmetic below it never overflows.
  uint64_t SafeTotalBytes = 0;

  uint64_t align(uint32_t I) const { return Requests[I].AlignBytes; }
  uint64_t duration(uint32_t I) const {
    return Requests[I].EndStep - Requests[I].StartStep;
  }
};

using Clock = std::chrono::steady_clock;

/// Now + Seconds, clamped to [0, a year] so that a huge --time-limit cannot
/// overflow the clock's representation.
inline Clock::time_point deadlineAfter(double Seconds) {
  double Clamped = std::clamp(Seconds, 0.0, 365.0 * 24 * 3600);
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(Clamped));
}

/// Seconds left until Deadline, 0 if it has passed.
inline double secondsUntil(Clock::time_point Deadline) {
  return std::max(
      0.0, std::chrono::duration<double>(Deadline - Clock::now()).count());
}

/// Validates Requests and builds the Problem. Errors name the offending id.
llvm::Expected<Problem> buildProblem(llvm::ArrayRef<BufferRequest> Requests);

/// Offset rounded up to Align (a power of two); the caller ensures no
/// overflow (see Problem::SafeTotalBytes).
inline uint64_t alignUp(uint64_t Offset, uint64_t Align) {
  return (Offset + Align - 1) & ~(Align - 1);
}

/// max(offset + footprint) over active buffers.
uint64_t arenaOf(const Problem &P, llvm::ArrayRef<uint64_t> Offsets);

/// No reuse: active buffers one after another in request order.
std::vector<uint64_t> naiveOffsets(const Problem &P);

/// Wraps offsets into a Placement named Algorithm; falls back to
/// naiveOffsets() if that is smaller, so no algorithm is worse than naive.
Placement makePlacement(const Problem &P, std::vector<uint64_t> Offsets,
                        llvm::StringRef Algorithm);

} // namespace oomplan::planner

#endif
