//===- Driver.cpp - oomplan.h's entry point: a request to a result --------===//
//
// run() resolves the request's options (budget, overhead, device, training),
// refuses options that would be ignored or that conflict, dispatches to the
// model or CSV path, and turns any llvm::Error into the result's category and
// message. Everything the CLI used to do besides parsing and printing.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Driver/Session.h"
#include "oomplan/IR/FusedOps.h"
#include "oomplan/Placement/Registry.h"
#include "oomplan/Report/CachingAllocator.h"
#include "oomplan/Schedule/PassRegistry.h"
#include "oomplan/Schedule/SchedulePrinter.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/Error.h"
#include "oomplan/Transforms/InferencePrecision.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

const char *api::errorCategoryName(ErrorCategory C) {
  switch (C) {
  case ErrorCategory::BadInput:
    return "bad input";
  case ErrorCategory::Unsupported:
    return "unsupported";
  case ErrorCategory::Overflow:
    return "overflow";
  case ErrorCategory::Internal:
    return "internal error";
  case ErrorCategory::IO:
    return "I/O error";
  }
  return "internal error";
}

api::ErrorCategory driver::apiCategory(oomplan::ErrorCategory C) {
  switch (C) {
  case oomplan::ErrorCategory::Input:
    return api::ErrorCategory::BadInput;
  case oomplan::ErrorCategory::Unsupported:
    return api::ErrorCategory::Unsupported;
  case oomplan::ErrorCategory::Overflow:
    return api::ErrorCategory::Overflow;
  case oomplan::ErrorCategory::IO:
    return api::ErrorCategory::IO;
  case oomplan::ErrorCategory::Internal:
    break;
  }
  return api::ErrorCategory::Internal;
}

PipelineOptions Session::pipelineOptions() const {
  PipelineOptions PO;
  PO.Liveness.InPlace = Req.InPlace;
  PO.Placement.Algorithm = Req.Algorithm;
  PO.Placement.AlignBytes = Req.AlignBytes.value_or(256);
  PO.Placement.TimeLimitSeconds = Req.TimeLimitSeconds;
  PO.Placement.IOInArena = Req.IOInArena;
  PO.Placement.Limit = Limit;
  PO.EditSchedule = EditSchedule;
  return PO;
}

static Expected<uint64_t> parseSize(StringRef Option, StringRef Text) {
  auto B = parseByteSize(Text);
  if (!B)
    return B.takeError();
  // Formulas and JSON carry bytes as signed 64-bit numbers.
  if (*B > uint64_t(INT64_MAX))
    return makeInputError("--" + Option + " " + Text +
                          " is too large (at most 8 EiB)");
  return *B;
}

