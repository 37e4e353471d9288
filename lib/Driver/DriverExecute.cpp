//===- DriverExecute.cpp - api::execute: plan a request, run it, measure --===//
//
// What oomplan-run does, as one library call: plan exactly as run() plans
// (planExecutable), with the inputs' dims bound and, when a shape depends on
// their values, the inputs folded in; refuse a plan over the budget (exit 2,
// as oomplan); then run it on the backend in the plan's regions, once per
// micro-batch pass, and measure each region's high-water, the process's RSS
// and the phases' times. --check=unplanned runs the model again with every
// tensor in its own allocation and compares the outputs' bytes.
//
//===----------------------------------------------------------------------===//
#include "RunInputs.h"
#include "oomplan/Driver/Session.h"
#include "oomplan/Frontend/WeightLoader.h"
#include "oomplan/IR/OpTable.h"
#include "oomplan/Runtime/Backend.h"
#include "oomplan/Runtime/Batching.h"
#include "oomplan/Runtime/Kernel.h"
#include "oomplan/Runtime/ProcessMemory.h"
#include "oomplan/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <chrono>
#include <cstring>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

static double secondsSince(std::chrono::steady_clock::time_point T) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T)
      .count();
}

namespace {

// The whole batch's inputs and outputs: the executor's own slots with one
// pass; with micro-batches, buffers of the caller (this call) from which
// each pass's slice is copied in and out, as a program embedding the
// runtime would hold them.
struct WholeIO {
  std::vector<std::vector<char>> Storage;
  std::vector<runtime::TensorRef> In, Out;
};

} // namespace

static runtime::TensorRef wholeBuffer(WholeIO &IO, runtime::TensorRef Part,
                                      ArrayRef<int64_t> Dims) {
  if (!Part.present())
    return Part;
  Part.Dims.assign(Dims.begin(), Dims.end());
  IO.Storage.emplace_back(Part.bytes() + 1);
  Part.Data = IO.Storage.back().data();
  return Part;
}

// Inputs from Shared when given (the reference run reads the same bytes).
static void makeWholeIO(const Executable &X, const runtime::Executor &Ex,
                        WholeIO &IO, const WholeIO *Shared = nullptr) {
  const Graph &G = *X.G;
  IO.Storage.reserve(G.Inputs.size() + G.Outputs.size());
  for (size_t I = 0; I < G.Inputs.size(); ++I)
    IO.In.push_back(Shared          ? Shared->In[I]
                    : X.Passes == 1 ? Ex.tensor(G.Inputs[I])
                                    : wholeBuffer(IO, Ex.tensor(G.Inputs[I]),
                                                  X.WholeInputDims[I]));
  for (size_t I = 0; I < G.Outputs.size(); ++I)
    IO.Out.push_back(X.Passes == 1 ? Ex.tensor(G.Outputs[I])
                                   : wholeBuffer(IO, Ex.tensor(G.Outputs[I]),
                                                 X.WholeOutputDims[I]));
}

// One run of the plan per pass, each on its slice of the batch.
// Steps: the passes' steps alone (Executor::lastStepsSeconds), summed;
// none when any pass could not time them.
static Error runPasses(const Executable &X, runtime::Executor &Ex, WholeIO &IO,
                       std::optional<double> &Steps) {
  const Graph &G = *X.G;
  bool Own = X.Passes == 1;
  Steps = 0.0;
  for (unsigned P = 0; P < X.Passes; ++P) {
    for (size_t I = 0; I < G.Inputs.size(); ++I) {
      runtime::TensorRef Slot = Ex.tensor(G.Inputs[I]);
      if (IO.In[I].present() && Slot.present() && IO.In[I].Data != Slot.Data)
        runtime::copyBatchSlice(IO.In[I], Slot, X.InputAxis[I], P, false);
    }
    if (Error E = Ex.run())
      return E;
    std::optional<double> S = Ex.lastStepsSeconds();
    Steps = S && Steps ? std::optional<double>(*Steps + *S) : std::nullopt;
    for (size_t I = 0; I < G.Outputs.size(); ++I) {
      if (Own) // the run may have fixed a data-dependent output's dims
        IO.Out[I] = Ex.tensor(G.Outputs[I]);
      else if (IO.Out[I].present())
        runtime::copyBatchSlice(IO.Out[I], Ex.tensor(G.Outputs[I]),
                                X.OutputAxis[I], P, true);
    }
  }
  return Error::success();
}

