//===- oomplan-bench.cpp - measure the placement algorithms ---------------===//
//
// Plans random instances (--random=N), MiniMalloc CSV files and ONNX models
// (positional; models at --batch/--seq/--dim) with every registered
// algorithm (or those named by --algo), verifies each placement with the
// independent verifier, and prints one row per run: buffers, lower bound,
// arena, arena / lower bound, milliseconds. For a model it also times the
// whole pipeline (load, shapes, liveness, plan, verify) with the default
// algorithm. `naive` (no reuse) is the baseline measured in the same run.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Placement/LowerBound.h"
#include "oomplan/Placement/MiniMallocCSV.h"
#include "oomplan/Placement/RandomInstance.h"
#include "oomplan/Placement/Registry.h"
#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Verify/PlacementVerifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::planner;

static cl::list<std::string>
    CSVFiles(cl::Positional, cl::desc("[minimalloc.csv | model.onnx ...]"));
static cl::opt<int64_t> Batch("batch", cl::desc("batch for models"),
                              cl::init(1));
static cl::opt<int64_t> Seq("seq", cl::desc("sequence length for models"),
                            cl::init(128));
static cl::list<uint64_t>
    RandomSizes("random", cl::desc("plan a random instance of N buffers"),
                cl::value_desc("N"));
static cl::opt<uint64_t> Seed("seed", cl::desc("seed of random instances"),
                              cl::init(1));
static cl::opt<uint64_t>
    AlignBytes("align",
               cl::desc("alignment of random buffers (CSV files use 1)"),
               cl::init(256));
static cl::list<std::string> Algos("algo",
                                   cl::desc("algorithms to run (default: all)"),
                                   cl::CommaSeparated);
static cl::opt<double> TimeLimit("time-limit",
                                 cl::desc("search safety cap in seconds"),
                                 cl::init(1.0));
static cl::opt<std::string>
    Capacity("capacity", cl::desc("capacity to aim for, e.g. 1048576 or 1M"),
             cl::init("0"));
static cl::opt<uint64_t>
    Effort("effort", cl::desc("search budget (0: each algorithm's default)"),
           cl::init(0));
static cl::opt<bool>
    PrintCSV("print-placement",
             cl::desc("print each placement as MiniMalloc CSV"));

static ExitOnError ExitOnErr("oomplan-bench: error: ");

static void benchOne(StringRef Instance, ArrayRef<BufferRequest> Requests,
                     const PlannerOptions &Options) {
  uint64_t Bound = lowerBound(Requests);
  std::vector<std::string> Names(Algos.begin(), Algos.end());
  if (Names.empty())
    for (const AlgorithmInfo &A : algorithms())
      Names.push_back(A.Name.str());
  for (const std::string &Name : Names) {
    auto Start = std::chrono::steady_clock::now();
    Placement Result = ExitOnErr(runAlgorithm(Name, Requests, Options));
    double PlanMs = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - Start)
                        .count();
    Start = std::chrono::steady_clock::now();
    ExitOnErr(
        verify::verifyPlacement(Requests, Result.Offsets, Result.ArenaBytes));
    double VerifyMs = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - Start)
                          .count();
    double Ratio = Bound ? double(Result.ArenaBytes) / double(Bound) : 1.0;
    outs() << left_justify(Instance, 14) << ' ' << left_justify(Name, 18)
           << format(" %8zu %12llu %12llu %8.4f", Requests.size(),
                     (unsigned long long)Bound,
                     (unsigned long long)Result.ArenaBytes, Ratio)
           << (Options.CapacityBytes == 0                   ? ""
               : Result.ArenaBytes <= Options.CapacityBytes ? " fits"
                                                            : " over")
           << format(" plan-ms=%.1f verify-ms=%.1f", PlanMs, VerifyMs) << " "
           << Result.Algorithm << '\n';
    if (PrintCSV)
      writeMiniMallocCSV(outs(), Requests, Result);
  }
}

static double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - Start)
      .count();
}

// The arena requests of a model at --batch/--seq (seq only if it has one),
// and the time of the whole pipeline with the default algorithm.
static std::vector<BufferRequest> modelRequests(StringRef Path) {
  auto Start = std::chrono::steady_clock::now();
  std::unique_ptr<Graph> G = ExitOnErr(importModelFile(Path));
  ShapeInfo Shapes = ExitOnErr(inferShapes(*G));
  // The roles once per model: they decide whether --seq applies, and bind.
  SymbolRoles Roles = findSymbolRoles(*G);
  BindingRequest Req;
  Req.Batch = Batch;
  if (!Roles.Seq.empty())
    Req.Seq = Seq;
  Bindings B = ExitOnErr(bindSymbols(*G, Roles, Req));
  B.Values.resize(Shapes.SymbolNames.size());
  Plan P = ExitOnErr(planGraph(*G, Shapes, B.Values, PipelineOptions()));
  outs() << "pipeline " << sys::path::filename(Path) << " batch=" << Batch;
  if (Req.Seq)
    outs() << " seq=" << Seq;
  outs() << ": load+shapes+liveness+plan+verify "
         << format("%.1f", msSince(Start)) << " ms, arena " << P.ArenaBytes
         << ", lower bound " << P.ArenaLowerBound << '\n';
  return arenaRequests(P.Life, P.AlignBytes, /*IOInArena=*/false);
}

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv,
                              "oomplan-bench: measure placement algorithms\n");
  PlannerOptions Options;
  Options.TimeLimitSeconds = TimeLimit;
  Options.CapacityBytes = ExitOnErr(parseByteSize(Capacity));
  Options.Seed = Seed;
  Options.EffortBudget = Effort;
  outs() << "instance       algorithm           buffers  lower-bound"
            "        arena arena/LB\n";
  for (const std::string &File : CSVFiles) {
    if (!StringRef(File).endswith(".csv")) {
      benchOne(sys::path::filename(File), modelRequests(File), Options);
      continue;
    }
    std::unique_ptr<MemoryBuffer> Buffer = ExitOnErr(
        errorOrToExpected(MemoryBuffer::getFile(File, /*IsText=*/true)));
    std::vector<BufferRequest> Requests =
        ExitOnErr(parseMiniMallocCSV(Buffer->getBuffer(), File, 1));
    benchOne(sys::path::filename(File), Requests, Options);
  }
  for (uint64_t N : RandomSizes) {
    RandomInstanceOptions R;
    R.NumBuffers = N;
    R.Seed = Seed;
    R.AlignBytes = AlignBytes;
    benchOne("random-" + std::to_string(N), makeRandomRequests(R), Options);
  }
  return 0;
}