// Options that have no effect in this run are errors, not silently dropped:
// a user who writes --precision=fp16 without --train expects fp16 numbers.
static Error checkIgnored(const api::Request &R) {
  const api::TrainingRequest &T = R.Train;
  if (!T.Enabled) {
    std::vector<std::string> Given;
    if (T.Optimizer)
      Given.push_back("--optimizer");
    if (T.GradAccum)
      Given.push_back("--grad-accum");
    if (!T.Freeze.empty())
      Given.push_back("--freeze");
    if (!T.Tied.empty())
      Given.push_back("--tied");
    if (T.KeepOutput)
      Given.push_back("--keep-output");
    for (auto [Opt, Name] : {std::pair{&T.Loss, "--loss"},
                             {&T.Step, "--step"},
                             {&T.ZeroGrad, "--zero-grad"},
                             {&T.Runtime, "--runtime"},
                             {&T.CudaAllocConf, "--cuda-alloc-conf"},
                             {&T.Attention, "--attention"},
                             {&T.Dropout, "--dropout"}})
      if (*Opt)
        Given.push_back(Name);
    if (!Given.empty())
      return makeInputError(join(Given, ", ") +
                            (Given.size() == 1 ? " has" : " have") +
                            " no effect without --train");
  }
  const api::ServeRequest &SR = R.Serve;
  if (!SR.Enabled) {
    std::vector<std::string> Given;
    for (auto [Opt, Name] : {std::pair{&SR.MaxModelLen, "--max-model-len"},
                             {&SR.MaxBatchedTokens, "--max-batched-tokens"},
                             {&SR.MaxNumSeqs, "--max-num-seqs"},
                             {&SR.BlockSize, "--block-size"}})
      if (*Opt)
        Given.push_back(Name);
    if (SR.KVDtype)
      Given.push_back("--kv-dtype");
    if (SR.GpuMemoryUtilization)
      Given.push_back("--gpu-memory-utilization");
    if (!Given.empty())
      return makeInputError(join(Given, ", ") +
                            (Given.size() == 1 ? " has" : " have") +
                            " no effect without --serve");
  } else {
    // The server decides the steps' shapes; these would be ignored.
    std::vector<std::string> Given;
    if (T.Enabled)
      Given.push_back("--train");
    if (R.Batch)
      Given.push_back("--batch (the steps use --max-num-seqs)");
    if (R.Seq)
      Given.push_back("--seq (the steps use --max-batched-tokens and "
                      "--max-model-len)");
    if (!R.InputShapes.empty())
      Given.push_back("--input-shape");
    if (R.Parallel.requested())
      Given.push_back("--devices/--parallel (tensor parallelism is a lever "
                      "of the report)");
    if (R.Fit.requested())
      Given.push_back("--fit and its transforms");
    std::vector<std::string> Report = reportOptionsGiven(R);
    llvm::erase_value(Report, "--overhead"); // The capacity counts it.
    Given.insert(Given.end(), Report.begin(), Report.end());
    if (!Given.empty())
      return makeInputError("--serve does not combine with " +
                            join(Given, ", "));
    if (R.Emit != api::EmitKind::Report && R.Emit != api::EmitKind::JSON &&
        R.Emit != api::EmitKind::VLLM)
      return makeInputError("--serve prints its report, --emit=json or "
                            "--emit=vllm; other --emit kinds do not apply");
  }
  if (R.Emit == api::EmitKind::VLLM && !SR.Enabled)
    return makeInputError("--emit=vllm writes a server's engine arguments: "
                          "add --serve");
  if (R.Fit.MicroBatches && *R.Fit.MicroBatches == 0)
    return makeInputError("--micro-batches must be at least 1");
  if (R.Fit.NoFit && R.Fit.requested())
    return makeInputError(
        "--no-fit contradicts --fit, --remat=sqrt, --offload=weights, "
        "--reorder and --micro-batches (they ask for a fit)");
  return Error::success();
}

void Session::printPasses(const Graph &G, ArrayRef<PassRecord> Log) {
  for (const PassRecord &Rec : Log) {
    if (!Req.PrintAfterAll && !is_contained(Req.PrintAfter, Rec.Pass))
      continue;
    OS << "*** Schedule after " << Rec.Pass << " ***\n";
    printSchedule(OS, Rec.Sched, &G);
  }
}

// --print-after names a registered pass; a typo would print nothing.
static Error checkPassNames(const api::Request &R) {
  for (const std::string &Name : R.PrintAfter)
    if (!lookupPass(Name))
      return makeInputError("--print-after=" + Name +
                            ": no such transform (valid: " +
                            join(api::scheduleTransformNames(), ", ") + ")");
  return Error::success();
}

