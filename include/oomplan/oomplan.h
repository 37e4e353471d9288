//===- oomplan.h - one entry point for programs -----------------*- C++ -*-===//
//
// The whole tool as one call: a Request says what the command line says (the
// model, the bindings, training, budget and device, fitting, the algorithm,
// what to emit) and run() returns a Result with the verdict, the emitted text,
// the capacity answers and every note and warning. execute() plans the same
// request, runs the plan on inputs and returns the outputs and the measured
// bytes per region. Only standard-library types appear here, so a program
// that embeds oomplan does not inherit LLVM; the oomplan CLI is option
// parsing, run(), and printing, and oomplan-run the same over execute().
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_OOMPLAN_H
#define OOMPLAN_OOMPLAN_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oomplan {
namespace api {

/// What kind of failure an error is, for programs that switch on it.
enum class ErrorCategory {
  BadInput,    ///< The model, an option or a value is wrong.
  Unsupported, ///< Valid input that oomplan cannot handle (yet).
  Overflow,    ///< A size does not fit 64 bits.
  Internal,    ///< A bug: a plan that fails verification, say.
  IO,          ///< A file could not be read or written.
};

/// "bad input", "unsupported", "overflow", "internal error", "I/O error".
const char *errorCategoryName(ErrorCategory C);

enum class Severity { Note, Warning };

/// One line for the user (no trailing newline).
struct Diagnostic {
  Severity Level = Severity::Note;
  std::string Message;
};

/// What run() writes into Result::Output.
enum class EmitKind {
  Graph,     ///< The imported IR.
  Shapes,    ///< Every value's type, dims and bytes.
  Lifetimes, ///< Buffers and their step ranges.
  Report,    ///< The memory report (default).
  Plan,      ///< The plan summary with every buffer's offset and lifetime.
  JSON,      ///< The plan as JSON with its report.
  CSV,       ///< Arena buffers as MiniMalloc CSV with offsets.
  Schedule,  ///< The schedule that is placed, one step a line.
  DeepSpeed, ///< --devices: the configuration as a DeepSpeed config JSON.
  FSDP,      ///< --devices: PyTorch FSDP settings (JSON).
  Megatron,  ///< --devices: Megatron-LM arguments.
  VLLM,      ///< --serve: vLLM's engine arguments for the plan.
};

/// --dim NAME=VALUE.
struct SymbolValue {
  std::string Name;
  int64_t Value = 0;
};

/// --input-shape NAME=8x3x224x224: binds the symbols of input NAME's dims.
struct InputShape {
  std::string Name;
  std::vector<int64_t> Dims;
};

/// The dims of a tensor the caller will give for input NAME (api::execute's
/// input files and tensors). It binds the symbols of NAME's declared dims
/// that no option (--batch, --seq, --dim, --input-shape) binds, as --dim
/// would, with a note naming Source ("2x3 in in/input_0.pb").
struct GivenInput {
  std::string Name;
  std::vector<int64_t> Dims;
  std::string Source;
};

/// Parses --input-shape's spelling, "NAME=D0xD1x..." (trtexec's). On bad
/// text returns std::nullopt and sets Error to the message the CLI prints.
/// The CLI and the C API both parse with it, so they cannot drift.
std::optional<InputShape> parseInputShape(const std::string &Text,
                                          std::string &Error);

/// --train and its options. An option that is set without Enabled is an
/// error (it would be ignored).
struct TrainingRequest {
  bool Enabled = false;
  std::optional<std::string> Optimizer; ///< sgd|momentum|adam|adamw (adam).
  std::optional<std::string> Precision; ///< fp32|fp16-mixed|bf16-mixed.
  std::optional<unsigned> GradAccum;    ///< Micro-batches per optimizer step.
  std::vector<std::string> Freeze;      ///< Glob or re:REGEX patterns.
  std::vector<std::string> Tied;        ///< "A,B": B is A.
  std::optional<std::string> Loss;      ///< mean|ce|none|auto (auto).
  std::optional<std::string> Step;      ///< steady|first (steady).
  std::optional<std::string> ZeroGrad;  ///< none|zero (none).
  /// pytorch-cpu|pytorch-cuda|oomplan (pytorch-cuda).
  std::optional<std::string> Runtime;
  /// PYTORCH_CUDA_ALLOC_CONF's syntax ("max_split_size_mb:128,
  /// expandable_segments:True") for --runtime=pytorch-cuda's simulation.
  std::optional<std::string> CudaAllocConf;
  /// auto|sdpa|eager (auto): how attention blocks train under PyTorch 2.x.
  std::optional<std::string> Attention;
  /// P in [0, 1): training-mode dropout put back into an eval-mode export.
  std::optional<std::string> Dropout;
  /// The loop keeps the previous step's outputs (`out = model(x)`).
  bool KeepOutput = false;
};

/// --serve and its options: an LLM server's KV cache capacity
/// (docs/serving.md). An option set without Enabled is an error.
struct ServeRequest {
  bool Enabled = false;
  std::optional<int64_t> MaxModelLen;      ///< Required with --serve.
  std::optional<int64_t> MaxBatchedTokens; ///< The prefill chunk (2048).
  std::optional<int64_t> MaxNumSeqs;       ///< Sequences in a step (256).
  std::optional<int64_t> BlockSize;        ///< Tokens per cache block (16).
  std::optional<std::string> KVDtype;      ///< auto|fp16|bf16|fp8|int8.
  /// A decimal fraction of the device's memory the server may use (0.9).
  std::optional<std::string> GpuMemoryUtilization;
};

/// --serve's answers, for programs (the JSON carries them too).
struct ServeAnswer {
  uint64_t KVBytesPerToken = 0;
  uint64_t KVBlocks = 0;
  uint64_t KVCapacityTokens = 0;
  double MaxConcurrency = 0;
  /// The longest --max-model-len that starts; none when not even one
  /// token fits or (Unbounded) a sliding window caps every sequence.
  std::optional<uint64_t> LongestContext;
  bool Unbounded = false;
};

enum class RematChoice { Auto, Sqrt, None };
enum class OffloadChoice { Auto, Weights, None };

/// Fitting: transforms that make the plan meet the budget (docs/fitting.md).
struct FitRequest {
  bool Fit = false; ///< --fit: choose the transforms.
  /// --no-fit: a plan over the budget is the verdict as is. Without it a
  /// plan over the budget is fitted by default (docs/fitting.md).
  bool NoFit = false;
  RematChoice Remat = RematChoice::Auto;
  OffloadChoice Offload = OffloadChoice::Auto;
  bool Reorder = false;
  std::optional<unsigned> MicroBatches; ///< Set: the user's choice.
  bool TF32 = false;                    ///< Cost fp32 products at TF32 peak.
  bool ShowPlan = false;                ///< --fit-show-plan.

