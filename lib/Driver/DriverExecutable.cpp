//===- DriverExecutable.cpp - a request planned for a run -----------------===//
//
// planModel (FitInternal.h) makes the request into its final plan, as run()
// would; this file adds the workspace edit before it plans, and afterwards
// turns shape inference's formulas into the concrete dims every kernel
// needs. A step's workspace is the write after its node's outputs: no
// marker is needed, and schedule transforms that copy a step copy it too.
//
//===----------------------------------------------------------------------===//
#include "FitInternal.h"
#include "Workspace.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Driver/Executable.h"
#include "oomplan/Runtime/HalfInFloat.h"
#include "oomplan/Support/Error.h"
#include <algorithm>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

// Dims of value V at Bindings; an error names the value. A data-dependent
// size (an upper bound) is accepted only when UpperBoundOK.
static Error valueDims(const Graph &G, const ShapeInfo &Shapes,
                       ArrayRef<std::optional<int64_t>> Bindings, ValueId V,
                       SmallVectorImpl<int64_t> &Out,
                       bool UpperBoundOK = false) {
  const ValueShape &VS = Shapes.Values[V];
  if (VS.UpperBound && !UpperBoundOK)
    return makeUnsupportedError(
        G.SourcePath + ": value '" + G.Values[V].Name +
        "' has a data-dependent size (planned at its upper bound) and later "
        "steps read it; the runtime runs such a value only as a graph output");
  Out.clear();
  for (const SymExpr &D : VS.Dims) {
    auto N = D.evaluate(Bindings, Shapes.SymbolNames);
    if (!N)
      return prependContext(N.takeError(), G.SourcePath + ": value '" +
                                               G.Values[V].Name + "': ");
    if (*N < 0)
      return makeInputError(G.SourcePath + ": value '" + G.Values[V].Name +
                            "' has a negative dim at these bindings");
    Out.push_back(*N);
  }
  return Error::success();
}

// Tensor T holds value V, planned at its upper bound: its exact dims, in
// the exactness run's symbols, become Info's formulas when they use a
// data-dependent size (a symbol past the model's NumModelSymbols), with
// the axes whose formula is such a symbol minus one (the kernel's report
// gives it). False: V's formula uses none (then its dims are exact, and
// it is not dynamic), or it is not known there.
static bool setSymbolicDims(const ShapeInfo &Exact, ValueId V,
                            size_t NumModelSymbols, runtime::RunInfo &Info,
                            TensorId T) {
  const ValueShape &XS = Exact.Values[V];
  if (!XS.Known)
    return false;
  bool UsesSize = false;
  for (size_t A = 0; A < XS.Dims.size(); ++A) {
    SmallVector<SymbolId, 4> Syms;
    XS.Dims[A].collectSymbols(Syms);
    for (SymbolId S : Syms) {
      if (S < NumModelSymbols)
        continue;
      UsesSize = true;
      if (XS.Dims[A] == SymExpr::symbol(S) - SymExpr::constant(1))
        Info.Reported[T].push_back({unsigned(A), S});
    }
  }
  if (UsesSize)
    Info.SymbolicDims[T] = XS.Dims;
  return UsesSize;
}

// Refs with dims and types only (Data null), for a WorkspaceFn.
static Error shapeRefs(const Graph &G, const ShapeInfo &Shapes,
                       ArrayRef<std::optional<int64_t>> Bindings,
                       ArrayRef<ValueId> Values,
                       SmallVectorImpl<runtime::TensorRef> &Out) {
  for (ValueId V : Values) {
    runtime::TensorRef R;
    if (V != NoId && Shapes.Values[V].Known) {
      R.Type = Shapes.Values[V].Type;
      if (Error E = valueDims(G, Shapes, Bindings, V, R.Dims,
                              /*UpperBoundOK=*/true))
        return E;
    }
    Out.push_back(std::move(R));
  }
  return Error::success();
}

