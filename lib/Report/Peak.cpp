//===- Peak.cpp - the peak step and the buffers live there ----------------===//
//
// Collects the arena buffers live at the plan's peak step, largest first,
// with what a person needs to find them in the model: producer node and op,
// type, size formula, and the part of the size quadratic in seq.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Peak.h"
#include "oomplan/Plan/TensorInfo.h"
#include "oomplan/Report/Formulas.h"

using namespace oomplan;
using namespace oomplan::report;

// The step that first writes T, or -1.
static int64_t writerStep(const Plan &P, TensorId T) {
  BufferId B = P.Life.BufferOf[T];
  uint64_t From = P.Life.Buffers[B].StartStep;
  for (uint64_t S = From; S < P.Sched.Steps.size(); ++S)
    for (TensorId W : P.Sched.Steps[S].Writes)
      if (W == T)
        return static_cast<int64_t>(S);
  return -1;
}

// writerStep of every tensor in one pass over the steps. Calling writerStep
// per peak buffer scanned the steps once per buffer: quadratic on training
// schedules, where thousands of optimizer-state buffers live from step 0
// and are first written by the last step.
static std::vector<int64_t> writerSteps(const Plan &P) {
  std::vector<int64_t> Out(P.Sched.Tensors.size(), -1);
  for (uint64_t S = 0; S < P.Sched.Steps.size(); ++S)
    for (TensorId W : P.Sched.Steps[S].Writes)
      if (Out[W] < 0 && S >= P.Life.Buffers[P.Life.BufferOf[W]].StartStep)
        Out[W] = static_cast<int64_t>(S);
  return Out;
}

// producerText, with the writer steps precomputed (empty: scan).
static std::string producerTextWith(const Plan &P, const PlanContext &C,
                                    TensorId T,
                                    llvm::ArrayRef<int64_t> Writers) {
  ValueId V = P.Sched.Tensors[T].Value;
  if (V != NoId) {
    const Value &Val = C.G.Values[V];
    if (Val.Kind == ValueKind::Weight)
      return "initializer";
    if (Val.Kind == ValueKind::GraphInput)
      return "graph-input";
    return C.G.describeNode(Val.Producer);
  }
  int64_t S = Writers.empty() ? writerStep(P, T) : Writers[T];
  if (S < 0)
    return "-";
  // "step 140 node 'x' (Dropout)": the step with the op it runs.
  return "step " + std::to_string(S) + " " + describeStep(P.Sched, C.G, S);
}

std::string report::producerText(const Plan &P, const PlanContext &C,
                                 TensorId T) {
  return producerTextWith(P, C, T, {});
}

// True when the last two dims of V each mention a symbol of SeqSyms.
static bool isSeqBySeq(const PlanContext &C, ValueId V,
                       llvm::ArrayRef<SymbolId> SeqSyms) {
  if (V == NoId || SeqSyms.empty())
    return false;
  const std::vector<SymExpr> &Dims = C.Shapes.Values[V].Dims;
  if (Dims.size() < 2)
    return false;
  for (size_t I = Dims.size() - 2; I < Dims.size(); ++I) {
    llvm::SmallVector<SymbolId, 4> Syms;
    Dims[I].collectSymbols(Syms);
    if (llvm::none_of(
            Syms, [&](SymbolId S) { return llvm::is_contained(SeqSyms, S); }))
      return false;
  }
  return true;
}

static PeakBuffer describeBuffer(const Plan &P, const PlanContext &C,
                                 BufferId B, llvm::ArrayRef<SymbolId> SeqSyms,
                                 llvm::ArrayRef<int64_t> Writers) {
  const LiveBuffer &L = P.Life.Buffers[B];
  const ScheduleTensor &T = P.Sched.Tensors[L.Root];
  PeakBuffer Out;
  Out.Buffer = B;
  Out.Name = T.Name;
  Out.Kind = L.Kind;
  Out.Bytes = L.SizeBytes;
  TensorDescription D = describeTensor(P, C, L.Root);
  Out.Formula = D.Formula;
  Out.QuadraticBytes = quadraticPart(Out.Formula, C, SeqSyms);
  Out.Type = D.TypeText;
  Out.TypeNote = D.Note;
  Out.SeqBySeq = isSeqBySeq(C, D.Value, SeqSyms);
  Out.Producer = producerTextWith(P, C, L.Root, Writers);
  if (T.Value != NoId && C.G.Values[T.Value].Kind == ValueKind::NodeOutput) {
    const Node &N = C.G.Nodes[C.G.Values[T.Value].Producer];
    Out.Node = N.Name;
    Out.Op = N.OpType;
  }
  return Out;
}

PeakReport report::computePeak(const Plan &P, const PlanContext &C,
                               llvm::ArrayRef<SymbolId> SeqSyms) {
  PeakReport R;
  R.Step = P.PeakStep;
  if (R.Step < P.Sched.Steps.size()) {
    // The step that peaks, with the op it runs: "MatMul.grad" for the
    // backward of a MatMul, not the forward node's op.
    const Step &S = P.Sched.Steps[R.Step];
    R.Op = S.Op;
    R.Where = describeStep(P.Sched, C.G, R.Step);
    if (S.Node != NoId)
      R.Node = C.G.Nodes[S.Node].Name;
  }
  R.ArenaBytes = P.ArenaBytes;
  R.LowerBound = P.ArenaLowerBound;
  R.LiveBytes = P.ArenaLowerBound;
  R.Fragmentation = P.ArenaBytes - std::min(P.ArenaBytes, P.ArenaLowerBound);
  std::vector<int64_t> Writers = writerSteps(P);
  for (BufferId B : P.buffersLiveAt(P.PeakStep)) {
    PeakBuffer PB = describeBuffer(P, C, B, SeqSyms, Writers);
    R.Formula += PB.Formula;
    R.QuadraticBytes += PB.QuadraticBytes;
    R.Buffers.push_back(std::move(PB));
  }
  return R;
}
