//===- DriverModel.cpp - a model file from import to the emitted output ---===//
//
// Import, shape inference, symbol binding (--batch, --seq, --dim,
// --input-shape, with conflicts refused), planning (inference or one
// training step), then whatever the request emits: the graph, shapes,
// lifetimes, the report or JSON, the CSV instance, or the fitted plan.
//
//===----------------------------------------------------------------------===//
#include "FitInternal.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Driver/Import.h"
#include "oomplan/Driver/Session.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Frontend/TypeCheck.h"
#include "oomplan/IR/GraphPrinter.h"
#include "oomplan/Placement/MiniMallocCSV.h"
#include "oomplan/Schedule/SchedulePrinter.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include <map>
#include <set>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

// One named binding and the option it came from, for conflict messages.
struct NamedBinding {
  std::string Symbol;
  int64_t Value;
  std::string Origin; ///< "--dim batch=4", "--input-shape x=8x3x224x224".
};

// --input-shape NAME=D0xD1x...: the symbols of input NAME's declared dims.
static Error bindInputShape(const Graph &G, const api::InputShape &In,
                            std::vector<NamedBinding> &Out) {
  std::string Origin = "--input-shape " + In.Name + "=";
  for (size_t I = 0; I < In.Dims.size(); ++I)
    Origin += (I ? "x" : "") + std::to_string(In.Dims[I]);
  ValueId V = G.findValue(In.Name);
  if (V == NoId || !is_contained(G.Inputs, V)) {
    std::vector<std::string> Names;
    for (ValueId I : G.Inputs)
      Names.push_back(G.Values[I].Name);
    return makeInputError(Origin + ": the model has no input '" + In.Name +
                          "' (its inputs: " + join(Names, ", ") + ")");
  }
  const Value &Val = G.Values[V];
  if (!Val.HasDeclaredShape || Val.Shape.size() != In.Dims.size())
    return makeInputError(
        Origin + ": input '" + In.Name + "' has rank " +
        (Val.HasDeclaredShape ? std::to_string(Val.Shape.size())
                              : std::string("unknown")) +
        ", the shape given has " + std::to_string(In.Dims.size()) + " dims");
  for (size_t I = 0; I < In.Dims.size(); ++I) {
    const DeclaredDim &D = Val.Shape[I];
    if (D.K == DeclaredDim::Kind::Static && D.Size != In.Dims[I])
      return makeInputError(Origin + ": dim " + std::to_string(I) +
                            " of input '" + In.Name + "' is fixed at " +
                            std::to_string(D.Size));
    if (D.K != DeclaredDim::Kind::Symbol)
      continue;
    // Checked here, not by bindSymbols: that would name a --dim never given.
    if (In.Dims[I] < 1 || In.Dims[I] > (int64_t(1) << 40))
      return makeInputError(
          Origin + ": dim " + std::to_string(I) + " of input '" + In.Name +
          "' ('" + G.Symbols[D.Symbol] + "') is " + std::to_string(In.Dims[I]) +
          "; a symbolic dim takes 1 to 2^40");
    Out.push_back({G.Symbols[D.Symbol], In.Dims[I], Origin});
  }
  return Error::success();
}

// Two options that bind one symbol to different values: refuse, naming both
// ("--batch 8 --dim batch=4" must not plan batch 4 silently).
static Error checkConflicts(const Graph &G, const SymbolRoles &Roles,
                            const api::Request &R,
                            ArrayRef<NamedBinding> Named) {
  auto RoleOf = [&](SymbolId S) -> std::pair<const char *, const int64_t *> {
    if (R.Batch && is_contained(Roles.Batch, S))
      return {"--batch", &*R.Batch};
    if (R.Seq && is_contained(Roles.Seq, S))
      return {"--seq", &*R.Seq};
    return {nullptr, nullptr};
  };
  for (size_t I = 0; I < Named.size(); ++I) {
    SymbolId S = G.findSymbol(Named[I].Symbol);
    if (S == NoId)
      continue; // bindSymbols names the unknown symbol.
    auto [Flag, V] = RoleOf(S);
    if (Flag && *V != Named[I].Value)
      return makeInputError(Twine(Flag) + "=" + Twine(*V) + " and " +
                            Named[I].Origin + " bind '" + Named[I].Symbol +
                            "' to different values");
    for (size_t J = 0; J < I; ++J)
      if (Named[J].Symbol == Named[I].Symbol &&
          Named[J].Value != Named[I].Value)
        return makeInputError(Named[J].Origin + " and " + Named[I].Origin +
                              " bind '" + Named[I].Symbol +
                              "' to different values");
  }
  return Error::success();
}

