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

std::string report::producerText(const Plan &P, const PlanContext &C,
                                 TensorId T) {
  ValueId V = P.Sched.Tensors[T].Value;
  if (V != NoId) {
    const Value &Val = C.G.Values[V];
    if (Val.Kind == ValueKind::Weight)
      return "initializer";
    if (Val.Kind == ValueKind::GraphInput)
      return "graph-input";
    return C.G.describeNode(Val.Producer);
  }
  int64_t S = writerStep(P, T);
  if (S < 0)
    return "-";
  // "step 140 node 'x' (Dropout)": the step with the op it runs.
  return "step " + std::to_string(S) + " " + describeStep(P.Sched, C.G, S);
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
                                 BufferId B, llvm::ArrayRef<SymbolId> SeqSyms) {
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
  Out.Producer = producerText(P, C, L.Root);
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
  for (BufferId B : P.buffersLiveAt(P.PeakStep)) {
    PeakBuffer PB = describeBuffer(P, C, B, SeqSyms);
    R.Formula += PB.Formula;
    R.QuadraticBytes += PB.QuadraticBytes;
    R.Buffers.push_back(std::move(PB));
  }
  return R;
}
