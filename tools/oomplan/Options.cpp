//===- Options.cpp - the oomplan tool's command-line options --------------===//
//
// Every option of the tool, grouped for --help by category, and their
// translation into one api::Request. No logic beyond spelling: what an
// option means is decided in lib/Driver.
//
//===----------------------------------------------------------------------===//
#include "Options.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace oomplan;

static cl::OptionCategory ModelCat("Model and shapes");
static cl::OptionCategory BudgetCat("Budget and device");
static cl::OptionCategory TrainCat("Training");
static cl::OptionCategory FitCat("Fitting");
static cl::OptionCategory ServeCat("Serving an LLM");
// Constructed on first use: the tools' own options (oomplan.cpp's
// --commands) join it from other files, whose statics may be initialized
// before these.
cl::OptionCategory &tool::outputCategory() {
  static cl::OptionCategory C("Output");
  return C;
}
static cl::OptionCategory &OutputCat = tool::outputCategory();
static cl::OptionCategory AlgoCat("Algorithms");

// Model and shapes.
static cl::opt<std::string>
    ModelPath(cl::Positional, cl::Required, cl::cat(ModelCat),
              cl::desc("<model.onnx | model.onnxtxt | buffers.csv>"));
static cl::opt<int64_t>
    Batch("batch", cl::cat(ModelCat), cl::value_desc("N"),
          cl::desc("Bind the batch symbol (first dim of every input)"));
static cl::opt<int64_t>
    Seq("seq", cl::cat(ModelCat), cl::value_desc("N"),
        cl::desc("Bind the sequence symbol (second dim of token inputs)"));
static cl::list<std::string>
    Dims("dim", cl::cat(ModelCat), cl::value_desc("NAME=VALUE"),
         cl::CommaSeparated,
         cl::desc("Bind any symbol of the model (repeatable)"));
static cl::list<std::string>
    InputShapes("input-shape", cl::cat(ModelCat),
                cl::value_desc("NAME=8x3x224x224"),
                cl::desc("Bind the symbols of input NAME's dims from its shape "
                         "(repeatable)"));

// Budget and device.
static cl::opt<std::string> Budget(
    "budget", cl::cat(BudgetCat), cl::value_desc("SIZE"),
    cl::desc("Device memory available: 24G = 24GiB (binary), 300MB (decimal), "
             "or bytes. Over budget the plan is fitted (recompute, offload, "
             "micro-batches; --no-fit: not): exit 0 when the fitted plan "
             "fits, 2 when nothing fits"));
static cl::opt<std::string> Overhead(
    "overhead", cl::cat(BudgetCat), cl::value_desc("SIZE"),
    cl::desc("Fixed per-device allowance (CUDA context, library workspaces) "
             "counted against the budget; shown as its own line. Default 0, "
             "or the --device profile's measured one (H200: 607 MiB)"));
static cl::opt<std::string> Device(
    "device", cl::cat(BudgetCat), cl::value_desc("NAME|FILE.json"),
    cl::desc("Device profile: H100-SXM (default for costs), H100-PCIe, H200, "
             "A100-40GB, A100-80GB, L4, RTX-4090, or a JSON file. Without "
             "--budget its memory is the budget: the H200's is what "
             "nvidia-smi reports (143771 MiB, measured), the others' the "
             "memory sold (80 GiB), not measured, a little above what the "
             "card reports; only the H200 has a measured default --overhead"));
// Shared with oomplan-run, where it says where the plan runs (cpu|cuda);
// here it says whose kernels' workspaces the plan holds, so that
// `oomplan --backend=cuda` plans what `oomplan-run --backend=cuda` runs.
static cl::opt<std::string> BackendOpt(
    "backend", cl::cat(BudgetCat), cl::value_desc("cuda"),
    cl::desc("Plan as `oomplan-run --backend=cuda` runs the model: each cuDNN "
             "convolution's and cuBLAS product's workspace is a buffer of the "
             "plan, at the most the backend asks (64 MiB, 32 MiB) since no "
             "GPU is asked here. Default: the graph's tensors only"));

