//===- FuzzModel.cpp - the model pipeline shared by the ONNX fuzz targets -===//
//
// Every symbol is bound to a small value (1..4, by symbol id) so that sizes
// stay small and the plans exercise the same code a real run does; the
// role-based binding (--batch/--seq) runs too, and its errors are expected
// for models without those roles. Each plan is verified twice: inside
// buildPlan, and here with the arena requests handed to the verifier again.
//
//===----------------------------------------------------------------------===//
#include "FuzzModel.h"
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Plan/TrainingPipeline.h"
#include "oomplan/Support/Error.h"
#include "oomplan/Verify/PlacementVerifier.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>

using namespace oomplan;

void fuzz::checkError(llvm::Error E, const char *Stage) {
  // The category, not the text: names in the model can say anything (the
  // fuzzer soon wrote "internal error" into a value name). Untyped errors
  // count as internal too (Support/Error.h: every library error is typed).
  bool Internal = errorCategory(E) == ErrorCategory::Internal;
  std::string Msg = llvm::toString(std::move(E));
  if (Internal || Msg.empty()) {
    llvm::errs() << "fuzz: " << Stage << ": "
                 << (Msg.empty() ? "(empty error)" : Msg) << '\n';
    abort();
  }
}

static void fail(const llvm::Twine &Msg) {
  llvm::errs() << "fuzz: " << Msg << '\n';
  abort();
}

// The checks a caller relies on: the regions add up without wrapping, and
// the arena placement passes the independent verifier.
static void checkPlan(const Plan &P, const PipelineOptions &Opts,
                      const char *Mode) {
  uint64_t Sum = P.WeightBytes + P.IOBytes;
  if (Sum < P.WeightBytes || Sum + P.ArenaBytes < Sum)
    fail(llvm::Twine(Mode) + ": region sizes wrap past 2^64");
  if (P.ArenaBytes < P.ArenaLowerBound)
    fail(llvm::Twine(Mode) + ": arena below its lower bound");
  std::vector<BufferId> Ids;
  std::vector<planner::BufferRequest> Req =
      arenaRequests(P.Life, P.AlignBytes, Opts.Placement.IOInArena, &Ids);
  std::vector<uint64_t> Offsets;
  for (BufferId B : Ids)
    Offsets.push_back(P.OffsetOf[B]);
  if (llvm::Error E = verify::verifyPlacement(Req, Offsets, P.ArenaBytes))
    fail(llvm::Twine(Mode) + ": " + llvm::toString(std::move(E)));
}

void fuzz::fuzzModel(llvm::Expected<std::unique_ptr<Graph>> G) {
  if (!G)
    return checkError(G.takeError(), "import");
  const Graph &Gr = **G;
  if (Gr.Nodes.size() > MaxNodes || Gr.Values.size() > MaxValues)
    return;
  auto Shapes = inferShapes(Gr);
  if (!Shapes)
    return checkError(Shapes.takeError(), "shapes");

  // The CLI's role binding: errors are normal for models without a batch or
  // sequence dimension.
  BindingRequest Req;
  Req.Batch = 2;
  Req.Seq = 3;
  if (auto Bound = bindSymbols(Gr, Req); !Bound)
    checkError(Bound.takeError(), "bind");

  std::vector<std::optional<int64_t>> Bindings;
  for (size_t I = 0; I < Shapes->SymbolNames.size(); ++I)
    Bindings.push_back(int64_t(1 + I % 4));

  PipelineOptions Opts;
  // multi-ordering: the placement path without the searches, which the CSV
  // target fuzzes on small instances with small budgets; here they would
  // spend their time limit on most inputs.
  Opts.Placement.Algorithm = "multi-ordering";
  Opts.Placement.TimeLimitSeconds = 0.25;
  Opts.Placement.Limit.CapacityBytes = uint64_t(1) << 40;
  auto P = planGraph(Gr, *Shapes, Bindings, Opts);
  if (!P)
    checkError(P.takeError(), "plan");
  else
    checkPlan(*P, Opts, "inference");

  TrainingOptions Train;
  std::vector<std::string> Warnings;
  TrainingSummary Summary;
  auto T =
      planTrainingGraph(Gr, *Shapes, Bindings, Opts, Train, Warnings, &Summary);
  if (!T)
    checkError(T.takeError(), "train");
  else
    checkPlan(*T, Opts, "training");
}
