//===- TrainOptions.h - the --train options of the oomplan tool -*- C++ -*-===//
#ifndef OOMPLAN_TOOLS_TRAINOPTIONS_H
#define OOMPLAN_TOOLS_TRAINOPTIONS_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Plan/Pipeline.h"

namespace oomplan {

/// True when --train was given.
bool trainRequested();

/// --emit=shapes --train: the tensors the training step adds after the
/// graph's values (needs every symbol bound: gradient sizes are numbers).
llvm::Error
printTrainingShapes(llvm::raw_ostream &OS, const Graph &G,
                    const ShapeInfo &Shapes,
                    llvm::ArrayRef<std::optional<int64_t>> Bindings);

/// Plans one training step with the --train options; Quiet drops warnings
/// (capacity searches re-plan many times). AccumPasses, when not 0, replaces
/// --grad-accum (the fit chooser's micro-batching accumulates gradients over
/// the passes it picks).
llvm::Expected<Plan>
planTraining(const Graph &G, const ShapeInfo &Shapes,
             llvm::ArrayRef<std::optional<int64_t>> Bindings,
             const PipelineOptions &PO, bool Quiet = false,
             unsigned AccumPasses = 0);

} // namespace oomplan

#endif