Error driver::addWorkspaces(const runtime::KernelTable &Kernels, const Graph &G,
                            const ShapeInfo &Shapes,
                            ArrayRef<std::optional<int64_t>> Bindings,
                            Schedule &S, unsigned Roomy, unsigned *Levels) {
  for (Step &St : S.Steps) {
    // A branch not taken runs no kernel; its placeholder dims would only
    // confuse the query.
    if (St.Kind != StepKind::Compute || St.Node == NoId ||
        neverRuns(Shapes, St.Node))
      continue;
    const Node &N = G.Nodes[St.Node];
    const ops::OpInfo *Op = ops::lookupOp(N.OpType);
    if (!Op || !Kernels.get(ops::opCode(*Op)))
      continue; // the executor reports the missing kernel
    const runtime::Kernel &K = *Kernels.get(ops::opCode(*Op));
    ElementType In0 = N.Inputs.empty() || N.Inputs[0] == NoId
                          ? ElementType::Undefined
                          : Shapes.Values[N.Inputs[0]].Type;
    if (!K.Workspace && !runtime::widensHalf(K, In0))
      continue;
    SmallVector<runtime::TensorRef, 4> In, Out;
    if (Error E = shapeRefs(G, Shapes, Bindings, N.Inputs, In))
      return E;
    if (Error E = shapeRefs(G, Shapes, Bindings, N.Outputs, Out))
      return E;
    // With the float copies of a half step's operands (HalfInFloat.h).
    uint64_t Bytes = runtime::kernelWorkspace(K, N, In, Out, Roomy);
    if (Levels && (K.RoomyWorkspace || K.RoomierWorkspace)) {
      uint64_t Below = runtime::kernelWorkspace(K, N, In, Out, 0);
      for (unsigned L = 1; L <= 2; ++L) {
        const uint64_t At = runtime::kernelWorkspace(K, N, In, Out, L);
        if (At != Below)
          *Levels |= 1u << L;
        Below = At;
      }
    }
    if (Bytes == 0)
      continue;
    driver::addWorkspaceWrite(S, St, N, Bytes);
  }
  return Error::success();
}

Expected<runtime::RunInfo>
driver::makeRunInfo(const Graph &G, const ShapeInfo &Shapes,
                    ArrayRef<std::optional<int64_t>> Bindings,
                    const Schedule &S) {
  runtime::RunInfo Info;
  size_t NT = S.Tensors.size();
  // The exactness run's symbols extend the model's (the same first ones).
  const ShapeInfo *Exact = Shapes.Exact.get();
  size_t NumModelSymbols = Shapes.SymbolNames.size();
  if (Exact &&
      (Exact->SymbolNames.size() < NumModelSymbols ||
       !std::equal(Shapes.SymbolNames.begin(), Shapes.SymbolNames.end(),
                   Exact->SymbolNames.begin())))
    Exact = nullptr;
  if (Exact) {
    Info.SymbolicDims.resize(NT);
    Info.Reported.resize(NT);
    Info.Symbols = Exact->SymbolNames;
    Info.Bindings.assign(Bindings.begin(), Bindings.end());
    Info.Bindings.resize(Exact->SymbolNames.size());
  }
  Info.Dims.resize(NT);
  Info.Types.assign(NT, ElementType::Undefined);
  Info.Present.assign(NT, false);
  Info.UpperBound.assign(NT, false);
  Info.Workspace.assign(S.Steps.size(), NoId);
  // The graph value each tensor holds: its own, or for a synthetic tensor
  // a step writes (a recomputed copy), the node output it is written as.
  std::vector<ValueId> ValueOf(NT, NoId);
  for (TensorId T = 0; T < NT; ++T)
    ValueOf[T] = S.Tensors[T].Value;
  for (size_t Id = 0; Id < S.Steps.size(); ++Id) {
    const Step &St = S.Steps[Id];
    if (St.Node == NoId)
      continue;
    size_t Outs = 0;
    for (ValueId V : G.Nodes[St.Node].Outputs)
      if (V != NoId && Outs < St.Writes.size()) {
        if (ValueOf[St.Writes[Outs]] == NoId)
          ValueOf[St.Writes[Outs]] = V;
        ++Outs;
      }
    if (St.Writes.size() > Outs) {
      TensorId W = St.Writes[Outs];
      Info.Workspace[Id] = W;
      Info.Dims[W] = {int64_t(S.Tensors[W].SizeBytes)};
      Info.Types[W] = ElementType::UInt8;
      Info.Present[W] = true;
    }
  }
  for (TensorId T = 0; T < NT; ++T) {
    const ScheduleTensor &ST = S.Tensors[T];
    if (ValueOf[T] == NoId) {
      if (!Info.Present[T])
        return makeUnsupportedError("tensor '" + ST.Name +
                                    "' is not a graph value or a workspace; "
                                    "the runtime cannot run it yet");
      continue;
    }
    const ValueShape &VS = Shapes.Values[ValueOf[T]];
    if (!VS.Known)
      continue; // unused: kernels see an omitted output
    // A data-dependent output nothing reads: its kernel reports the dims.
    const Value &Val = G.Values[ValueOf[T]];
    bool Last = VS.UpperBound && Val.IsGraphOutput && Val.Users.empty();
    // Its exact dims are formulas of data-dependent sizes (the exactness
    // run's): evaluated during the run (CPU backend), for a graph output
    // too, whose kernel may be no data-dependent one.
    bool Dynamic =
        VS.UpperBound && Exact &&
        setSymbolicDims(*Exact, ValueOf[T], NumModelSymbols, Info, T);
    // Bounded in the plan, exact in the exactness run (it does not use a
    // data-dependent size): its exact dims.
    bool ExactDims = VS.UpperBound && !Last && !Dynamic && Exact &&
                     Exact->Values[ValueOf[T]].Known;
    if (Error E = ExactDims
                      ? valueDims(G, *Exact, Info.Bindings, ValueOf[T],
                                  Info.Dims[T], /*UpperBoundOK=*/true)
                      : valueDims(G, Shapes, Bindings, ValueOf[T], Info.Dims[T],
                                  /*UpperBoundOK=*/Last || Dynamic))
      return E;
    Info.UpperBound[T] = Last;
    Info.Types[T] = ST.Type != ElementType::Undefined ? ST.Type : VS.Type;
    Info.Present[T] = true;
  }
  return Info;
}