// Training.
static cl::opt<bool>
    Train("train", cl::cat(TrainCat),
          cl::desc("Plan one training step: forward, "
                   "backward and optimizer (docs/training.md)"));
static cl::opt<std::string>
    Optimizer("optimizer", cl::cat(TrainCat),
              cl::value_desc("sgd|momentum|adam|adamw"),
              cl::desc("Optimizer whose state --train counts (default adam)"));
static cl::opt<std::string> Precision(
    "precision", cl::cat(TrainCat),
    cl::value_desc("fp32|fp16-mixed|bf16-mixed|bf16-autocast|fp16-autocast"),
    cl::desc("Training precision (default fp32; mixed: \"O2\", 16-bit "
             "weights, activations and gradients, fp32 master weights and "
             "moments; autocast: torch.autocast around an fp32 model)"));
static cl::opt<unsigned>
    GradAccum("grad-accum", cl::cat(TrainCat), cl::value_desc("K"),
              cl::desc("Micro-batches per optimizer step (default 1)"));
static cl::list<std::string>
    Freeze("freeze", cl::cat(TrainCat), cl::value_desc("PATTERN"),
           cl::desc("Weights matching this glob (or re:REGEX) do not train "
                    "(repeatable)"));
static cl::list<std::string>
    Tied("tied", cl::cat(TrainCat), cl::value_desc("A,B"),
         cl::desc("Weight B is weight A (possibly transposed): count it once "
                  "(repeatable)"));

static cl::opt<std::string>
    Loss("loss", cl::cat(TrainCat), cl::value_desc("auto|ce|mean|none"),
         cl::desc("Loss on the outputs (default auto: cross-entropy on "
                  "logits-shaped outputs, else mean)"));
static cl::opt<std::string>
    StepKindOpt("step", cl::cat(TrainCat), cl::value_desc("steady|first"),
                cl::desc("Which step: steady (default; optimizer state "
                         "exists) or first (the optimizer step creates it)"));
static cl::opt<std::string>
    ZeroGrad("zero-grad", cl::cat(TrainCat), cl::value_desc("none|zero"),
             cl::desc("zero_grad(set_to_none=True) (none, default) or "
                      "False (zero: gradients live all step)"));
static cl::opt<std::string> Runtime(
    "runtime", cl::cat(TrainCat),
    cl::value_desc("pytorch-cuda|pytorch-cpu|oomplan"),
    cl::desc("Whose kernels and allocator to predict (default pytorch-cuda: "
             "max_memory_allocated and the caching allocator's reserved)"));
static cl::opt<std::string> Attention(
    "attention", cl::cat(TrainCat), cl::value_desc("auto|sdpa|eager"),
    cl::desc("How attention trains on --runtime=pytorch-cuda: sdpa "
             "(scaled_dot_product_attention keeps q, k, v, output and a "
             "log-sum-exp), eager (the seq x seq scores are kept); default "
             "auto: sdpa where the graph shows it (nn.MultiheadAttention, "
             "an exported SDPA call), else eager"));
static cl::opt<std::string> DropoutOpt(
    "dropout", cl::cat(TrainCat), cl::value_desc("P"),
    cl::desc("For a graph exported without Dropout nodes (eval mode): the "
             "training-mode dropout its model has, put back after the "
             "embeddings, on residual branches and after attention's "
             "softmax (a mask of one byte per element each)"));
static cl::opt<bool> KeepOutput(
    "keep-output", cl::cat(TrainCat),
    cl::desc("The training loop keeps the previous step's outputs until the "
             "forward returns (`out = model(x)`); default: dropped before the "
             "next step (`loss = step(x)`, or `del out`)"));
static cl::opt<std::string> CudaAllocConf(
    "cuda-alloc-conf", cl::cat(TrainCat),
    cl::value_desc("max_split_size_mb:N,expandable_segments:True"),
    cl::desc("PYTORCH_CUDA_ALLOC_CONF for the caching allocator simulation"));

// Fitting.
static cl::opt<bool>
    Fit("fit", cl::cat(FitCat),
        cl::desc("Apply transforms (recompute, offload, weight streaming, "
                 "reordering, micro-batches) to meet the budget at the least "
                 "predicted added time (docs/fitting.md). A plan over the "
                 "budget is fitted without it too; --fit also fits a plan "
                 "that fits as is, and prints the trade-off table"));
