//===- EngineConfig.cpp - a configuration as the engines take it ----------===//
//
// DeepSpeed: the keys of deepspeed/runtime/constants.py and the pydantic
// models of deepspeed/runtime/zero/config.py and offload_config.py (which
// forbid unknown keys, so only documented keys are written). FSDP: the
// arguments of torch.distributed.fsdp.FullyShardedDataParallel. Megatron-LM:
// the flags of megatron/training/arguments.py.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Parallel/EngineConfig.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace oomplan;
using namespace oomplan::parallel;
namespace json = llvm::json;

static std::string print(json::Value V) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  OS << llvm::formatv("{0:2}", V) << "\n";
  return OS.str();
}

std::vector<std::string> parallel::blockModuleNames(const Graph &G,
                                                    const LayerStructure &L) {
  std::vector<std::string> Prefix(L.NumBlocks);
  std::vector<bool> Seen(L.NumBlocks, false);
  for (ValueId W : G.Weights) {
    NodeId U = W < L.FirstUser.size() ? L.FirstUser[W] : NoId;
    if (U == NoId || L.BlockOfNode[U] < 0)
      continue;
    unsigned B = unsigned(L.BlockOfNode[U]);
    llvm::StringRef Name = G.Values[W].Name;
    if (!Seen[B]) {
      Prefix[B] = Name.rsplit('.').first.str();
      Seen[B] = true;
      continue;
    }
    // Shorten to the common dotted prefix.
    while (!Prefix[B].empty() && !Name.startswith(Prefix[B] + ".")) {
      size_t Dot = Prefix[B].rfind('.');
      Prefix[B] = Dot == std::string::npos ? "" : Prefix[B].substr(0, Dot);
    }
  }
  return Prefix;
}

const char *parallel::engineName(EngineKind Engine) {
  switch (Engine) {
  case EngineKind::DeepSpeed:
    return "deepspeed";
  case EngineKind::FSDP:
    return "fsdp";
  case EngineKind::Megatron:
    return "megatron";
  }
  return "";
}

static llvm::Error cannotSay(EngineKind Engine, const llvm::Twine &What,
                             const llvm::Twine &Instead) {
  return makeInputError(llvm::Twine("--emit=") + engineName(Engine) + ": " +
                        What + "; " + Instead);
}

llvm::Error parallel::checkExpressible(EngineKind Engine,
                                       const ParallelSpec &S) {
  std::string TP = "tp=" + std::to_string(S.TP);
  std::string PP = "pp=" + std::to_string(S.PP);
  switch (Engine) {
  case EngineKind::DeepSpeed:
    // DeepSpeed's config has no tensor-parallel degree: Megatron-DeepSpeed
    // takes it from Megatron's arguments, and plain DeepSpeed counts every
    // rank as data parallel (its batch check would then fail).
    if (S.TP > 1)
      return cannotSay(Engine,
                       "DeepSpeed's config cannot express tensor "
                       "parallelism (" +
                           TP + (S.SP ? ", sp" : "") + ")",
                       "use --emit=megatron, or a configuration without tp");
    return llvm::Error::success();
  case EngineKind::FSDP:
    // FullyShardedDataParallel shards over one data-parallel group; tensor
    // and pipeline parallelism are other wrappers.
    if (S.TP > 1)
      return cannotSay(Engine,
                       "FSDP cannot express tensor parallelism (" + TP +
                           (S.SP ? ", sp" : "") + ")",
                       "use --emit=megatron, or a configuration without tp");
    if (S.PP > 1)
      return cannotSay(Engine,
                       "FSDP cannot express pipeline parallelism (" + PP + ")",
                       "use --emit=deepspeed or --emit=megatron, or a "
                       "configuration without pp");
    if (S.OffloadOptimizer && !S.OffloadParams)
      return cannotSay(Engine,
                       "FSDP cannot express offload=optimizer alone "
                       "(CPUOffload moves the parameters with it)",
                       "use offload=both with zero=3, or --emit=deepspeed");
    return llvm::Error::success();
  case EngineKind::Megatron:
    if (S.Zero >= 2)
      return cannotSay(
          Engine,
          "Megatron-LM cannot express zero=" + std::to_string(S.Zero) +
              " (its distributed optimizer shards the optimizer "
              "state only, as zero=1)",
          "use zero=0 or zero=1, or --emit=deepspeed");
    if (S.OffloadOptimizer || S.OffloadParams)
      return cannotSay(Engine, "Megatron-LM cannot express offload",
                       "use --emit=deepspeed, or a configuration without "
                       "offload");
    return llvm::Error::success();
  }
  return llvm::Error::success();
}