// --max-batch and --sweep without --batch search from batch 1, and --max-seq
// without --seq from seq 1; the other role, when not given, is 1 for the batch
// (one request at a time) and has no default for the sequence: the largest
// batch depends on it too much to guess one, so --max-batch asks for it.
static Error defaultSearchedRoles(Session &S, const Graph &G,
                                  BindingRequest &BR) {
  const api::ReportRequest &RR = S.Req.Report;
  if (!RR.MaxBatch && !RR.MaxSeq && !RR.Sweep)
    return Error::success();
  const SymbolRoles &Roles = S.Roles;
  auto NamedAny = [&](ArrayRef<SymbolId> Syms) {
    for (SymbolId Sym : Syms)
      for (auto &[Name, Value] : BR.Named)
        if (G.findSymbol(Name) == Sym)
          return true;
    return false;
  };
  const char *Flag = RR.MaxBatch ? "--max-batch"
                     : RR.MaxSeq ? "--max-seq"
                                 : "--sweep";
  if (!BR.Batch && !Roles.Batch.empty() && !NamedAny(Roles.Batch)) {
    BR.Batch = 1;
    S.note(Twine(Flag) + " without --batch: planned at batch 1" +
           (RR.MaxBatch || RR.Sweep ? ", where the search starts" : ""));
  }
  // The sweep tabulates sequence lengths from 128 (report::sweepMemory):
  // the plan it starts from is the table's first row.
  if (!BR.Seq && !Roles.Seq.empty() && !NamedAny(Roles.Seq) && RR.Sweep &&
      !RR.MaxBatch && !RR.MaxSeq) {
    BR.Seq = 128;
    S.note("--sweep without --seq: planned at seq 128, where the table "
           "starts");
  }
  if (!BR.Seq && !Roles.Seq.empty() && !NamedAny(Roles.Seq)) {
    if (!RR.MaxSeq)
      return makeInputError(
          "--max-batch on a model with a sequence symbol ('" +
          G.Symbols[Roles.Seq[0]] +
          "') needs --seq: the largest batch depends on the sequence "
          "length, which has no default");
    BR.Seq = 1;
    S.note("--max-seq without --seq: the search starts from seq 1");
  }
  return Error::success();
}

// G's symbol roles, read once per request; binding and everything after it
// read S.Roles (the serve path included, before its fusion, which keeps the
// graph's inputs and symbols).
static void findRoles(Session &S, const Graph &G) {
  S.Roles = findSymbolRoles(G);
}

// The symbols of a given input's declared dims that no option binds take
// the given tensor's dims (Request::GivenInputs): a run plans the size its
// inputs have. A symbol an option binds stays the option's; the run's input
// check then names the file that disagrees with the plan.
static void bindGivenInputs(Session &S, const Graph &G,
                            std::vector<NamedBinding> &Named) {
  std::set<SymbolId> Bound;
  if (S.Req.Batch)
    Bound.insert(S.Roles.Batch.begin(), S.Roles.Batch.end());
  if (S.Req.Seq)
    Bound.insert(S.Roles.Seq.begin(), S.Roles.Seq.end());
  for (const NamedBinding &N : Named)
    Bound.insert(G.findSymbol(N.Symbol));
  for (const api::GivenInput &In : S.Req.GivenInputs) {
    ValueId V = G.findValue(In.Name);
    if (V == NoId || !is_contained(G.Inputs, V))
      continue; // folded into the model, or not an input of it
    const Value &Val = G.Values[V];
    if (!Val.HasDeclaredShape || Val.Shape.size() != In.Dims.size())
      continue; // the run's input check names the file and both shapes
    std::string Said;
    for (size_t I = 0; I < Val.Shape.size(); ++I) {
      const DeclaredDim &D = Val.Shape[I];
      if (D.K != DeclaredDim::Kind::Symbol || !Bound.insert(D.Symbol).second)
        continue;
      std::string Dim =
          "--dim " + G.Symbols[D.Symbol] + "=" + std::to_string(In.Dims[I]);
      Named.push_back({G.Symbols[D.Symbol], In.Dims[I],
                       "input '" + In.Name + "' (" + In.Source + ")"});
      Said += (Said.empty() ? "" : " ") + Dim;
    }
    if (!Said.empty())
      S.note("input '" + In.Name + "' (" + In.Source + ") binds its dims, as " +
             Said);
  }
}

