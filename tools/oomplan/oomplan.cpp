//===- oomplan.cpp - the oomplan command-line tool ------------------------===//
//
// Wires the library together: load, infer shapes, bind symbols, plan,
// verify, emit. Logic lives in lib/; this file parses options, prints, and
// chooses the exit code: 0 the plan fits, 2 it does not fit the budget (the
// report is still printed), 1 an error.
//
//===----------------------------------------------------------------------===//
#include "FitOptions.h"
#include "ReportOptions.h"
#include "TrainOptions.h"
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/IR/GraphPrinter.h"
#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Plan/PlanPrinter.h"
#include "oomplan/Planner/LowerBound.h"
#include "oomplan/Planner/MiniMallocCSV.h"
#include "oomplan/Planner/Registry.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Verify/PlacementVerifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace oomplan;

cl::OptionCategory Cat("oomplan options"); // also ReportOptions.cpp
static cl::opt<std::string>
    ModelPath(cl::Positional, cl::Required, cl::cat(Cat),
              cl::desc("<model.onnx | model.onnxtxt | buffers.csv>"));
static cl::opt<int64_t>
    Batch("batch", cl::cat(Cat), cl::value_desc("N"),
          cl::desc("Bind the batch symbol (first dim of every input)"));
static cl::opt<int64_t>
    Seq("seq", cl::cat(Cat), cl::value_desc("N"),
        cl::desc("Bind the sequence symbol (second dim of token inputs)"));
static cl::list<std::string>
    Dims("dim", cl::cat(Cat), cl::value_desc("NAME=VALUE"), cl::CommaSeparated,
         cl::desc("Bind any symbol of the model (repeatable)"));
static cl::opt<std::string> Budget(
    "budget", cl::cat(Cat), cl::value_desc("SIZE"),
    cl::desc("Device memory available: 24G = 24GiB (binary), 300MB (decimal), "
             "or bytes. Over budget: exit code 2"));
enum class EmitKind { Graph, Shapes, Lifetimes, Report, Plan, JSON, CSV };
static cl::opt<EmitKind> Emit(
    "emit", cl::cat(Cat), cl::init(EmitKind::Report), cl::desc("What to print"),
    cl::values(
        clEnumValN(EmitKind::Graph, "graph", "the imported IR"),
        clEnumValN(EmitKind::Shapes, "shapes",
                   "every value's type, dims, bytes"),
        clEnumValN(EmitKind::Lifetimes, "lifetimes", "buffers and step ranges"),
        clEnumValN(EmitKind::Report, "report",
                   "memory summary and peak buffers (default)"),
        clEnumValN(EmitKind::Plan, "plan",
                   "the report plus every buffer's offset and lifetime"),
        clEnumValN(EmitKind::JSON, "json", "the plan as JSON (oomplan.plan/1)"),
        clEnumValN(EmitKind::CSV, "csv",
                   "arena buffers as MiniMalloc CSV with offsets")));
static cl::opt<std::string> OutputPath("o", cl::cat(Cat), cl::init("-"),
                                       cl::value_desc("FILE"),
                                       cl::desc("Write output here"));
static cl::opt<std::string>
    Algo("algo", cl::cat(Cat), cl::init("auto"), cl::value_desc("NAME"),
         cl::desc("Placement algorithm (see --list-algos); default auto runs "
                  "several and keeps the best"));
static cl::opt<bool> ListAlgos("list-algos", cl::cat(Cat),
                               cl::desc("List placement algorithms and exit"));
static cl::opt<uint64_t>
    AlignOpt("align", cl::cat(Cat), cl::init(256), cl::value_desc("BYTES"),
             cl::desc("Alignment of every buffer (a power of two; default "
                      "256, 1 for CSV input)"));
static cl::opt<bool> NoInPlace("no-inplace", cl::cat(Cat),
                               cl::desc("Never let elementwise ops overwrite "
                                        "their input"));
static cl::opt<bool> IOInArena("io-in-arena", cl::cat(Cat),
                               cl::desc("Plan graph inputs and outputs inside "
                                        "the arena"));
static cl::opt<double> TimeLimit("time-limit", cl::cat(Cat), cl::init(2.0),
                                 cl::desc("Seconds a search may run"));

static int fail(Error E) {
  WithColor::error(errs(), "oomplan") << toString(std::move(E)) << '\n';
  return 1;
}
static void note(const Twine &Msg) {
  WithColor::note(errs(), "oomplan") << Msg << '\n';
}