static cl::opt<bool>
    NoFit("no-fit", cl::cat(FitCat),
          cl::desc("Over budget: print the verdict for the plan as is (exit "
                   "2) instead of fitting it"));
static cl::opt<api::RematChoice> Remat(
    "remat", cl::cat(FitCat), cl::init(api::RematChoice::Auto),
    cl::desc("Recompute in training (with --fit)"),
    cl::values(clEnumValN(api::RematChoice::Auto, "auto",
                          "cheapest recompute that fits (default)"),
               clEnumValN(api::RematChoice::Sqrt, "sqrt",
                          "Chen's sqrt(n) checkpointing, for comparison"),
               clEnumValN(api::RematChoice::None, "none", "no recompute")));
static cl::opt<api::OffloadChoice>
    Offload("offload", cl::cat(FitCat), cl::init(api::OffloadChoice::Auto),
            cl::desc("Host offload (with --fit)"),
            cl::values(clEnumValN(api::OffloadChoice::Auto, "auto",
                                  "stream weights (inference) or park saved "
                                  "activations on the host (training) when "
                                  "cheapest (default)"),
                       clEnumValN(api::OffloadChoice::Weights, "weights",
                                  "stream weights from host memory"),
                       clEnumValN(api::OffloadChoice::None, "none",
                                  "keep all on device")));
static cl::opt<bool> Reorder("reorder", cl::cat(FitCat),
                             cl::desc("Try a memory-aware step order"));
static cl::opt<unsigned> MicroBatches(
    "micro-batches", cl::cat(FitCat), cl::value_desc("K"),
    cl::desc("Split the batch into K passes (batch/K each); training "
             "accumulates gradients (give --grad-accum K too). Without it "
             "--fit may choose K itself; =1 forbids splitting"));
static cl::opt<bool> FitShowPlan(
    "fit-show-plan", cl::cat(FitCat),
    cl::desc("With --fit: print the chosen plan's memory by class and the "
             "buffers live at its peak"));
static cl::opt<bool> TF32("tf32", cl::cat(FitCat),
                          cl::desc("Cost fp32 products at TF32 peak"));

// Serving an LLM.
static cl::opt<bool> Serve(
    "serve", cl::cat(ServeCat),
    cl::desc("The KV cache an LLM server (vLLM's rules) gets on the device: "
             "bytes per token, blocks, tokens, concurrency at "
             "--max-model-len, the longest context that starts, and the "
             "levers; exit 2 when the server would not start "
             "(docs/serving.md)"));
static cl::opt<int64_t> MaxModelLen(
    "max-model-len", cl::cat(ServeCat), cl::value_desc("N"),
    cl::desc(
        "With --serve: the longest request, prompt and output (required)"));
static cl::opt<int64_t> MaxBatchedTokens(
    "max-batched-tokens", cl::cat(ServeCat), cl::value_desc("N"),
    cl::desc("With --serve: tokens in one step, the prefill chunk (2048)"));
static cl::opt<int64_t>
    MaxNumSeqs("max-num-seqs", cl::cat(ServeCat), cl::value_desc("N"),
               cl::desc("With --serve: sequences in one decode step (256)"));
static cl::opt<int64_t>
    BlockSize("block-size", cl::cat(ServeCat), cl::value_desc("N"),
              cl::desc("With --serve: tokens per KV cache block (16)"));
static cl::opt<std::string>
    KVDtype("kv-dtype", cl::cat(ServeCat),
            cl::value_desc("auto|fp16|bf16|fp8|int8"),
            cl::desc("With --serve: the KV cache's type (auto: the "
                     "export's)"));
static cl::opt<std::string> GpuMemoryUtilization(
    "gpu-memory-utilization", cl::cat(ServeCat), cl::value_desc("F"),
    cl::desc("With --serve: the fraction of the device the server may use "
             "(0.9)"));

