//===- Training.h - a training step derived from a forward graph -*- C++
//-*-===//
//
// ONNX files are forward graphs; --train derives the memory of one training
// step as a Schedule transform, leaving the Graph untouched: the forward
// steps, a loss step, one backward step per forward node in reverse, then the
// optimizer step. Gradients (`grad(<value>)`), tensors an op keeps for its
// backward that the forward graph does not hold (`saved(<value>)`) and
// optimizer state become schedule tensors, so liveness, placement, the
// verifier and the report apply unchanged. What each op keeps is one table,
// lib/Transforms/SavedTensorRules.cpp; docs/training.md explains the model
// and how it compares with PyTorch's measured peaks.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TRANSFORMS_TRAINING_H
#define OOMPLAN_TRANSFORMS_TRAINING_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Schedule/Schedule.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <string>
#include <utility>
#include <vector>

namespace oomplan {

enum class OptimizerKind : uint8_t { SGD, Momentum, Adam, AdamW };
/// FP16Mixed/BF16Mixed: "O2", 16-bit weights, activations and gradients
/// with fp32 master weights; BF16Autocast/FP16Autocast: torch.autocast, fp32
/// weights, gradients and optimizer state, 16-bit copies of the weights and
/// inputs of products and convolutions made in the forward, activations in
/// the type autocast gives each op (docs/training.md "Autocast").
enum class TrainPrecision : uint8_t {
  FP32,
  FP16Mixed,
  BF16Mixed,
  BF16Autocast,
  FP16Autocast
};

/// How the mask a training Dropout keeps for backward is stored.
enum class DropoutMaskKind : uint8_t {
  InputType, ///< Same type and size as the input (PyTorch on the CPU).
  Byte,      ///< One byte per element (PyTorch's fused CUDA kernel).
};

/// The loss the training loop puts on the graph's outputs (docs/training.md
/// "Loss").
enum class LossKind : uint8_t {
  Mean,         ///< out.mean(): one output-sized gradient.
  CrossEntropy, ///< F.cross_entropy(out, target): keeps log_softmax + target.
  None,         ///< The output is the loss (or the caller seeds its gradient).
  Auto,         ///< CrossEntropy on logits-shaped outputs, Mean otherwise.
};

/// Which training step is modelled.
enum class TrainStep : uint8_t {
  Steady, ///< Any step after the first: optimizer state exists before it.
  First,  ///< The first: the optimizer step creates its state.
};

/// What zero_grad() leaves between steps.
enum class ZeroGradKind : uint8_t {
  None, ///< set_to_none=True (PyTorch 2's default): no gradients at start.
  Zero, ///< set_to_none=False (PyTorch 1.x): gradients live all step.
};

/// Whose kernels and allocator the step is predicted for.
enum class TrainRuntime : uint8_t {
  PyTorchCPU,  ///< PyTorch 1.13 CPU kernels (float dropout masks, oneDNN).
  PyTorchCUDA, ///< PyTorch 2.x CUDA: byte masks, cuDNN, foreach Adam.
  Oomplan,     ///< Our own executor: exactly the plan.
};

/// How attention blocks (Softmax between two MatMuls) are trained
/// (docs/training.md "Attention").
enum class AttentionMode : uint8_t {
  Eager, ///< Op by op: the scores, probabilities and dropout mask are kept.
  SDPA,  ///< scaled_dot_product_attention: q, k, v, output, log-sum-exp.
  Auto,  ///< SDPA where the graph shows it (TrainingAttention.h), else eager.
};

struct TrainingOptions {
  OptimizerKind Optimizer = OptimizerKind::Adam;
  TrainPrecision Precision = TrainPrecision::FP32;
  /// Micro-batches per optimizer step; above 1 the weight gradients are
  /// accumulated, so they are live for the whole step.
  unsigned GradAccum = 1;
  /// Weights whose name matches one of these globs (or, with a "re:" prefix,
  /// regular expressions) get no gradient and no optimizer state.
  std::vector<std::string> Freeze;
  /// (A, B): B holds the same parameter as A (possibly transposed); it is
  /// counted once, as A, and its gradient accumulates into grad(A).
  std::vector<std::pair<std::string, std::string>> Tied;
  DropoutMaskKind DropoutMask = DropoutMaskKind::InputType;
  /// The defaults below are today's model (a mean loss, steady state, PyTorch
  /// on the CPU); the command line's defaults differ (--loss=auto,
  /// --runtime=pytorch-cuda), resolved by the driver.
  LossKind Loss = LossKind::Mean;
  TrainStep Step = TrainStep::Steady;
  ZeroGradKind ZeroGrad = ZeroGradKind::None;
  TrainRuntime Runtime = TrainRuntime::PyTorchCPU;
  /// Eager unless the driver resolves --attention (PyTorch 1.13 on the CPU
  /// and our executor have no fused attention).
  AttentionMode Attention = AttentionMode::Eager;
  /// --dropout=P: training-mode dropout put back into a graph exported
  /// without Dropout nodes (TrainingDropout.h); 0: none added.
  double AddedDropout = 0;
  /// The loop keeps the previous step's outputs (`out = model(x)`) until
  /// this step's forward writes them again.
  bool KeepPreviousOutputs = false;
};

/// Parses "mean|ce|none|auto", "steady|first", "none|zero" and
/// "pytorch-cpu|pytorch-cuda|oomplan".
llvm::Expected<LossKind> parseLoss(llvm::StringRef Name);
llvm::Expected<TrainStep> parseTrainStep(llvm::StringRef Name);
llvm::Expected<ZeroGradKind> parseZeroGrad(llvm::StringRef Name);
llvm::Expected<TrainRuntime> parseTrainRuntime(llvm::StringRef Name);
/// Parses "auto|sdpa|eager".
llvm::Expected<AttentionMode> parseAttentionMode(llvm::StringRef Name);
llvm::StringRef trainRuntimeName(TrainRuntime R);

/// Is output O logits-shaped (the rule --loss=auto applies)? A floating-point
/// output of rank 2 ([N, classes]) or 3 ([B, S, vocab]) whose last dim is at
/// least 2, produced by MatMul or Gemm (through an optional bias Add and
/// views): the network ends in a linear classifier.
bool isLogitsOutput(const Graph &G, const ShapeInfo &Shapes, ValueId O);

/// Parses "sgd|momentum|adam|adamw" and
/// "fp32|fp16-mixed|bf16-mixed|bf16-autocast|fp16-autocast".
llvm::Expected<OptimizerKind> parseOptimizer(llvm::StringRef Name);
llvm::Expected<TrainPrecision> parsePrecision(llvm::StringRef Name);
/// Parses "A,B" (one --tied value).
llvm::Expected<std::pair<std::string, std::string>>
parseTiedPair(llvm::StringRef Text);

/// Per-class totals of the training step, in bytes (at the model precision
/// for weights and gradients; optimizer state includes fp32 master weights
/// under mixed precision).
struct TrainingSummary {
  uint64_t TrainableParams = 0;  ///< Elements of trainable parameters.
  uint64_t FrozenParams = 0;     ///< Elements of frozen float weights.
  uint64_t WeightBytes = 0;      ///< Trainable parameters as the model holds.
  uint64_t GradBytes = 0;        ///< Their gradients.
  uint64_t OptimizerBytes = 0;   ///< Moments, momentum, master weights.
  uint64_t OptimizerScratch = 0; ///< Temporaries of the optimizer step.
  uint64_t SavedBytes = 0;       ///< Synthetic saved(...) tensors.
  /// Per graph output that gets a gradient, in G.Outputs order: the loss
  /// that was assumed (Mean, CrossEntropy or None; never Auto).
  std::vector<std::pair<ValueId, LossKind>> Losses;
  /// Attention blocks trained as scaled_dot_product_attention and op by
  /// op (AttentionMode), and of the first, those --attention=auto chose.
  unsigned SDPABlocks = 0, EagerBlocks = 0;
  /// Graphs without Dropout nodes: the places --dropout puts one back and
  /// the bytes their masks (and, in eager attention, dropped probabilities)
  /// keep; counted whether or not --dropout was given.
  unsigned DropoutSites = 0;
  uint64_t DropoutBytes = 0;
  bool GraphHasDropout = false;
  uint64_t NumForwardSteps = 0;
  uint64_t NumBackwardSteps = 0;
  /// Weight + gradient + optimizer bytes: 16 per parameter for fp32 Adam.
  uint64_t modelStateBytes() const {
    return WeightBytes + GradBytes + OptimizerBytes;
  }
};

/// The training step of G: forward, loss, backward, optimizer. ValueBytes is
/// every value's size at the bound symbols (evaluateValueBytes). Warnings
/// receives notes for the user (an eval-mode export, ops without a training
/// rule). Summary, when given, receives the per-class totals. Bindings (the
/// bound symbols) let rules read dims, not only sizes; a rule that needs a
/// dim it cannot evaluate assumes the costlier case.
llvm::Expected<Schedule> makeTrainingSchedule(
    const Graph &G, const ShapeInfo &Shapes,
    llvm::ArrayRef<uint64_t> ValueBytes, const TrainingOptions &Opts,
    std::vector<std::string> &Warnings, TrainingSummary *Summary = nullptr,
    llvm::ArrayRef<std::optional<int64_t>> Bindings = {});

/// Names of the weights that get gradients and optimizer state (in
/// G.Weights order), after --freeze and --tied.
llvm::Expected<std::vector<ValueId>>
trainableParameters(const Graph &G, const TrainingOptions &Opts);

/// A warning text when G looks like an eval-mode export of a network that
/// trains with BatchNormalization or Dropout; empty otherwise.
std::string evalExportWarning(const Graph &G);

/// --emit=shapes with --train: one line per tensor the transform added.
void printTrainingTensors(llvm::raw_ostream &OS, const Graph &G,
                          const Schedule &S, const TrainingSummary &Sum);

} // namespace oomplan

#endif