static Expected<BindingRequest> bindingRequest() {
  BindingRequest R;
  if (Batch.getNumOccurrences())
    R.Batch = Batch;
  if (Seq.getNumOccurrences())
    R.Seq = Seq;
  for (StringRef D : Dims) {
    auto [Name, Val] = D.split('=');
    int64_t V;
    if (Name.empty() || Val.getAsInteger(10, V))
      return createStringError(inconvertibleErrorCode(),
                               "--dim expects NAME=VALUE, got '" + D + "'");
    R.Named.push_back({Name.str(), V});
  }
  return R;
}

// Planner-only input: a MiniMalloc CSV instance.
static int runCSV(raw_ostream &OS, std::optional<uint64_t> BudgetBytes) {
  auto Buf = MemoryBuffer::getFile(ModelPath);
  if (!Buf)
    return fail(createStringError(inconvertibleErrorCode(),
                                  ModelPath + ": " + Buf.getError().message()));
  auto Req =
      planner::parseMiniMallocCSV((*Buf)->getBuffer(), ModelPath,
                                  AlignOpt.getNumOccurrences() ? AlignOpt : 1);
  if (!Req)
    return fail(Req.takeError());
  planner::PlannerOptions PO;
  PO.TimeLimitSeconds = TimeLimit;
  PO.CapacityBytes = BudgetBytes.value_or(0);
  auto P = planner::runAlgorithm(Algo, *Req, PO);
  if (!P)
    return fail(P.takeError());
  if (Error E = verify::verifyPlacement(*Req, P->Offsets, P->ArenaBytes))
    return fail(std::move(E));
  uint64_t LB = planner::lowerBound(*Req);
  if (Emit == EmitKind::CSV) {
    planner::writeMiniMallocCSV(OS, *Req, *P);
  } else {
    OS << "instance " << ModelPath << ": " << Req->size() << " buffers\n"
       << "algorithm: " << P->Algorithm << "\narena: " << P->ArenaBytes
       << " bytes, lower bound: " << LB << " bytes, arena/lower bound: "
       << format("%.4f", LB ? double(P->ArenaBytes) / LB : 1.0) << "\n";
  }
  if (BudgetBytes && P->ArenaBytes > *BudgetBytes) {
    note("arena " + Twine(P->ArenaBytes) + " bytes exceeds the budget of " +
         Twine(*BudgetBytes) + " bytes");
    return 2;
  }
  return 0;
}