// Each graph input and output at the whole batch (the pass bindings with
// every batch symbol times Passes, as micro-batching divided them) and the
// one axis that differs from a pass's dims.
static Error splitBatch(Executable &X, const SymbolRoles &Roles) {
  const Graph &G = *X.G;
  std::vector<std::optional<int64_t>> Whole = X.Bindings;
  for (SymbolId S : Roles.Batch)
    if (S < Whole.size() && Whole[S])
      Whole[S] = *Whole[S] * int64_t(X.Passes);
  auto Split = [&](ArrayRef<ValueId> Values, bool Outputs,
                   std::vector<SmallVector<int64_t, 6>> &Dims,
                   std::vector<int> &Axis) -> Error {
    for (ValueId V : Values) {
      Dims.emplace_back();
      Axis.push_back(-1);
      if (!X.Info.Present[V])
        continue;
      if (X.Info.UpperBound[V] && X.Passes > 1)
        return makeUnsupportedError("value '" + G.Values[V].Name +
                                    "' has a data-dependent size; the "
                                    "runtime cannot split it into "
                                    "micro-batches");
      if (Error E = valueDims(G, X.Shapes, Whole, V, Dims.back(),
                              /*UpperBoundOK=*/true))
        return E;
      const SmallVector<int64_t, 6> &Part = X.Info.Dims[V];
      for (size_t A = 0; A < Part.size(); ++A) {
        if (Part[A] == Dims.back()[A])
          continue;
        if (Axis.back() >= 0 || Dims.back()[A] != Part[A] * X.Passes)
          return makeUnsupportedError(
              "value '" + G.Values[V].Name +
              "' does not split into micro-batches along one axis; the "
              "runtime cannot run its loop");
        Axis.back() = int(A);
      }
      // An output every pass writes whole cannot be assembled.
      if (Outputs && X.Passes > 1 && Axis.back() < 0)
        return makeUnsupportedError("output '" + G.Values[V].Name +
                                    "' has no batch axis; the runtime "
                                    "cannot assemble it from micro-batches");
    }
    return Error::success();
  };
  if (Error E = Split(G.Inputs, false, X.WholeInputDims, X.InputAxis))
    return E;
  return Split(G.Outputs, true, X.WholeOutputDims, X.OutputAxis);
}

