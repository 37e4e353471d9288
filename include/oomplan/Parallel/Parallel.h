//===- Parallel.h - per-device plans of a multi-device training step -*- C++
//-*-===//
//
// When a model does not fit one device, training splits it: data parallelism
// with ZeRO stages 1-3 (DeepSpeed, FSDP), tensor and sequence parallelism
// (Megatron-LM), pipeline parallelism with a 1F1B schedule, and their
// combinations. Each device then runs the same training schedule on its part
// of the tensors, so a per-device plan is the single-device training schedule
// with every tensor resized to the part one device holds (0 for tensors of
// other pipeline stages, the in-flight micro-batches' saved activations
// multiplied), plus the buffers the engines add (ZeRO-3 all-gather buffers,
// gradient buckets, DeepSpeed's fp32 gradient partition); liveness, placement
// and the verifier then run unchanged. docs/multi-device.md describes the
// model and compares it with the published formulas.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PARALLEL_PARALLEL_H
#define OOMPLAN_PARALLEL_PARALLEL_H

#include "oomplan/Cost/DeviceProfile.h"
#include "oomplan/Parallel/Layers.h"
#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Transforms/Training.h"
#include "llvm/Support/Error.h"
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace oomplan {
namespace parallel {

enum class RecomputeKind : uint8_t { None, Selective, Full };

/// One configuration: --parallel=dp=2,tp=8,sp,pp=4,zero=1,micro-batches=8.
struct ParallelSpec {
  unsigned DP = 1, TP = 1, PP = 1;
  unsigned Zero = 0;         ///< ZeRO stage 0-3 over the data-parallel group.
  bool SP = false;           ///< Megatron sequence parallelism (needs tp).
  unsigned MicroBatches = 1; ///< Per optimizer step (1F1B with pp).
  RecomputeKind Recompute = RecomputeKind::None;
  bool OffloadOptimizer = false; ///< DeepSpeed offload_optimizer (host).
  bool OffloadParams = false;    ///< offload_param (ZeRO-3 only).
  unsigned devices() const { return DP * TP * PP; }
};

/// Parses SPEC (comma-separated: dp=D, tp=T, pp=P, zero=Z, sp,
/// micro-batches=M, recompute=none|selective|full, offload=optimizer|params
/// |both). Devices, when set, fills the data-parallel size left over (dp
/// defaults to Devices / (tp * pp)) and must equal dp * tp * pp.
llvm::Expected<ParallelSpec> parseParallelSpec(llvm::StringRef Text,
                                               std::optional<unsigned> Devices);

/// "dp=2,tp=8,sp,pp=4,zero=1,micro-batches=8" (only what is not default).
std::string formatSpec(const ParallelSpec &S);

/// Engine settings that size buffers (DeepSpeed's and PyTorch DDP's
/// defaults), and the interconnect for the time estimate.
struct EngineOptions {
  uint64_t DDPBucketBytes = 25ull << 20;     ///< DDP bucket_cap_mb = 25.
  uint64_t ReduceBucketElems = 500000000;    ///< reduce_bucket_size.
  uint64_t AllgatherBucketElems = 500000000; ///< allgather_bucket_size.
  uint64_t PrefetchBucketElems = 50000000;   ///< stage3_prefetch_bucket_size.
  uint64_t MaxLiveParams = 1000000000;       ///< stage3_max_live_parameters.
  unsigned DevicesPerNode = 8;
  double IntraNodeBandwidth = 450e9; ///< NVLink, one direction, bytes/s.
  double InterNodeBandwidth = 50e9;  ///< 400 Gb/s InfiniBand per device.
};

/// Bytes one device holds, by class, at the peak of its stage's plan.
struct DeviceBytes {
  uint64_t Weights = 0, Gradients = 0, OptimizerState = 0;
  uint64_t GatherBuffers = 0; ///< ZeRO-3 all-gathered layers.
  uint64_t CommBuffers = 0;   ///< Gradient buckets.
  uint64_t HostBytes = 0;     ///< Offloaded to host memory.
  /// Weights + gradients + optimizer state + gather buffers (what DeepSpeed's
  /// estimators call model states).
  uint64_t modelStates() const {
    return Weights + Gradients + OptimizerState + GatherBuffers;
  }
};

/// One pipeline stage's plan (every stage has one; without pp, one stage).
struct StagePlan {
  unsigned Stage = 0;
  int FirstBlock = -1, LastBlock = -1; ///< Blocks in the stage; -1: none.
  unsigned InFlight = 1;   ///< Micro-batches whose activations it holds.
  uint64_t PeakBytes = 0;  ///< Placed total (weights + io + arena).
  uint64_t LowerBound = 0; ///< Resident + arena lower bound (unplaced).
  DeviceBytes Bytes;
  /// Saved activation bytes of one micro-batch, per block of the stage
  /// (forward tensors a backward step reads).
  std::vector<uint64_t> BlockActivationBytes;
  std::optional<Plan> P; ///< Placed and verified, when placement ran.
};

struct ParallelPlan {
  ParallelSpec Spec;
  std::vector<StagePlan> Stages;
  unsigned Binding = 0; ///< The stage with the largest peak.
  bool Fits = false;
  double StepSeconds = 0;   ///< Predicted time of one optimizer step.
  double SampleSeconds = 0; ///< StepSeconds per sample of the global batch.
  std::vector<std::string> Notes;
  uint64_t peakBytes() const;
};

/// What the planner needs of the model: the graph at the micro-batch's
/// bindings and the training options of the step.
struct ParallelInput {
  const Graph &G;
  const ShapeInfo &Shapes;
  std::vector<std::optional<int64_t>> Bindings;
  TrainingOptions Train;
  PipelineOptions Pipeline;
  DeviceProfile Device;
  Budget Limit; ///< Per device: the driver's budget.
  EngineOptions Engine;
};

struct Base; // lib/Parallel/ParallelInternal.h

/// Builds the single-device training schedules a configuration derives from
/// once (one per recompute kind), then resizes them per configuration.
class ParallelPlanner {
public:
  static llvm::Expected<ParallelPlanner> create(const ParallelInput &In);

  /// The per-device plans of Spec. Place: each stage's plan is placed and
  /// verified (buildPlan); otherwise only the liveness lower bound is
  /// computed (the search screens configurations that way).
  llvm::Expected<ParallelPlan> plan(const ParallelSpec &Spec, bool Place);

  /// Whether tensor parallelism of degree TP can split this model: the
  /// repeated blocks have weight MatMul/Gemm layers and TP divides every
  /// weight it splits. An error says why not (plan refuses such a spec).
  llvm::Error checkTP(unsigned TP) const;

  const LayerStructure &layers() const { return Layers; }
  const ParallelInput &input() const { return *In; }
  /// Trainable parameters (elements) of the whole model.
  uint64_t parameters() const { return Params; }

private:
  explicit ParallelPlanner(const ParallelInput &In) : In(&In) {}
  llvm::Expected<const Base *> base(RecomputeKind K, bool Accumulate);
  const ParallelInput *In;
  LayerStructure Layers;
  uint64_t Params = 0;
  /// By RecomputeKind and whether gradients accumulate (6 at most).
  std::shared_ptr<Base> Bases[6];
};

/// A configuration the search tried, and why it lost (empty for the winner).
struct Candidate {
  ParallelSpec Spec;
  uint64_t PeakBytes = 0;
  bool Fits = false;
  double SampleSeconds = 0;
  std::string Why;
};

struct SearchResult {
  std::optional<ParallelPlan> Best; ///< Placed; none when nothing fits.
  unsigned Devices = 0;             ///< The device count searched last.
  std::vector<Candidate> RunnersUp; ///< Best first, with why they lost.
  unsigned Tried = 0;
};

/// --parallel=auto: the configuration of Devices devices that fits with the
/// least predicted time per sample. --devices=auto (Devices unset): the
/// smallest device count (1, 2, 4, 8, then multiples of 8 up to MaxDevices)
/// with a configuration that fits.
/// Allowed, when set, keeps only the configurations it accepts (those the
/// engine asked for can express).
llvm::Expected<SearchResult>
searchParallel(ParallelPlanner &PP, std::optional<unsigned> Devices,
               unsigned MaxDevices = 4096,
               std::function<bool(const ParallelSpec &)> Allowed = {});

} // namespace parallel
} // namespace oomplan

#endif