static Expected<Bindings> bind(Session &S, const Graph &G) {
  std::vector<NamedBinding> Named;
  for (const api::InputShape &In : S.Req.InputShapes)
    if (Error E = bindInputShape(G, In, Named))
      return E;
  for (const api::SymbolValue &D : S.Req.Dims)
    Named.push_back(
        {D.Name, D.Value, "--dim " + D.Name + "=" + std::to_string(D.Value)});
  if (Error E = checkConflicts(G, S.Roles, S.Req, Named))
    return E;
  bindGivenInputs(S, G, Named);
  BindingRequest BR;
  BR.Batch = S.Req.Batch;
  BR.Seq = S.Req.Seq;
  for (const NamedBinding &N : Named)
    BR.Named.push_back({N.Symbol, N.Value});
  if (Error E = defaultSearchedRoles(S, G, BR))
    return E;
  return bindSymbols(G, S.Roles, BR);
}

// Symbols that occur only in declared output shapes: inference sized those
// outputs, so bind each from the first output dim that declares it, and
// check every declared output dim whose symbol is bound against inference.
// A contradiction is a warning naming both sizes; the plan uses inference.
static void bindOutputSymbols(Session &S, const Graph &G,
                              const ShapeInfo &Shapes,
                              std::vector<std::optional<int64_t>> &B) {
  struct Seen {
    std::string Where;
    int64_t Value;
  };
  std::map<SymbolId, Seen> FromOutputs;
  for (ValueId V : G.Outputs) {
    const Value &Val = G.Values[V];
    if (!Val.HasDeclaredShape || V >= Shapes.Values.size() ||
        !Shapes.Values[V].Known ||
        Shapes.Values[V].Dims.size() != Val.Shape.size())
      continue;
    for (size_t A = 0; A < Val.Shape.size(); ++A) {
      const DeclaredDim &D = Val.Shape[A];
      if (D.K != DeclaredDim::Kind::Symbol || D.Symbol >= B.size())
        continue;
      auto Inferred = Shapes.Values[V].Dims[A].evaluate(B, Shapes.SymbolNames);
      if (!Inferred) {
        consumeError(Inferred.takeError()); // Unbound inputs: nothing to say.
        continue;
      }
      std::string Where = "output '" + Val.Name + "' dim " + std::to_string(A);
      const std::string &Name = Shapes.SymbolNames[D.Symbol];
      if (B[D.Symbol]) {
        if (*B[D.Symbol] != *Inferred) {
          auto It = FromOutputs.find(D.Symbol);
          S.warn(Where + " is declared '" + Name +
                 "' = " + Twine(*B[D.Symbol]) +
                 (It != FromOutputs.end()
                      ? " (inferred at " + It->second.Where + ")"
                      : std::string()) +
                 ", but inference gives " + Twine(*Inferred) +
                 "; the plan uses " + Twine(*Inferred));
        }
        continue;
      }
      B[D.Symbol] = *Inferred;
      FromOutputs[D.Symbol] = {Where, *Inferred};
      S.note("'" + Name + "' occurs only in declared output shapes: bound to " +
             Twine(*Inferred) + " by inference (" + Where + ")");
    }
  }
}

static void emitCSV(raw_ostream &OS, const Plan &P, bool IOInArena) {
  std::vector<BufferId> Ids;
  std::vector<planner::BufferRequest> R =
      arenaRequests(P.Life, P.AlignBytes, IOInArena, &Ids);
  planner::Placement Pl;
  Pl.ArenaBytes = P.ArenaBytes;
  for (BufferId B : Ids)
    Pl.Offsets.push_back(P.OffsetOf[B]);
  planner::writeMiniMallocCSV(OS, R, Pl);
}