// Output.
static cl::opt<api::EmitKind>
    Emit("emit", cl::cat(OutputCat), cl::init(api::EmitKind::Report),
         cl::desc("What to print"),
         cl::values(
             clEnumValN(api::EmitKind::Graph, "graph", "the imported IR"),
             clEnumValN(api::EmitKind::Shapes, "shapes",
                        "every value's type, dims, bytes"),
             clEnumValN(api::EmitKind::Lifetimes, "lifetimes",
                        "buffers and step ranges"),
             clEnumValN(api::EmitKind::Report, "report",
                        "memory summary and peak buffers (default)"),
             clEnumValN(api::EmitKind::Plan, "plan",
                        "the plan's regions and every buffer's offset and "
                        "lifetime (no breakdown or diagnosis)"),
             clEnumValN(api::EmitKind::JSON, "json",
                        "the plan as JSON with its report (docs/plan-json.md)"),
             clEnumValN(api::EmitKind::CSV, "csv",
                        "arena buffers as MiniMalloc CSV with offsets"),
             clEnumValN(api::EmitKind::Schedule, "schedule",
                        "the schedule that is placed, one step a line (with "
                        "--fit: the fitted one)"),
             clEnumValN(api::EmitKind::DeepSpeed, "deepspeed",
                        "with --devices: a DeepSpeed config JSON"),
             clEnumValN(api::EmitKind::FSDP, "fsdp",
                        "with --devices: PyTorch FSDP settings (JSON)"),
             clEnumValN(api::EmitKind::Megatron, "megatron",
                        "with --devices: Megatron-LM arguments"),
             clEnumValN(api::EmitKind::VLLM, "vllm",
                        "with --serve: vLLM's engine arguments")));
static cl::list<std::string> PrintAfter(
    "print-after", cl::cat(OutputCat), cl::value_desc("PASS"),
    cl::desc("Print the schedule after this transform, before the output: "
             "training, reorder, recompute, activation-offload, "
             "weight-streaming, optimizer-offload, micro-batch, "
             "inference-recompute (repeatable)"));
static cl::opt<bool>
    PrintAfterAll("print-after-all", cl::cat(OutputCat),
                  cl::desc("Print the schedule after every transform"));
static cl::opt<std::string>
    Devices("devices", cl::cat(TrainCat), cl::value_desc("N|auto"),
            cl::desc("Train on N devices (auto: the fewest that fit); "
                     "docs/multi-device.md"));
static cl::opt<std::string> Parallel(
    "parallel", cl::cat(TrainCat), cl::value_desc("SPEC|auto"),
    cl::desc("dp=D,tp=T,sp,pp=P,zero=0-3,micro-batches=M,recompute=none|"
             "selective|full,offload=optimizer|params|both; auto: the "
             "fastest that fits"));
static cl::opt<std::string> OutputPath("o", cl::cat(OutputCat), cl::init("-"),
                                       cl::value_desc("FILE"),
                                       cl::desc("Write output here"));
static cl::opt<bool> MaxBatch(
    "max-batch", cl::cat(OutputCat),
    cl::desc("Find the largest batch whose plan fits the budget as is "
             "(without transforms: no fit runs). Without --batch the search "
             "starts at batch 1"));
static cl::opt<bool> MaxSeq(
    "max-seq", cl::cat(OutputCat),
    cl::desc("Find the longest sequence whose plan fits the budget as is "
             "(without transforms). Without --seq the search starts at 1, "
             "and an unbound batch is 1"));
static cl::opt<bool> Sweep("sweep", cl::cat(OutputCat),
                           cl::desc("Tabulate memory at batch 1,2,4,... and "
                                    "several sequence lengths"));
static cl::opt<std::string>
    TimelinePath("timeline", cl::cat(OutputCat),
                 cl::value_desc("FILE.svg|.html"),
                 cl::desc("Write the memory timeline (SVG, or HTML)"));
static cl::opt<std::string>
    TracePath("trace", cl::cat(OutputCat), cl::value_desc("FILE.json"),
              cl::desc("Write the plan as Chrome trace / Perfetto JSON"));

