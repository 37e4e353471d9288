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
#include "TrainingBuilder.h"
#include "oomplan/IR/OpTable.h"
#include "oomplan/Support/Error.h"
#include "oomplan/Transforms/Training.h"
#include "llvm/ADT/StringSwitch.h"

using namespace oomplan;
using namespace oomplan::training;

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

// F.cross_entropy(out.reshape(-1, C), target) in PyTorch 1.13 and 2.x is
// log_softmax then nll_loss (derivatives.yaml): log_softmax keeps its output
// (`result`), nll_loss keeps `self` (that output) and `target`. Backward:
// nll_loss_backward writes a zeroed gradient of the log-softmax's size,
// _log_softmax_backward_data reads it and the output and writes the logits'
// gradient; both die there. So at that step four logits-sized tensors are
// live: the logits, the log-softmax, its gradient and the logits' gradient.
// Under O2-style mixed precision the log-softmax is modelled in fp32 (the
// logits upcast, as LLM recipes do), and the fp32 gradient is cast back to
// the logits' type by one more step. Under autocast: buildAutocastCE.
llvm::Error TrainingBuilder::buildCrossEntropy(ValueId O) {
  const std::vector<SymExpr> &Dims = Shapes.Values[O].Dims;
  size_t ClassAxis = Dims.size() >= 4 ? 1 : Dims.size() - 1;
  std::optional<int64_t> C =
      Dims.size() >= 2 ? Dims[ClassAxis].getConstant() : std::nullopt;
  if (!C || *C < 1)
    return makeInputError(
        G.SourcePath + ": --loss=ce: output '" + G.Values[O].Name +
        "' has no constant class dim (cross-entropy needs [N, classes] or "
        "[B, S, vocab]); use --loss=mean");
  uint64_t Elems = elementsOf(O);
  uint64_t F32 = saturatingMul(4, Elems);
  const std::string &Name = G.Values[O].Name;
  // Integer class indices: the data loader's batch, resident like an input.
  // Sizes as formulas too: the logits' dims hold batch and sequence.
  SymExpr ElemsF = elementsFormula(O);
  TensorId Target = withFormula(
      addTensor("target(" + Name + ")", saturatingMul(8, Elems / *C),
                TensorKind::GraphInput, ElementType::Int64),
      SymExpr::floorDiv(ElemsF, SymExpr::constant(*C)) * SymExpr::constant(8));
  ElementType OT = S.Tensors[O].Type;
  if (autocast() && (OT == ElementType::BFloat16 || OT == ElementType::Float16))
    return buildAutocastCE(O, Target, OT);
  TensorId LS =
      withFormula(addTensor("saved(log_softmax(" + Name + "))", F32,
                            TensorKind::Activation, ElementType::Float),
                  ElemsF * SymExpr::constant(4));
  Sum.SavedBytes += F32;
  Step Fwd;
  Fwd.Kind = StepKind::Compute;
  Fwd.Op = "LogSoftmax (loss)";
  Fwd.Reads = {O, Target};
  Fwd.Writes = {LS};
  S.Steps.push_back(std::move(Fwd));
  TensorId GLS =
      withFormula(addTensor("grad(log_softmax(" + Name + "))", F32,
                            TensorKind::Gradient, ElementType::Float),
                  ElemsF * SymExpr::constant(4));
  Step Nll;
  Nll.Kind = StepKind::Backward;
  Nll.Op = "NLLLoss.grad";
  Nll.Reads = {LS, Target};
  Nll.Writes = {GLS};
  S.Steps.push_back(std::move(Nll));
  Step Lsm;
  Lsm.Kind = StepKind::Backward;
  Lsm.Op = "LogSoftmax.grad";
  Lsm.Reads = {LS, GLS};
  TensorId GO = gradTensor(GradRoot[O]);
  if (!sixteenBit() || typeOf(O) != ElementType::Float ||
      S.Tensors[O].Type == ElementType::Undefined) {
    Lsm.Writes = {GO};
    S.Steps.push_back(std::move(Lsm));
    return llvm::Error::success();
  }
  TensorId G32 =
      withFormula(addTensor("grad(" + Name + "):fp32", F32,
                            TensorKind::Gradient, ElementType::Float),
                  ElemsF * SymExpr::constant(4));
  Lsm.Writes = {G32};
  S.Steps.push_back(std::move(Lsm));
  Step Cast;
  Cast.Kind = StepKind::Backward;
  Cast.Op = "Cast.grad";
  Cast.Reads = {G32};
  Cast.Writes = {GO};
  S.Steps.push_back(std::move(Cast));
  return llvm::Error::success();
}

// F.cross_entropy inside torch.autocast on 16-bit logits (a product's
// output). cross_entropy_loss is not on autocast's lists, so it runs as
// written (LossNLL.cpp): log_softmax(self, dim, self.scalar_type()), an
// explicit dtype that autocast's fp32_set_opt_dtype policy keeps, so the
// log-softmax runs and is saved in 16 bits; nll_loss is on the fp32 list, so
// autocast casts that 16-bit output to an fp32 copy, which nll_loss saves as
// `self`. Backward: nll_loss_backward writes an fp32 zeroed gradient (the
// copy dies there), the cast's backward takes it to 16 bits, and
// _log_softmax_backward_data writes the logits' 16-bit gradient. The peak
// is nll_loss_backward: logits and log-softmax in 16 bits, the copy and its
// gradient in fp32 (measured on an H200 with PyTorch 2.11: docs/training.md).
llvm::Error TrainingBuilder::buildAutocastCE(ValueId O, TensorId Target,
                                             ElementType T16) {
  uint64_t Elems = elementsOf(O);
  const std::string &Name = G.Values[O].Name;
  SymExpr ElemsF = elementsFormula(O);
  auto Logits = [&](const std::string &N, unsigned Bytes, TensorKind K,
                    ElementType T) {
    Sum.SavedBytes += K == TensorKind::Activation ? Elems * Bytes : 0;
    return withFormula(addTensor(N, saturatingMul(Bytes, Elems), K, T),
                       ElemsF * SymExpr::constant(Bytes));
  };
  TensorId LS16 = Logits("saved(log_softmax(" + Name + "))", 2,
                         TensorKind::Activation, T16);
  TensorId LS32 = Logits("saved(nll_loss(" + Name + ")):fp32", 4,
                         TensorKind::Activation, ElementType::Float);
  auto Push = [&](StepKind K, const char *Op, std::vector<TensorId> Reads,
                  std::vector<TensorId> Writes) {
    Step St;
    St.Kind = K;
    St.Op = Op;
    St.Reads = std::move(Reads);
    St.Writes = std::move(Writes);
    S.Steps.push_back(std::move(St));
  };
  Push(StepKind::Compute, "LogSoftmax (loss)", {O, Target}, {LS16});
  Push(StepKind::Compute, "Cast (nll_loss in fp32)", {LS16}, {LS32});
  TensorId G32 = Logits("grad(log_softmax(" + Name + ")):fp32", 4,
                        TensorKind::Gradient, ElementType::Float);
  Push(StepKind::Backward, "NLLLoss.grad", {LS32, Target}, {G32});
  TensorId G16 =
      Logits("grad(log_softmax(" + Name + "))", 2, TensorKind::Gradient, T16);
  Push(StepKind::Backward, "Cast.grad", {G32}, {G16});
  Push(StepKind::Backward, "LogSoftmax.grad", {LS16, G16},
       {gradTensor(GradRoot[O])});
  return llvm::Error::success();
}