// The settings that decide the numbers but that the user may not have
// typed: the device's memory when it is the budget, and training's defaults.
void driver::printSettings(Session &S) {
  const api::Request &R = S.Req;
  printFusionSettings(S);
  printBackendSettings(S);
  if (R.Device) {
    S.OS << "device: " << S.Device.Name << ", "
         << formatBytes(S.Device.MemoryBytes) << " (" << S.Device.MemoryBytes
         << " bytes)";
    if (S.Limit.CapacityFromDevice)
      S.OS << ", the budget (no --budget given)";
    if (S.Limit.OverheadFromDevice)
      S.OS << "; overhead " << formatBytes(S.Limit.OverheadBytes) << " ("
           << S.Limit.OverheadBytes
           << " bytes: its CUDA context and library handles as measured; "
              "--overhead 0 for none)";
    S.OS << '\n';
  }
  if (S.InferenceHalf) {
    S.OS << "precision: " << *R.Train.Precision
         << ", every fp32 tensor in 16 bits (weights, inputs, activations, "
            "outputs)";
    if (*S.KeptInFloat)
      S.OS << "; " << *S.KeptInFloat << (*S.KeptInFloat == 1 ? " op" : " ops")
           << " kept in fp32 as ONNX Runtime's float16 conversion keeps "
              "them (Resize, Range, TopK, ...), each with fp32 copies of its "
              "inputs and a cast of its output";
    S.OS << '\n';
  }
  if (!S.training())
    return;
  const api::TrainingRequest &T = R.Train;
  auto Setting = [](const std::optional<std::string> &V, const char *Def) {
    return V ? *V : std::string(Def) + " (default)";
  };
  S.OS << "training: optimizer " << Setting(T.Optimizer, "adam")
       << ", precision " << Setting(T.Precision, "fp32") << ", loss "
       << S.LossText << ", step " << Setting(T.Step, "steady") << ", zero-grad "
       << Setting(T.ZeroGrad, "none") << ", gradient accumulation "
       << S.Train.GradAccum << ", runtime "
       << Setting(T.Runtime, "pytorch-cuda") << '\n';
  if (!S.AttentionText.empty())
    S.OS << "attention: " << S.AttentionText << '\n';
}

// The options that describe the plan as is (capacity searches, sweep,
// pictures): the fit does not run with them (docs/fitting.md).
static std::vector<std::string> reportOnlyOptions(const api::Request &R) {
  std::vector<std::string> Given = reportOptionsGiven(R);
  llvm::erase_value(Given, "--overhead"); // The fit honours it.
  return Given;
}

bool driver::fitRuns(const Session &S, const Plan &P) {
  const api::Request &R = S.Req;
  if (R.Fit.requested())
    return true;
  if (R.Fit.NoFit || !S.Limit.given() || P.fits())
    return false;
  if (R.Emit != api::EmitKind::Report && R.Emit != api::EmitKind::Plan &&
      R.Emit != api::EmitKind::JSON && R.Emit != api::EmitKind::Schedule)
    return false;
  return reportOnlyOptions(R).empty();
}