llvm::Expected<std::string> parallel::deepSpeedConfig(const EngineContext &C) {
  const ParallelSpec &S = C.Spec;
  if (llvm::Error E = checkExpressible(EngineKind::DeepSpeed, S))
    return std::move(E);
  json::Object Zero{
      {"stage", int64_t(S.Zero)},
      {"overlap_comm", true},
      {"contiguous_gradients", true},
      {"reduce_bucket_size", int64_t(C.Engine.ReduceBucketElems)}};
  if (S.Zero == 1 || S.Zero == 2)
    Zero["allgather_bucket_size"] = int64_t(C.Engine.AllgatherBucketElems);
  if (S.Zero == 3) {
    Zero["stage3_prefetch_bucket_size"] = int64_t(C.Engine.PrefetchBucketElems);
    Zero["stage3_max_live_parameters"] = int64_t(C.Engine.MaxLiveParams);
  }
  if (S.OffloadOptimizer)
    Zero["offload_optimizer"] =
        json::Object{{"device", "cpu"}, {"pin_memory", true}};
  if (S.OffloadParams)
    Zero["offload_param"] =
        json::Object{{"device", "cpu"}, {"pin_memory", true}};
  // DeepSpeed's batch check: train_batch_size = micro-batch x accumulation
  // x its data-parallel world size. Without tensor parallelism (refused
  // above) that world is dp: every rank without pp, and with pp the
  // pipeline engine's data-parallel group (PipelineModule's grid is its
  // mpu). The pipeline engine runs one micro-batch per accumulation step.
  json::Object Root{
      {"train_micro_batch_size_per_gpu", C.MicroBatch},
      {"gradient_accumulation_steps", int64_t(S.MicroBatches)},
      {"train_batch_size", C.MicroBatch * S.MicroBatches * S.DP},
      {"zero_optimization", std::move(Zero)},
  };
  // The pipeline engine's section (runtime/config.py get_pipeline_config):
  // the stage count the plan assumed; the model must be a PipelineModule
  // built with num_stages equal to it. Full recompute checkpoints every
  // layer.
  if (S.PP > 1)
    Root["pipeline"] =
        json::Object{{"stages", int64_t(S.PP)},
                     {"activation_checkpoint_interval",
                      int64_t(S.Recompute == RecomputeKind::Full ? 1 : 0)}};
  if (C.Precision == TrainPrecision::BF16Mixed)
    Root["bf16"] = json::Object{{"enabled", true}};
  if (C.Precision == TrainPrecision::FP16Mixed)
    Root["fp16"] = json::Object{{"enabled", true}};
  if (S.Recompute != RecomputeKind::None)
    Root["activation_checkpointing"] =
        json::Object{{"partition_activations", S.SP},
                     {"contiguous_memory_optimization", false},
                     {"cpu_checkpointing", false}};
  return print(std::move(Root));
}

llvm::Expected<std::string> parallel::fsdpConfig(const EngineContext &C) {
  const ParallelSpec &S = C.Spec;
  if (llvm::Error E = checkExpressible(EngineKind::FSDP, S))
    return std::move(E);
  // ZeRO-3 is FULL_SHARD; 2 (and 1, which FSDP does not have: its
  // gradients are sharded too) SHARD_GRAD_OP; none NO_SHARD (DDP).
  const char *Strategy = S.Zero == 3   ? "FULL_SHARD"
                         : S.Zero >= 1 ? "SHARD_GRAD_OP"
                                       : "NO_SHARD";
  json::Array Modules;
  for (const std::string &M : blockModuleNames(C.G, C.Layers))
    Modules.push_back(M);
  const char *Dtype = C.Precision == TrainPrecision::BF16Mixed   ? "bfloat16"
                      : C.Precision == TrainPrecision::FP16Mixed ? "float16"
                                                                 : "float32";
  json::Object Root{
      {"sharding_strategy", Strategy},
      {"cpu_offload",
       json::Object{{"offload_params", S.OffloadParams || S.OffloadOptimizer}}},
      {"backward_prefetch", "BACKWARD_PRE"},
      {"limit_all_gathers", true},
      {"use_orig_params", true},
      {"mixed_precision", json::Object{{"param_dtype", Dtype},
                                       {"reduce_dtype", Dtype},
                                       {"buffer_dtype", Dtype}}},
      {"auto_wrap_modules", std::move(Modules)},
      {"activation_checkpointing", S.Recompute != RecomputeKind::None},
      {"micro_batch_size", C.MicroBatch},
      {"gradient_accumulation_steps", int64_t(S.MicroBatches)},
  };
  return print(std::move(Root));
}

llvm::Expected<std::string>
parallel::megatronArguments(const EngineContext &C) {
  const ParallelSpec &S = C.Spec;
  if (llvm::Error E = checkExpressible(EngineKind::Megatron, S))
    return std::move(E);
  std::string A;
  auto Add = [&](const std::string &Flag) {
    A += (A.empty() ? "" : " \\\n  ") + Flag;
  };
  Add("--tensor-model-parallel-size " + std::to_string(S.TP));
  Add("--pipeline-model-parallel-size " + std::to_string(S.PP));
  if (S.SP)
    Add("--sequence-parallel");
  if (S.Zero >= 1) // Megatron's distributed optimizer shards optimizer state
    Add("--use-distributed-optimizer");
  Add("--micro-batch-size " + std::to_string(C.MicroBatch));
  Add("--global-batch-size " +
      std::to_string(C.MicroBatch * S.MicroBatches * S.DP));
  if (C.Layers.Found)
    Add("--num-layers " + std::to_string(C.Layers.NumBlocks));
  if (C.Seq > 0)
    Add("--seq-length " + std::to_string(C.Seq));
  if (S.Recompute == RecomputeKind::Selective)
    Add("--recompute-granularity selective");
  if (S.Recompute == RecomputeKind::Full) {
    Add("--recompute-granularity full");
    Add("--recompute-method uniform");
    Add("--recompute-num-layers 1");
  }
  if (C.Precision == TrainPrecision::BF16Mixed)
    Add("--bf16");
  if (C.Precision == TrainPrecision::FP16Mixed)
    Add("--fp16");
  return A + "\n";
}
