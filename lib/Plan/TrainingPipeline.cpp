//===- TrainingPipeline.cpp - a verified plan of one training step --------===//
//
// Mirrors planGraph (Pipeline.cpp) with the training schedule in place of the
// default one; liveness and placement are the same code. The "training" pass
// is reported to PipelineOptions::Instr.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Plan/TrainingPipeline.h"
#include "oomplan/Schedule/PassRegistry.h"

using namespace oomplan;

llvm::Expected<Plan> oomplan::planTrainingGraph(
    const Graph &G, const ShapeInfo &Shapes,
    llvm::ArrayRef<std::optional<int64_t>> Bindings,
    const PipelineOptions &Opts, const TrainingOptions &Train,
    std::vector<std::string> &Warnings, TrainingSummary *Summary) {
  auto Bytes = evaluateValueBytes(G, Shapes, Bindings);
  if (!Bytes)
    return Bytes.takeError();
  auto S = makeTrainingSchedule(G, Shapes, *Bytes, Train, Warnings, Summary,
                                Bindings);
  if (!S)
    return S.takeError();
  // makeTrainingSchedule has verified it.
  if (Opts.Instr)
    Opts.Instr->after(passName(PassId::Training), *S);
  Lifetimes L = computeLifetimes(*S, Opts.Liveness);
  return buildPlan(std::move(*S), std::move(L), Opts.Placement);
}
