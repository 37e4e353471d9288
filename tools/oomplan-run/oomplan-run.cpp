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
// a failed check, 2 the plan does not fit --budget (not run).
//
//===----------------------------------------------------------------------===//
#include "RunCommands.h"
#include "RunReport.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/CAPI/Arguments.h"
#include "oomplan/Driver/Executable.h"
#include "oomplan/Driver/Import.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Frontend/WeightLoader.h"
#include "oomplan/Runtime/Backend.h"
#ifdef OOMPLAN_HAVE_CUDA
#include "oomplan/Runtime/CUDA.h"
#endif
#include "oomplan/Runtime/Batching.h"
#include "oomplan/Runtime/ProcessMemory.h"
#include "oomplan/Runtime/RandomInputs.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include <chrono>
#include <cstring>
#include <optional>
#include <set>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::run;

// The command line, parsed once by main (runMain) with the library's option
// table (oomplan/CAPI/Arguments.h): oomplan's planning options and this
// tool's own (Opt).
static api::Arguments Parsed;
static const api::RunOptions &Opt = Parsed.Run;

static const char *Overview =
    "oomplan-run: plans a model as oomplan does, then runs the plan in the "
    "planned regions\n(on the CPU, or --backend=cuda on GPU 0) and reports the "
    "measured memory.\n\n"
    "  oomplan-run model.onnx --batch 1 --output-dir out\n"
    "  oomplan-run test_relu/model.onnx --inputs-dir test_relu/"
    "test_data_set_0 --output-dir out\n\n"
    "Exit codes: 0 the run succeeded and every check passed, 2 the plan does "
    "not fit --budget even fitted (not run), 1 otherwise.\n";

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