// Algorithms.
static cl::opt<std::string>
    Algo("algo", cl::cat(AlgoCat), cl::init("auto"), cl::value_desc("NAME"),
         cl::desc("Placement algorithm (see --list-algos); default auto runs "
                  "several and keeps the best"));
static cl::opt<bool> ListAlgos("list-algos", cl::cat(AlgoCat),
                               cl::desc("List placement algorithms and exit"));
static cl::opt<uint64_t>
    Align("align", cl::cat(AlgoCat), cl::init(256), cl::value_desc("BYTES"),
          cl::desc("Alignment of every buffer (a power of two; default "
                   "256, 1 for CSV input)"));
static cl::opt<bool> NoInPlace("no-inplace", cl::cat(AlgoCat),
                               cl::desc("Never let elementwise ops overwrite "
                                        "their input"));
static cl::opt<std::string>
    Fuse("fuse", cl::cat(AlgoCat), cl::value_desc("auto|none"),
         cl::desc("Fuse attention, conv + residual and matmul epilogues "
                  "(default auto for inference, none with --train)"));
static cl::opt<std::string>
    Order("order", cl::cat(AlgoCat), cl::value_desc("memory|file"),
          cl::desc("Step order: memory-aware reorder (default for "
                   "inference) or the file's (default with --train)"));
static cl::opt<bool> IOInArena("io-in-arena", cl::cat(AlgoCat),
                               cl::desc("Plan graph inputs and outputs inside "
                                        "the arena"));
static cl::opt<double> TimeLimit("time-limit", cl::cat(AlgoCat), cl::init(2.0),
                                 cl::desc("Seconds a search may run"));

cl::opt<std::string> &tool::backendOption() { return BackendOpt; }

ArrayRef<const cl::OptionCategory *> tool::categories() {
  static const cl::OptionCategory *Cats[] = {&ModelCat, &BudgetCat, &TrainCat,
                                             &FitCat,   &ServeCat,  &OutputCat,
                                             &AlgoCat};
  return Cats;
}

const std::string &tool::outputPath() { return OutputPath; }
bool tool::listAlgorithms() { return ListAlgos; }

template <typename T> static std::optional<T> given(const cl::opt<T> &O) {
  if (O.getNumOccurrences())
    return O.getValue();
  return std::nullopt;
}

static Error shapeOptions(api::Request &R) {
  R.Batch = given(Batch);
  R.Seq = given(Seq);
  for (StringRef D : Dims) {
    auto [Name, Val] = D.split('=');
    int64_t V;
    if (Name.empty() || Val.getAsInteger(10, V))
      return makeInputError("--dim expects NAME=VALUE, got '" + D + "'");
    R.Dims.push_back({Name.str(), V});
  }
  for (StringRef S : InputShapes) {
    std::string Why;
    auto In = api::parseInputShape(S.str(), Why);
    if (!In)
      return makeInputError(Why);
    R.InputShapes.push_back(std::move(*In));
  }
  return Error::success();
}

