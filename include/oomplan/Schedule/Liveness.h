//===- Liveness.h - buffers and their lifetimes -----------------*- C++ -*-===//
//
// Groups a schedule's tensors into buffers and gives each a half-open step
// range [StartStep, EndStep). A view (Reshape, Squeeze, inference Dropout,
// ...) shares its input's buffer, extending its life. An elementwise step may
// write its output into an input buffer that dies at that step, when the
// sizes match (in place; reported, and off with InPlace = false).
//
// Weights and constants live for the whole run; graph inputs from step 0 to
// their last use; graph outputs from their definition to the end.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SCHEDULE_LIVENESS_H
#define OOMPLAN_SCHEDULE_LIVENESS_H

#include "oomplan/Schedule/Schedule.h"
#include "llvm/Support/raw_ostream.h"

namespace oomplan {

using BufferId = uint32_t;

struct LiveBuffer {
  TensorId Root = 0; ///< The tensor that allocates it.
  std::vector<TensorId>
      Members; ///< Root first, then views and in-place writes.
  TensorKind Kind = TensorKind::Activation;
  uint64_t SizeBytes = 0;
  uint64_t StartStep = 0; ///< First step at which the bytes are needed.
  uint64_t EndStep = 0;   ///< One past the last step that needs them.
};

struct Lifetimes {
  std::vector<LiveBuffer> Buffers;
  std::vector<BufferId> BufferOf; ///< Per tensor.
  uint64_t NumSteps = 0;
  /// (output, input) pairs written in place, in step order.
  std::vector<std::pair<TensorId, TensorId>> InPlace;
};

struct LivenessOptions {
  bool InPlace = true; ///< Let elementwise steps overwrite a dying input.
};

/// Computes buffers and lifetimes; every tensor belongs to one buffer.
Lifetimes computeLifetimes(const Schedule &S, const LivenessOptions &Opts);

/// --emit=lifetimes: one line per buffer, in order of first step.
void printLifetimes(llvm::raw_ostream &OS, const Schedule &S,
                    const Lifetimes &L);

} // namespace oomplan

#endif
