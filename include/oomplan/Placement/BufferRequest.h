//===- BufferRequest.h - the planner's input and output ---------*- C++ -*-===//
//
// The planner knows nothing of the IR: it takes a flat list of buffers, each
// with a size, an alignment and a half-open lifetime in schedule steps, and
// returns one offset per buffer inside a single arena. These types are that
// contract; every algorithm in the registry consumes and produces them.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PLACEMENT_BUFFERREQUEST_H
#define OOMPLAN_PLACEMENT_BUFFERREQUEST_H

#include <cstdint>
#include <string>
#include <vector>

namespace oomplan::planner {

/// One buffer to place: live over the half-open step range
/// [StartStep, EndStep). SizeBytes may be 0 (such a buffer gets offset 0 and
/// conflicts with nothing), as may the lifetime (StartStep == EndStep).
/// AlignBytes is a power of two >= 1; the offset is a multiple of it and the
/// buffer reserves SizeBytes rounded up to it.
struct BufferRequest {
  uint64_t Id = 0;
  uint64_t SizeBytes = 0;
  uint64_t AlignBytes = 1;
  uint64_t StartStep = 0;
  uint64_t EndStep = 0;
};

/// The result of an algorithm. Offsets[i] is the byte offset of request i;
/// ArenaBytes is max(offset + size rounded up to alignment) over all buffers
/// (0 when nothing needs space); Algorithm names the algorithm that produced
/// it (for `auto`, the one whose result was kept, e.g. "auto:exact").
struct Placement {
  std::vector<uint64_t> Offsets;
  uint64_t ArenaBytes = 0;
  std::string Algorithm;
};

/// Knobs shared by all algorithms. Greedy algorithms ignore them.
struct PlannerOptions {
  /// Wall-clock safety cap for searches, in seconds. Searches are bounded
  /// first by EffortBudget so that results do not depend on machine speed;
  /// this only stops runaway searches on huge inputs.
  double TimeLimitSeconds = 1.0;
  /// Arena size to aim for in bytes; 0: none. Searches stop once they fit it
  /// (or reach the lower bound).
  uint64_t CapacityBytes = 0;
  /// Seed of the deterministic pseudo-random choices (hill-climb).
  uint64_t Seed = 1;
  /// Search effort: hill-climb iterations or exact-search nodes; 0: each
  /// algorithm's default.
  uint64_t EffortBudget = 0;
};

} // namespace oomplan::planner

#endif
