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

std::string parallel::deepSpeedConfig(const EngineContext &C) {
  const ParallelSpec &S = C.Spec;
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
  json::Object Root{
      {"train_micro_batch_size_per_gpu", C.MicroBatch},
      {"gradient_accumulation_steps", int64_t(S.MicroBatches)},
      {"train_batch_size", C.MicroBatch * S.MicroBatches * S.DP},
      {"zero_optimization", std::move(Zero)},
  };
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

std::string parallel::fsdpConfig(const EngineContext &C) {
  const ParallelSpec &S = C.Spec;
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

std::string parallel::megatronArguments(const EngineContext &C) {
  const ParallelSpec &S = C.Spec;
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