// Everything after planning: the fit, the report, or one of the listings.
static Expected<int> emitPlan(Session &S, const Graph &G,
                              const ShapeInfo &Shapes, const PlanContext &C,
                              const Plan &P, const PipelineOptions &PO,
                              const PassLog &MainLog) {
  const api::Request &R = S.Req;
  S.Res.TotalBytes = P.totalBytes();
  // The report re-plans at other bindings (capacity, diagnosis) this way.
  report::PlanFn PlanAt = [&](ArrayRef<std::optional<int64_t>> B) {
    return S.training() ? planTraining(S, G, Shapes, B, PO, /*Quiet=*/true)
                        : planGraph(G, Shapes, B, PO);
  };
  // The passes micro-batching splits the batch into: training accumulates
  // the weight gradients over them (--grad-accum K).
  PassesPlanFn PlanPasses = [&](ArrayRef<std::optional<int64_t>> B,
                                unsigned K) {
    return S.training() ? planTraining(S, G, Shapes, B, PO, /*Quiet=*/true, K)
                        : planGraph(G, Shapes, B, PO);
  };
  if (fitRuns(S, P)) {
    // Say so rather than silently ignore what the fit does not honour yet.
    std::vector<std::string> Ignored = reportOnlyOptions(R);
    if (R.Emit == api::EmitKind::Lifetimes || R.Emit == api::EmitKind::CSV)
      Ignored.push_back("--emit=lifetimes|csv");
    if (!Ignored.empty())
      return makeInputError("--fit does not combine with " +
                            join(Ignored, ", ") +
                            " yet; run them without --fit");
    return runFit(S, C, P, PO, PlanAt, PlanPasses, MainLog);
  }
  if (!R.Fit.NoFit && !P.fits()) {
    std::vector<std::string> Why = reportOnlyOptions(R);
    if (R.Emit == api::EmitKind::Lifetimes || R.Emit == api::EmitKind::CSV)
      Why.push_back("--emit=lifetimes|csv");
    S.note("not fitted (" + join(Why, ", ") +
           " answer for the plan as is; docs/fitting.md)");
  }
  if (R.Fit.ShowPlan)
    S.note(std::string("--fit-show-plan: nothing was fitted (") +
           (!P.Limit.given() ? "no budget was given"
            : P.fits()       ? "the plan fits the budget as is"
                             : "see above") +
           "); the report is the plan as is");
  S.printPasses(G, MainLog);
  if (R.Emit == api::EmitKind::Report || R.Emit == api::EmitKind::Plan)
    printSettings(S);
  switch (R.Emit) {
  case api::EmitKind::Lifetimes:
    printLifetimes(S.OS, P.Sched, P.Life);
    break;
  case api::EmitKind::JSON:
  case api::EmitKind::Report:
    return runReport(S, C, P, PO, PlanAt, R.Emit == api::EmitKind::JSON,
                     makeFitRemedy(S, C, P, PO, PlanAt, PlanPasses));
  case api::EmitKind::CSV:
    emitCSV(S.OS, P, R.IOInArena);
    break;
  case api::EmitKind::Schedule:
    printSchedule(S.OS, P.Sched, &G);
    break;
  default:
    printPlanText(S.OS, P, C, /*ListBuffers=*/R.Emit == api::EmitKind::Plan);
  }
  return P.fits() ? 0 : 2;
}

// Inputs whose types the ONNX schema does not allow (TypeCheck.h): a
// warning, since the plan is still an answer; for a run, an input a kernel
// would read as another type (TypeCheck.h) is an input error. Values of
// steps that never run are not checked.
static Error checkTypes(Session &S, const Graph &G, const ShapeInfo &Shapes) {
  std::vector<ElementType> Types(G.Values.size(), ElementType::Undefined);
  for (ValueId V = 0; V < G.Values.size() && V < Shapes.Values.size(); ++V)
    if (Shapes.Values[V].Known)
      Types[V] = Shapes.Values[V].Type;
  for (NodeId N = 0; N < G.Nodes.size(); ++N)
    if (neverRuns(Shapes, N))
      for (ValueId V : G.Nodes[N].Outputs)
        if (V != NoId)
          Types[V] = ElementType::Undefined;
  for (const OperandTypeIssue &I : oomplan::checkOperandTypes(G, Types)) {
    if (I.RefusedForRun && S.ForRun)
      return makeInputError(G.SourcePath + ": " + I.Message);
    S.warn(I.Message);
  }
  return Error::success();
}

