//===- SchedulePrinter.cpp - a schedule as text, one line per step --------===//
//
// The format is in SchedulePrinter.h. Byte counts are exact integers (not
// KiB/MiB), so tests can check them by hand against the model's shapes.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/SchedulePrinter.h"

using namespace oomplan;

llvm::StringRef oomplan::stepKindName(StepKind K) {
  switch (K) {
  case StepKind::Compute:
    return "compute";
  case StepKind::Recompute:
    return "recompute";
  case StepKind::Offload:
    return "offload";
  case StepKind::Prefetch:
    return "prefetch";
  case StepKind::Backward:
    return "backward";
  case StepKind::Optimizer:
    return "optimizer";
  }
  return "?";
}

static void printTensors(llvm::raw_ostream &OS, const Schedule &S,
                         const std::vector<TensorId> &Ts) {
  if (Ts.empty()) {
    OS << '-';
    return;
  }
  for (size_t I = 0; I < Ts.size(); ++I) {
    if (I)
      OS << ", ";
    // The verifier rejects out-of-range ids; print them rather than crash,
    // since a broken schedule is exactly what one wants to look at.
    if (Ts[I] >= S.Tensors.size()) {
      OS << "<bad tensor " << Ts[I] << '>';
      continue;
    }
    const ScheduleTensor &T = S.Tensors[Ts[I]];
    OS << T.Name << ':' << T.SizeBytes;
    if (T.HostHome)
      OS << "@host";
  }
}

void oomplan::printSchedule(llvm::raw_ostream &OS, const Schedule &S,
                            const Graph *G) {
  for (size_t I = 0; I < S.Steps.size(); ++I) {
    const Step &St = S.Steps[I];
    OS << I << ' ' << stepKindName(St.Kind) << ' '
       << (St.Op.empty() ? "-" : St.Op) << ' ';
    if (St.Node == NoId)
      OS << '-';
    else if (G && St.Node < G->Nodes.size() && !G->Nodes[St.Node].Name.empty())
      OS << '\'' << G->Nodes[St.Node].Name << '\'';
    else
      OS << '#' << St.Node;
    OS << ": ";
    printTensors(OS, S, St.Reads);
    OS << " -> ";
    printTensors(OS, S, St.Writes);
    if (St.ViewOf >= 0 && static_cast<size_t>(St.ViewOf) < St.Reads.size() &&
        St.Reads[St.ViewOf] < S.Tensors.size())
      OS << " view of " << S.Tensors[St.Reads[St.ViewOf]].Name;
    if (St.MayWriteInPlace)
      OS << " in-place";
    if (St.MayWriteInPlace && St.InPlaceRead >= 0 &&
        static_cast<size_t>(St.InPlaceRead) < St.Reads.size() &&
        St.Reads[St.InPlaceRead] < S.Tensors.size())
      OS << " over " << S.Tensors[St.Reads[St.InPlaceRead]].Name;
    if (St.OnHost)
      OS << " on-host";
    OS << '\n';
  }
}
