//===- ReportText.cpp - the memory report for people ----------------------===//
//
// Sections in reading order: what was planned, memory by class, the budget
// verdict and the arena's efficiency, the peak listing, then (when it does not
// fit) the diagnosis and what would help, then capacity and the sweep. Every
// size is printed in human units beside its exact byte count. Lines that lit
// tests check keep the formats of printPlanText ("budget: ...", "arena: ...").
//
//===----------------------------------------------------------------------===//
#include "Table.h"
#include "oomplan/Report/Report.h"
#include "oomplan/Support/ByteSize.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"

using namespace oomplan;
using namespace oomplan::report;

static std::string pct(double F) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << llvm::format("%.1f%%", 100.0 * F);
  return OS.str();
}

static void heading(llvm::raw_ostream &OS, llvm::StringRef Text) {
  llvm::WithColor(OS, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true) << Text;
  OS << '\n';
}

static void printClasses(llvm::raw_ostream &OS, const MemoryReport &R) {
  // Say which figure this is: the diagnosis's model state counts every
  // buffer, this table the arena's buffers live at the peak step only.
  heading(OS, "memory by class: at the peak, step " +
                  std::to_string(R.Peak.Step) +
                  " (arena rows: the buffers live there; weights and "
                  "inputs+outputs: all)");
  Table T({false, true, true, true, false});
  T.row({"class", "size", "bytes", "share", "formula"});
  std::vector<std::string> Notes;
  for (const ClassRow &Row : R.Classes.Rows) {
    // Only an optimizer that makes temporaries has this row.
    if (Row.Class == MemoryClass::OptimizerScratch && !Row.Bytes)
      continue;
    std::string Name = memoryClassName(Row.Class).str();
    if (!Row.Note.empty()) {
      Notes.push_back(Name + ": " + Row.Note);
      Name += " *";
    }
    T.row({Name, formatBytes(Row.Bytes), std::to_string(Row.Bytes),
           pct(R.Classes.share(Row.Class)), Row.Formula});
  }
  T.row({"total", formatBytes(R.Classes.TotalBytes),
         std::to_string(R.Classes.TotalBytes), pct(1.0), ""});
  T.print(OS);
  for (const std::string &N : Notes)
    OS << "  * " << N << '\n';
}

static void printBudget(llvm::raw_ostream &OS, const MemoryReport &R,
                        const Plan &P) {
  if (R.Limit.CapacityBytes) {
    OS << "budget: " << formatBytes(*R.Limit.CapacityBytes) << " ("
       << *R.Limit.CapacityBytes << " bytes): ";
    if (R.Fits) {
      llvm::WithColor(OS, llvm::raw_ostream::GREEN, true) << "fits";
      OS << ", headroom "
         << describeBytes(*R.Limit.CapacityBytes - R.DeviceBytes);
    } else if (P.RuntimeReservedBytes &&
               fits(R.Limit, Figures{P.totalBytes(), {}})) {
      // The tensors fit; PyTorch's caching allocator does not (its section).
      llvm::WithColor(OS, llvm::raw_ostream::RED, true) << "DOES NOT FIT";
      OS << " in PyTorch's caching allocator: it runs the step in no less "
            "than "
         << describeBytes(P.decidingBytes()) << ", though the tensors are "
         << describeBytes(P.totalBytes());
    } else {
      llvm::WithColor(OS, llvm::raw_ostream::RED, true) << "DOES NOT FIT";
      OS << ", over by " << (R.DeviceBytes - *R.Limit.CapacityBytes)
         << " bytes (" << formatBytes(R.DeviceBytes - *R.Limit.CapacityBytes)
         << ")";
    }
    OS << '\n';
  }
  printArenaLine(OS, P); // fragmentation equals R.Peak.Fragmentation
}

static void printPeak(llvm::raw_ostream &OS, const MemoryReport &R,
                      const PlanContext &C, unsigned MaxRows) {
  const PeakReport &Pk = R.Peak;
  std::string Head = "peak: step " + std::to_string(Pk.Step);
  if (!Pk.Where.empty())
    Head += " " + Pk.Where;
  Head += ", " + std::to_string(Pk.Buffers.size()) + " arena buffers live, " +
          describeBytes(Pk.LiveBytes);
  heading(OS, Head);
  if (Pk.Buffers.empty())
    return;
  Table T({true, true, false, false, false, false});
  T.row({"size", "bytes", "buffer", "type", "formula", "producer"});
  size_t Shown = std::min<size_t>(Pk.Buffers.size(), MaxRows);
  std::string Note; // why a type differs from the graph's (one kind today)
  for (size_t I = 0; I < Shown; ++I) {
    const PeakBuffer &B = Pk.Buffers[I];
    std::string Type = B.Type;
    if (B.Kind != TensorKind::Activation)
      Type += " (" + tensorKindName(B.Kind).str() + ")";
    if (!B.TypeNote.empty()) {
      Type += " *";
      Note = B.TypeNote;
    }
    T.row({formatBytes(B.Bytes), std::to_string(B.Bytes), B.Name, Type,
           B.Formula.str(C.Shapes.SymbolNames), B.Producer});
  }
  T.print(OS);
  if (Pk.Buffers.size() > Shown) {
    uint64_t Rest = 0;
    for (size_t I = Shown; I < Pk.Buffers.size(); ++I)
      Rest += Pk.Buffers[I].Bytes;
    OS << "  ... " << (Pk.Buffers.size() - Shown) << " more, "
       << describeBytes(Rest) << "\n";
  }
  if (!Note.empty())
    OS << "  * " << Note << "\n";
}