static int runModel(raw_ostream &OS, std::optional<uint64_t> BudgetBytes) {
  auto G = importModelFile(ModelPath);
  if (!G)
    return fail(G.takeError());
  if (Emit == EmitKind::Graph) {
    printGraph(OS, **G);
    return 0;
  }
  auto Shapes = inferShapes(**G);
  if (!Shapes)
    return fail(Shapes.takeError());
  for (const std::string &W : Shapes->Warnings)
    WithColor::warning(errs(), "oomplan") << W << '\n';
  auto Req = bindingRequest();
  if (!Req)
    return fail(Req.takeError());
  auto Bound = bindSymbols(**G, *Req);
  if (!Bound)
    return fail(Bound.takeError());
  for (const std::string &N : Bound->Notes)
    note(N);
  std::vector<std::optional<int64_t>> Bindings = Bound->Values;
  Bindings.resize(Shapes->SymbolNames.size());
  if (Emit == EmitKind::Shapes) {
    std::vector<std::string> Unbound =
        unboundSymbols(Bindings, Shapes->SymbolNames);
    if (!Unbound.empty())
      note("unbound symbols: " + join(Unbound, ", "));
    printShapes(OS, **G, *Shapes, Bindings);
    if (trainRequested())
      if (Error E = printTrainingShapes(OS, **G, *Shapes, Bindings))
        return fail(std::move(E));
    return 0;
  }
  PipelineOptions PO;
  PO.Liveness.InPlace = !NoInPlace;
  PO.Placement.Algorithm = Algo;
  PO.Placement.AlignBytes = AlignOpt;
  PO.Placement.TimeLimitSeconds = TimeLimit;
  PO.Placement.IOInArena = IOInArena;
  PO.Placement.BudgetBytes = BudgetBytes;
  auto P = trainRequested() ? planTraining(**G, *Shapes, Bindings, PO)
                            : planGraph(**G, *Shapes, Bindings, PO);
  if (!P)
    return fail(P.takeError());
  PlanContext C{**G, *Shapes, Bindings};
  // The report re-plans at other bindings (capacity, diagnosis) this way.
  report::PlanFn PlanAt = [&](ArrayRef<std::optional<int64_t>> B) {
    return trainRequested() ? planTraining(**G, *Shapes, B, PO, /*Quiet=*/true)
                            : planGraph(**G, *Shapes, B, PO);
  };
  if (fitRequested()) { // --fit and friends: FitOptions.cpp (issue 6)
    // Say so rather than silently ignore what --fit does not honour yet.
    std::vector<std::string> Ignored = reportOptionsGiven();
    if (Emit != EmitKind::Report && Emit != EmitKind::Plan)
      Ignored.push_back("--emit=json|lifetimes|csv");
    if (!Ignored.empty())
      return fail(createStringError(inconvertibleErrorCode(),
                                    "--fit does not combine with " +
                                        join(Ignored, ", ") +
                                        " yet; run them without --fit"));
    // The passes --fit's micro-batching splits the batch into: training
    // accumulates the weight gradients over them (--grad-accum K).
    PassesPlanFn PlanPasses = [&](ArrayRef<std::optional<int64_t>> B,
                                  unsigned K) {
      return trainRequested()
                 ? planTraining(**G, *Shapes, B, PO, /*Quiet=*/true, K)
                 : planGraph(**G, *Shapes, B, PO);
    };
    return runFit(OS, C, *P, PO, PlanAt, PlanPasses);
  }
  switch (Emit) {
  case EmitKind::Lifetimes:
    printLifetimes(OS, P->Sched, P->Life);
    break;
  case EmitKind::JSON:
    return runReport(OS, C, *P, PO, PlanAt, /*JSON=*/true,
                     makeFitRemedy(C, *P, PO));
  case EmitKind::Report:
    return runReport(OS, C, *P, PO, PlanAt, /*JSON=*/false,
                     makeFitRemedy(C, *P, PO));
  case EmitKind::CSV: {
    std::vector<BufferId> Ids;
    std::vector<planner::BufferRequest> R =
        arenaRequests(P->Life, P->AlignBytes, IOInArena, &Ids);
    planner::Placement Pl;
    Pl.ArenaBytes = P->ArenaBytes;
    for (BufferId B : Ids)
      Pl.Offsets.push_back(P->OffsetOf[B]);
    planner::writeMiniMallocCSV(OS, R, Pl);
    break;
  }
  default:
    printPlanText(OS, *P, C, /*ListBuffers=*/Emit == EmitKind::Plan);
  }
  return P->fits() ? 0 : 2;
}

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Cat);
  cl::SetVersionPrinter(
      [](raw_ostream &OS) { OS << "oomplan version 0.1.0\n"; });
  if (argc >= 2 && StringRef(argv[1]) == "--list-algos") {
    for (const planner::AlgorithmInfo &A : planner::algorithms())
      outs() << left_justify(A.Name, 20) << A.Description << '\n';
    return 0;
  }
  cl::ParseCommandLineOptions(
      argc, argv,
      "oomplan: plans every tensor of a neural-network graph at a fixed offset "
      "in one arena,\nand tells whether it fits a memory budget before "
      "anything runs.\n\n"
      "  oomplan model.onnx --batch 32 --seq 2048 --budget 24G\n"
      "  oomplan model.onnx --batch 8 --emit=json -o plan.json\n"
      "  oomplan buffers.csv --emit=csv     (MiniMalloc "
      "id,lower,upper,size)\n\n"
      "Exit codes: 0 the plan fits, 2 it does not fit the budget, 1 error.\n");
  if (!planner::findAlgorithm(Algo))
    return fail(planner::runAlgorithm(Algo, {}, {}).takeError());
  std::optional<uint64_t> BudgetBytes;
  if (Budget.getNumOccurrences()) {
    auto B = parseByteSize(Budget);
    if (!B)
      return fail(B.takeError());
    BudgetBytes = *B;
  }
  std::error_code EC;
  ToolOutputFile Out(OutputPath, EC, sys::fs::OF_None);
  if (EC)
    return fail(createStringError(EC, OutputPath + ": " + EC.message()));
  int RC = StringRef(ModelPath).endswith(".csv")
               ? runCSV(Out.os(), BudgetBytes)
               : runModel(Out.os(), BudgetBytes);
  if (RC != 1)
    Out.keep();
  return RC;
}
