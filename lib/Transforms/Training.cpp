//===- Training.cpp - forward, loss, backward and optimizer steps ---------===//
//
// Builds the training step as a Schedule:
//
//   forward steps (the graph's nodes, in order; a forward step also writes
//     the saved(...) tensors its op keeps that the graph does not hold)
//   Loss: writes grad(<output>) for every graph output that needs one
//   backward steps, one per forward node (or fused group) in reverse order:
//     reads the tensors its op saved and the gradients of its outputs,
//     writes the gradients of its inputs
//   the optimizer step: reads every weight gradient, writes its temporaries
//
// A value read by several nodes gets gradient contributions from several
// backward steps: the first (the latest consumer) creates grad(v), each later
// one writes a temporary grad(v)+N and reads grad(v), as autograd's
// accumulation does. A weight's view (Transpose of a Linear weight) costs no
// bytes and its gradient is the weight's gradient: PyTorch computes dW in the
// weight's layout directly.
//
//===----------------------------------------------------------------------===//
#include "TrainingBuilder.h"
#include "oomplan/Schedule/PassRegistry.h"

using namespace oomplan;
using namespace oomplan::training;

llvm::Error TrainingBuilder::run() {
  S = makeDefaultSchedule(G, Bytes);
  applyPrecision();
  auto P = trainableParameters(G, Opts);
  if (!P)
    return P.takeError();
  Params = std::move(*P);
  if (Params.empty())
    return makeInputError(G.SourcePath + ": --train: no trainable parameters");
  size_t NV = G.Values.size();
  RequiresGrad.assign(NV, false);
  GradOf.assign(NV, NoTensor);
  Partials.assign(NV, 0);
  GradRoot.resize(NV);
  for (ValueId V = 0; V < NV; ++V)
    GradRoot[V] = V;
  for (const auto &[A, B] : Opts.Tied) {
    ValueId VA = G.findValue(A), VB = G.findValue(B);
    GradRoot[VB] = VA;
    S.Tensors[VB].SizeBytes = 0; // the same bytes as A
  }
  markParameterViews();
  markRecurrentWeightPacking();
  for (ValueId Pm : Params)
    RequiresGrad[Pm] = true;
  for (const auto &[A, B] : Opts.Tied)
    RequiresGrad[G.findValue(B)] = RequiresGrad[G.findValue(A)];
  propagateRequiresGrad();
  applyAutocast();
  Groups = findFusedGroups(G);
  addAttentionGroups();
  GroupOf.assign(G.Nodes.size(), -1);
  for (size_t I = 0; I < Groups.size(); ++I)
    for (NodeId N : Groups[I].Nodes) {
      GroupOf[N] = static_cast<int>(I);
      // An identity (Dropout with ratio 0): the output is the input's bytes.
      if (Groups[I].Identity)
        S.Steps[N].ViewOf = 0;
    }
  Aux.resize(G.Nodes.size());
  InputCopiesOf.assign(G.Nodes.size(), NoTensor);
  buildForward();
  if (gradsLiveAllStep()) {
    // Accumulated gradients persist across micro-batches (and zero_grad()
    // with set_to_none=False keeps them between steps): all live from the
    // start of the step.
    Step Init;
    Init.Kind = StepKind::Optimizer;
    Init.Op = "GradAccumBuffers";
    for (ValueId Pm : Params)
      Init.Writes.push_back(gradTensor(Pm));
    S.Steps.insert(S.Steps.begin(), std::move(Init));
  }
  addPreviousOutputs();
  if (llvm::Error E = buildLoss())
    return E;
  buildBackward();
  buildOptimizer();
  addWarnings();
  TrainingOptions Unfrozen = Opts;
  Unfrozen.Freeze.clear();
  std::vector<bool> IsParam(G.Values.size(), false);
  for (ValueId W : Params)
    IsParam[W] = true;
  auto All = trainableParameters(G, Unfrozen);
  if (!All)
    return All.takeError();
  for (ValueId W : *All)
    Sum.FrozenParams += IsParam[W] ? 0 : elementsOf(W);
  return llvm::Error::success();
}

// Ops that ran a backward step without a row in the table, and parameters
// that no gradient reaches.
void TrainingBuilder::addWarnings() {
  std::vector<std::string> NoRule;
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    const Node &Nd = G.Nodes[N];
    if (GroupOf[N] < 0 && !findSavedRule(Nd.OpType) && needsBackward(Nd) &&
        std::find(NoRule.begin(), NoRule.end(), Nd.OpType) == NoRule.end())
      NoRule.push_back(Nd.OpType);
  }
  if (!NoRule.empty())
    Warnings.push_back("--train: no saved-tensor rule for " +
                       llvm::join(NoRule, ", ") +
                       "; assuming each keeps all its inputs");
  unsigned Unreached = 0;
  for (ValueId P : Params)
    Unreached += GradOf[P] == NoTensor;
  if (Unreached)
    Warnings.push_back("--train: " + std::to_string(Unreached) +
                       " parameters get no gradient from any output; they "
                       "hold no gradient or optimizer state");
}

llvm::Expected<Schedule> oomplan::makeTrainingSchedule(
    const Graph &G, const ShapeInfo &Shapes, llvm::ArrayRef<uint64_t> Bytes,
    const TrainingOptions &Opts, std::vector<std::string> &Warnings,
    TrainingSummary *Summary, llvm::ArrayRef<std::optional<int64_t>> Bindings) {
  if (Bytes.size() != G.Values.size())
    return makeInternalError(
        "makeTrainingSchedule: one size per value expected");
  if (Opts.GradAccum == 0)
    return makeInputError("--grad-accum must be at least 1");
  std::string Eval = evalExportWarning(G);
  if (!Eval.empty())
    Warnings.push_back(Eval);
  TrainingBuilder B(G, Shapes, Bytes, Bindings, Opts, Warnings);
  if (llvm::Error E = B.run())
    return E;
  // The schedule every fit transform starts from: check it here, in every
  // build, so a bug in the backward pass is reported where it is made.
  if (llvm::Error E = verifyAfter(PassId::Training, B.S))
    return prependContext(std::move(E), G.SourcePath + ": ");
  if (Summary)
    *Summary = B.Sum;
  return std::move(B.S);
}