// Copies every graph input of From into To (the unplanned reference run).
static void copyInputs(const Graph &G, const runtime::Executor &From,
                       runtime::Executor &To) {
  for (ValueId V : G.Inputs) {
    runtime::TensorRef A = From.tensor(V), B = To.tensor(V);
    if (A.present() && B.present())
      std::memcpy(B.Data, A.Data, A.bytes());
  }
}

static Error writeOutputs(StringRef Dir, const Graph &G, const WholeIO &IO) {
  if (Dir.empty())
    return Error::success();
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return makeIOError(Dir + ": " + EC.message());
  for (size_t I = 0; I < G.Outputs.size(); ++I) {
    const runtime::TensorRef &T = IO.Out[I];
    if (!T.present())
      return makeUnsupportedError("output '" + G.Values[G.Outputs[I]].Name +
                                  "' has no known shape");
    SmallString<256> P(Dir);
    sys::path::append(P, "output_" + std::to_string(I) + ".pb");
    if (Error E = writeTensorFile(P, G.Values[G.Outputs[I]].Name, T.Type,
                                  T.Dims, T.Data, T.bytes()))
      return E;
  }
  return Error::success();
}

// The first output whose bytes differ between the two runs, or "".
static std::string firstDifference(const Graph &G, const WholeIO &A,
                                   const WholeIO &B) {
  for (size_t I = 0; I < G.Outputs.size(); ++I) {
    const runtime::TensorRef &X = A.Out[I], &Y = B.Out[I];
    if (X.bytes() != Y.bytes() || std::memcmp(X.Data, Y.Data, X.bytes()) != 0) {
      uint64_t At = 0;
      const char *P = X.data<char>(), *Q = Y.data<char>();
      while (At < X.bytes() && P[At] == Q[At])
        ++At;
      return "output " + std::to_string(I) + " '" +
             G.Values[G.Outputs[I]].Name + "' differs at byte " +
             std::to_string(At);
    }
  }
  return "";
}

// The two RSS figures of docs/benchmarks.md, both over the first run and
// over every run: growth during the runs alone (VmHWM reset after loading,
// minus VmRSS then), and the whole process's growth (its peak from before
// the model was read, planning and loading included, minus VmRSS then).
static void measureRSS(api::ExecuteResult &Rep,
                       Expected<runtime::ProcessMemory> &Start,
                       Expected<runtime::ProcessMemory> &Before,
                       Expected<runtime::ProcessMemory> &AfterFirst,
                       Expected<runtime::ProcessMemory> &After, Error Reset) {
  auto Growth = [](uint64_t Peak, uint64_t Base) {
    return Peak > Base ? Peak - Base : 0;
  };
  if (Before && After && AfterFirst && !Reset) {
    Rep.RSSGrowthBytes = Growth(After->HWMBytes, Before->RSSBytes);
    Rep.RSSGrowthFirstRunBytes = Growth(AfterFirst->HWMBytes, Before->RSSBytes);
    if (Start) {
      // Before's HWM is the peak of planning and loading (not yet reset).
      uint64_t Load = std::max(Before->HWMBytes, Before->RSSBytes);
      Rep.ProcessGrowthBytes =
          Growth(std::max(Load, After->HWMBytes), Start->RSSBytes);
      Rep.ProcessGrowthFirstRunBytes =
          Growth(std::max(Load, AfterFirst->HWMBytes), Start->RSSBytes);
    }
  }
  consumeError(Start.takeError());
  consumeError(Before.takeError());
  consumeError(AfterFirst.takeError());
  consumeError(After.takeError());
  consumeError(std::move(Reset));
}

// What the executor measured, in the API's types.
static void recordMeasures(api::ExecuteResult &Rep, const runtime::Executor &Ex,
                           const Executable &X, bool OnDevice) {
  // Executor runs timed (a replay whose timers the device did not set is
  // not), each of X.Passes per run of the model.
  Rep.ProfiledRuns =
      std::max(1u, Ex.profiledRuns() / std::max(1u, unsigned(X.Passes)));
  for (const runtime::OpTime &T : Ex.opProfile())
    Rep.Ops.push_back({T.Op, T.Seconds, T.Calls});
  for (const runtime::StepTime &T : Ex.stepProfile())
    Rep.Steps.push_back({T.Index, T.Op, T.Node, T.Seconds});
  for (const runtime::RegionUse &U : Ex.regionUse())
    Rep.Regions.push_back({regionName(U.R).str(), U.PlannedBytes, U.HighWater,
                           U.HighWaterAligned});
  if (!OnDevice)
    return;
  runtime::DeviceUse D = Ex.deviceUse();
  api::DeviceBytes &B = Rep.Device.emplace();
  B.Device = D.Device;
  B.AllocatedBytes = D.AllocatedBytes;
  B.PlanDeviceBytes = X.P.WeightBytes + X.P.IOBytes + X.P.ArenaBytes;
  B.MeasuredBytes = D.MeasuredBytes;
  B.FirstRunDropBytes = D.FirstRunDropBytes;
  B.LaterRunsDropBytes = D.LaterRunsDropBytes;
  B.ContextBytes = D.Overhead.ContextBytes;
  B.HandleBytes = D.Overhead.HandleBytes;
  B.PinnedHostBytes = D.HostBytes;
  B.HostOps = D.HostOps;
  B.HostStagingBytes = D.HostStagingBytes;
  B.HostWeightBytes = D.HostWeightBytes;
}

