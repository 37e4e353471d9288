//===- oomplan-run.cpp - runs a model by its plan -------------------------===//
//
// A separate tool, as lli is for LLVM: plans the model exactly as oomplan
// does (every planning option is the same), then runs the plan on the CPU
// backend in the plan's regions. Inputs and outputs are ONNX TensorProto
// .pb files (ONNX test data's input_<i>.pb / output_<i>.pb); inputs not
// given are seeded random values. It prints one line per output, the
// measured high-water of each region next to the planned bytes, the RSS
// growth of the run, and the time of each phase (--json: one object).
// --poison and --check=unplanned check that the plan is honoured.
//
// Exit codes: 0 the run succeeded (and every check passed), 1 an error or
// a failed check.
//
//===----------------------------------------------------------------------===//
#include "Options.h"
#include "RunReport.h"
#include "oomplan/Driver/Executable.h"
#include "oomplan/Frontend/WeightLoader.h"
#include "oomplan/Runtime/Backend.h"
#include "oomplan/Runtime/ProcessMemory.h"
#include "oomplan/Runtime/RandomInputs.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include <chrono>
#include <cstring>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::run;

static cl::OptionCategory RunCat("Running");
static cl::list<std::string>
    Inputs("input", cl::cat(RunCat), cl::value_desc("NAME=FILE.pb"),
           cl::desc("Graph input NAME from a TensorProto file (repeatable)"));
static cl::opt<std::string> InputsDir(
    "inputs-dir", cl::cat(RunCat), cl::value_desc("DIR"),
    cl::desc("Read DIR/input_<i>.pb for graph input i (ONNX test data)"));
static cl::opt<std::string>
    OutputDir("output-dir", cl::cat(RunCat), cl::value_desc("DIR"),
              cl::desc("Write graph output i to DIR/output_<i>.pb"));
static cl::opt<uint64_t>
    Seed("seed", cl::cat(RunCat), cl::init(0), cl::value_desc("N"),
         cl::desc("Seed of the random values of inputs not given"));
static cl::opt<unsigned> Threads("threads", cl::cat(RunCat), cl::init(1),
                                 cl::value_desc("N"),
                                 cl::desc("Kernel threads (default 1)"));
static cl::opt<bool>
    Poison("poison", cl::cat(RunCat),
           cl::desc("Overwrite each buffer when its lifetime ends (NaN for "
                    "floats, 0xA5 for integers); outputs must not change"));
static cl::opt<std::string>
    Check("check", cl::cat(RunCat), cl::value_desc("unplanned"),
          cl::desc("unplanned: run again with every tensor in its own "
                   "allocation and require bit-identical outputs"));
static cl::opt<std::string> BackendName("backend", cl::cat(RunCat),
                                        cl::init("cpu"),
                                        cl::value_desc("cpu|cuda"),
                                        cl::desc("Kernels to run (cpu)"));
static cl::opt<bool> JSONOut("json", cl::cat(RunCat),
                             cl::desc("Print one JSON object instead of the "
                                      "table"));

static const char *Overview =
    "oomplan-run: plans a model as oomplan does, then runs the plan on the "
    "CPU in the\nplanned regions and reports the measured memory.\n\n"
    "  oomplan-run model.onnx --batch 1 --output-dir out\n"
    "  oomplan-run test_relu/model.onnx --inputs-dir test_relu/"
    "test_data_set_0 --output-dir out\n\n"
    "Exit codes: 0 the run succeeded and every check passed, 1 otherwise.\n";

static int fail(const Twine &Msg) {
  WithColor::error(errs(), "oomplan-run") << Msg << '\n';
  return 1;
}

static double secondsSince(std::chrono::steady_clock::time_point T) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T)
      .count();
}

// "8x3x224x224", "scalar" for rank 0.
static std::string dimsText(ArrayRef<int64_t> Dims) {
  if (Dims.empty())
    return "scalar";
  std::string S;
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? "x" : "") + std::to_string(Dims[I]);
  return S;
}

