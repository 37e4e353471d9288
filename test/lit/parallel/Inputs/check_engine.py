#!/usr/bin/env python3
"""Check an --emit=deepspeed|fsdp|megatron output against the engine's schema.

Usage: check_engine.py deepspeed|fsdp|megatron FILE DP

The engines are not installable here, so their schemas are copied from
their sources (docs/multi-device.md cites them):
- DeepSpeed (microsoft/DeepSpeed 38327e07): top-level keys from
  deepspeed/runtime/constants.py; zero_optimization fields and aliases of
  DeepSpeedZeroConfig (deepspeed/runtime/zero/config.py, extra="forbid", so
  any other key is an error in DeepSpeed); offload fields from
  offload_config.py; activation_checkpointing keys from
  activation_checkpointing/config.py; the pipeline section's keys from
  runtime/config.py get_pipeline_config; DeepSpeed's batch rule
  train_batch_size = micro * gradient_accumulation_steps * data parallel.
- FSDP: torch.distributed.fsdp.FullyShardedDataParallel's ShardingStrategy
  and BackwardPrefetch names, CPUOffload and MixedPrecision fields.
- Megatron-LM (NVIDIA/Megatron-LM d98e8a64): flags of config fields in
  megatron/core/model_parallel_config.py, transformer_config.py,
  optimizer_config.py, num_microbatches_calculator.py; recompute choices.
Prints OK or the first problem.
"""
import json
import sys

DS_TOP = {"train_batch_size", "train_micro_batch_size_per_gpu",
          "gradient_accumulation_steps", "zero_optimization", "bf16", "fp16",
          "activation_checkpointing", "optimizer", "gradient_clipping",
          "pipeline"}
DS_PIPE = {"stages", "partition", "seed_layers",
           "activation_checkpoint_interval", "pipe_partitioned",
           "grad_partitioned"}
DS_ZERO = set("""allgather_bucket_size allgather_partitions contiguous_gradients
cpu_offload cpu_offload_param cpu_offload_use_pin_memory elastic_checkpoint
gather_16bit_weights_on_model_save ignore_unused_parameters legacy_stage1
load_from_fp32_weights log_trace_cache_warnings max_live_parameters
max_reuse_distance memory_efficient_linear mics_hierarchical_params_gather
mics_shard_size model_persistence_threshold module_granularity_threshold
offload_optimizer offload_param overlap_comm override_module_apply
param_persistence_threshold pipeline_loading_checkpoint prefetch_bucket_size
reduce_bucket_size reduce_scatter round_robin_gradients stage
stage3_gather_16bit_weights_on_model_save
stage3_gather_fp16_weights_on_model_save stage3_max_live_parameters
stage3_max_reuse_distance stage3_model_persistence_threshold
stage3_module_granularity_threshold stage3_param_persistence_threshold
stage3_prefetch_bucket_size stage3_use_all_reduce_for_fetch_params
sub_group_size use_all_reduce_for_fetch_params
use_multi_rank_bucket_allreduce zero_hpz_partition_size
zero_quantized_gradients zero_quantized_nontrainable_weights
zero_quantized_weights zeropp_loco_param""".split())
DS_OFFLOAD = {"device", "nvme_path", "buffer_count", "buffer_size",
              "max_in_cpu", "pin_memory", "pipeline_read", "pipeline_write",
              "fast_init", "ratio"}
DS_ACT = {"partition_activations", "number_checkpoints",
          "contiguous_memory_optimization", "synchronize_checkpoint_boundary",
          "profile", "cpu_checkpointing"}
MEGATRON_FLAGS = {"--tensor-model-parallel-size",
                  "--pipeline-model-parallel-size", "--sequence-parallel",
                  "--use-distributed-optimizer", "--micro-batch-size",
                  "--global-batch-size", "--num-layers", "--seq-length",
                  "--recompute-granularity", "--recompute-method",
                  "--recompute-num-layers", "--bf16", "--fp16"}


def fail(msg):
    print("FAIL " + msg)
    sys.exit(0)


def deepspeed(cfg, dp):
    for k in cfg:
        if k not in DS_TOP:
            fail("top-level key " + k)
    z = cfg["zero_optimization"]
    for k in z:
        if k not in DS_ZERO:
            fail("zero_optimization." + k)
    if z["stage"] not in (0, 1, 2, 3):
        fail("stage")
    for o in ("offload_optimizer", "offload_param"):
        if o in z:
            if set(z[o]) - DS_OFFLOAD or z[o]["device"] not in ("none", "cpu",
                                                                "nvme"):
                fail(o)
    if "offload_param" in z and z["stage"] != 3:
        fail("offload_param needs stage 3")
    for k in cfg.get("activation_checkpointing", {}):
        if k not in DS_ACT:
            fail("activation_checkpointing." + k)
    for k in cfg.get("pipeline", {}):
        if k not in DS_PIPE:
            fail("pipeline." + k)
    if "pipeline" in cfg and z["stage"] > 1:
        fail("the pipeline engine takes zero stage 0 or 1")
    if cfg["train_batch_size"] != (cfg["train_micro_batch_size_per_gpu"] *
                                   cfg["gradient_accumulation_steps"] * dp):
        fail("train_batch_size != micro * gas * dp")


def fsdp(cfg, dp):
    if cfg["sharding_strategy"] not in ("FULL_SHARD", "SHARD_GRAD_OP",
                                        "NO_SHARD", "HYBRID_SHARD"):
        fail("sharding_strategy")
    if set(cfg["cpu_offload"]) != {"offload_params"}:
        fail("cpu_offload")
    if cfg["backward_prefetch"] not in ("BACKWARD_PRE", "BACKWARD_POST"):
        fail("backward_prefetch")
    if set(cfg["mixed_precision"]) - {"param_dtype", "reduce_dtype",
                                      "buffer_dtype"}:
        fail("mixed_precision")
    if not cfg["auto_wrap_modules"]:
        fail("no modules to wrap")


def megatron(text, dp):
    words = text.replace("\\\n", " ").split()
    flags = [w for w in words if w.startswith("--")]
    for f in flags:
        if f not in MEGATRON_FLAGS:
            fail("flag " + f)
    args = dict(zip(words, words[1:]))
    if args.get("--recompute-granularity", "full") not in ("full",
                                                            "selective"):
        fail("recompute-granularity")
    gb = int(args["--global-batch-size"])
    if gb % (int(args["--micro-batch-size"]) * dp):
        fail("global batch not a multiple of micro * dp")


def main():
    kind, path, dp = sys.argv[1], sys.argv[2], int(sys.argv[3])
    text = open(path).read()
    if kind == "megatron":
        megatron(text, dp)
    else:
        (deepspeed if kind == "deepspeed" else fsdp)(json.loads(text), dp)
    print("OK")


if __name__ == "__main__":
    main()