// The whole batch's inputs and outputs: the executor's own slots with one
// pass; with micro-batches, buffers of the caller (this tool) from which
// each pass's slice is copied in and out, as a program embedding the
// runtime would hold them.
struct WholeIO {
  std::vector<std::vector<char>> Storage;
  std::vector<runtime::TensorRef> In, Out;
};

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
static void makeWholeIO(const driver::Executable &X,
                        const runtime::Executor &Ex, WholeIO &IO,
                        const WholeIO *Shared = nullptr) {
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
static Error runPasses(const driver::Executable &X, runtime::Executor &Ex,
                       WholeIO &IO, std::optional<double> &Steps) {
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

// Input files bindFromInputFiles has read for their dims, by path, kept
// for readInput (each file is read once; a run's inputs can be large).
static StringMap<TensorFile> ReadForDims;

// Copies the .pb at Path into input I after checking type and dims.
static Error readInput(const driver::Executable &X, const WholeIO &IO, size_t I,
                       StringRef Path) {
  ValueId V = X.G->Inputs[I];
  const std::string &Name = X.G->Values[V].Name;
  runtime::TensorRef T = IO.In[I];
  if (!T.present())
    return makeUnsupportedError("input '" + Name + "' has no known shape");
  Expected<TensorFile> F = TensorFile();
  auto Kept = ReadForDims.find(Path);
  if (Kept != ReadForDims.end()) {
    *F = std::move(Kept->second);
    ReadForDims.erase(Kept);
  } else {
    F = readTensorFile(Path);
  }
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

// The file of each graph input the command line gives, by name: --input
// NAME=FILE, or --inputs-dir's input_<i>.pb for graph input i of G (the
// model as written, before any input is folded).
static Expected<StringMap<std::string>> inputFiles(const Graph &G) {
  StringMap<std::string> Given;
  for (StringRef Arg : Opt.Inputs) {
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
  for (size_t I = 0; I < G.Inputs.size() && !Opt.InputsDir.empty(); ++I) {
    const std::string &Name = G.Values[G.Inputs[I]].Name;
    if (Given.count(Name))
      continue;
    SmallString<256> P(Opt.InputsDir);
    sys::path::append(P, "input_" + std::to_string(I) + ".pb");
    if (!sys::fs::exists(P))
      return makeIOError(P + ": no such file (graph input " + Twine(I) + ", '" +
                         Name + "')");
    Given[Name] = P.str().str();
  }
  return Given;
}

// A runtime knows its inputs' shapes before it plans: each symbol of a given
// input's declared dims that no option binds (--batch, --seq, --dim,
// --input-shape) is bound from the file, as --dim NAME=VALUE would be, so
// `oomplan-run model.onnx --inputs-dir DIR` plans the size DIR holds. A
// symbol an option binds is left to it, and a file that disagrees with the
// plan (or with an earlier file) is then refused by readInput, which names
// the file and both shapes.
// Skip: inputs folded into initializers. Notes: what was bound, for the
// caller to print once planning is settled.
// Source: the model as written with its weights referenced in place
// (referenceWeightsInPlace), so they are not read again for this; none for a
// text model. It names the inputs the command line gives, folded or not.
static Error bindFromInputFiles(api::Request &R,
                                const std::optional<std::string> &Source,
                                const StringSet<> &Skip,
                                std::vector<std::string> &Notes) {
  auto G =
      Source ? importModelBinary(*Source, R.ModelPath, driver::importOptions())
             : importModelFile(R.ModelPath, driver::importOptions());
  if (!G) {
    consumeError(G.takeError()); // planning says what is wrong with it
    return Error::success();
  }
  const Graph &M = **G;
  ReadForDims.clear();
  auto Given = inputFiles(M);
  if (!Given)
    return Given.takeError();
  SymbolRoles Roles = findSymbolRoles(M);
  std::set<SymbolId> Bound;
  if (R.Batch)
    Bound.insert(Roles.Batch.begin(), Roles.Batch.end());
  if (R.Seq)
    Bound.insert(Roles.Seq.begin(), Roles.Seq.end());
  for (SymbolId S = 0; S < M.Symbols.size(); ++S)
    if (any_of(R.Dims, [&](const api::SymbolValue &D) {
          return D.Name == M.Symbols[S];
        }))
      Bound.insert(S);
  for (const api::InputShape &In : R.InputShapes) {
    ValueId V = M.findValue(In.Name);
    if (V != NoId)
      for (const DeclaredDim &D : M.Values[V].Shape)
        if (D.K == DeclaredDim::Kind::Symbol)
          Bound.insert(D.Symbol);
  }
  for (ValueId V : M.Inputs) {
    const Value &Val = M.Values[V];
    auto It = Given->find(Val.Name);
    if (It == Given->end() || Skip.contains(Val.Name) ||
        !Val.HasDeclaredShape || none_of(Val.Shape, [&](const DeclaredDim &D) {
          return D.K == DeclaredDim::Kind::Symbol && !Bound.count(D.Symbol);
        }))
      continue;
    auto T = readTensorFile(It->second);
    if (!T)
      return T.takeError();
    std::vector<int64_t> Dims = T->Dims;
    ReadForDims[It->second] = std::move(*T);
    if (Dims.size() != Val.Shape.size())
      continue; // readInput names the file and both shapes
    std::string Said;
    for (size_t I = 0; I < Val.Shape.size(); ++I) {
      const DeclaredDim &D = Val.Shape[I];
      if (D.K != DeclaredDim::Kind::Symbol || !Bound.insert(D.Symbol).second)
        continue;
      R.Dims.push_back({M.Symbols[D.Symbol], Dims[I]});
      Said += (Said.empty() ? "" : " ") + ("--dim " + M.Symbols[D.Symbol]) +
              "=" + std::to_string(Dims[I]);
    }
    Notes.push_back("input '" + Val.Name + "' (" + dimsText(Dims) + " in " +
                    It->second + ") binds its dims, as " + Said);
  }
  return Error::success();
}

// --fold-inputs: the given inputs that shapes may depend on (integers of up
// to 1024 elements, floats of up to 8, such as Resize scales) become
// initializers; the request then plans the folded model.
static Error foldInputs(api::Request &R, StringMap<std::string> &Files,
                        StringSet<> &Folded) {
  auto G = importModelFile(R.ModelPath, driver::importOptions());
  if (!G)
    return G.takeError();
  auto Given = inputFiles(**G);
  if (!Given)
    return Given.takeError();
  std::vector<std::pair<std::string, TensorFile>> Fold;
  for (ValueId V : (*G)->Inputs) {
    auto It = Given->find((*G)->Values[V].Name);
    if (It == Given->end())
      continue;
    auto T = readTensorFile(It->second);
    if (!T)
      return T.takeError();
    // A folded input becomes a weight of the file's dims, so readInput's
    // check against the plan never sees it: the declared static dims are
    // enforced here (a [1, 3] input given 1x4 values is a wrong file).
    const Value &Val = (*G)->Values[V];
    if (Val.HasDeclaredShape) {
      bool Agree = Val.Shape.size() == T->Dims.size();
      std::string Declared;
      for (size_t A = 0; A < Val.Shape.size(); ++A) {
        const DeclaredDim &D = Val.Shape[A];
        bool Static = D.K == DeclaredDim::Kind::Static;
        Declared += (A ? "x" : "") + (Static ? std::to_string(D.Size)
                                      : D.K == DeclaredDim::Kind::Symbol
                                          ? (*G)->Symbols[D.Symbol]
                                          : std::string("?"));
        if (Static && Agree && T->Dims[A] != D.Size)
          Agree = false;
      }
      if (!Agree)
        return makeInputError(It->second + ": input '" + Val.Name +
                              "' has shape " + dimsText(T->Dims) +
                              ", the model declares " + Declared);
    }
    uint64_t N = 1;
    for (int64_t D : T->Dims)
      N *= uint64_t(D);
    if ((isIntegerLike(T->Type) && N <= 1024) ||
        (isFloatingPoint(T->Type) && N <= 8))
      Fold.push_back({It->first().str(), std::move(*T)});
  }
  auto Bytes = foldInputsIntoModel(R.ModelPath, Fold);
  if (!Bytes)
    return Bytes.takeError();
  R.ModelBytes = std::move(*Bytes);
  for (const auto &F : Fold) {
    Given->erase(F.first);
    Folded.insert(F.first);
  }
  Files = std::move(*Given);
  return Error::success();
}

// Every graph input: from its file, or seeded random values.
static Error setInputs(const driver::Executable &X, runtime::Executor &Ex,
                       const WholeIO &IO, const StringMap<std::string> &Files) {
  const Graph &G = *X.G;
  for (size_t I = 0; I < G.Inputs.size(); ++I) {
    ValueId V = G.Inputs[I];
    auto It = Files.find(G.Values[V].Name);
    if (It != Files.end()) {
      if (Error E = readInput(X, IO, I, It->second))
        return E;
      continue;
    }
    runtime::TensorRef T = IO.In[I];
    int64_t Bound = runtime::integerInputBound(
        G, V, [&](ValueId W) { return Ex.tensor(W); });
    runtime::fillRandom(T, Opt.Seed, I, Bound);
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

static Error writeOutputs(const Graph &G, const WholeIO &IO) {
  if (Opt.OutputDir.empty())
    return Error::success();
  if (std::error_code EC = sys::fs::create_directories(Opt.OutputDir))
    return makeIOError(Opt.OutputDir + ": " + EC.message());
  for (size_t I = 0; I < G.Outputs.size(); ++I) {
    const runtime::TensorRef &T = IO.Out[I];
    if (!T.present())
      return makeUnsupportedError("output '" + G.Values[G.Outputs[I]].Name +
                                  "' has no known shape");
    SmallString<256> P(Opt.OutputDir);
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
static void measureRSS(RunReport &Rep, Expected<runtime::ProcessMemory> &Start,
                       Expected<runtime::ProcessMemory> &Before,
                       Expected<runtime::ProcessMemory> &AfterFirst,
                       Expected<runtime::ProcessMemory> &After, Error Reset) {
  auto Growth = [](uint64_t Peak, uint64_t Base) {
    return Peak > Base ? Peak - Base : 0;
  };
  if (Before && After && AfterFirst && !Reset) {
    Rep.RSSGrowth = Growth(After->HWMBytes, Before->RSSBytes);
    Rep.RSSGrowthFirst = Growth(AfterFirst->HWMBytes, Before->RSSBytes);
    if (Start) {
      // Before's HWM is the peak of planning and loading (not yet reset).
      uint64_t Load = std::max(Before->HWMBytes, Before->RSSBytes);
      Rep.ProcessGrowth =
          Growth(std::max(Load, After->HWMBytes), Start->RSSBytes);
      Rep.ProcessGrowthFirst =
          Growth(std::max(Load, AfterFirst->HWMBytes), Start->RSSBytes);
    }
  }
  consumeError(Start.takeError());
  consumeError(Before.takeError());
  consumeError(AfterFirst.takeError());
  consumeError(After.takeError());
  consumeError(std::move(Reset));
}

static Expected<int> runTool(api::Request R) {
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
  const runtime::KernelTable *Kernels = Back->Kernels;
  RunReport Rep;
  // Before the model is read: the start of the whole-process growth.
  auto Start = runtime::readProcessMemory();
  auto T0 = std::chrono::steady_clock::now();
  StringMap<std::string> Files;
  if (Opt.FoldInputs && Opt.NoFoldInputs)
    return makeInputError("--fold-inputs and --no-fold-inputs contradict "
                          "each other");
  bool Folded = Opt.FoldInputs;
  bool AnyGiven = !Opt.Inputs.empty() || !Opt.InputsDir.empty();
  const api::Request Base = R; // before anything is bound from the files
  std::vector<std::string> BindNotes;
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
  if (Opt.FoldInputs)
    if (Error E = foldInputs(R, Files, FoldedNames))
      return E;
  const bool FromFile = !R.ModelBytes;
  if (FromFile && Small)
    R.ModelBytes = *Small;
  if (AnyGiven)
    if (Error E = bindFromInputFiles(R, Small, FoldedNames, BindNotes))
      return E;
  auto X = driver::planExecutable(R, *Kernels);
  // A runtime sees its inputs before it runs: when a shape depends on the
  // values of an input the command line gives (a Reshape target or Resize
  // scales fed as a graph input), plan again with those values. The first
  // error stands when that does not help either.
  if (!X && !Opt.FoldInputs && !Opt.NoFoldInputs && AnyGiven && FromFile) {
    Error First = X.takeError();
    api::Request Again = Base;
    Again.ModelBytes.reset(); // foldInputs reads the file itself
    StringMap<std::string> AgainFiles;
    StringSet<> AgainFolded;
    std::vector<std::string> AgainNotes;
    Error E = foldInputs(Again, AgainFiles, AgainFolded);
    if (!E)
      E = bindFromInputFiles(Again, Small, AgainFolded, AgainNotes);
    auto Y = E ? Expected<driver::Executable>(std::move(E))
               : driver::planExecutable(Again, *Kernels);
    if (!Y) {
      consumeError(Y.takeError());
      return First;
    }
    consumeError(std::move(First));
    WithColor::note(errs(), "oomplan-run")
        << "a shape depends on the values of given inputs: planned with "
           "them (--no-fold-inputs refuses)\n";
    R = std::move(Again);
    Files = std::move(AgainFiles);
    BindNotes = std::move(AgainNotes);
    X = std::move(Y);
    Folded = true;
  }
  for (const std::string &N : BindNotes)
    WithColor::note(errs(), "oomplan-run") << N << '\n';
  if (!X)
    return X.takeError();
  Rep.PlanSeconds = secondsSince(T0);
  for (const api::Diagnostic &D : X->Diagnostics)
    (D.Level == api::Severity::Warning
         ? WithColor::warning(errs(), "oomplan-run")
         : WithColor::note(errs(), "oomplan-run"))
        << D.Message << '\n';
  // "Does not fit" is an answer (exit 2), as oomplan gives it: a run over
  // the budget it was asked to keep would be one the user said could not
  // happen (on a GPU, an out-of-memory error). Without --budget (or
  // --device) nothing is refused.
  if (X->P.BudgetBytes && !X->P.fits()) {
    if (Opt.JSON) {
      json::OStream J(outs(), 1);
      J.object([&] {
        J.attribute("ran", false);
        J.attribute("plan_total_bytes", int64_t(X->P.totalBytes()));
        J.attribute("fitted", X->Fitted);
        J.attribute("budget_bytes", int64_t(*X->P.BudgetBytes));
        J.attribute("fits", false);
      });
      outs() << '\n';
      return 2;
    }
    outs() << "plan total " << X->P.totalBytes() << " bytes ("
           << formatBytes(X->P.totalBytes()) << ")"
           << (X->Fitted ? ", fitted" : "") << "; budget " << *X->P.BudgetBytes
           << " bytes: does NOT fit (nothing fitted it): not run\n"
           << "(oomplan with the same options explains what the memory is "
              "and what would fit)\n";
    return 2;
  }
  runtime::ExecOptions EO;
  EO.Threads = Opt.Threads;
  EO.Poison = Opt.Poison;
  EO.Profile = Opt.Profile;
  EO.Dev = Back->Dev;
  EO.Record = !Opt.NoGraph;
  EO.HostSteps = !Opt.NoHostSteps;
  auto Ex = runtime::Executor::create(*X->G, X->P, X->Info, *Kernels, EO);
  if (!Ex)
    return Ex.takeError();
  if (!Folded) {
    auto Given = inputFiles(*X->G);
    if (!Given)
      return Given.takeError();
    Files = std::move(*Given);
  }
  std::optional<StringRef> Bytes;
  if (R.ModelBytes)
    Bytes = StringRef(*R.ModelBytes);
  T0 = std::chrono::steady_clock::now();
  std::optional<uint64_t> RandomSeed;
  if (Opt.RandomWeights)
    RandomSeed = Opt.Seed;
  if (Error E = (*Ex)->loadWeights(R.ModelPath, Bytes, RandomSeed))
    return E;
  WholeIO IO;
  makeWholeIO(*X, **Ex, IO);
  if (Error E = setInputs(*X, **Ex, IO, Files))
    return E;
  Rep.LoadSeconds = secondsSince(T0);
  auto Before = runtime::readProcessMemory();
  Error Reset = runtime::resetPeakRSS();
  T0 = std::chrono::steady_clock::now();
  if (Error E = runPasses(*X, **Ex, IO, Rep.StepsSeconds))
    return E;
  Rep.RunSeconds = secondsSince(T0);
  auto AfterFirst = runtime::readProcessMemory();
  if (Opt.Repeat)
    (*Ex)->resetProfile(); // profile the warm runs
  for (unsigned I = 0; I < Opt.Repeat; ++I) {
    T0 = std::chrono::steady_clock::now();
    std::optional<double> Steps;
    if (Error E = runPasses(*X, **Ex, IO, Steps))
      return E;
    Rep.RepeatSeconds.push_back(secondsSince(T0));
    if (Steps)
      Rep.RepeatStepsSeconds.push_back(*Steps);
  }
  // Executor runs timed (a replay whose timers the device did not set is
  // not), each of X->Passes per run of the model.
  Rep.ProfiledRuns =
      std::max(1u, (*Ex)->profiledRuns() / std::max(1u, unsigned(X->Passes)));
  Rep.Ops = (*Ex)->opProfile();
  Rep.Steps = (*Ex)->stepProfile();
  auto After = runtime::readProcessMemory();
  measureRSS(Rep, Start, Before, AfterFirst, After, std::move(Reset));
  Rep.Regions = (*Ex)->regionUse();
  if (Back->Dev->name() != "cpu") {
    Rep.Device = (*Ex)->deviceUse();
    Rep.PlanDeviceBytes = X->P.WeightBytes + X->P.IOBytes + X->P.ArenaBytes;
  }
  if (Error E = writeOutputs(*X->G, IO))
    return E;
  if (!Opt.Check.empty()) {
    runtime::ExecOptions UO = EO;
    UO.Poison = false;
    UO.Profile = false;
    UO.Unplanned = true;
    auto Ref = runtime::Executor::create(*X->G, X->P, X->Info, *Kernels, UO);
    if (!Ref)
      return Ref.takeError();
    if (Error E = (*Ref)->loadWeights(R.ModelPath, Bytes, RandomSeed))
      return E;
    WholeIO RefIO;
    makeWholeIO(*X, **Ref, RefIO, X->Passes > 1 ? &IO : nullptr);
    if (X->Passes == 1)
      copyInputs(*X->G, **Ex, **Ref);
    std::optional<double> RefSteps;
    if (Error E = runPasses(*X, **Ref, RefIO, RefSteps))
      return E;
    Rep.CheckRan = true;
    Rep.CheckDifference = firstDifference(*X->G, IO, RefIO);
  }
  Rep.Poisoned = Opt.Poison;
  Rep.Fitted = X->Fitted;
  Rep.PlanTotal = X->P.totalBytes();
  Rep.Passes = X->Passes;
  Rep.Budget = X->P.BudgetBytes;
  Rep.Fits = X->P.fits();
  Rep.print(outs(), *X->G, IO.Out, Opt.JSON);
  return Rep.ok() ? 0 : 1;
}

// --list-kernels [--backend NAME]: the table alone, without a model and
// without opening a device.
static int listKernels(StringRef Backend) {
  const runtime::KernelTable *Table = nullptr;
#ifdef OOMPLAN_HAVE_CUDA
  if (Backend == "cuda")
    Table = &runtime::cuda::cudaKernelTable();
#endif
  if (!Table) {
    auto B = runtime::openBackend(Backend);
    if (!B)
      return fail(toString(B.takeError()));
    Table = B->Kernels;
  }
  std::vector<std::string> Names;
  for (const ops::OpInfo &Op : ops::allOps())
    if (Table->get(ops::opCode(Op)))
      Names.push_back(Op.Name);
  llvm::sort(Names);
  for (const std::string &N : Names)
    outs() << N << '\n';
  return 0;
}

/// One command line, as main runs it (also in each --commands child).
static int runMain(int argc, const char *const *argv) {
  Parsed = api::Arguments();
  std::string Bad =
      api::parseArguments(std::vector<std::string>(argv + 1, argv + argc),
                          Parsed, api::ArgumentsFor::OomplanRun);
  if (!Bad.empty())
    return fail(Bad);
  if (Parsed.Help) {
    outs() << api::helpText(api::ArgumentsFor::OomplanRun, Overview,
                            Parsed.HelpHidden);
    return 0;
  }
  if (Parsed.Version) {
    outs() << "oomplan-run version " << api::version() << "\n";
    return 0;
  }
  if (Opt.ListKernels)
    return listKernels(Parsed.Req.Backend.value_or("cpu"));
  if (Parsed.Req.ModelPath.empty())
    return fail("no model given (a .onnx or .onnxtxt path; --help lists the "
                "options)");
  auto RC = runTool(Parsed.Req);
  if (!RC)
    return fail(toString(RC.takeError()));
  return *RC;
}

/// oomplan-run --commands FILE [--line-timeout S] (RunCommands.h), or -1
/// when the arguments do not ask for it.
static int runCommands(int argc, char **argv) {
  std::optional<std::string> Path;
  unsigned Timeout = 0;
  bool Other = false;
  for (int I = 1; I < argc; ++I) {
    StringRef A(argv[I]), Name, Value;
    std::tie(Name, Value) = A.split('=');
    if (Name != "--commands" && Name != "--line-timeout") {
      Other = true;
      continue;
    }
    if (!A.contains('='))
      Value = I + 1 < argc ? StringRef(argv[++I]) : StringRef();
    if (Name == "--commands")
      Path = Value.str();
    else if (Value.getAsInteger(10, Timeout))
      return fail("invalid --line-timeout '" + Value + "': seconds expected");
  }
  if (!Path)
    return -1;
  if (Path->empty())
    return fail("--commands needs a FILE of command lines, or - for "
                "standard input");
  if (Other)
    return fail("--commands FILE takes no other option but --line-timeout: "
                "put each run's options on its line of FILE");
  // ONNX builds its operator schema registry on first use (about 25 ms):
  // once here, so that the children inherit it.
  consumeError(importModelText("<ir_version: 8, opset_import: [\"\" : 17]>\n"
                               "warmup (float[1] x) => (float[1] y) {\n"
                               "  y = Relu(x)\n}\n",
                               "warm-up")
                   .takeError());
  return run::runCommandsForked(
      *Path, Timeout,
      [&](ArrayRef<std::string> Args) {
        for (const std::string &A : Args)
          if (StringRef(A).split('=').first == "--commands")
            return fail("--commands cannot appear inside a commands file");
        std::vector<const char *> Argv{argv[0]};
        for (const std::string &A : Args)
          Argv.push_back(A.c_str());
        return runMain(static_cast<int>(Argv.size()), Argv.data());
      },
      outs());
}

int main(int argc, char **argv) {
  InitLLVM Y(argc, argv);
#ifdef OOMPLAN_HAVE_CUDA
  runtime::addBackend("cuda", runtime::cuda::openCUDABackend);
  runtime::addBackend("cuda-on-cpu", runtime::cuda::openCUDAOnCPUBackend);
#endif
  int RC = runCommands(argc, argv);
  if (RC >= 0)
    return RC;
  return runMain(argc, argv);
}
