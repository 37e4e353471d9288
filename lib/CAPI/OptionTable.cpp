//===- OptionTable.cpp - every option of oomplan and oomplan-run ----------===//
//
// One row per option: spelling, value, --help group and text, which parsers
// accept it, and how its value lands in api::Arguments. What an option means
// is decided in lib/Driver (planning) and by oomplan-run (running); here is
// only how it is spelled. Values are read as llvm::cl read them when the
// tools used it (integers in any radix, bools as true/false/1/0, doubles via
// strtod), so command lines mean what they always meant.
//
//===----------------------------------------------------------------------===//
#include "OptionTable.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::api;
using namespace oomplan::api::options;

namespace {

Error badValue(StringRef Name, StringRef Value, StringRef Kind) {
  return makeInputError("--" + Name + ": '" + Value + "' is not " + Kind);
}

template <typename T> Expected<T> readInteger(StringRef Name, StringRef V) {
  T Out;
  // Radix 0, as llvm::cl: 0x.. hex, 0b.. binary, 0.. octal.
  if (V.getAsInteger(0, Out))
    return badValue(Name, V,
                    std::is_signed<T>::value ? "an integer"
                                             : "a non-negative integer");
  return Out;
}

Expected<double> readDouble(StringRef Name, StringRef V) {
  double D;
  if (!to_float(V, D))
    return badValue(Name, V, "a number");
  return D;
}

/// One value of an enumerated option: its spelling, value and --help line.
template <typename E> struct Choice {
  const char *Name;
  E Value;
  const char *Help;
};

template <typename E, size_t N>
Expected<E> readEnum(StringRef Name, StringRef V, const Choice<E> (&Cs)[N]) {
  std::vector<std::string> Names;
  for (const Choice<E> &C : Cs) {
    if (V == C.Name)
      return C.Value;
    Names.push_back(C.Name);
  }
  return makeInputError("invalid value '" + V + "' for --" + Name +
                        "; valid values: " + join(Names, ", "));
}

template <typename E, size_t N>
std::vector<ValueHelp> helpOf(const Choice<E> (&Cs)[N]) {
  std::vector<ValueHelp> Out;
  for (const Choice<E> &C : Cs)
    Out.push_back({C.Name, C.Help});
  return Out;
}

// Assigns an Expected's value or passes its error on.
template <typename T, typename U> Error assign(U &Dst, Expected<T> V) {
  if (!V)
    return V.takeError();
  Dst = std::move(*V);
  return Error::success();
}

template <typename T, typename U> Error append(std::vector<U> &Dst, T V) {
  Dst.push_back(std::move(V));
  return Error::success();
}

const Choice<RematChoice> RematChoices[] = {
    {"auto", RematChoice::Auto, "cheapest recompute that fits (default)"},
    {"sqrt", RematChoice::Sqrt, "Chen's sqrt(n) checkpointing, for comparison"},
    {"none", RematChoice::None, "no recompute"}};
const Choice<OffloadChoice> OffloadChoices[] = {
    {"auto", OffloadChoice::Auto,
     "stream weights (inference) or park saved activations on the host "
     "(training) when cheapest (default)"},
    {"weights", OffloadChoice::Weights, "stream weights from host memory"},
    {"none", OffloadChoice::None, "keep all on device"}};
const Choice<EmitKind> EmitChoices[] = {
    {"graph", EmitKind::Graph, "the imported IR"},
    {"shapes", EmitKind::Shapes, "every value's type, dims, bytes"},
    {"lifetimes", EmitKind::Lifetimes, "buffers and step ranges"},
    {"report", EmitKind::Report, "memory summary and peak buffers (default)"},
    {"plan", EmitKind::Plan,
     "the plan's regions and every buffer's offset and lifetime (no "
     "breakdown or diagnosis)"},
    {"json", EmitKind::JSON,
     "the plan as JSON with its report (docs/plan-json.md)"},
    {"csv", EmitKind::CSV, "arena buffers as MiniMalloc CSV with offsets"},
    {"schedule", EmitKind::Schedule,
     "the schedule that is placed, one step a line (with --fit: the fitted "
     "one)"},
    {"deepspeed", EmitKind::DeepSpeed,
     "with --devices: a DeepSpeed config JSON"},
    {"fsdp", EmitKind::FSDP, "with --devices: PyTorch FSDP settings (JSON)"},
    {"megatron", EmitKind::Megatron, "with --devices: Megatron-LM arguments"},
    {"vllm", EmitKind::VLLM, "with --serve: vLLM's engine arguments"}};

#define FLAG(FIELD)                                                            \
  [](Arguments &A, StringRef V) -> Error {                                     \
    return assign(A.FIELD, readBool("", V));                                   \
  }
#define NOT_FLAG(FIELD)                                                        \
  [](Arguments &A, StringRef V) -> Error {                                     \
    auto B = readBool("", V);                                                  \
    if (!B)                                                                    \
      return B.takeError();                                                    \
    A.FIELD = !*B;                                                             \
    return Error::success();                                                   \
  }
#define STRING(FIELD)                                                          \
  [](Arguments &A, StringRef V) -> Error {                                     \
    A.FIELD = V.str();                                                         \
    return Error::success();                                                   \
  }
#define STRINGS(FIELD)                                                         \
  [](Arguments &A, StringRef V) -> Error { return append(A.FIELD, V.str()); }
#define INTEGER(TYPE, NAME, FIELD)                                             \
  [](Arguments &A, StringRef V) -> Error {                                     \
    return assign(A.FIELD, readInteger<TYPE>(NAME, V));                        \
  }
#define ENUM(NAME, FIELD, CHOICES)                                             \
  [](Arguments &A, StringRef V) -> Error {                                     \
    return assign(A.FIELD, readEnum(NAME, V, CHOICES));                        \
  }

using C = Category;
constexpr unsigned Lib = ForPlanning;
constexpr unsigned Run = ForOomplanRun;
constexpr unsigned All = ForPlanning;

// --print-after's help lists the registered passes.
const char *printAfterHelp() {
  static const std::string Help =
      "Print the schedule after this transform, before the output: " +
      join(api::scheduleTransformNames(), ", ") + " (repeatable)";
  return Help.c_str();
}

const OptionSpec Rows[] = {
    // Model and shapes.
    {"batch", Arity::Value, "N", C::Model, Lib,
     "Bind the batch symbol (first dim of every input)",
     INTEGER(int64_t, "batch", Req.Batch)},
    {"seq", Arity::Value, "N", C::Model, Lib,
     "Bind the sequence symbol (second dim of token inputs)",
     INTEGER(int64_t, "seq", Req.Seq)},
    {"dim", Arity::CommaList, "NAME=VALUE", C::Model, Lib,
     "Bind any symbol of the model (repeatable)",
     [](Arguments &A, StringRef D) -> Error {
       auto [Name, Val] = D.split('=');
       int64_t V;
       if (Name.empty() || Val.getAsInteger(10, V))
         return makeInputError("--dim expects NAME=VALUE, got '" + D + "'");
       return append(A.Req.Dims, SymbolValue{Name.str(), V});
     }},
    {"input-shape", Arity::List, "NAME=8x3x224x224", C::Model, Lib,
     "Bind the symbols of input NAME's dims from its shape (repeatable)",
     [](Arguments &A, StringRef V) -> Error {
       std::string Why;
       auto In = parseInputShape(V.str(), Why);
       if (!In)
         return makeInputError(Why);
       return append(A.Req.InputShapes, std::move(*In));
     }},

    // Budget and device.
    {"budget", Arity::Value, "SIZE", C::Budget, Lib,
     "Device memory available: 24G = 24GiB (binary), 300MB (decimal), or "
     "bytes. Over budget the plan is fitted (recompute, offload, "
     "micro-batches; --no-fit: not): exit 0 when the fitted plan fits, 2 "
     "when nothing fits",
     STRING(Req.Budget)},
    {"overhead", Arity::Value, "SIZE", C::Budget, Lib,
     "Fixed per-device allowance (CUDA context, library workspaces) counted "
     "against the budget; shown as its own line. Default 0, or the --device "
     "profile's measured one (H200: 607 MiB)",
     STRING(Req.Overhead)},
    {"device", Arity::Value, "NAME|FILE.json", C::Budget, Lib,
     "Device profile: H100-SXM (default for costs), H100-PCIe, H200, "
     "A100-40GB, A100-80GB, L4, RTX-4090, or a JSON file. Without --budget "
     "its memory is the budget: the H200's is what nvidia-smi reports "
     "(143771 MiB, measured), the others' the memory sold (80 GiB), not "
     "measured, a little above what the card reports; only the H200 has a "
     "measured default --overhead",
     STRING(Req.Device)},
    // One spelling, two meanings: oomplan plans the workspaces of the
    // backend that oomplan-run runs on, so the same flag names both.
    {"backend", Arity::Value, "cuda", C::Budget, ForLibrary | ForOomplan,
     "Plan as `oomplan-run --backend=cuda` runs the model: each cuDNN "
     "convolution's and cuBLAS product's workspace is a buffer of the plan, "
     "at the most the backend asks (64 MiB, 32 MiB) since no GPU is asked "
     "here. Default: the graph's tensors only",
     STRING(Req.Backend)},
    {"backend", Arity::Value, "cpu|cuda|cuda-on-cpu", C::Running, Run,
     "Where the plan runs: cpu (default); cuda (GPU 0; builds with CUDA "
     "only); or cuda-on-cpu, a CUDA run rehearsed without a GPU: the CPU "
     "kernels of the ops CUDA has, on memory treated as a device's, so what "
     "CUDA lacks runs as host steps as it would there (not CUDA's memory: no "
     "cuDNN or cuBLAS workspaces)",
     STRING(Req.Backend)},

    // Training.
    {"train", Arity::Flag, "", C::Training, Lib,
     "Plan one training step: forward, backward and optimizer "
     "(docs/training.md)",
     FLAG(Req.Train.Enabled)},
    {"optimizer", Arity::Value, "sgd|momentum|adam|adamw", C::Training, Lib,
     "Optimizer whose state --train counts (default adam)",
     STRING(Req.Train.Optimizer)},
    {"precision", Arity::Value,
     "fp32|fp16|bf16|fp16-mixed|bf16-mixed|bf16-autocast|fp16-autocast",
     C::Training, Lib,
     "Inference: fp16 or bf16 plans the fp32 model converted to 16 bits "
     "(every fp32 tensor; the ops ONNX Runtime's conversion keeps in fp32 "
     "keep it; docs/float16.md). Training (default fp32): mixed is \"O2\", "
     "16-bit weights, activations and gradients, fp32 master weights and "
     "moments; autocast is torch.autocast around an fp32 model",
     STRING(Req.Train.Precision)},
    {"grad-accum", Arity::Value, "K", C::Training, Lib,
     "Micro-batches per optimizer step (default 1)",
     INTEGER(unsigned, "grad-accum", Req.Train.GradAccum)},
    {"freeze", Arity::List, "PATTERN", C::Training, Lib,
     "Weights matching this glob (or re:REGEX) do not train (repeatable)",
     STRINGS(Req.Train.Freeze)},
    {"tied", Arity::List, "A,B", C::Training, Lib,
     "Weight B is weight A (possibly transposed): count it once (repeatable)",
     STRINGS(Req.Train.Tied)},
    {"loss", Arity::Value, "auto|ce|mean|none", C::Training, Lib,
     "Loss on the outputs (default auto: cross-entropy on logits-shaped "
     "outputs, else mean)",
     STRING(Req.Train.Loss)},
    {"step", Arity::Value, "steady|first", C::Training, Lib,
     "Which step: steady (default; optimizer state exists) or first (the "
     "optimizer step creates it)",
     STRING(Req.Train.Step)},
    {"zero-grad", Arity::Value, "none|zero", C::Training, Lib,
     "zero_grad(set_to_none=True) (none, default) or False (zero: gradients "
     "live all step)",
     STRING(Req.Train.ZeroGrad)},
    {"runtime", Arity::Value, "pytorch-cuda|pytorch-cpu|oomplan", C::Training,
     Lib,
     "Whose kernels and allocator to predict (default pytorch-cuda: "
     "max_memory_allocated and the caching allocator's reserved)",
     STRING(Req.Train.Runtime)},
    {"attention", Arity::Value, "auto|sdpa|eager", C::Training, Lib,
     "How attention trains on --runtime=pytorch-cuda: sdpa "
     "(scaled_dot_product_attention keeps q, k, v, output and a "
     "log-sum-exp), eager (the seq x seq scores are kept); default auto: "
     "sdpa where the graph shows it (nn.MultiheadAttention, an exported SDPA "
     "call), else eager",
     STRING(Req.Train.Attention)},
    {"dropout", Arity::Value, "P", C::Training, Lib,
     "For a graph exported without Dropout nodes (eval mode): the "
     "training-mode dropout its model has, put back after the embeddings, "
     "on residual branches and after attention's softmax (a mask of one "
     "byte per element each)",
     STRING(Req.Train.Dropout)},
    {"keep-output", Arity::Flag, "", C::Training, Lib,
     "The training loop keeps the previous step's outputs until the forward "
     "returns (`out = model(x)`); default: dropped before the next step "
     "(`loss = step(x)`, or `del out`)",
     FLAG(Req.Train.KeepOutput)},
    {"cuda-alloc-conf", Arity::Value,
     "max_split_size_mb:N,expandable_segments:True", C::Training, Lib,
     "PYTORCH_CUDA_ALLOC_CONF for the caching allocator simulation",
     STRING(Req.Train.CudaAllocConf)},
    {"devices", Arity::Value, "N|auto", C::Training, Lib,
     "Train on N devices (auto: the fewest that fit); docs/multi-device.md",
     STRING(Req.Parallel.Devices)},
    {"parallel", Arity::Value, "SPEC|auto", C::Training, Lib,
     "Comma-separated items of dp=D tp=T sp pp=P zero=0-3 micro-batches=M "
     "recompute=none|selective|full offload=optimizer|params|both (for "
     "example dp=2,tp=4,sp,zero=1); auto: the fastest that fits",
     STRING(Req.Parallel.Spec)},

    // Fitting.
    {"fit", Arity::Flag, "", C::Fitting, Lib,
     "Apply transforms (recompute, offload, weight streaming, reordering, "
     "micro-batches) to meet the budget at the least predicted added time "
     "(docs/fitting.md). A plan over the budget is fitted without it too; "
     "--fit also fits a plan that fits as is, and prints the trade-off table",
     FLAG(Req.Fit.Fit)},
    {"no-fit", Arity::Flag, "", C::Fitting, Lib,
     "Over budget: print the verdict for the plan as is (exit 2) instead of "
     "fitting it",
     FLAG(Req.Fit.NoFit)},
    {"remat", Arity::Value, "auto|sqrt|none", C::Fitting, Lib,
     "Recompute in training (with --fit)",
     ENUM("remat", Req.Fit.Remat, RematChoices), helpOf(RematChoices)},
    {"offload", Arity::Value, "auto|weights|none", C::Fitting, Lib,
     "Host offload (with --fit)",
     ENUM("offload", Req.Fit.Offload, OffloadChoices), helpOf(OffloadChoices)},
    {"reorder", Arity::Flag, "", C::Fitting, Lib,
     "Try a memory-aware step order", FLAG(Req.Fit.Reorder)},
    {"micro-batches", Arity::Value, "K", C::Fitting, Lib,
     "Split the batch into K passes (batch/K each); training accumulates "
     "gradients (give --grad-accum K too). Without it --fit may choose K "
     "itself; =1 forbids splitting",
     INTEGER(unsigned, "micro-batches", Req.Fit.MicroBatches)},
    {"fit-show-plan", Arity::Flag, "", C::Fitting, Lib,
     "With --fit: print the chosen plan's memory by class and the buffers "
     "live at its peak",
     FLAG(Req.Fit.ShowPlan)},
    {"tf32", Arity::Flag, "", C::Fitting, Lib,
     "Cost fp32 products at TF32 peak", FLAG(Req.Fit.TF32)},

    // Serving an LLM.
    {"serve", Arity::Flag, "", C::Serving, Lib,
     "The KV cache an LLM server (vLLM's rules) gets on the device: bytes "
     "per token, blocks, tokens, concurrency at --max-model-len, the longest "
     "context that starts, and the levers; exit 2 when the server would not "
     "start (docs/serving.md)",
     FLAG(Req.Serve.Enabled)},
    {"max-model-len", Arity::Value, "N", C::Serving, Lib,
     "With --serve: the longest request, prompt and output (required)",
     INTEGER(int64_t, "max-model-len", Req.Serve.MaxModelLen)},
    {"max-batched-tokens", Arity::Value, "N", C::Serving, Lib,
     "With --serve: tokens in one step, the prefill chunk (2048)",
     INTEGER(int64_t, "max-batched-tokens", Req.Serve.MaxBatchedTokens)},
    {"max-num-seqs", Arity::Value, "N", C::Serving, Lib,
     "With --serve: sequences in one decode step (256)",
     INTEGER(int64_t, "max-num-seqs", Req.Serve.MaxNumSeqs)},
    {"block-size", Arity::Value, "N", C::Serving, Lib,
     "With --serve: tokens per KV cache block (16)",
     INTEGER(int64_t, "block-size", Req.Serve.BlockSize)},
    {"kv-dtype", Arity::Value, "auto|fp16|bf16|fp8|int8", C::Serving, Lib,
     "With --serve: the KV cache's type (auto: the export's)",
     STRING(Req.Serve.KVDtype)},
    {"gpu-memory-utilization", Arity::Value, "F", C::Serving, Lib,
     "With --serve: the fraction of the device the server may use (0.9)",
     STRING(Req.Serve.GpuMemoryUtilization)},

    // Output.
    {"emit", Arity::Value,
     "graph|shapes|lifetimes|report|plan|json|csv|schedule|deepspeed|fsdp|"
     "megatron|vllm",
     C::Output, Lib, "What to print", ENUM("emit", Req.Emit, EmitChoices),
     helpOf(EmitChoices)},
    {"print-after", Arity::List, "PASS", C::Output, Lib, printAfterHelp(),
     STRINGS(Req.PrintAfter)},
    {"print-after-all", Arity::Flag, "", C::Output, Lib,
     "Print the schedule after every transform", FLAG(Req.PrintAfterAll)},
    {"o", Arity::Value, "FILE", C::Output, Lib, "Write output here",
     STRING(OutputPath)},
    {"max-batch", Arity::Flag, "", C::Output, Lib,
     "Find the largest batch whose plan fits the budget as is (without "
     "transforms: no fit runs). Without --batch the search starts at batch 1",
     FLAG(Req.Report.MaxBatch)},
    {"max-seq", Arity::Flag, "", C::Output, Lib,
     "Find the longest sequence whose plan fits the budget as is (without "
     "transforms). Without --seq the search starts at 1, and an unbound "
     "batch is 1",
     FLAG(Req.Report.MaxSeq)},
    {"sweep", Arity::Flag, "", C::Output, Lib,
     "Tabulate memory at batch 1,2,4,... and several sequence lengths "
     "(from batch 1 and seq 128 unless bound)",
     FLAG(Req.Report.Sweep)},
    {"timeline", Arity::Value, "FILE.svg|.html", C::Output, Lib,
     "Write the memory timeline (SVG, or HTML)",
     STRING(Req.Report.TimelinePath)},
    {"trace", Arity::Value, "FILE.json", C::Output, Lib,
     "Write the plan as Chrome trace / Perfetto JSON",
     STRING(Req.Report.TracePath)},
    {"commands", Arity::Value, "FILE|-", C::Output, ForOomplan,
     "Run each line of FILE (a model and its options, as after `oomplan`) "
     "in this one process; one JSON object per line on stdout: line, "
     "command, exit, fits, total_bytes, error, diagnostics, output. '-' "
     "reads stdin and answers each line as it arrives. Exit 1 if any line "
     "failed, else 2 if any does not fit. Takes no other option",
     STRING(CommandsPath)},

    // Algorithms.
    {"algo", Arity::Value, "NAME", C::Algorithms, Lib,
     "Placement algorithm (see --list-algos); default auto runs several and "
     "keeps the best",
     STRING(Req.Algorithm)},
    {"list-algos", Arity::Flag, "", C::Algorithms, Lib,
     "List placement algorithms and exit", FLAG(ListAlgorithms)},
    {"align", Arity::Value, "BYTES", C::Algorithms, Lib,
     "Alignment of every buffer (a power of two; default 256, 1 for CSV "
     "input)",
     INTEGER(uint64_t, "align", Req.AlignBytes)},
    {"no-inplace", Arity::Flag, "", C::Algorithms, Lib,
     "Never let elementwise ops overwrite their input", NOT_FLAG(Req.InPlace)},
    {"fuse", Arity::Value, "auto|none", C::Algorithms, Lib,
     "Fuse attention, conv + residual, pointwise + depthwise conv and matmul "
     "epilogues (default auto for inference, none with --train)",
     STRING(Req.Fuse)},
    {"order", Arity::Value, "memory|file", C::Algorithms, Lib,
     "Step order: memory-aware reorder (default for inference) or the "
     "file's (default with --train)",
     STRING(Req.Order)},
    {"io-in-arena", Arity::Flag, "", C::Algorithms, Lib,
     "Plan graph inputs and outputs inside the arena", FLAG(Req.IOInArena)},
    {"time-limit", Arity::Value, "SECONDS", C::Algorithms, Lib,
     "Seconds a search may run (default 2)",
     [](Arguments &A, StringRef V) -> Error {
       return assign(A.Req.TimeLimitSeconds, readDouble("time-limit", V));
     }},

    // Running (oomplan-run).
    {"input", Arity::List, "NAME=FILE.pb", C::Running, Run,
     "Graph input NAME from a TensorProto file (repeatable)",
     STRINGS(Run.Inputs)},
    {"inputs-dir", Arity::Value, "DIR", C::Running, Run,
     "Read DIR/input_<i>.pb for graph input i (ONNX test data)",
     STRING(Run.InputsDir)},
    {"output-dir", Arity::Value, "DIR", C::Running, Run,
     "Write graph output i to DIR/output_<i>.pb", STRING(Run.OutputDir)},
    {"seed", Arity::Value, "N", C::Running, Run,
     "Seed of the random values of inputs not given (default 0)",
     INTEGER(uint64_t, "seed", Run.Seed)},
    {"random-weights", Arity::Flag, "", C::Running, Run,
     "Give each initializer whose external data file is missing (a model "
     "shipped without its weights, as test/models) seeded random values "
     "(--seed) instead of failing; weights that are present load as usual",
     FLAG(Run.RandomWeights)},
    {"threads", Arity::Value, "N", C::Running, Run,
     "Kernel threads (default: one per physical core, as ONNX Runtime; 0 "
     "also means that)",
     INTEGER(unsigned, "threads", Run.Threads)},
    {"poison", Arity::Flag, "", C::Running, Run,
     "Overwrite each buffer when its lifetime ends (NaN for floats, 0xA5 for "
     "integers); outputs must not change",
     FLAG(Run.Poison)},
    {"check", Arity::Value, "unplanned", C::Running, Run,
     "unplanned: run again with every tensor in its own allocation and "
     "require bit-identical outputs",
     STRING(Run.Check)},
    {"fold-inputs", Arity::Flag, "", C::Running, Run,
     "Always plan the given small inputs (integers of up to 1024 elements, "
     "floats of up to 8) as constants, so that shapes may depend on their "
     "values (ONNX node tests feed Reshape targets, axes and scales as "
     "inputs); binary .onnx models. Without it this happens only when "
     "planning fails without the values",
     FLAG(Run.FoldInputs)},
    {"no-fold-inputs", Arity::Flag, "", C::Running, Run,
     "Never plan with the given inputs' values: a shape that depends on an "
     "input's values is an error, as in oomplan",
     FLAG(Run.NoFoldInputs)},
    {"repeat", Arity::Value, "N", C::Running, Run,
     "Run the plan N more times after the first (same regions and inputs, "
     "nothing allocated): the warm latency is their median; the RSS growth "
     "covers every run",
     INTEGER(unsigned, "repeat", Run.Repeat)},
    {"profile", Arity::Flag, "", C::Running, Run,
     "Time every step and print the time per op type, slowest first (over "
     "the warm runs with --repeat, else the first run)",
     FLAG(Run.Profile)},
    {"no-graph", Arity::Flag, "", C::Running, Run,
     "cuda: run every step on its own in every run, instead of replaying a "
     "CUDA graph of the steps after the first run",
     FLAG(Run.NoGraph)},
    {"no-host-steps", Arity::Flag, "", C::Running, Run,
     "cuda: refuse a plan with a step the device has no kernel for or "
     "cannot run, or a data-dependent size later steps read, instead of "
     "running that step on the host with the CPU kernel (copies and a wait "
     "for the device at each)",
     FLAG(Run.NoHostSteps)},
    {"list-kernels", Arity::Flag, "", C::Running, Run,
     "Print the op types the --backend has kernels for, one per line, and "
     "exit (needs no model and, for cuda, no GPU)",
     FLAG(Run.ListKernels)},
    {"json", Arity::Flag, "", C::Running, Run,
     "Print one JSON object instead of the table", FLAG(Run.JSON)},
    {"commands", Arity::Value, "FILE|-", C::Running, Run,
     "Run each line of FILE (a model and its options, as after "
     "`oomplan-run`) in a child of this one process; one JSON object per "
     "line on stdout: line, command, exit (signal), stdout, stderr. '-' "
     "reads stdin and answers each line as it arrives. Exit 1 if any line "
     "did not exit 0. Takes only --line-timeout",
     STRING(Run.CommandsPath)},
    {"line-timeout", Arity::Value, "S", C::Running, Run,
     "With --commands: stop a line after S seconds (its record says signal "
     "14)",
     INTEGER(unsigned, "line-timeout", Run.LineTimeout)},

    // General: --help and its variants, as llvm::cl spelled them.
    {"help", Arity::Generic, "", C::General, All,
     "Describe every option and exit", FLAG(Help)},
    {"version", Arity::Generic, "", C::General, All, "Print the version",
     FLAG(Version)},
    {"h",
     Arity::Generic,
     "",
     C::General,
     All,
     "The same as --help",
     FLAG(Help),
     {},
     /*Hidden=*/true},
    {"help-hidden",
     Arity::Generic,
     "",
     C::General,
     All,
     "--help with these variants too",
     [](Arguments &A, StringRef V) -> Error {
       if (Error E = assign(A.Help, readBool("", V)))
         return E;
       A.HelpHidden = A.Help;
       return Error::success();
     },
     {},
     /*Hidden=*/true},
    {"help-list",
     Arity::Generic,
     "",
     C::General,
     All,
     "The same as --help",
     FLAG(Help),
     {},
     /*Hidden=*/true},
    {"help-list-hidden",
     Arity::Generic,
     "",
     C::General,
     All,
     "The same as --help-hidden",
     FLAG(Help),
     {},
     /*Hidden=*/true},
    {"print-all-options",
     Arity::Generic,
     "",
     C::General,
     All,
     "The same as --help",
     FLAG(Help),
     {},
     /*Hidden=*/true},
    {"print-options",
     Arity::Generic,
     "",
     C::General,
     All,
     "The same as --help",
     FLAG(Help),
     {},
     /*Hidden=*/true},
};

} // namespace

Expected<bool> options::readBool(StringRef Name, StringRef V) {
  if (V == "true" || V == "TRUE" || V == "True" || V == "1")
    return true;
  if (V == "false" || V == "FALSE" || V == "False" || V == "0")
    return false;
  return badValue(Name, V, "true or false");
}

ArrayRef<OptionSpec> options::table() { return Rows; }

bool options::acceptedBy(const OptionSpec &O, ArgumentsFor For) {
  switch (For) {
  case ArgumentsFor::Library:
    return O.For & ForLibrary;
  case ArgumentsFor::Oomplan:
    return O.For & ForOomplan;
  case ArgumentsFor::OomplanRun:
    return O.For & ForOomplanRun;
  }
  return false;
}

StringRef options::categoryName(Category Cat) {
  switch (Cat) {
  case Category::Model:
    return "Model and shapes";
  case Category::Budget:
    return "Budget and device";
  case Category::Training:
    return "Training";
  case Category::Fitting:
    return "Fitting";
  case Category::Serving:
    return "Serving an LLM";
  case Category::Output:
    return "Output";
  case Category::Algorithms:
    return "Algorithms";
  case Category::Running:
    return "Running";
  case Category::General:
    return "General";
  }
  return "";
}