  /// True when any option asks for a transform (--fit, --remat=sqrt,
  /// --offload=weights, --reorder, --micro-batches other than 1).
  bool requested() const {
    return Fit || Remat == RematChoice::Sqrt ||
           Offload == OffloadChoice::Weights || Reorder ||
           (MicroBatches && *MicroBatches != 1);
  }
};

/// The report's extra questions and pictures.
struct ReportRequest {
  bool MaxBatch = false;    ///< The largest batch that fits the budget.
  bool MaxSeq = false;      ///< The longest sequence that fits the budget.
  bool Sweep = false;       ///< Memory over batch 1, 2, 4, ... and seq lengths.
  std::string TimelinePath; ///< SVG (or .html) memory timeline; empty: none.
  std::string TracePath;    ///< Chrome trace JSON; empty: none.
};

struct Request {
  /// The model: .onnx, .onnxtxt, or a MiniMalloc .csv instance. When
  /// ModelBytes is set it is the file's contents and ModelPath only names it
  /// (its extension still says which format).
  std::string ModelPath;
  std::optional<std::string> ModelBytes;

  std::optional<int64_t> Batch; ///< --batch: the batch symbols.
  std::optional<int64_t> Seq;   ///< --seq: the sequence symbols.
  std::vector<SymbolValue> Dims;
  std::vector<InputShape> InputShapes;
  std::vector<GivenInput> GivenInputs;

  TrainingRequest Train;
  ServeRequest Serve;

  /// Sizes as the CLI spells them: "24G" (GiB), "300MB" (decimal), bytes.
  std::optional<std::string> Budget;
  std::optional<std::string> Overhead;
  /// A device profile name or a JSON file: the cost model's device, and the
  /// budget when Budget is not set.
  std::optional<std::string> Device;
  /// --backend=cuda: plan as `oomplan-run --backend=cuda` runs the model,
  /// each cuDNN convolution's and cuBLAS product's workspace a buffer of
  /// its step at the most that backend asks (CUDAWorkspaces.h), since the
  /// planner asks no GPU. Unset: the graph's tensors only (library scratch
  /// belongs in Overhead). Inference only.
  std::optional<std::string> Backend;

  FitRequest Fit;

  std::string Algorithm = "auto";
  std::optional<uint64_t> AlignBytes; ///< Default 256 (1 for CSV input).
  double TimeLimitSeconds = 2.0;
  bool InPlace = true;
  bool IOInArena = false;
  /// --fuse=auto|none: rewrite attention, conv + residual and matmul
  /// epilogues into fused ops (docs/fusion.md). Unset: auto for inference,
  /// none for training.
  std::optional<std::string> Fuse;
  /// --order=memory|file: the steps' order. Unset: memory (the reorder
  /// transform within topological freedom) for inference, file for
  /// training.
  std::optional<std::string> Order;