// --loss, --step, --zero-grad, --runtime: the command line's defaults are
// what a user trains with (docs/training.md): a cross-entropy on logits and
// PyTorch on CUDA, the device whose out-of-memory errors this tool explains.
static Error resolveStepOptions(Session &S) {
  const api::TrainingRequest &T = S.Req.Train;
  auto L = parseLoss(T.Loss.value_or("auto"));
  if (!L)
    return L.takeError();
  auto St = parseTrainStep(T.Step.value_or("steady"));
  if (!St)
    return St.takeError();
  auto Z = parseZeroGrad(T.ZeroGrad.value_or("none"));
  if (!Z)
    return Z.takeError();
  auto R = parseTrainRuntime(T.Runtime.value_or("pytorch-cuda"));
  if (!R)
    return R.takeError();
  S.Train.Loss = *L;
  S.Train.Step = *St;
  S.Train.ZeroGrad = *Z;
  S.Train.Runtime = *R;
  // Fused attention is PyTorch 2.x's on CUDA; 1.13 on the CPU and our own
  // executor run the ops as exported.
  auto A = parseAttentionMode(T.Attention.value_or("auto"));
  if (!A)
    return A.takeError();
  if (T.Attention && *R != TrainRuntime::PyTorchCUDA)
    return makeInputError("--attention needs --runtime=pytorch-cuda");
  S.Train.Attention =
      *R == TrainRuntime::PyTorchCUDA ? *A : AttentionMode::Eager;
  S.Train.KeepPreviousOutputs = T.KeepOutput;
  if (T.Dropout) {
    double P = 0;
    if (StringRef(*T.Dropout).getAsDouble(P) || !(P >= 0 && P < 1))
      return makeInputError("--dropout: '" + *T.Dropout +
                            "' is not a probability in [0, 1)");
    S.Train.AddedDropout = P;
  }
  // PyTorch runs a training plan: its kernels' memory efficiency and floor
  // where the profile has them apart from oomplan-run's (the H200 row).
  if (*R != TrainRuntime::Oomplan)
    S.Device = eagerProfile(S.Device);
  if (!T.CudaAllocConf)
    return Error::success();
  if (*R != TrainRuntime::PyTorchCUDA)
    return makeInputError("--cuda-alloc-conf needs --runtime=pytorch-cuda");
  return report::parseCudaAllocConf(*T.CudaAllocConf).takeError();
}

// --precision without --train: the model's fp32 tensors in 16 bits.
static Error resolveInferencePrecision(Session &S) {
  const std::optional<std::string> &P = S.Req.Train.Precision;
  if (!P || *P == "fp32")
    return Error::success();
  if (*P != "fp16" && *P != "bf16")
    return makeInputError(
        "--precision=" + *P +
        (StringRef(*P).endswith("-mixed") || StringRef(*P).endswith("-autocast")
             ? " is a training precision (add --train); "
             : " is not a precision; ") +
        "inference takes fp32, fp16 or bf16");
  if (StringRef(S.Req.ModelPath).endswith(".csv"))
    return makeInputError("--precision applies to models, not to CSV "
                          "instances of placement");
  S.InferenceHalf = *P == "bf16" ? ElementType::BFloat16 : ElementType::Float16;
  return Error::success();
}

Error driver::resolveOptions(Session &S) {
  const api::Request &R = S.Req;
  if (Error E = checkIgnored(R))
    return E;
  if (Error E = checkPassNames(R))
    return E;
  Budget &B = S.Limit;
  if (R.Overhead) {
    auto O = parseSize("overhead", *R.Overhead);
    if (!O)
      return O.takeError();
    B.OverheadBytes = *O;
  }
  auto Dev = loadDevice(R.Device.value_or("H100-SXM"));
  if (!Dev)
    return Dev.takeError();
  S.Device = *Dev;
  B.DeviceBytes = S.Device.MemoryBytes;
  // A named device whose overhead was measured brings it as the default
  // (the CUDA context and library handles); --overhead 0 opts out.
  if (!R.Overhead && R.Device && S.Device.OverheadBytes) {
    B.OverheadBytes = S.Device.OverheadBytes;
    B.OverheadFromDevice = true;
  }
  if (R.Budget) {
    auto Bytes = parseByteSize(*R.Budget);
    if (!Bytes)
      return Bytes.takeError();
    B.CapacityBytes = *Bytes;
  } else if (R.Device) {
    // A named device is a budget: its memory.
    B.CapacityBytes = S.Device.MemoryBytes;
    B.CapacityFromDevice = true;
  }
  if (!R.Train.Enabled)
    return resolveInferencePrecision(S);
  const api::TrainingRequest &T = R.Train;
  auto O = parseOptimizer(T.Optimizer.value_or("adam"));
  if (!O)
    return O.takeError();
  auto P = parsePrecision(T.Precision.value_or("fp32"));
  if (!P)
    return P.takeError();
  S.Train.Optimizer = *O;
  S.Train.Precision = *P;
  S.Train.GradAccum = T.GradAccum.value_or(1);
  // K passes of batch/K are one optimizer step only when the gradients
  // accumulate over them; without --grad-accum that is what is meant.
  unsigned K = R.Fit.MicroBatches.value_or(1);
  if (K > 1 && !T.GradAccum) {
    S.Train.GradAccum = K;
    S.warn("--micro-batches=" + Twine(K) + " without --grad-accum: assuming " +
           "--grad-accum=" + Twine(K) + " (gradients accumulate over the " +
           Twine(K) + " passes)");
  }
  if (Error E = resolveStepOptions(S))
    return E;
  // PyTorch's caching allocator runs out of reserved bytes before our
  // total (AllocatorInternal.h); our own executor allocates the total.
  if (S.Train.Runtime == TrainRuntime::PyTorchCUDA)
    B.Decides = DecidingFigure::Reserved;
  S.Train.Freeze = T.Freeze;
  for (StringRef Pair : T.Tied) {
    auto AB = parseTiedPair(Pair);
    if (!AB)
      return AB.takeError();
    S.Train.Tied.push_back(*AB);
  }
  return Error::success();
}

