//===- PlanPrinter.cpp - a plan as text -----------------------------------===//
//
// A summary (regions, arena vs lower bound, the peak step and its largest
// buffers), then one line per buffer with every field a lit test may check.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Plan/PlanPrinter.h"
#include "oomplan/Plan/TensorInfo.h"
#include "oomplan/Support/ByteSize.h"
#include "llvm/Support/Format.h"
#include <algorithm>

using namespace oomplan;

std::vector<BufferId> oomplan::bufferPrintOrder(const Plan &P) {
  std::vector<BufferId> Order(P.Life.Buffers.size());
  for (BufferId B = 0; B < Order.size(); ++B)
    Order[B] = B;
  std::sort(Order.begin(), Order.end(), [&](BufferId A, BufferId B) {
    const LiveBuffer &X = P.Life.Buffers[A], &Y = P.Life.Buffers[B];
    if (P.RegionOf[A] != P.RegionOf[B])
      return P.RegionOf[A] < P.RegionOf[B];
    if (X.StartStep != Y.StartStep)
      return X.StartStep < Y.StartStep;
    return P.Sched.Tensors[X.Root].Name < P.Sched.Tensors[Y.Root].Name;
  });
  return Order;
}

void oomplan::printArenaLine(llvm::raw_ostream &OS, const Plan &P) {
  double Ratio = P.ArenaLowerBound
                     ? double(P.ArenaBytes) / double(P.ArenaLowerBound)
                     : 1.0;
  OS << "arena: " << P.ArenaBytes
     << " bytes, lower bound: " << P.ArenaLowerBound
     << " bytes, arena/lower bound: " << llvm::format("%.4f", Ratio)
     << ", fragmentation: "
     << (P.ArenaBytes - std::min(P.ArenaBytes, P.ArenaLowerBound))
     << " bytes\n";
}

std::string oomplan::shapeString(const PlanContext &C, ValueId Value) {
  if (Value == NoId)
    return "-";
  const ValueShape &VS = C.Shapes.Values[Value];
  std::string Out = elementTypeName(VS.Type).str() + "[";
  for (size_t I = 0; I < VS.Dims.size(); ++I)
    Out += (I ? "," : "") + VS.Dims[I].str(C.Shapes.SymbolNames);
  return Out + "]";
}

std::string oomplan::formulaString(const PlanContext &C, ValueId Value) {
  if (Value == NoId)
    return "-";
  return C.Shapes.Values[Value].Bytes.str(C.Shapes.SymbolNames);
}

static std::string producerOf(const Plan &P, const PlanContext &C, TensorId T) {
  ValueId V = P.Sched.Tensors[T].Value;
  if (V == NoId)
    return "-";
  const Value &Val = C.G.Values[V];
  if (Val.Kind != ValueKind::NodeOutput)
    return Val.Kind == ValueKind::Weight ? "initializer" : "graph-input";
  return C.G.describeNode(Val.Producer);
}

static void printBytesLine(llvm::raw_ostream &OS, llvm::StringRef Label,
                           uint64_t Bytes) {
  OS << "  " << llvm::left_justify(Label, 12)
     << llvm::right_justify(formatBytes(Bytes), 11) << "  (" << Bytes
     << " bytes)\n";
}

void oomplan::printPlanHeader(llvm::raw_ostream &OS, const Plan &P,
                              const PlanContext &C) {
  OS << "plan for " << C.G.SourcePath << "\nsymbols:";
  for (size_t I = 0; I < C.Shapes.SymbolNames.size(); ++I) {
    OS << ' ' << C.Shapes.SymbolNames[I] << '=';
    if (I < C.Bindings.size() && C.Bindings[I])
      OS << *C.Bindings[I];
    else
      OS << '?';
  }
  OS << "\nsteps: " << P.Life.NumSteps << ", buffers: " << P.Life.Buffers.size()
     << ", algorithm: " << P.Algorithm << ", alignment: " << P.AlignBytes
     << "\n";
}

void oomplan::printPlanText(llvm::raw_ostream &OS, const Plan &P,
                            const PlanContext &C, bool ListBuffers) {
  printPlanHeader(OS, P, C);
  OS << "memory:\n";
  printBytesLine(OS, "weights", P.WeightBytes);
  printBytesLine(OS, "inputs+outputs", P.IOBytes);
  printBytesLine(OS, "arena", P.ArenaBytes);
  printBytesLine(OS, "total", P.totalBytes());
  if (P.Limit.OverheadBytes)
    printBytesLine(OS, "fixed overhead", P.Limit.OverheadBytes);
  if (P.Limit.CapacityBytes) {
    uint64_t Budget = *P.Limit.CapacityBytes;
    OS << "budget: " << formatBytes(Budget) << " (" << Budget
       << " bytes): " << (P.fits() ? "fits" : "DOES NOT FIT");
    // The tensors' total with the overhead; past 2^64 it saturates and
    // "over by" is left out.
    uint64_t Need = neededBytes(P.Limit, Figures{P.totalBytes(), {}});
    if (!P.fits() && Need != UINT64_MAX)
      OS << ", over by " << (Need - Budget) << " bytes";
    OS << '\n';
  }
  printArenaLine(OS, P);
  std::vector<BufferId> Peak = P.buffersLiveAt(P.PeakStep);
  OS << "peak: step " << P.PeakStep;
  if (P.PeakStep < P.Sched.Steps.size()) // with the op it runs: MatMul.grad
    OS << " " << describeStep(P.Sched, C.G, P.PeakStep);
  OS << ", " << Peak.size() << " arena buffers live\n";
  size_t Shown = std::min<size_t>(Peak.size(), 10);
  for (size_t I = 0; I < Shown; ++I) {
    const LiveBuffer &Buf = P.Life.Buffers[Peak[I]];
    OS << "  " << llvm::right_justify(formatBytes(Buf.SizeBytes), 11) << "  "
       << P.Sched.Tensors[Buf.Root].Name << "  "
       << describeTensor(P, C, Buf.Root).TypeText << "  from "
       << producerOf(P, C, Buf.Root) << '\n';
  }
  if (Peak.size() > Shown)
    OS << "  ... " << (Peak.size() - Shown) << " more\n";
  if (!ListBuffers)
    return;
  OS << "buffers:\n";
  for (BufferId B : bufferPrintOrder(P)) {
    const LiveBuffer &Buf = P.Life.Buffers[B];
    TensorDescription D = describeTensor(P, C, Buf.Root);
    OS << "buffer " << P.Sched.Tensors[Buf.Root].Name << ": "
       << regionName(P.RegionOf[B]) << " offset=" << P.OffsetOf[B]
       << " size=" << Buf.SizeBytes << " steps=[" << Buf.StartStep << ','
       << Buf.EndStep << ") kind=" << tensorKindName(Buf.Kind)
       << " type=" << D.TypeText << " bytes="
       << (D.HasFormula ? D.Formula.str(C.Shapes.SymbolNames) : "-")
       << " producer=" << producerOf(P, C, Buf.Root);
    if (Buf.Members.size() > 1) {
      OS << " shared-by=";
      for (size_t I = 1; I < Buf.Members.size(); ++I)
        OS << (I > 1 ? "," : "") << P.Sched.Tensors[Buf.Members[I]].Name;
    }
    OS << '\n';
  }
}
