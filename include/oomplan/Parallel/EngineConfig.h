//===- EngineConfig.h - a configuration as the engines take it --*- C++ -*-===//
//
// oomplan plans; the engines people already run execute. These write one
// configuration in each engine's documented spelling: a DeepSpeed config
// JSON (zero_optimization, offload, activation_checkpointing, batch sizes),
// PyTorch FSDP constructor settings as JSON (sharding strategy, CPU offload,
// mixed precision, the modules to wrap and checkpoint), and Megatron-LM's
// command-line arguments. docs/multi-device.md cites the schemas.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PARALLEL_ENGINECONFIG_H
#define OOMPLAN_PARALLEL_ENGINECONFIG_H

#include "oomplan/Parallel/Parallel.h"

namespace oomplan {
namespace parallel {

struct EngineContext {
  const Graph &G;
  const LayerStructure &Layers;
  const ParallelSpec &Spec;
  const EngineOptions &Engine;
  int64_t MicroBatch = 1; ///< --batch: per device and micro-batch.
  int64_t Seq = 0;        ///< --seq, 0 when not given.
  TrainPrecision Precision = TrainPrecision::FP32;
  OptimizerKind Optimizer = OptimizerKind::Adam;
};

std::string deepSpeedConfig(const EngineContext &C);
std::string fsdpConfig(const EngineContext &C);
std::string megatronArguments(const EngineContext &C);

/// The module names of the repeated blocks ("h.0", "h.1", ...): the
/// longest common dotted prefix of each block's weight names.
std::vector<std::string> blockModuleNames(const Graph &G,
                                          const LayerStructure &L);

} // namespace parallel
} // namespace oomplan

#endif