  EmitKind Emit = EmitKind::Report;
  ReportRequest Report;

  /// --devices=N|auto and --parallel=SPEC|auto: a training step over
  /// several devices (docs/multi-device.md).
  struct ParallelRequest {
    std::optional<std::string> Devices;
    std::optional<std::string> Spec;
    bool requested() const { return Devices || Spec; }
  } Parallel;

  /// Print the schedule after these transforms (before the main output).
  std::vector<std::string> PrintAfter;
  bool PrintAfterAll = false;
};

/// A capacity search's answer (--max-batch, --max-seq).
struct CapacityAnswer {
  std::optional<int64_t> Max; ///< Largest value that fits; none: not even 1.
  bool AtLeast = false;       ///< The search's cap fits: maybe larger.
  uint64_t BytesAtMax = 0;    ///< Device bytes (plan + overhead) at Max.
  std::optional<uint64_t> BytesAbove; ///< At Max + 1 (at 1 when none fits).
};

struct Result {
  /// 0 fits (or no budget), 2 does not fit, 1 error.
  int ExitCode = 1;
  bool Fits = true;
  std::optional<uint64_t> BudgetBytes;
  uint64_t OverheadBytes = 0;
  uint64_t TotalBytes = 0; ///< The plan's weights + io + arena.

  /// What the request's EmitKind asked for (text or JSON); on error, what
  /// was written before the error.
  std::string Output;
  /// Notes and warnings, in the order they arose.
  std::vector<Diagnostic> Diagnostics;

  /// Set when ExitCode is 1.
  std::optional<ErrorCategory> Category;
  std::string ErrorMessage;

  /// The capacity searches' answers, when the report made them.
  std::optional<CapacityAnswer> MaxBatch, MaxSeq;
  /// The fit chooser's decision ("recompute 12 values", ...), when it ran.
  std::optional<std::string> FitStrategy;
  std::optional<double> FitOverheadPercent;
  /// --serve's capacity, when it was computed.
  std::optional<ServeAnswer> Serve;

