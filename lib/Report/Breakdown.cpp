//===- Breakdown.cpp - where the bytes go, by memory class ----------------===//
//
// Splits a plan's total into memory classes that add up exactly: resident
// regions (weights, io) buffer by buffer with their alignment, the arena by
// the buffers live at its peak step plus the fragmentation. Formulas are sums
// of the buffers' size formulas (unaligned), so they read as the model's
// arithmetic; the note says when a formula holds only while the peak stays.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Breakdown.h"
#include "oomplan/Report/Formulas.h"
#include "oomplan/Support/ByteSize.h"

using namespace oomplan;
using namespace oomplan::report;

llvm::StringRef report::memoryClassName(MemoryClass K) {
  static const char *Names[] = {
      "weights",           "activations",    "gradients",     "optimizer state",
      "optimizer scratch", "inputs+outputs", "fixed overhead"};
  return Names[static_cast<unsigned>(K)];
}

llvm::StringRef report::memoryClassKey(MemoryClass K) {
  static const char *Keys[] = {
      "weights",           "activations",    "gradients", "optimizer_state",
      "optimizer_scratch", "inputs_outputs", "overhead"};
  return Keys[static_cast<unsigned>(K)];
}

MemoryClass report::memoryClassOf(TensorKind K) {
  switch (K) {
  case TensorKind::Weight:
  case TensorKind::Constant:
    return MemoryClass::Weights;
  case TensorKind::GraphInput:
  case TensorKind::GraphOutput:
    return MemoryClass::InputsOutputs;
  case TensorKind::Gradient:
    return MemoryClass::Gradients;
  case TensorKind::OptimizerState:
    return MemoryClass::OptimizerState;
  case TensorKind::Activation:
    break;
  }
  return MemoryClass::Activations;
}

MemoryClass report::memoryClassOf(const Plan &P, const LiveBuffer &L) {
  if (L.Kind == TensorKind::Activation && L.StartStep < P.Sched.Steps.size() &&
      P.Sched.Steps[L.StartStep].Kind == StepKind::Optimizer)
    return MemoryClass::OptimizerScratch;
  return memoryClassOf(L.Kind);
}

std::string report::describeBytes(uint64_t Bytes) {
  return formatBytes(Bytes) + " (" + std::to_string(Bytes) + " bytes)";
}

double Breakdown::share(MemoryClass K) const {
  return TotalBytes ? double(bytes(K)) / double(TotalBytes) : 0.0;
}

static uint64_t alignUp(uint64_t V, uint64_t A) {
  return A ? (V + A - 1) / A * A : V;
}

std::vector<uint64_t> report::arenaBytesByClassAt(const Plan &P,
                                                  uint64_t Step) {
  std::vector<uint64_t> Out(NumMemoryClasses, 0);
  for (BufferId B = 0; B < P.Life.Buffers.size(); ++B) {
    const LiveBuffer &L = P.Life.Buffers[B];
    if (P.RegionOf[B] == Region::Arena && L.StartStep <= Step &&
        Step < L.EndStep)
      Out[static_cast<unsigned>(memoryClassOf(P, L))] +=
          alignUp(L.SizeBytes, P.AlignBytes);
  }
  return Out;
}

Breakdown report::computeBreakdown(const Plan &P, const PlanContext &C,
                                   uint64_t OverheadBytes) {
  Breakdown Out;
  std::vector<SymExpr> Formula(NumMemoryClasses);
  std::vector<int64_t> Constant(NumMemoryClasses, 0); // summed apart: faster
  std::vector<uint64_t> Bytes(NumMemoryClasses, 0);
  bool ArenaUsed[NumMemoryClasses] = {};
  auto Add = [&](unsigned K, const LiveBuffer &L) {
    Bytes[K] += alignUp(L.SizeBytes, P.AlignBytes);
    if (L.Kind == TensorKind::Weight || L.Kind == TensorKind::Constant) {
      Constant[K] += static_cast<int64_t>(L.SizeBytes); // static shapes
      return;
    }
    SymExpr F = tensorFormula(P, C, L.Root);
    if (std::optional<int64_t> V = F.getConstant())
      Constant[K] += *V;
    else
      Formula[K] += F;
  };
  for (BufferId B = 0; B < P.Life.Buffers.size(); ++B) {
    const LiveBuffer &L = P.Life.Buffers[B];
    unsigned K = static_cast<unsigned>(memoryClassOf(P, L));
    bool Arena = P.RegionOf[B] == Region::Arena;
    if (Arena && (L.StartStep > P.PeakStep || P.PeakStep >= L.EndStep))
      continue;
    Add(K, L);
    ArenaUsed[K] |= Arena;
  }
  for (unsigned K = 0; K < NumMemoryClasses; ++K)
    Formula[K] += SymExpr::constant(Constant[K]);
  // The arena's fragmentation belongs to the activations row.
  unsigned Act = static_cast<unsigned>(MemoryClass::Activations);
  Bytes[Act] += P.ArenaBytes - std::min(P.ArenaBytes, P.ArenaLowerBound);
  Bytes[static_cast<unsigned>(MemoryClass::Overhead)] = OverheadBytes;
  Formula[static_cast<unsigned>(MemoryClass::Overhead)] =
      SymExpr::constant(static_cast<int64_t>(OverheadBytes));
  for (unsigned K = 0; K < NumMemoryClasses; ++K) {
    ClassRow R;
    R.Class = static_cast<MemoryClass>(K);
    R.Bytes = Bytes[K];
    R.Formula = Formula[K].str(C.Shapes.SymbolNames);
    R.Expr = Formula[K];
    std::optional<int64_t> AtBindings = evaluateAt(Formula[K], C);
    if (ArenaUsed[K])
      R.Note = "arena buffers live at peak step " + std::to_string(P.PeakStep) +
               "; valid while that step stays the peak";
    // The formula counts unaligned bytes: say what else the bytes hold, so
    // formula + padding + fragmentation = bytes.
    uint64_t Frag =
        K == Act ? P.ArenaBytes - std::min(P.ArenaBytes, P.ArenaLowerBound) : 0;
    if (AtBindings && *AtBindings >= 0 &&
        uint64_t(*AtBindings) + Frag < Bytes[K] &&
        K != static_cast<unsigned>(MemoryClass::Overhead))
      R.Note += std::string(R.Note.empty() ? "" : "; ") + "bytes include " +
                std::to_string(Bytes[K] - Frag - *AtBindings) +
                " bytes of alignment padding";
    if (Frag)
      R.Note += std::string(R.Note.empty() ? "" : "; ") + "includes " +
                std::to_string(Frag) + " bytes of fragmentation";
    Out.Rows.push_back(std::move(R));
    Out.TotalBytes += Bytes[K];
  }
  return Out;
}
