//===- TrainingPipeline.h - a verified plan of one training step -*- C++
//-*-===//
//
// planGraph's counterpart for --train: sizes at the bound symbols, the
// training schedule (Transforms/Training.h: forward, loss, backward,
// optimizer), liveness, placement and verification, in one call.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PLAN_TRAININGPIPELINE_H
#define OOMPLAN_PLAN_TRAININGPIPELINE_H

#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Transforms/Training.h"

namespace oomplan {

/// Schedule of one training step of G at Bindings, then liveness, placement
/// and verification. Warnings receives the training transform's notes;
/// Summary, when given, its per-class totals.
llvm::Expected<Plan>
planTrainingGraph(const Graph &G, const ShapeInfo &Shapes,
                  llvm::ArrayRef<std::optional<int64_t>> Bindings,
                  const PipelineOptions &Opts, const TrainingOptions &Train,
                  std::vector<std::string> &Warnings,
                  TrainingSummary *Summary = nullptr);

} // namespace oomplan

#endif