static api::Tensor toTensor(const Graph &G, ValueId V,
                            const runtime::TensorRef &T) {
  api::Tensor Out;
  Out.Name = G.Values[V].Name;
  Out.Type = elementTypeName(T.Type).str();
  Out.Dims.assign(T.Dims.begin(), T.Dims.end());
  if (T.present())
    Out.Data.assign(T.data<char>(), T.bytes());
  return Out;
}

namespace {

/// One execute() call: the request planned with its inputs, then run.
class Execution {
public:
  Execution(const api::RunOptions &Opt, const std::vector<api::Tensor> &Mem,
            api::ExecuteResult &Rep)
      : Opt(Opt), Inputs(Opt, Mem), Rep(Rep) {}

  Expected<int> run(api::Request R);

private:
  void note(std::string Message) {
    Rep.Diagnostics.push_back({api::Severity::Note, std::move(Message)});
  }
  Expected<Executable> plan(api::Request &R, const runtime::KernelTable &K,
                            bool &Folded);
  Error runChecked(const Executable &X, const runtime::ExecOptions &EO,
                   const runtime::KernelTable &K, StringRef ModelPath,
                   std::optional<StringRef> Bytes,
                   std::optional<uint64_t> RandomSeed, const WholeIO &IO,
                   const runtime::Executor &Ex);
  Error runTimed(const Executable &X, runtime::Executor &Ex, WholeIO &IO,
                 Expected<runtime::ProcessMemory> &Start);

  const api::RunOptions &Opt;
  RunInputs Inputs;
  api::ExecuteResult &Rep;
  InputSources Sources;
};

} // namespace

// Plans R for Kernels, binding dims from the given inputs and folding them
// in when asked (--fold-inputs) or when a shape depends on their values.
Expected<Executable> Execution::plan(api::Request &R,
                                     const runtime::KernelTable &Kernels,
                                     bool &Folded) {
  Folded = Opt.FoldInputs;
  const api::Request Base = R; // before anything is bound from the files
  StringSet<> FoldedNames;
  // Planning parses the model with its large initializers referenced in
  // place rather than copied (the importer keeps no large tensor's values),
  // and the loader then reads each from the file into the weights region:
  // the process never holds the weights twice (docs/runtime.md).
  std::optional<std::string> Small;
  if (!R.ModelBytes) {
    auto S = referenceWeightsInPlace(R.ModelPath);
    if (!S)
      consumeError(S.takeError()); // the import below says what is wrong
    else
      Small = std::move(*S);
  }
  // The model as written, for the inputs' dims: a binary model's bytes
  // with the weights referenced in place, or the caller's bytes.
  std::optional<StringRef> AsWritten;
  if (Small)
    AsWritten = *Small;
  else if (Base.ModelBytes)
    AsWritten = *Base.ModelBytes;
  if (Opt.FoldInputs)
    if (Error E = Inputs.fold(R, Sources, FoldedNames))
      return std::move(E);
  const bool FromFile = !R.ModelBytes;
  if (FromFile && Small)
    R.ModelBytes = *Small;
  if (Inputs.any())
    if (Error E = Inputs.bindDims(R, AsWritten, FoldedNames))
      return std::move(E);
  auto X = planExecutable(R, Kernels);
  // A runtime sees its inputs before it runs: when a shape depends on the
  // values of an input the command line gives (a Reshape target or Resize
  // scales fed as a graph input), plan again with those values. The first
  // error stands when that does not help either.
  if (!X && !Opt.FoldInputs && !Opt.NoFoldInputs && Inputs.any() && FromFile) {
    Error First = X.takeError();
    api::Request Again = Base;
    Again.ModelBytes.reset(); // fold reads the file itself
    InputSources AgainSources;
    StringSet<> AgainFolded;
    Error E = Inputs.fold(Again, AgainSources, AgainFolded);
    if (!E)
      E = Inputs.bindDims(Again, AsWritten, AgainFolded);
    auto Y =
        E ? Expected<Executable>(std::move(E)) : planExecutable(Again, Kernels);
    if (!Y) {
      consumeError(Y.takeError());
      return std::move(First);
    }
    consumeError(std::move(First));
    note("a shape depends on the values of given inputs: planned with "
         "them (--no-fold-inputs refuses)");
    R = std::move(Again);
    Sources = std::move(AgainSources);
    X = std::move(Y);
    Folded = true;
  }
  return X;
}

