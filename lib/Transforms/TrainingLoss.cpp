//===- TrainingLoss.cpp - the loss rule and the step/runtime options ------===//
//
// Which loss a training loop puts on each graph output. --loss=auto (the
// command line's default) decides by a rule on the graph, never by model
// name: an output is logits when it is floating-point, of rank 2 ([N,
// classes]) or 3 ([B, S, vocab]), its last dim a constant of at least 2, and
// it is made by a MatMul or Gemm, through an optional bias Add and views: the
// network ends in a linear classifier, which is trained with cross-entropy.
// Anything else (a hidden state, an image, a regression head) gets a mean.
// Also here: parsing of --loss, --step, --zero-grad and --runtime.
//
//===----------------------------------------------------------------------===//
#include "oomplan/IR/OpTable.h"
#include "oomplan/Support/Error.h"
#include "oomplan/Transforms/Training.h"
#include "llvm/ADT/StringSwitch.h"

using namespace oomplan;

template <typename T>
static llvm::Expected<T>
parseChoice(llvm::StringRef Option, llvm::StringRef Name,
            llvm::StringRef Expected, std::optional<T> Found) {
  if (!Found)
    return makeInputError("unknown --" + Option + " '" + Name + "' (expected " +
                          Expected + ")");
  return *Found;
}

llvm::Expected<LossKind> oomplan::parseLoss(llvm::StringRef Name) {
  return parseChoice<LossKind>("loss", Name, "mean, ce, none or auto",
                               llvm::StringSwitch<std::optional<LossKind>>(Name)
                                   .Case("mean", LossKind::Mean)
                                   .Case("ce", LossKind::CrossEntropy)
                                   .Case("none", LossKind::None)
                                   .Case("auto", LossKind::Auto)
                                   .Default(std::nullopt));
}

llvm::Expected<TrainStep> oomplan::parseTrainStep(llvm::StringRef Name) {
  return parseChoice<TrainStep>(
      "step", Name, "steady or first",
      llvm::StringSwitch<std::optional<TrainStep>>(Name)
          .Case("steady", TrainStep::Steady)
          .Case("first", TrainStep::First)
          .Default(std::nullopt));
}

llvm::Expected<ZeroGradKind> oomplan::parseZeroGrad(llvm::StringRef Name) {
  return parseChoice<ZeroGradKind>(
      "zero-grad", Name, "none or zero",
      llvm::StringSwitch<std::optional<ZeroGradKind>>(Name)
          .Case("none", ZeroGradKind::None)
          .Case("zero", ZeroGradKind::Zero)
          .Default(std::nullopt));
}

llvm::Expected<TrainRuntime> oomplan::parseTrainRuntime(llvm::StringRef Name) {
  return parseChoice<TrainRuntime>(
      "runtime", Name, "pytorch-cpu, pytorch-cuda or oomplan",
      llvm::StringSwitch<std::optional<TrainRuntime>>(Name)
          .Case("pytorch-cpu", TrainRuntime::PyTorchCPU)
          .Case("pytorch-cuda", TrainRuntime::PyTorchCUDA)
          .Case("oomplan", TrainRuntime::Oomplan)
          .Default(std::nullopt));
}

llvm::Expected<AttentionMode>
oomplan::parseAttentionMode(llvm::StringRef Name) {
  return parseChoice<AttentionMode>(
      "attention", Name, "auto, sdpa or eager",
      llvm::StringSwitch<std::optional<AttentionMode>>(Name)
          .Case("auto", AttentionMode::Auto)
          .Case("sdpa", AttentionMode::SDPA)
          .Case("eager", AttentionMode::Eager)
          .Default(std::nullopt));
}

llvm::StringRef oomplan::trainRuntimeName(TrainRuntime R) {
  switch (R) {
  case TrainRuntime::PyTorchCPU:
    return "pytorch-cpu";
  case TrainRuntime::PyTorchCUDA:
    return "pytorch-cuda";
  case TrainRuntime::Oomplan:
    return "oomplan";
  }
  return "?";
}

// The node that computes V's contents, looking through views and a bias Add
// (one of whose inputs is a weight): Linear's y = x W^T + b.
static NodeId contentProducer(const Graph &G, ValueId V) {
  for (unsigned Hops = 0; Hops < 8 && V != NoId; ++Hops) {
    NodeId N = G.Values[V].Producer;
    if (N == NoId)
      return NoId;
    const Node &Nd = G.Nodes[N];
    const ops::OpInfo *Op = ops::lookupOp(Nd.OpType);
    bool View = Op && Op->Alias == ops::AliasClass::View;
    if (Nd.OpType == "Add" && Nd.Inputs.size() == 2) {
      ValueId A = Nd.input(0), B = Nd.input(1);
      bool BIsWeight = B != NoId && G.Values[B].Kind == ValueKind::Weight;
      bool AIsWeight = A != NoId && G.Values[A].Kind == ValueKind::Weight;
      if (BIsWeight == AIsWeight)
        return N;
      V = BIsWeight ? A : B;
      continue;
    }
    if (!View)
      return N;
    V = Nd.input(0);
  }
  return NoId;
}

bool oomplan::isLogitsOutput(const Graph &G, const ShapeInfo &Shapes,
                             ValueId O) {
  if (O == NoId || O >= Shapes.Values.size())
    return false;
  const ValueShape &VS = Shapes.Values[O];
  ElementType T =
      VS.Type == ElementType::Undefined ? G.Values[O].Type : VS.Type;
  if (!VS.Known || !isFloatingPoint(T) ||
      (VS.Dims.size() != 2 && VS.Dims.size() != 3))
    return false;
  std::optional<int64_t> Classes = VS.Dims.back().getConstant();
  if (!Classes || *Classes < 2)
    return false;
  NodeId N = contentProducer(G, O);
  return N != NoId &&
         (G.Nodes[N].OpType == "MatMul" || G.Nodes[N].OpType == "Gemm");
}