static Expected<int> runSession(Session &S) {
  if (!planner::findAlgorithm(S.Req.Algorithm))
    return planner::runAlgorithm(S.Req.Algorithm, {}, {}).takeError();
  if (Error E = resolveOptions(S))
    return E;
  // First, so that the workspaces installed next are sized for 16 bits.
  if (S.InferenceHalf) {
    // The fused convolutions (Conv + residual + activation; a pointwise
    // conv with its depthwise one) exist for fp32 only, in ONNX Runtime as
    // in oomplan-run (FusionConv*.cpp fuse fp32 convolutions): a 16-bit
    // model keeps its convolutions unfused, and so does the same model
    // converted here.
    S.FusedSupported = [](StringRef OpType) {
      return OpType != fused::ConvOp && OpType != fused::ConvDepthwiseOp;
    };
    ElementType Half = *S.InferenceHalf;
    std::shared_ptr<unsigned> Kept = S.KeptInFloat;
    S.appendScheduleEdit([Half, Kept](const Graph &, const ShapeInfo &Shapes,
                                      ArrayRef<std::optional<int64_t>>,
                                      Schedule &Sched) -> Error {
      *Kept = applyInferencePrecision(Shapes, Half, Sched);
      return Error::success();
    });
  }
  if (Error E = installBackend(S))
    return E;
  S.Res.BudgetBytes = S.Limit.CapacityBytes;
  S.Res.OverheadBytes = S.Limit.OverheadBytes;
  if (StringRef(S.Req.ModelPath).endswith(".csv"))
    return runCSV(S);
  return runModel(S);
}

api::Result api::run(const Request &R) {
  Result Res;
  Session S(R, Res);
  Expected<int> RC = runSession(S);
  S.OS.flush();
  if (!RC) {
    ErrorParts Parts = takeErrorParts(RC.takeError());
    Res.ExitCode = 1;
    Res.Category = apiCategory(Parts.Category);
    Res.ErrorMessage = std::move(Parts.Message);
    return Res;
  }
  Res.ExitCode = *RC;
  Res.Fits = *RC == 0;
  return Res;
}

std::vector<api::AlgorithmInfo> api::algorithms() {
  std::vector<AlgorithmInfo> Out;
  for (const planner::AlgorithmInfo &A : planner::algorithms())
    Out.push_back({A.Name.str(), A.Description.str()});
  return Out;
}

std::optional<api::InputShape> api::parseInputShape(const std::string &Text,
                                                    std::string &Error) {
  auto [Name, Shape] = llvm::StringRef(Text).split('=');
  InputShape In;
  In.Name = Name.str();
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  Shape.split(Parts, 'x');
  bool Ok = !Name.empty() && !Shape.empty();
  for (llvm::StringRef P : Parts) {
    int64_t V;
    if (P.getAsInteger(10, V) || V < 0)
      Ok = false;
    else
      In.Dims.push_back(V);
  }
  if (!Ok) {
    Error = "--input-shape expects NAME=D0xD1x..., got '" + Text + "'";
    return std::nullopt;
  }
  return In;
}

const char *api::version() { return "0.1.0"; }

std::vector<std::string> api::scheduleTransformNames() {
  // The pass names PassInstrumentation reports (contract 1): the registry's,
  // in pipeline order.
  std::vector<std::string> Names;
  for (const PassInfo &P : schedulePasses())
    Names.push_back(P.Name);
  return Names;
}
