//===- DriverTrain.cpp - the training step for the driver -----------------===//
//
// Plans one training step (forward, backward, optimizer) with the options
// that resolveOptions parsed from the request (docs/training.md), and lists
// the tensors training adds for --emit=shapes. Training's warnings go to the
// session's one diagnostics sink.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Driver/Session.h"
#include "oomplan/Plan/TrainingPipeline.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

Error driver::printTrainingShapes(Session &S, const Graph &G,
                                  const ShapeInfo &Shapes,
                                  ArrayRef<std::optional<int64_t>> Bindings) {
  // Gradient sizes are numbers: this needs every symbol bound.
  auto Bytes = evaluateValueBytes(G, Shapes, Bindings);
  if (!Bytes)
    return Bytes.takeError();
  std::vector<std::string> Warnings;
  TrainingSummary Sum;
  auto Sched = makeTrainingSchedule(G, Shapes, *Bytes, S.Train, Warnings, &Sum);
  if (!Sched)
    return Sched.takeError();
  for (const std::string &W : Warnings)
    S.warn(W);
  printTrainingTensors(S.OS, G, *Sched, Sum);
  return Error::success();
}

Expected<Plan> driver::planTraining(Session &S, const Graph &G,
                                    const ShapeInfo &Shapes,
                                    ArrayRef<std::optional<int64_t>> Bindings,
                                    const PipelineOptions &PO, bool Quiet,
                                    unsigned AccumPasses) {
  TrainingOptions T = S.Train;
  if (AccumPasses)
    T.GradAccum = AccumPasses;
  std::vector<std::string> Warnings;
  auto P = planTrainingGraph(G, Shapes, Bindings, PO, T, Warnings);
  if (!Quiet)
    for (const std::string &W : Warnings)
      S.warn(W);
  return P;
}