Expected<api::Request> tool::makeRequest() {
  api::Request R;
  R.ModelPath = ModelPath;
  if (Error E = shapeOptions(R))
    return E;
  R.Train.Enabled = Train;
  R.Train.Optimizer = given(Optimizer);
  R.Train.Precision = given(Precision);
  R.Train.GradAccum = given(GradAccum);
  R.Train.Freeze.assign(Freeze.begin(), Freeze.end());
  R.Train.Tied.assign(Tied.begin(), Tied.end());
  R.Train.Loss = given(Loss);
  R.Train.Step = given(StepKindOpt);
  R.Train.ZeroGrad = given(ZeroGrad);
  R.Train.Runtime = given(Runtime);
  R.Train.CudaAllocConf = given(CudaAllocConf);
  R.Train.Attention = given(Attention);
  R.Train.Dropout = given(DropoutOpt);
  R.Train.KeepOutput = KeepOutput;
  R.Budget = given(Budget);
  R.Overhead = given(Overhead);
  R.Device = given(Device);
  R.Backend = given(BackendOpt);
  R.Parallel.Devices = given(Devices);
  R.Parallel.Spec = given(Parallel);
  R.Serve.Enabled = Serve;
  R.Serve.MaxModelLen = given(MaxModelLen);
  R.Serve.MaxBatchedTokens = given(MaxBatchedTokens);
  R.Serve.MaxNumSeqs = given(MaxNumSeqs);
  R.Serve.BlockSize = given(BlockSize);
  R.Serve.KVDtype = given(KVDtype);
  R.Serve.GpuMemoryUtilization = given(GpuMemoryUtilization);
  R.Fit.Fit = Fit;
  R.Fit.NoFit = NoFit;
  R.Fit.Remat = Remat;
  R.Fit.Offload = Offload;
  R.Fit.Reorder = Reorder;
  R.Fit.MicroBatches = given(MicroBatches);
  R.Fit.TF32 = TF32;
  R.Fit.ShowPlan = FitShowPlan;
  R.Algorithm = Algo;
  R.AlignBytes = given(Align);
  R.TimeLimitSeconds = TimeLimit;
  R.InPlace = !NoInPlace;
  R.Fuse = given(Fuse);
  R.Order = given(Order);
  R.IOInArena = IOInArena;
  R.Emit = Emit;
  R.Report.MaxBatch = MaxBatch;
  R.Report.MaxSeq = MaxSeq;
  R.Report.Sweep = Sweep;
  R.Report.TimelinePath = TimelinePath;
  R.Report.TracePath = TracePath;
  R.PrintAfter.assign(PrintAfter.begin(), PrintAfter.end());
  R.PrintAfterAll = PrintAfterAll;
  return R;
}

// The visible option closest to Name by edit distance, or "".
static std::string closestOption(StringRef Name) {
  std::string Best;
  unsigned BestDist = std::max<unsigned>(2, Name.size() / 3) + 1;
  for (auto &Entry : cl::getRegisteredOptions()) {
    const cl::Option *O = Entry.second;
    if (O->getOptionHiddenFlag() != cl::NotHidden || Entry.first().empty())
      continue;
    unsigned D = Name.edit_distance(Entry.first(), true, BestDist);
    if (D < BestDist) {
      BestDist = D;
      Best = Entry.first().str();
    }
  }
  return Best;
}

// An enum option's value that is none of its values: list them.
static std::string checkEnumValue(const cl::Option *O, StringRef Val) {
  const cl::generic_parser_base *P = nullptr;
  if (O == &Emit)
    P = &Emit.getParser();
  else if (O == &Remat)
    P = &Remat.getParser();
  else if (O == &Offload)
    P = &Offload.getParser();
  if (!P)
    return "";
  std::vector<std::string> Names;
  for (unsigned I = 0; I < P->getNumOptions(); ++I) {
    if (P->getOption(I) == Val)
      return "";
    Names.push_back(P->getOption(I).str());
  }
  return "invalid value '" + Val.str() + "' for --" + O->ArgStr.str() +
         "; valid values: " + join(Names, ", ");
}

std::string tool::checkArguments(int argc, const char *const *argv) {
  StringMap<cl::Option *> &Opts = cl::getRegisteredOptions();
  for (int I = 1; I < argc; ++I) {
    StringRef Arg = argv[I];
    if (Arg == "--")
      break;
    if (!Arg.startswith("-") || Arg == "-")
      continue;
    StringRef Body = Arg.drop_front(Arg.startswith("--") ? 2 : 1);
    auto [Name, Val] = Body.split('=');
    bool HasVal = Body.contains('=');
    auto It = Opts.find(Name);
    if (It == Opts.end()) {
      std::string Msg = "unknown option '" + Arg.split('=').first.str() + "'";
      std::string Near = closestOption(Name);
      return Near.empty() ? Msg : Msg + "; did you mean '--" + Near + "'?";
    }
    const cl::Option *O = It->second;
    // A value in the next argument ("--batch -1" too) is not an option.
    if (!HasVal && O->getValueExpectedFlag() == cl::ValueRequired &&
        !O->isPositional() && I + 1 < argc) {
      Val = argv[++I];
      HasVal = true;
    }
    if (HasVal) {
      std::string Msg = checkEnumValue(O, Val);
      if (!Msg.empty())
        return Msg;
    }
  }
  return "";
}
