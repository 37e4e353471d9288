//===- TrainOptions.cpp - the --train options of the oomplan tool ---------===//
//
// --train and its options (optimizer, precision, gradient accumulation,
// frozen and tied weights), turned into TrainingOptions for the training
// pipeline (docs/training.md).
//
//===----------------------------------------------------------------------===//
#include "TrainOptions.h"
#include "oomplan/Plan/TrainingPipeline.h"
#include "oomplan/Transforms/Training.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace oomplan;

extern cl::OptionCategory Cat;

static cl::opt<bool>
    Train("train", cl::cat(Cat),
          cl::desc("Plan one training step: forward, "
                   "backward and optimizer (docs/training.md)"));
static cl::opt<std::string>
    OptimizerOpt("optimizer", cl::cat(Cat), cl::init("adam"),
                 cl::value_desc("sgd|momentum|adam|adamw"),
                 cl::desc("Optimizer whose state --train counts"));
static cl::opt<std::string>
    PrecisionOpt("precision", cl::cat(Cat), cl::init("fp32"),
                 cl::value_desc("fp32|fp16-mixed|bf16-mixed"),
                 cl::desc("Training precision (mixed: 16-bit activations and "
                          "gradients, fp32 master weights and moments)"));
static cl::opt<unsigned>
    GradAccum("grad-accum", cl::cat(Cat), cl::init(1), cl::value_desc("K"),
              cl::desc("Micro-batches per optimizer step"));
static cl::list<std::string>
    Freeze("freeze", cl::cat(Cat), cl::value_desc("PATTERN"),
           cl::desc("Weights matching this glob (or re:REGEX) do not train "
                    "(repeatable)"));
static cl::list<std::string>
    Tied("tied", cl::cat(Cat), cl::value_desc("A,B"),
         cl::desc("Weight B is weight A (possibly transposed): count it once "
                  "(repeatable)"));

static Expected<TrainingOptions> trainingOptions() {
  TrainingOptions T;
  auto O = parseOptimizer(OptimizerOpt);
  if (!O)
    return O.takeError();
  auto P = parsePrecision(PrecisionOpt);
  if (!P)
    return P.takeError();
  T.Optimizer = *O;
  T.Precision = *P;
  T.GradAccum = GradAccum;
  T.Freeze.assign(Freeze.begin(), Freeze.end());
  for (StringRef Pair : Tied) {
    auto AB = parseTiedPair(Pair);
    if (!AB)
      return AB.takeError();
    T.Tied.push_back(*AB);
  }
  return T;
}

static void trainWarnings(ArrayRef<std::string> Warnings) {
  for (const std::string &W : Warnings)
    WithColor::warning(errs(), "oomplan") << W << '\n';
}

// --emit=shapes --train: the added tensors after the graph's values (needs
// every symbol bound, since gradient sizes are numbers).
Error oomplan::printTrainingShapes(raw_ostream &OS, const Graph &G,
                                   const ShapeInfo &Shapes,
                                   ArrayRef<std::optional<int64_t>> Bindings) {
  auto T = trainingOptions();
  if (!T)
    return T.takeError();
  auto Bytes = evaluateValueBytes(G, Shapes, Bindings);
  if (!Bytes)
    return Bytes.takeError();
  std::vector<std::string> Warnings;
  TrainingSummary Sum;
  auto S = makeTrainingSchedule(G, Shapes, *Bytes, *T, Warnings, &Sum);
  if (!S)
    return S.takeError();
  trainWarnings(Warnings);
  printTrainingTensors(OS, G, *S, Sum);
  return Error::success();
}

Expected<Plan> oomplan::planTraining(const Graph &G, const ShapeInfo &Shapes,
                                     ArrayRef<std::optional<int64_t>> Bindings,
                                     const PipelineOptions &PO, bool Quiet,
                                     unsigned AccumPasses) {
  auto T = trainingOptions();
  if (!T)
    return T.takeError();
  if (AccumPasses)
    T->GradAccum = AccumPasses;
  std::vector<std::string> Warnings;
  auto P = planTrainingGraph(G, Shapes, Bindings, PO, *T, Warnings);
  if (!Quiet)
    trainWarnings(Warnings);
  return P;
}

bool oomplan::trainRequested() { return Train; }
