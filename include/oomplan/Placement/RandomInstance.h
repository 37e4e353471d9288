//===- RandomInstance.h - reproducible random request lists -----*- C++ -*-===//
//
// Property tests and the benchmark need many request lists that look like
// real schedules: mostly short-lived activations, some long-lived ones, sizes
// spread over several orders of magnitude, a few empty buffers. This makes
// them from a seed, identically on every platform.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PLACEMENT_RANDOMINSTANCE_H
#define OOMPLAN_PLACEMENT_RANDOMINSTANCE_H

#include "oomplan/Placement/BufferRequest.h"
#include <cstdint>
#include <vector>

namespace oomplan::planner {

/// Shape of a random instance.
struct RandomInstanceOptions {
  /// Number of buffers.
  uint64_t NumBuffers = 1000;
  /// Largest buffer size in bytes (sizes are log-uniform up to it).
  uint64_t MaxSizeBytes = 64ull << 20;
  /// Alignment of every buffer, or 0 for a random power of two in [1, 256].
  uint64_t AlignBytes = 256;
  /// Percentage of buffers with size 0.
  unsigned ZeroSizePercent = 2;
  /// Longest lifetime in steps of the rare long-lived buffers.
  uint64_t MaxLongLifetimeSteps = 512;
  uint64_t Seed = 1;
};

/// A deterministic pseudo-random request list; ids are 0..N-1, buffer i
/// starts at step about i (one new buffer per step, as in a schedule).
std::vector<BufferRequest> makeRandomRequests(const RandomInstanceOptions &);

} // namespace oomplan::planner

#endif