static void printFindings(llvm::raw_ostream &OS, const MemoryReport &R) {
  if (!R.Limit.CapacityBytes)
    return;
  if (R.Fits) {
    heading(OS, "diagnosis: fits");
    return;
  }
  heading(OS, "diagnosis (most likely first):");
  unsigned N = 0;
  for (const Finding &F : R.Findings) {
    OS << "  " << ++N << ". ";
    llvm::WithColor(OS, llvm::raw_ostream::RED, true) << causeName(F.Kind);
    OS << ": " << F.Summary << '\n';
    for (const std::string &E : F.Evidence)
      OS << "       " << E << '\n';
  }
  if (R.Findings.empty())
    OS << "  none of the four rules applies (docs/report.md)\n";
}

static void printRemedies(llvm::raw_ostream &OS, const MemoryReport &R) {
  if (R.Remedies.empty())
    return;
  heading(OS, "what would help (each planned; largest saving first):");
  Table T({false, true, true, false, false});
  T.row({"change", "needs", "saves", "fits", "detail"});
  for (const Remedy &M : R.Remedies) {
    if (!M.Planned) {
      T.row({M.Action, "-", "-", "-", M.Detail});
      continue;
    }
    std::string Saved = M.BytesSaved >= 0
                            ? formatBytes(uint64_t(M.BytesSaved))
                            : "-" + formatBytes(uint64_t(-M.BytesSaved));
    T.row({M.Action, describeBytes(M.BytesAfter), Saved, M.Fits ? "yes" : "no",
           M.Detail});
  }
  T.print(OS);
}

static void printCapacityLine(llvm::raw_ostream &OS, const CapacityResult &C,
                              llvm::StringRef At) {
  OS << "largest " << C.Role << " that fits" << At << ": ";
  if (!C.Max) {
    OS << "none (" << C.Role << "=1 needs " << describeBytes(*C.BytesAbove)
       << ")\n";
    return;
  }
  OS << (C.AtLeast ? "at least " : "") << *C.Max << "  (" << C.Role << "="
     << *C.Max << " needs " << describeBytes(C.BytesAtMax);
  if (C.BytesAbove)
    OS << "; " << C.Role << "=" << (*C.Max + 1) << " needs "
       << describeBytes(*C.BytesAbove);
  OS << "; " << C.NumPlans << " plans)\n";
}

static void printCapacity(llvm::raw_ostream &OS, const MemoryReport &R) {
  if (R.BatchAsked && R.Batch)
    printCapacityLine(OS, *R.Batch,
                      R.CurrentSeq ? " at seq " + std::to_string(R.CurrentSeq)
                                   : "");
  if (R.SeqAsked && R.Seq)
    printCapacityLine(
        OS, *R.Seq,
        R.CurrentBatch ? " at batch " + std::to_string(R.CurrentBatch) : "");
}

static void printSweep(llvm::raw_ostream &OS, const MemoryReport &R) {
  if (!R.SweepTable)
    return;
  const Sweep &S = *R.SweepTable;
  heading(OS, "sweep: device memory (plan + overhead); '!' marks over budget");
  std::vector<bool> Right(S.Seqs.size() + 1, true);
  Table T(Right);
  std::vector<std::string> Head{"batch \\ seq"};
  for (int64_t Q : S.Seqs)
    Head.push_back(Q ? std::to_string(Q) : "-");
  T.row(Head);
  for (size_t I = 0; I < S.Batches.size(); ++I) {
    std::vector<std::string> Row{S.Batches[I] ? std::to_string(S.Batches[I])
                                              : "-"};
    for (size_t J = 0; J < S.Seqs.size(); ++J) {
      const SweepCell &Cell = S.Cells[I * S.Seqs.size() + J];
      if (!Cell.Bytes) {
        Row.push_back("overflow");
        continue;
      }
      bool Over = !Cell.Fits;
      Row.push_back(formatBytes(*Cell.Bytes) + (Over ? "!" : " "));
    }
    T.row(Row);
  }
  T.print(OS);
}

void report::printReportText(llvm::raw_ostream &OS, const MemoryReport &R,
                             const Plan &P, const PlanContext &C,
                             unsigned MaxPeakRows) {
  printPlanHeader(OS, P, C);
  printClasses(OS, R);
  printBudget(OS, R, P);
  printPeak(OS, R, C, MaxPeakRows);
  printFindings(OS, R);
  printRemedies(OS, R);
  printCapacity(OS, R);
  printSweep(OS, R);
}