// Copies the .pb at Path into input V's slot after checking type and dims.
static Error readInput(const driver::Executable &X, runtime::Executor &Ex,
                       ValueId V, StringRef Path) {
  const std::string &Name = X.G->Values[V].Name;
  runtime::TensorRef T = Ex.tensor(V);
  if (!T.present())
    return makeUnsupportedError("input '" + Name + "' has no known shape");
  auto F = readTensorFile(Path);
  if (!F)
    return F.takeError();
  if (F->Type != T.Type)
    return makeInputError(Path + ": input '" + Name + "' is " +
                          elementTypeName(F->Type) + ", the model needs " +
                          elementTypeName(T.Type));
  if (ArrayRef<int64_t>(F->Dims) != ArrayRef<int64_t>(T.Dims))
    return makeInputError(
        Path + ": input '" + Name + "' has shape " + dimsText(F->Dims) +
        ", the plan is for " + dimsText(T.Dims) +
        " (bind the dims with --batch, --seq, --dim or --input-shape)");
  std::memcpy(T.Data, F->Bytes.data(), F->Bytes.size());
  return Error::success();
}

// Every graph input: from --input, --inputs-dir, or seeded random values.
static Error setInputs(const driver::Executable &X, runtime::Executor &Ex) {
  const Graph &G = *X.G;
  StringMap<std::string> Given;
  for (StringRef Arg : Inputs) {
    auto [Name, File] = Arg.split('=');
    if (Name.empty() || File.empty())
      return makeInputError("--input expects NAME=FILE.pb, got '" + Arg + "'");
    ValueId V = G.findValue(Name);
    if (V == NoId || !is_contained(G.Inputs, V)) {
      std::vector<std::string> Names;
      for (ValueId I : G.Inputs)
        Names.push_back(G.Values[I].Name);
      return makeInputError("--input " + Arg + ": the model has no input '" +
                            Name + "' (its inputs: " + join(Names, ", ") + ")");
    }
    Given[Name] = File.str();
  }
  for (size_t I = 0; I < G.Inputs.size(); ++I) {
    ValueId V = G.Inputs[I];
    std::string Path;
    if (auto It = Given.find(G.Values[V].Name); It != Given.end())
      Path = It->second;
    else if (!InputsDir.empty()) {
      SmallString<256> P(InputsDir);
      sys::path::append(P, "input_" + std::to_string(I) + ".pb");
      if (!sys::fs::exists(P))
        return makeIOError(P + ": no such file (graph input " + Twine(I) +
                           ", '" + G.Values[V].Name + "')");
      Path = P.str().str();
    }
    if (!Path.empty()) {
      if (Error E = readInput(X, Ex, V, Path))
        return E;
      continue;
    }
    runtime::TensorRef T = Ex.tensor(V);
    int64_t Bound = runtime::integerInputBound(
        G, V, [&](ValueId W) { return Ex.tensor(W); });
    runtime::fillRandom(T, Seed, I, Bound);
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

static Error writeOutputs(const Graph &G, const runtime::Executor &Ex) {
  if (OutputDir.empty())
    return Error::success();
  if (std::error_code EC = sys::fs::create_directories(OutputDir))
    return makeIOError(OutputDir + ": " + EC.message());
  for (size_t I = 0; I < G.Outputs.size(); ++I) {
    runtime::TensorRef T = Ex.tensor(G.Outputs[I]);
    SmallString<256> P(OutputDir);
    sys::path::append(P, "output_" + std::to_string(I) + ".pb");
    if (Error E = writeTensorFile(P, G.Values[G.Outputs[I]].Name, T.Type,
                                  T.Dims, T.Data, T.bytes()))
      return E;
  }
  return Error::success();
}

// The first output whose bytes differ between the two runs, or "".
static std::string firstDifference(const Graph &G, const runtime::Executor &A,
                                   const runtime::Executor &B) {
  for (size_t I = 0; I < G.Outputs.size(); ++I) {
    runtime::TensorRef X = A.tensor(G.Outputs[I]), Y = B.tensor(G.Outputs[I]);
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

static Expected<int> runTool(const api::Request &R) {
  if (!Check.empty() && Check != "unplanned")
    return makeInputError("invalid value '" + Check +
                          "' for --check; valid values: unplanned");
  auto Kernels = runtime::backendKernels(BackendName);
  if (!Kernels)
    return Kernels.takeError();
  RunReport Rep;
  auto T0 = std::chrono::steady_clock::now();
  auto X = driver::planExecutable(R, **Kernels);
  if (!X)
    return X.takeError();
  Rep.PlanSeconds = secondsSince(T0);
  for (const api::Diagnostic &D : X->Diagnostics)
    (D.Level == api::Severity::Warning
         ? WithColor::warning(errs(), "oomplan-run")
         : WithColor::note(errs(), "oomplan-run"))
        << D.Message << '\n';
  runtime::ExecOptions EO;
  EO.Threads = Threads;
  EO.Poison = Poison;
  auto Ex = runtime::Executor::create(*X->G, X->P, X->Info, **Kernels, EO);
  if (!Ex)
    return Ex.takeError();
  T0 = std::chrono::steady_clock::now();
  if (Error E = (*Ex)->loadWeights(R.ModelPath))
    return E;
  if (Error E = setInputs(*X, **Ex))
    return E;
  Rep.LoadSeconds = secondsSince(T0);
  auto Before = runtime::readProcessMemory();
  Error Reset = runtime::resetPeakRSS();
  T0 = std::chrono::steady_clock::now();
  if (Error E = (*Ex)->run())
    return E;
  Rep.RunSeconds = secondsSince(T0);
  auto After = runtime::readProcessMemory();
  if (Before && After && !Reset) {
    Rep.RSSGrowth = After->HWMBytes > Before->RSSBytes
                        ? After->HWMBytes - Before->RSSBytes
                        : 0;
  } else {
    consumeError(Before.takeError());
    consumeError(After.takeError());
    consumeError(std::move(Reset));
  }
  Rep.Regions = (*Ex)->regionUse();
  if (Error E = writeOutputs(*X->G, **Ex))
    return E;
  if (!Check.empty()) {
    runtime::ExecOptions UO = EO;
    UO.Poison = false;
    UO.Unplanned = true;
    auto Ref = runtime::Executor::create(*X->G, X->P, X->Info, **Kernels, UO);
    if (!Ref)
      return Ref.takeError();
    if (Error E = (*Ref)->loadWeights(R.ModelPath))
      return E;
    copyInputs(*X->G, **Ex, **Ref);
    if (Error E = (*Ref)->run())
      return E;
    Rep.CheckRan = true;
    Rep.CheckDifference = firstDifference(*X->G, **Ex, **Ref);
  }
  Rep.Poisoned = Poison;
  Rep.Fitted = X->Fitted;
  Rep.PlanTotal = X->P.totalBytes();
  Rep.print(outs(), *X->G, **Ex, JSONOut);
  return Rep.ok() ? 0 : 1;
}

int main(int argc, char **argv) {
  InitLLVM Y(argc, argv);
  std::vector<const cl::OptionCategory *> Cats(tool::categories().begin(),
                                               tool::categories().end());
  Cats.push_back(&RunCat);
  cl::HideUnrelatedOptions(Cats);
  std::string Bad = tool::checkArguments(argc, argv);
  if (!Bad.empty())
    return fail(Bad);
  cl::ParseCommandLineOptions(argc, argv, Overview);
  auto Req = tool::makeRequest();
  if (!Req)
    return fail(toString(Req.takeError()));
  auto RC = runTool(*Req);
  if (!RC)
    return fail(toString(RC.takeError()));
  return *RC;
}