// --check=unplanned: the same inputs through an executor with every tensor
// in its own allocation; the outputs must be bit-identical.
Error Execution::runChecked(const Executable &X, const runtime::ExecOptions &EO,
                            const runtime::KernelTable &Kernels,
                            StringRef ModelPath, std::optional<StringRef> Bytes,
                            std::optional<uint64_t> RandomSeed,
                            const WholeIO &IO, const runtime::Executor &Ex) {
  runtime::ExecOptions UO = EO;
  UO.Poison = false;
  UO.Profile = false;
  UO.Unplanned = true;
  auto Ref = runtime::Executor::create(*X.G, X.P, X.Info, Kernels, UO);
  if (!Ref)
    return Ref.takeError();
  if (Error E = (*Ref)->loadWeights(ModelPath, Bytes, RandomSeed))
    return E;
  WholeIO RefIO;
  makeWholeIO(X, **Ref, RefIO, X.Passes > 1 ? &IO : nullptr);
  if (X.Passes == 1)
    copyInputs(*X.G, Ex, **Ref);
  std::optional<double> RefSteps;
  if (Error E = runPasses(X, **Ref, RefIO, RefSteps))
    return E;
  Rep.CheckRan = true;
  Rep.CheckDifference = firstDifference(*X.G, IO, RefIO);
  return Error::success();
}

// The first run and the warm ones (--repeat), timed, with the RSS growth
// over them. Start: the process's memory before the model was read.
Error Execution::runTimed(const Executable &X, runtime::Executor &Ex,
                          WholeIO &IO,
                          Expected<runtime::ProcessMemory> &Start) {
  auto Before = runtime::readProcessMemory();
  Error Reset = runtime::resetPeakRSS();
  auto T0 = std::chrono::steady_clock::now();
  if (Error E = runPasses(X, Ex, IO, Rep.StepsSeconds)) {
    consumeError(std::move(Reset));
    return E;
  }
  Rep.RunSeconds = secondsSince(T0);
  auto AfterFirst = runtime::readProcessMemory();
  if (Opt.Repeat)
    Ex.resetProfile(); // profile the warm runs
  for (unsigned I = 0; I < Opt.Repeat; ++I) {
    T0 = std::chrono::steady_clock::now();
    std::optional<double> Steps;
    if (Error E = runPasses(X, Ex, IO, Steps)) {
      consumeError(std::move(Reset));
      return E;
    }
    Rep.RepeatSeconds.push_back(secondsSince(T0));
    if (Steps)
      Rep.RepeatStepsSeconds.push_back(*Steps);
  }
  auto After = runtime::readProcessMemory();
  measureRSS(Rep, Start, Before, AfterFirst, After, std::move(Reset));
  return Error::success();
}