  bool ok() const { return ExitCode != 1; }
};

/// Plans the request. Never throws and never prints.
Result run(const Request &R);

/// oomplan-run's own options: how execute() runs the plan (docs/runtime.md).
/// The backend is Request::Backend ("cpu" when unset).
struct RunOptions {
  std::vector<std::string> Inputs; ///< --input NAME=FILE.pb.
  std::string InputsDir;           ///< --inputs-dir DIR.
  std::string OutputDir;           ///< --output-dir DIR.
  uint64_t Seed = 0;               ///< --seed: random inputs.
  bool RandomWeights = false;      ///< --random-weights.
  unsigned Threads = 0;            ///< --threads; 0: physical cores.
  bool Poison = false;             ///< --poison.
  std::string Check;               ///< --check=unplanned.
  bool FoldInputs = false;         ///< --fold-inputs.
  bool NoFoldInputs = false;       ///< --no-fold-inputs.
  unsigned Repeat = 0;             ///< --repeat N.
  bool Profile = false;            ///< --profile.
  bool NoGraph = false;            ///< --no-graph (cuda).
  bool NoHostSteps = false;        ///< --no-host-steps (cuda).
  bool ListKernels = false;        ///< --list-kernels (the tool's).
  bool JSON = false;               ///< --json: formatRunReport's JSON.
  std::string CommandsPath;        ///< --commands FILE (the tool's).
  unsigned LineTimeout = 0;        ///< --line-timeout S (the tool's).
};

/// A tensor given to execute() or returned by it: its graph name, its
/// element type as ONNX's text format spells it ("float", "int64",
/// "float16", ...), its dims and its packed little-endian bytes.
struct Tensor {
  std::string Name;
  std::string Type;
  std::vector<int64_t> Dims;
  std::string Data;
};

/// One region of the plan ("weights", "io", "arena", "host") and the
/// highest byte the run read or wrote in it.
struct RegionBytes {
  std::string Region;
  uint64_t PlannedBytes = 0;
  uint64_t HighWaterBytes = 0;
  /// HighWaterBytes rounded up to the plan's alignment: equal to
  /// PlannedBytes exactly when the run touched the region's last buffer.
  uint64_t HighWaterAlignedBytes = 0;
};

/// What a device backend (not the CPU) measured, against the plan.
struct DeviceBytes {
  std::string Device; ///< "cuda".
  /// Sum of the sizes asked of the device, and the plan's weights + io +
  /// arena: equal when the run kept to the plan.
  uint64_t AllocatedBytes = 0;
  uint64_t PlanDeviceBytes = 0;
  /// The drop in free device memory across the region allocations, the
  /// first run and the later runs, where the device measures them.
  std::optional<uint64_t> MeasuredBytes, FirstRunDropBytes, LaterRunsDropBytes;
  /// The context's and the library handles' own bytes, where measured.
  std::optional<uint64_t> ContextBytes, HandleBytes;
  uint64_t PinnedHostBytes = 0;
  /// Steps run on the host with the CPU kernel, by op type, and the host
  /// memory they are staged in and the weights they read are kept in.
  std::vector<std::pair<std::string, unsigned>> HostOps;
  uint64_t HostStagingBytes = 0;
  uint64_t HostWeightBytes = 0;
};

/// --profile: seconds and calls of one op type, summed over ProfiledRuns.
struct OpSeconds {
  std::string Op;
  double Seconds = 0;
  uint64_t Calls = 0;
};

/// --profile: one step's seconds over ProfiledRuns; Node "" when unnamed.
struct StepSeconds {
  uint64_t Index = 0;
  std::string Op, Node;
  double Seconds = 0;
};

/// What execute() ran and measured.
struct ExecuteResult {
  /// 0 the run succeeded and every check passed, 2 the plan does not fit
  /// the budget (nothing ran), 1 an error or a failed check.
  int ExitCode = 1;
  bool Ran = false;
  /// The whole batch's outputs, in graph-output order.
  std::vector<Tensor> Outputs;
  std::vector<RegionBytes> Regions;
  std::optional<DeviceBytes> Device;
  uint64_t PlanTotalBytes = 0; ///< The plan's weights + io + arena.
  std::optional<uint64_t> BudgetBytes;
  bool Fits = true;
  bool Fitted = false;
  unsigned Passes = 1; ///< Micro-batch passes per run of the model.
  /// Kernel threads of the run, and whether they are the default (one per
  /// physical core) rather than RunOptions::Threads.
  unsigned Threads = 1;
  bool ThreadsPerCore = false;
  /// RSS growth during the runs (every run; the first alone), and the
  /// whole process's peak growth from before the model was read; absent
  /// where /proc does not tell.
  std::optional<uint64_t> RSSGrowthBytes, RSSGrowthFirstRunBytes;
  std::optional<uint64_t> ProcessGrowthBytes, ProcessGrowthFirstRunBytes;
  /// Wall-clock seconds of planning, loading (weights and inputs) and the
  /// first run; RepeatSeconds: each warm run (RunOptions::Repeat).
  double PlanSeconds = 0, LoadSeconds = 0, RunSeconds = 0;
  std::vector<double> RepeatSeconds;
  /// The steps alone (without copies through host memory), first run and
  /// warm runs; absent where the device could not time them.
  std::optional<double> StepsSeconds;
  std::vector<double> RepeatStepsSeconds;
  /// --profile: slowest op type first; steps in schedule order.
  std::vector<OpSeconds> Ops;
  std::vector<StepSeconds> Steps;
  unsigned ProfiledRuns = 1;
  bool Poisoned = false;
  /// --check=unplanned ran; CheckDifference names the first output that
  /// differs ("" when all are bit-identical).
  bool CheckRan = false;
  std::string CheckDifference;
  /// Notes and warnings, in the order they arose.
  std::vector<Diagnostic> Diagnostics;
  /// Set when ExitCode is 1 because of an error (not a failed check).
  std::optional<ErrorCategory> Category;
  std::string ErrorMessage;

  /// Every region's aligned high-water equals its planned bytes.
  bool highWaterMatches() const;
  /// No device, or its allocations equal the plan's device regions.
  bool deviceMatches() const;
};

/// Plans R exactly as run() does (inference only), then runs the plan in
/// its regions on R.Backend ("cpu" unless a program registered another)
/// with O, and measures it: oomplan-run as one call. Inputs: tensors by
/// graph-input name, before O's --input and --inputs-dir files; every
/// other input gets seeded random values. Never throws and never prints.
ExecuteResult execute(const Request &R, const RunOptions &O,
                      const std::vector<Tensor> &Inputs = {});

/// oomplan-run's report of E (what it prints on standard output): a line
/// per output with an FNV-1a hash of its bytes, the regions' planned bytes
/// against their high-water, the RSS growth, the times; with JSON one
/// object (docs/runtime.md). For a plan that does not fit, the verdict.
std::string formatRunReport(const ExecuteResult &E, bool JSON);

/// The op types backend NAME has kernels for, sorted, without opening a
/// device; on an unknown backend none, and Error says which there are.
std::optional<std::vector<std::string>> kernelNames(const std::string &Backend,
                                                    std::string &Error);

/// One placement algorithm (--algo NAME).
struct AlgorithmInfo {
  std::string Name;
  std::string Description;
};
std::vector<AlgorithmInfo> algorithms();

/// The transforms --print-after accepts, in pipeline order.
std::vector<std::string> scheduleTransformNames();

const char *version();

} // namespace api
} // namespace oomplan

#endif
