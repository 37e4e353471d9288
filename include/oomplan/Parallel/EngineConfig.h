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

enum class EngineKind : uint8_t { DeepSpeed, FSDP, Megatron };

/// Success when Engine's configuration can say every dimension of S; else an
/// input error naming the first one it cannot (a configuration that leaves a
/// dimension out would run a different step from the one planned):
///   - DeepSpeed: no tensor or sequence parallelism (Megatron's);
///   - FSDP: no tensor, sequence or pipeline parallelism, and no optimizer
///     offload without the parameters' (CPUOffload moves both);
///   - Megatron-LM: no ZeRO stage 2 or 3 (its distributed optimizer shards
///     the optimizer state only) and no offload.
llvm::Error checkExpressible(EngineKind Engine, const ParallelSpec &S);
/// Engine's spelling: "deepspeed", "fsdp", "megatron".
const char *engineName(EngineKind Engine);

/// The configuration as Engine takes it; checkExpressible's error when it
/// cannot say it.
llvm::Expected<std::string> deepSpeedConfig(const EngineContext &C);
llvm::Expected<std::string> fsdpConfig(const EngineContext &C);
llvm::Expected<std::string> megatronArguments(const EngineContext &C);

/// The module names of the repeated blocks ("h.0", "h.1", ...): the
/// longest common dotted prefix of each block's weight names.
std::vector<std::string> blockModuleNames(const Graph &G,
                                          const LayerStructure &L);

} // namespace parallel
} // namespace oomplan

#endif