Expected<int> driver::runModel(Session &S) {
  const api::Request &R = S.Req;
  auto G = importModel(R);
  if (!G)
    return G.takeError();
  if (R.Emit == api::EmitKind::Graph) {
    printGraph(S.OS, **G);
    return 0;
  }
  auto Shapes = inferShapes(**G);
  if (!Shapes)
    return Shapes.takeError();
  for (const std::string &W : Shapes->Warnings)
    S.warn(W);
  if (Error E = checkTypes(S, **G, *Shapes))
    return E;
  findRoles(S, **G);
  if (R.Serve.Enabled)
    return runServe(S, *G, *Shapes);
  if (R.Emit != api::EmitKind::Shapes)
    if (Error E = prepareModel(S, *G, *Shapes))
      return E;
  auto Bound = bind(S, **G);
  if (!Bound)
    return Bound.takeError();
  for (const std::string &N : Bound->Notes)
    S.note(N);
  std::vector<std::optional<int64_t>> Bindings = Bound->Values;
  Bindings.resize(Shapes->SymbolNames.size());
  bindOutputSymbols(S, **G, *Shapes, Bindings);
  if (R.Emit == api::EmitKind::Shapes) {
    std::vector<std::string> Unbound =
        unboundSymbols(Bindings, Shapes->SymbolNames);
    if (!Unbound.empty())
      S.note("unbound symbols: " + join(Unbound, ", "));
    printShapes(S.OS, **G, *Shapes, Bindings);
    if (S.training())
      if (Error E = printTrainingShapes(S, **G, *Shapes, Bindings))
        return E;
    return 0;
  }
  if (R.Parallel.requested() || R.Emit == api::EmitKind::DeepSpeed ||
      R.Emit == api::EmitKind::FSDP || R.Emit == api::EmitKind::Megatron)
    return runParallel(S, **G, *Shapes, Bindings);
  // Only the main plan reports its passes; re-plans (capacity, diagnosis,
  // micro-batches) use PO without the hook.
  PipelineOptions PO = S.pipelineOptions();
  PipelineOptions MainPO = PO;
  PassRecorder Rec;
  if (S.printsPasses())
    MainPO.Instr = &Rec.Instr;
  auto P = S.training() ? planTraining(S, **G, *Shapes, Bindings, MainPO)
                        : planGraph(**G, *Shapes, Bindings, MainPO);
  if (!P)
    return P.takeError();
  // Only when the step does not fit: the question is then how long a
  // sequence would (a capacity search of training plans costs seconds).
  if (S.training() && !P->fits() &&
      (R.Emit == api::EmitKind::Report || R.Emit == api::EmitKind::Plan))
    fusedAttentionAdvice(S, **G, *Shapes, Bindings, PO,
                         /*AsNote=*/fitRuns(S, *P));
  // Fusion and the order run before the other transforms.
  Rec.Log.insert(Rec.Log.begin(), S.Fusion->Passes.begin(),
                 S.Fusion->Passes.end());
  PlanContext C{**G, *Shapes, Bindings};
  return emitPlan(S, **G, *Shapes, C, *P, PO, Rec.Log);
}

Expected<PlannedModel> driver::planModel(Session &S) {
  PlannedModel M;
  auto G = importModel(S.Req);
  if (!G)
    return G.takeError();
  M.G = std::move(*G);
  auto Shapes = inferShapes(*M.G);
  if (!Shapes)
    return Shapes.takeError();
  M.Shapes = std::move(*Shapes);
  for (const std::string &W : M.Shapes.Warnings)
    S.warn(W);
  if (Error E = checkTypes(S, *M.G, M.Shapes))
    return E;
  findRoles(S, *M.G);
  if (Error E = prepareModel(S, M.G, M.Shapes))
    return E;
  auto Bound = bind(S, *M.G);
  if (!Bound)
    return Bound.takeError();
  for (const std::string &N : Bound->Notes)
    S.note(N);
  M.Bindings = Bound->Values;
  M.Bindings.resize(M.Shapes.SymbolNames.size());
  bindOutputSymbols(S, *M.G, M.Shapes, M.Bindings);
  const Graph &Gr = *M.G;
  const ShapeInfo &Sh = M.Shapes;
  PipelineOptions PO = S.pipelineOptions();
  auto P = S.training() ? planTraining(S, Gr, Sh, M.Bindings, PO)
                        : planGraph(Gr, Sh, M.Bindings, PO);
  if (!P)
    return P.takeError();
  if (!fitRuns(S, *P)) {
    M.Final = std::move(*P);
    return M;
  }
  report::PlanFn PlanAt = [&](ArrayRef<std::optional<int64_t>> B) {
    return S.training() ? planTraining(S, Gr, Sh, B, PO, /*Quiet=*/true)
                        : planGraph(Gr, Sh, B, PO);
  };
  PassesPlanFn PlanPasses = [&](ArrayRef<std::optional<int64_t>> B,
                                unsigned K) {
    return S.training() ? planTraining(S, Gr, Sh, B, PO, /*Quiet=*/true, K)
                        : planGraph(Gr, Sh, B, PO);
  };
  PlanContext C{Gr, Sh, M.Bindings};
  auto F = fitPlan(S, C, *P, PO, PlanAt, PlanPasses);
  if (!F)
    return F.takeError();
  M.Final = F->P;
  M.Bindings = F->Bindings;
  M.Fit = std::move(*F);
  return M;
}