namespace {
/// One plan of R for the executable: planModel with the kernels'
/// workspaces (roomy or plain). Res collects the diagnostics, Roles the
/// model's symbol roles.
Expected<PlannedModel> planWithWorkspaces(const api::Request &R,
                                          const runtime::KernelTable &K,
                                          api::Result &Res, SymbolRoles &Roles,
                                          unsigned Roomy, unsigned *Levels) {
  Session S(R, Res);
  if (Error E = resolveOptions(S))
    return E;
  if (S.InferenceHalf)
    return makeInputError(
        "--precision=" + *R.Train.Precision +
        ": oomplan-run runs the graph's own element types; plan the converted "
        "model instead (onnxconverter-common's convert_float_to_float16 "
        "writes it)");
  S.EditSchedule = [&K, Roomy, Levels](const Graph &G, const ShapeInfo &Shapes,
                                       ArrayRef<std::optional<int64_t>> B,
                                       Schedule &Sched) {
    return addWorkspaces(K, G, Shapes, B, Sched, Roomy, Levels);
  };
  // Fuse only into ops this executor has kernels for (contract 1a).
  S.KernelWorkspaces = true;
  S.ForRun = true;
  S.FusedSupported = [&K](StringRef OpType) {
    // "Op.part": an optional part of a fused op, which the kernel lists.
    auto [Name, Part] = OpType.split('.');
    const ops::OpInfo *Op = ops::lookupOp(Name);
    if (!Op)
      return false;
    const auto &Kn = K.get(ops::opCode(*Op));
    return Kn.has_value() &&
           (Part.empty() || llvm::is_contained(Kn->Features, OpType));
  };
  auto M = planModel(S);
  Roles = S.Roles;
  return M;
}
} // namespace

Expected<Executable> driver::planExecutable(const api::Request &R,
                                            const runtime::KernelTable &K) {
  if (R.Train.Enabled)
    return makeUnsupportedError("the runtime runs inference plans; --train "
                                "is not supported");
  api::Result Res;
  SymbolRoles Roles;
  unsigned Levels = 0;
  auto M = planWithWorkspaces(R, K, Res, Roles, /*Roomy=*/0, &Levels);
  if (!M)
    return M.takeError();
  // Larger workspaces only where they cost no planned memory: a plan with
  // the roomier ones, else one with the roomy ones, the first kept whose
  // plan was not fitted (neither was the plain one: a fitted plan's
  // choices depend on its bytes) and whose arena is no larger. The CPU
  // convolutions then run Winograd or multiply every image at once where
  // the arena's peak is elsewhere (docs/runtime.md).
  for (unsigned Level = 2; Level >= 1 && !M->Fit; --Level) {
    if (!(Levels & (1u << Level)))
      continue;
    api::Result RoomyRes;
    SymbolRoles RoomyRoles;
    auto Roomy = planWithWorkspaces(R, K, RoomyRes, RoomyRoles, Level, nullptr);
    if (!Roomy)
      return Roomy.takeError();
    if (!Roomy->Fit && Roomy->Final.ArenaBytes <= M->Final.ArenaBytes) {
      M = std::move(Roomy);
      Res = std::move(RoomyRes);
      Roles = std::move(RoomyRoles);
      break;
    }
  }
  Executable X;
  X.Diagnostics = Res.Diagnostics;
  X.Fitted = M->Fit.has_value();
  if (M->Fit) {
    X.Passes = M->Fit->Passes;
    if (M->Fit->LoopBegin != 0 ||
        M->Fit->LoopEnd != M->Final.Sched.Steps.size())
      return makeUnsupportedError("the fitted plan loops over steps " +
                                  Twine(M->Fit->LoopBegin) + " to " +
                                  Twine(M->Fit->LoopEnd) +
                                  ", not all of them; the runtime cannot "
                                  "run such a loop yet");
  }
  X.G = std::move(M->G);
  X.Shapes = std::move(M->Shapes);
  X.Bindings = std::move(M->Bindings);
  X.P = std::move(M->Final);
  auto Info = makeRunInfo(*X.G, X.Shapes, X.Bindings, X.P.Sched);
  if (!Info)
    return Info.takeError();
  X.Info = std::move(*Info);
  if (Error E = splitBatch(X, Roles))
    return E;
  return X;
}
