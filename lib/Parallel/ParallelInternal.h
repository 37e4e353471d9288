//===- ParallelInternal.h - shared by the multi-device planner --*- C++ -*-===//
//
// The single-device schedule a configuration derives from, with what every
// tensor is (class, value, weight, pipeline position, saved for backward) and
// per-position sums for the pipeline partition and the time estimate. Built
// once per recompute kind; every configuration reads it.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_PARALLEL_PARALLELINTERNAL_H
#define OOMPLAN_LIB_PARALLEL_PARALLELINTERNAL_H

#include "oomplan/Parallel/Parallel.h"
#include <memory>

namespace oomplan {
namespace parallel {

enum class TensorClass : uint8_t {
  Activation,       ///< Activations, their gradients, saved tensors.
  Weight,           ///< A trainable or frozen weight.
  WeightGrad,       ///< The gradient of a weight.
  OptimizerState,   ///< Moments, master weights.
  OptimizerScratch, ///< Temporaries of the optimizer step.
  Other,            ///< Constants.
};

struct Base {
  Schedule S;
  size_t FwdEnd = 0;
  bool Mixed = false;
  std::vector<std::string> Warnings;
  /// Per tensor.
  std::vector<ValueId> Value;
  std::vector<TensorClass> Class;
  std::vector<ValueId> Weight; ///< For model state: the weight.
  std::vector<int> HomePos;    ///< Layer position of its writer or weight.
  std::vector<int> MinReadPos, MaxReadPos;
  std::vector<size_t> FirstRead, LastRead;
  std::vector<bool> Saved; ///< Written forward, read backward.
  /// Per step: its layer position; -1 for optimizer steps.
  std::vector<int> StepPos;
  /// Per layer position (0 prologue, 1..N blocks, N+1 epilogue).
  std::vector<double> PosSeconds;
  std::vector<uint64_t> PosSavedBytes, PosStateBytes;
  double OptimizerSeconds = 0;
  uint64_t HiddenBytes = 0; ///< One micro-batch's hidden state [b, s, h].
};

llvm::Expected<std::shared_ptr<Base>> buildBase(const ParallelInput &In,
                                                const LayerStructure &L,
                                                RecomputeKind K,
                                                bool Accumulate);

/// Layer positions [First, Last] of each pipeline stage, balancing time and
/// memory (the stage's in-flight micro-batches included).
std::vector<std::pair<int, int>> partitionStages(const Base &B,
                                                 const LayerStructure &L,
                                                 const ParallelSpec &Spec);

/// Predicted seconds of one optimizer step of Spec (compute of the slowest
/// stage over M + P - 1 slots, tensor-parallel all-reduces, data-parallel
/// gradient reduction and ZeRO-3 gathers, host optimizer steps).
double estimateStepSeconds(const Base &B, const LayerStructure &L,
                           const ParallelSpec &Spec,
                           const std::vector<std::pair<int, int>> &Stages,
                           uint64_t StateBytesPerDevice,
                           const ParallelInput &In);

} // namespace parallel
} // namespace oomplan

#endif
