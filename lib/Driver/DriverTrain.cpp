//===- DriverTrain.cpp - the training step for the driver -----------------===//
//
// Plans one training step (forward, backward, optimizer) with the options
// that resolveOptions parsed from the request (docs/training.md), and lists
// the tensors training adds for --emit=shapes. Training's warnings go to the
// session's one diagnostics sink.
//
//===----------------------------------------------------------------------===//
#include "AllocatorInternal.h"
#include "oomplan/Driver/Session.h"
#include "oomplan/Plan/TrainingPipeline.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/Error.h"
#include <cmath>

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
  auto Sched = makeTrainingSchedule(G, Shapes, *Bytes, S.Train, Warnings, &Sum,
                                    Bindings);
  if (!Sched)
    return Sched.takeError();
  for (const std::string &W : Warnings)
    S.warn(W);
  printTrainingTensors(S.OS, G, *Sched, Sum);
  return Error::success();
}

// "loss ce on 'logits' (auto: logits-shaped output)": which loss each
// output got, and why when the user did not choose.
static std::string describeLosses(const Graph &G, const TrainingSummary &Sum,
                                  LossKind Asked,
                                  const std::optional<std::string> &Given) {
  std::string Out;
  for (auto [O, K] : Sum.Losses) {
    if (!Out.empty())
      Out += "; ";
    Out += K == LossKind::CrossEntropy ? "cross-entropy"
           : K == LossKind::Mean       ? "mean"
                                       : "none (the output is the loss)";
    Out += " on '" + G.Values[O].Name + "'";
    if (Asked == LossKind::Auto)
      Out += K == LossKind::CrossEntropy ? " (auto: logits-shaped output)"
                                         : " (auto: not logits-shaped)";
  }
  if (!Given && Asked != LossKind::Auto)
    Out += " (default)";
  return Out;
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
  TrainingSummary Sum;
  auto P = planTrainingGraph(G, Shapes, Bindings, PO, T, Warnings, &Sum);
  if (P)
    if (Error E = setRuntimeReserved(S, PlanContext{G, Shapes, Bindings}, *P))
      return std::move(E);
  if (Quiet)
    return P;
  for (const std::string &W : Warnings)
    S.warn(W);
  S.LossText = describeLosses(G, Sum, S.Train.Loss, S.Req.Train.Loss);
  if (P && S.Train.AddedDropout > 0 && Sum.GraphHasDropout)
    return makeInputError(G.SourcePath +
                          ": --dropout: the graph has Dropout nodes already "
                          "(a training-mode export); --dropout is for "
                          "graphs exported without them");
  if (P && !Sum.GraphHasDropout && Sum.DropoutSites && !S.Req.Train.Dropout)
    S.note("the graph has no Dropout node (an eval-mode export?): if the "
           "model trains with dropout, --dropout=0.1 adds " +
           formatBytes(Sum.DropoutBytes) + " (" +
           std::to_string(Sum.DropoutBytes) + " bytes) of masks at " +
           std::to_string(Sum.DropoutSites) +
           " places (docs/training.md \"Eval-mode exports\")");
  S.AttentionText.clear();
  unsigned Blocks = Sum.SDPABlocks + Sum.EagerBlocks;
  if (!P || !Blocks || S.Train.Runtime != TrainRuntime::PyTorchCUDA)
    return P;
  std::string Mode = S.Req.Train.Attention.value_or("auto");
  S.AttentionText =
      std::to_string(Sum.SDPABlocks) + " of " + std::to_string(Blocks) +
      " blocks as scaled_dot_product_attention, " +
      std::to_string(Sum.EagerBlocks) + " eager (--attention=" + Mode +
      (Mode == "auto" ? ": sdpa where the graph shows "
                        "nn.MultiheadAttention or an "
                        "exported SDPA call)"
                      : ")");
  // The other reading's total, so a user who knows better sees the stakes.
  TrainingOptions Other = T;
  Other.Attention = Sum.SDPABlocks ? AttentionMode::Eager : AttentionMode::SDPA;
  std::vector<std::string> Ignored;
  auto OP = planTrainingGraph(G, Shapes, Bindings, PO, Other, Ignored);
  if (!OP) {
    consumeError(OP.takeError());
    return P;
  }
  double Mine = double(P->totalBytes()), Theirs = double(OP->totalBytes());
  if (Mine > 0 && std::abs(Theirs - Mine) / Mine > 0.02)
    S.AttentionText +=
        "; with --attention=" + std::string(Sum.SDPABlocks ? "eager" : "sdpa") +
        " the total is " + formatBytes(OP->totalBytes()) + " (" +
        std::to_string(OP->totalBytes()) + " bytes)";
  return P;
}