Expected<int> Execution::run(api::Request R) {
  if (!Opt.Check.empty() && Opt.Check != "unplanned")
    return makeInputError("invalid value '" + Opt.Check +
                          "' for --check; valid values: unplanned");
  // --backend is oomplan's option, which puts its workspace bounds in the
  // request; here the backend's own kernels give the workspaces.
  std::string BackendName = R.Backend.value_or("cpu");
  R.Backend.reset();
  auto Back = runtime::openBackend(BackendName);
  if (!Back)
    return Back.takeError();
  const runtime::KernelTable &Kernels = *Back->Kernels;
  // Before the model is read: the start of the whole-process growth.
  auto Start = runtime::readProcessMemory();
  auto T0 = std::chrono::steady_clock::now();
  if (Opt.FoldInputs && Opt.NoFoldInputs)
    return makeInputError("--fold-inputs and --no-fold-inputs contradict "
                          "each other");
  bool Folded = false;
  auto X = plan(R, Kernels, Folded);
  if (!X)
    return X.takeError();
  Rep.PlanSeconds = secondsSince(T0);
  Rep.Diagnostics.insert(Rep.Diagnostics.end(), X->Diagnostics.begin(),
                         X->Diagnostics.end());
  Rep.Fitted = X->Fitted;
  Rep.PlanTotalBytes = X->P.totalBytes();
  Rep.BudgetBytes = X->P.Limit.CapacityBytes;
  Rep.Fits = X->P.fits();
  Rep.Passes = X->Passes;
  // "Does not fit" is an answer (exit 2), as oomplan gives it: a run over
  // the budget it was asked to keep would be one the user said could not
  // happen (on a GPU, an out-of-memory error). Without a budget (or a
  // device) nothing is refused.
  if (!X->P.fits())
    return 2;
  runtime::ExecOptions EO;
  // The default is one thread per physical core, as ONNX Runtime's; the
  // report says which it was.
  EO.Threads = Opt.Threads ? Opt.Threads : runtime::physicalCores();
  Rep.Threads = EO.Threads;
  Rep.ThreadsPerCore = !Opt.Threads;
  EO.Poison = Opt.Poison;
  EO.Profile = Opt.Profile;
  EO.Dev = Back->Dev;
  EO.Record = !Opt.NoGraph;
  EO.HostSteps = !Opt.NoHostSteps;
  auto Ex = runtime::Executor::create(*X->G, X->P, X->Info, Kernels, EO);
  if (!Ex)
    return Ex.takeError();
  if (!Folded) {
    auto Given = Inputs.sources(*X->G);
    if (!Given)
      return Given.takeError();
    Sources = std::move(*Given);
  }
  std::optional<StringRef> Bytes;
  if (R.ModelBytes)
    Bytes = StringRef(*R.ModelBytes);
  T0 = std::chrono::steady_clock::now();
  std::optional<uint64_t> RandomSeed;
  if (Opt.RandomWeights)
    RandomSeed = Opt.Seed;
  if (Error E = (*Ex)->loadWeights(R.ModelPath, Bytes, RandomSeed))
    return std::move(E);
  WholeIO IO;
  makeWholeIO(*X, **Ex, IO);
  if (Error E = Inputs.set(*X, **Ex, IO.In, Sources))
    return std::move(E);
  Rep.LoadSeconds = secondsSince(T0);
  if (Error E = runTimed(*X, **Ex, IO, Start))
    return std::move(E);
  recordMeasures(Rep, **Ex, *X, Back->Dev->name() != "cpu");
  if (Error E = writeOutputs(Opt.OutputDir, *X->G, IO))
    return std::move(E);
  if (!Opt.Check.empty())
    if (Error E = runChecked(*X, EO, Kernels, R.ModelPath, Bytes, RandomSeed,
                             IO, **Ex))
      return std::move(E);
  Rep.Poisoned = Opt.Poison;
  Rep.Ran = true;
  for (size_t I = 0; I < X->G->Outputs.size(); ++I)
    Rep.Outputs.push_back(toTensor(*X->G, X->G->Outputs[I], IO.Out[I]));
  bool OK = Rep.highWaterMatches() && Rep.deviceMatches() &&
            Rep.CheckDifference.empty();
  return OK ? 0 : 1;
}

bool api::ExecuteResult::highWaterMatches() const {
  for (const RegionBytes &U : Regions)
    if (U.HighWaterAlignedBytes != U.PlannedBytes)
      return false;
  return true;
}

bool api::ExecuteResult::deviceMatches() const {
  return !Device || Device->AllocatedBytes == Device->PlanDeviceBytes;
}

api::ExecuteResult api::execute(const Request &R, const RunOptions &O,
                                const std::vector<Tensor> &Inputs) {
  ExecuteResult Rep;
  Expected<int> RC = Execution(O, Inputs, Rep).run(R);
  if (!RC) {
    ErrorParts Parts = takeErrorParts(RC.takeError());
    Rep.ExitCode = 1;
    Rep.Category = apiCategory(Parts.Category);
    Rep.ErrorMessage = std::move(Parts.Message);
    return Rep;
  }
  Rep.ExitCode = *RC;
  return Rep;
}

std::optional<std::vector<std::string>>
api::kernelNames(const std::string &Backend, std::string &Error) {
  auto Table = runtime::backendKernels(Backend);
  if (!Table) {
    Error = toString(Table.takeError());
    return std::nullopt;
  }
  std::vector<std::string> Names;
  for (const ops::OpInfo &Op : ops::allOps())
    if ((*Table)->get(ops::opCode(Op)))
      Names.push_back(Op.Name);
  llvm::sort(Names);
  return Names;
}
