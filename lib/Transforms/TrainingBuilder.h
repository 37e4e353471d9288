//===- TrainingBuilder.h - the builder of a training step -------*- C++ -*-===//
//
// Internal to lib/Transforms. The state makeTrainingSchedule carries while it
// appends a training step to the forward schedule (Training.cpp: the forward
// and backward steps; TrainingLoss.cpp: the cross-entropy's steps;
// TrainingOptimizer.cpp: the optimizer step and its state).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_TRANSFORMS_TRAININGBUILDER_H
#define OOMPLAN_LIB_TRANSFORMS_TRAININGBUILDER_H

#include "RecurrentPacking.h"
#include "SavedTensorRules.h"
#include "TrainingAttention.h"
#include "TrainingAutocast.h"
#include "TrainingDropout.h"
#include "TrainingPatterns.h"
#include "oomplan/Support/CheckedMath.h"
#include "oomplan/Support/Error.h"
#include "oomplan/Transforms/Training.h"
#include "llvm/ADT/StringExtras.h"
#include <algorithm>
#include <map>

namespace oomplan {
namespace training {

/// No tensor (a gradient not made yet, an input without a copy).
inline constexpr TensorId NoTensor = UINT32_MAX;

struct TrainingBuilder {
  const Graph &G;
  const ShapeInfo &Shapes;
  llvm::ArrayRef<uint64_t> Bytes;
  llvm::ArrayRef<std::optional<int64_t>> Bindings;
  const TrainingOptions &Opts;
  std::vector<std::string> &Warnings;
  Schedule S;
  TrainingSummary Sum;
  std::vector<bool> Trainable;    // per value
  std::vector<bool> RequiresGrad; // per value
  std::vector<ValueId> GradRoot;  // per value: whose gradient it feeds
  std::vector<TensorId> GradOf;   // per value (roots only)
  std::vector<unsigned> Partials; // per value: contributions so far
  std::vector<int> GroupOf;       // per node
  std::vector<FusedGroup> Groups;
  std::vector<std::vector<TensorId>> Aux; // per node: saved(...) tensors
  std::vector<ValueId> Params;
  /// Per value: the weights a recurrent layer's packed W/R/B was built
  /// from (markRecurrentWeightPacking); empty for every other value.
  std::vector<std::vector<ValueId>> PackedFrom;
  /// Per node: a recurrent node's saved per-direction copies of X, or
  /// NoTensor.
  std::vector<TensorId> InputCopiesOf;
  /// Per last node of a block run as scaled_dot_product_attention.
  struct SDPAGroup {
    uint64_t LSEBytes = 0;        ///< The saved log-sum-exp.
    uint64_t QBytes = 0;          ///< q as the block reads it.
    SymExpr LSEFormula, QFormula; ///< The two as formulas of the symbols.
  };
  std::map<NodeId, SDPAGroup> SDPAGroups;
  /// Eager attention blocks without a dropout: (the probabilities @ v
  /// MatMul, the probabilities).
  std::vector<std::pair<NodeId, ValueId>> EagerProbs;
  /// Per node, per input: autocast's 16-bit copy the node computes on (and
  /// its backward reads in the input's place), or NoTensor.
  std::vector<std::vector<TensorId>> CastOf;

  TrainingBuilder(const Graph &G, const ShapeInfo &Shapes,
                  llvm::ArrayRef<uint64_t> Bytes,
                  llvm::ArrayRef<std::optional<int64_t>> Bindings,
                  const TrainingOptions &Opts,
                  std::vector<std::string> &Warnings)
      : G(G), Shapes(Shapes), Bytes(Bytes), Bindings(Bindings), Opts(Opts),
        Warnings(Warnings) {}

  // The inferred type (the file declares types only for some values).
  ElementType typeOf(ValueId V) const {
    ElementType T = Shapes.Values[V].Type;
    return T == ElementType::Undefined ? G.Values[V].Type : T;
  }

  // "O2" mixed precision: 16-bit weights and fp32 master copies.
  bool mixed() const {
    return Opts.Precision == TrainPrecision::FP16Mixed ||
           Opts.Precision == TrainPrecision::BF16Mixed;
  }
  bool autocast() const {
    return Opts.Precision == TrainPrecision::BF16Autocast ||
           Opts.Precision == TrainPrecision::FP16Autocast;
  }
  // Activations in 16 bits (either form): the loss's fp32 log-softmax and
  // flash attention's kernels.
  bool sixteenBit() const { return mixed() || autocast(); }

  // Weight gradients exist before the step: accumulated over micro-batches,
  // or zeroed in place by zero_grad() (not on the first step: there they are
  // None until the first backward).
  bool gradsLiveAllStep() const {
    return Opts.GradAccum > 1 || (Opts.ZeroGrad == ZeroGradKind::Zero &&
                                  Opts.Step == TrainStep::Steady);
  }

  // The kernels' temporaries in the table were measured on PyTorch 1.13's
  // CPU kernels (oneDNN's reorders, batch norm's backward); CUDA's cuDNN
  // kernels and our executor do not make them.
  bool cpuTemporaries() const {
    return Opts.Runtime == TrainRuntime::PyTorchCPU;
  }

  static const SavedRule &ruleFor(const Node &N) {
    const SavedRule *R = findSavedRule(N.OpType);
    return R ? *R : fallbackSavedRule();
  }

  TensorId addTensor(std::string Name, uint64_t Size, TensorKind K,
                     ElementType Type = ElementType::Undefined) {
    ScheduleTensor T;
    T.Name = std::move(Name);
    T.SizeBytes = Size;
    T.Kind = K;
    T.Type = Type;
    S.Tensors.push_back(std::move(T));
    return static_cast<TensorId>(S.Tensors.size() - 1);
  }

  // Gives tensor T the size formula F (ScheduleTensor::SizeFormula).
  TensorId withFormula(TensorId T, SymExpr F) {
    S.Tensors[T].SizeFormula = std::move(F);
    return T;
  }

  // Elements of V as a formula of the symbols (the product of its dims), or
  // the count at the bindings when its dims are unknown.
  SymExpr elementsFormula(ValueId V) const {
    const ValueShape &VS = Shapes.Values[V];
    if (!VS.Known)
      return SymExpr::constant(static_cast<int64_t>(elementsOf(V)));
    SymExpr E = SymExpr::constant(1);
    for (const SymExpr &D : VS.Dims)
      E *= D;
    return E;
  }

  // Bytes of tensor T as a formula: its own, else its value's elements in
  // the type it is held in, else the bytes at the bindings. The report keeps
  // a formula only where it gives the bytes (Plan/TensorInfo.h).
  SymExpr bytesFormula(TensorId T) const {
    if (S.Tensors[T].SizeFormula)
      return *S.Tensors[T].SizeFormula;
    unsigned Bits = T < G.Values.size() ? elementBits(tensorType(T)) : 0;
    if (Bits == 0 || !Shapes.Values[T].Known)
      return SymExpr::constant(static_cast<int64_t>(S.Tensors[T].SizeBytes));
    if (Bits % 8 == 0)
      return elementsFormula(T) * SymExpr::constant(Bits / 8);
    return SymExpr::ceilDiv(elementsFormula(T) * SymExpr::constant(Bits),
                            SymExpr::constant(8));
  }

  // The element type tensor T holds (its own, or its graph value's).
  ElementType tensorType(TensorId T) const {
    ElementType Ty = S.Tensors[T].Type;
    if (Ty == ElementType::Undefined && T < G.Values.size())
      Ty = typeOf(T);
    return Ty;
  }

  // Mixed precision: fp32 activations and weights are held in 16 bits.
  void applyPrecision() {
    if (!mixed())
      return;
    ElementType Half = Opts.Precision == TrainPrecision::BF16Mixed
                           ? ElementType::BFloat16
                           : ElementType::Float16;
    for (ValueId V = 0; V < G.Values.size(); ++V)
      if (typeOf(V) == ElementType::Float) {
        S.Tensors[V].SizeBytes = (S.Tensors[V].SizeBytes + 1) / 2;
        S.Tensors[V].Type = Half;
      }
  }

  // --precision=*-autocast: TrainingAutocast.h.
  void applyAutocast() {
    if (!autocast())
      return;
    CastOf = applyAutocastTypes(G, Shapes, GradRoot,
                                Opts.Precision == TrainPrecision::BF16Autocast
                                    ? ElementType::BFloat16
                                    : ElementType::Float16,
                                S);
  }

  // Weights viewed through Transpose/Reshape/...: the view joins the weight's
  // buffer (no bytes) and its gradient is the weight's.
  void markParameterViews() {
    std::vector<bool> WeightView(G.Values.size(), false);
    for (ValueId W : G.Weights)
      WeightView[W] = true;
    for (NodeId N = 0; N < G.Nodes.size(); ++N) {
      const Node &Nd = G.Nodes[N];
      ValueId In = Nd.input(0);
      if (In == NoId || !WeightView[In] || Nd.Outputs.empty() ||
          Nd.Outputs[0] == NoId)
        continue;
      const ops::OpInfo *Op = ops::lookupOp(Nd.OpType);
      if (!Op || (Op->Alias != ops::AliasClass::View &&
                  Op->Alias != ops::AliasClass::ParamView))
        continue;
      S.Steps[N].ViewOf = 0;
      WeightView[Nd.Outputs[0]] = true;
      GradRoot[Nd.Outputs[0]] = GradRoot[In];
    }
  }

  // The exporter's packing of recurrent weights (RecurrentPacking.h): the
  // packed values hold no bytes, their gradients go to the parameters.
  // Our own executor does allocate them, so it keeps them.
  void markRecurrentWeightPacking() {
    PackedFrom.assign(G.Values.size(), {});
    if (Opts.Runtime == TrainRuntime::Oomplan)
      return;
    PackedFrom = recurrentWeightPacking(G);
    for (ValueId V = 0; V < G.Values.size(); ++V)
      if (!PackedFrom[V].empty())
        S.Tensors[V].SizeBytes = 0;
  }

  // The recurrent node's gradient of a packed W, R or B goes to the
  // parameters it packs (PyTorch accumulates into their .grad during the
  // recurrence); of any other input, to the input.
  std::vector<std::pair<ValueId, bool>>
  unpacked(llvm::ArrayRef<std::pair<ValueId, bool>> Ins) const {
    std::vector<std::pair<ValueId, bool>> Out;
    for (const auto &P : Ins) {
      if (P.first >= PackedFrom.size() || PackedFrom[P.first].empty()) {
        Out.push_back(P);
        continue;
      }
      for (ValueId W : PackedFrom[P.first])
        if (RequiresGrad[W])
          Out.push_back({W, false});
    }
    return Out;
  }

  void propagateRequiresGrad() {
    for (const Node &N : G.Nodes) {
      const SavedRule &R = ruleFor(N);
      bool Any = false;
      for (size_t I = 0; I < N.Inputs.size() && I < 32; ++I)
        if (N.Inputs[I] != NoId && (R.DiffInputs & bit(I)) &&
            RequiresGrad[N.Inputs[I]])
          Any = true;
      for (ValueId Out : N.Outputs)
        if (Out != NoId && Any && isFloatingPoint(typeOf(Out)))
          RequiresGrad[Out] = true;
    }
  }

  // Does node N run a backward step (some input needs a gradient)?
  bool needsBackward(const Node &N) const {
    const SavedRule &R = ruleFor(N);
    for (size_t I = 0; I < N.Inputs.size() && I < 32; ++I)
      if (N.Inputs[I] != NoId && (R.DiffInputs & bit(I)) &&
          RequiresGrad[N.Inputs[I]])
        return true;
    return false;
  }

  uint64_t elementsOf(ValueId V) const {
    unsigned Bits = elementBits(typeOf(V));
    // Bits: 4 (int4, packed), 8, 16, 32, ...
    return Bits >= 8 ? Bytes[V] / (Bits / 8)
           : Bits    ? Bytes[V] * 8 / Bits
                     : Bytes[V];
  }

  // The saved(...) tensors an op keeps beyond the graph's values
  // (TrainingAux.cpp).
  void addAuxTensors(NodeId N);

  // A node's first output that the graph uses (an LSTM may omit Y and keep
  // only Y_h), or NoId.
  static ValueId firstOutput(const Node &N) {
    for (ValueId O : N.Outputs)
      if (O != NoId)
        return O;
    return NoId;
  }

  // The op type of the node that writes V ("" for graph inputs, weights).
  llvm::StringRef producerOf(ValueId V) const {
    for (const Node &N : G.Nodes)
      for (ValueId O : N.Outputs)
        if (O == V)
          return N.OpType;
    return "";
  }

  // --attention: blocks that run as scaled_dot_product_attention become one
  // group whose intermediates have no bytes (the fused kernel never makes
  // them); the others stay op by op.
  void addAttentionGroups() {
    std::vector<AttentionBlock> Blocks = findAttentionBlocks(G, Shapes);
    std::vector<bool> InBlock(G.Nodes.size(), false);
    for (const AttentionBlock &B : Blocks) {
      bool SDPA = Opts.Attention == AttentionMode::SDPA ||
                  (Opts.Attention == AttentionMode::Auto &&
                   B.Evidence != SDPAEvidence::None);
      if (!SDPA) {
        ++Sum.EagerBlocks;
        if (!B.HasDropout)
          EagerProbs.push_back({B.Group.Nodes.back(), B.Interior.back()});
        continue;
      }
      ++Sum.SDPABlocks;
      for (NodeId N : B.Group.Nodes) {
        InBlock[N] = true;
        S.Steps[N].MayWriteInPlace = false; // their writes have no bytes
      }
      SDPAGroup G2;
      G2.LSEBytes = logSumExpBytes(B);
      G2.QBytes = S.Tensors[B.Group.Inputs[0]].SizeBytes;
      G2.LSEFormula = logSumExpFormula(B);
      G2.QFormula = bytesFormula(B.Group.Inputs[0]);
      for (ValueId V : B.Interior)
        S.Tensors[V].SizeBytes = 0;
      FusedGroup Grp = B.Group;
      Grp.AuxOf = Grp.Nodes.back(); // the log-sum-exp, saved by the kernel
      SDPAGroups[Grp.Nodes.back()] = G2;
      Groups.push_back(std::move(Grp));
    }
    // A pattern inside a fused block (none is expected) is the block's.
    llvm::erase_if(Groups, [&](const FusedGroup &F) {
      if (llvm::StringRef(F.Pattern) == "attention")
        return false;
      return llvm::any_of(F.Nodes, [&](NodeId N) { return InBlock[N]; });
    });
  }

  // One fp32 log-sum-exp per query row; the memory-efficient kernel (fp32)
  // pads the rows to a multiple of 32 (PyTorch's
  // _efficient_attention_forward), flash (16-bit) does not.
  // logSumExpBytes as a formula: the rows are the scores' dims but the
  // last, the query rows padded as above.
  SymExpr logSumExpFormula(const AttentionBlock &B) const {
    const std::vector<SymExpr> &D = Shapes.Values[B.Scores].Dims;
    if (D.size() < 2)
      return SymExpr::constant(0);
    SymExpr Rows = SymExpr::constant(4);
    for (size_t I = 0; I + 2 < D.size(); ++I)
      Rows *= D[I];
    const SymExpr &Sq = D[D.size() - 2];
    if (sixteenBit())
      return Rows * Sq;
    return Rows * SymExpr::ceilDiv(Sq, SymExpr::constant(32)) *
           SymExpr::constant(32);
  }

  uint64_t logSumExpBytes(const AttentionBlock &B) const {
    const std::vector<SymExpr> &D = Shapes.Values[B.Scores].Dims;
    unsigned Bits = elementBits(typeOf(B.Scores));
    if (D.size() < 2 || Bits < 8)
      return 0;
    auto Eval = [&](const SymExpr &E) -> std::optional<int64_t> {
      if (auto C = E.getConstant())
        return C;
      auto V = E.evaluate(Bindings, Shapes.SymbolNames);
      if (!V) {
        llvm::consumeError(V.takeError());
        return std::nullopt;
      }
      return *V;
    };
    std::optional<int64_t> Sq = Eval(D[D.size() - 2]),
                           Sk = Eval(D[D.size() - 1]);
    // The graph's size in its own type (16-bit precision has halved the
    // schedule tensor already).
    uint64_t Elems = Bytes[B.Scores] / (Bits / 8);
    if (!Sq || !Sk || *Sq <= 0 || *Sk <= 0)
      return saturatingMul(4, Elems); // unknown: no smaller than the scores
    uint64_t Rows = Elems / uint64_t(*Sk);
    if (!sixteenBit())
      Rows = Rows / uint64_t(*Sq) * ((uint64_t(*Sq) + 31) / 32 * 32);
    return saturatingMul(4, Rows);
  }

  // --dropout: the masks of the dropouts an eval-mode export lost, written
  // where the dropout runs (the add it precedes; the product with v it
  // feeds) and kept for that node's backward.
  void addLostDropouts() {
    Sum.GraphHasDropout = countDropouts(G) > 0;
    if (Sum.GraphHasDropout)
      return;
    auto Add = [&](NodeId N, std::string Name, uint64_t Size, ElementType Type,
                   SymExpr F) {
      Sum.DropoutBytes = saturatingAdd(Sum.DropoutBytes, Size);
      if (Opts.AddedDropout <= 0 || GroupOf[N] >= 0)
        return;
      TensorId T = withFormula(
          addTensor("saved(" + Name + ")", Size, TensorKind::Activation, Type),
          std::move(F));
      S.Steps[N].Writes.push_back(T);
      Aux[N].push_back(T);
      Sum.SavedBytes += Size;
    };
    // PyTorch on the CPU keeps the mask in the input's type (see addAux).
    auto Mask = [&](NodeId N, ValueId V) {
      if (cpuTemporaries())
        Add(N, "dropout(" + G.Values[V].Name + "):mask", S.Tensors[V].SizeBytes,
            tensorType(V), bytesFormula(V));
      else
        Add(N, "dropout(" + G.Values[V].Name + "):mask", elementsOf(V),
            ElementType::Bool, elementsFormula(V));
    };
    for (const DropoutSite &D : findDropoutSites(G)) {
      ++Sum.DropoutSites;
      Mask(D.Add, D.Masked);
    }
    for (auto [PV, Probs] : EagerProbs) {
      ++Sum.DropoutSites;
      Mask(PV, Probs);
      // The product with v keeps the dropped probabilities, the softmax's
      // backward its own output: both.
      Add(PV, "dropout(" + G.Values[Probs].Name + ")",
          S.Tensors[Probs].SizeBytes, tensorType(Probs), bytesFormula(Probs));
    }
  }

  void buildForward() {
    addLostDropouts();
    for (auto &[Last, SG] : SDPAGroups) {
      ValueId O = G.Nodes[Last].Outputs[0];
      TensorId T = withFormula(
          addTensor("saved(" + G.Values[O].Name + ":logsumexp)", SG.LSEBytes,
                    TensorKind::Activation, ElementType::Float),
          SG.LSEFormula);
      S.Steps[Last].Writes.push_back(T);
      Aux[Last].push_back(T);
      Sum.SavedBytes += SG.LSEBytes;
    }
    for (NodeId N = 0; N < G.Nodes.size(); ++N)
      if (GroupOf[N] < 0 || Groups[GroupOf[N]].AuxOf == N)
        addAuxTensors(N);
    Sum.NumForwardSteps = S.Steps.size();
  }

  TensorId gradTensor(ValueId Root) {
    if (GradOf[Root] == NoTensor) {
      bool IsParam = G.Values[Root].Kind == ValueKind::Weight;
      GradOf[Root] = addTensor("grad(" + G.Values[Root].Name + ")",
                               S.Tensors[Root].SizeBytes, TensorKind::Gradient,
                               tensorType(Root));
      if (IsParam)
        Sum.GradBytes += S.Tensors[Root].SizeBytes;
    }
    return GradOf[Root];
  }

  // Adds to St the write of a gradient contribution for input value In.
  // ViewOfRead: index in St.Reads of a gradient this one may alias, or -1.
  void contribute(Step &St, ValueId In, std::vector<Step> &ViewSteps,
                  TensorId ViewSource) {
    ValueId Root = GradRoot[In];
    bool IsParam = G.Values[Root].Kind == ValueKind::Weight;
    if (GradOf[Root] == NoTensor && !(gradsLiveAllStep() && IsParam)) {
      TensorId T = gradTensor(Root);
      if (ViewSource != NoTensor && !IsParam &&
          S.Tensors[ViewSource].SizeBytes == S.Tensors[T].SizeBytes) {
        Step V;
        V.Kind = StepKind::Backward;
        V.Node = St.Node;
        V.Op = St.Op; // the same backward op, its result a view
        V.Reads = {ViewSource};
        V.Writes = {T};
        V.ViewOf = 0;
        ViewSteps.push_back(std::move(V));
        return;
      }
      St.Writes.push_back(T);
      return;
    }
    TensorId Acc = gradTensor(Root);
    unsigned K = ++Partials[Root];
    // Its name names no value: the formula is the root's, as its size.
    TensorId Part =
        withFormula(addTensor(S.Tensors[Acc].Name + "+" + std::to_string(K),
                              S.Tensors[Acc].SizeBytes, TensorKind::Gradient,
                              S.Tensors[Acc].Type),
                    bytesFormula(Root));
    St.Writes.push_back(Part);
    // Two inputs with one root (MatMul(w, Transpose(w))): this step wrote
    // grad(v) already, so it must not read it as an earlier step's result.
    if (!llvm::is_contained(St.Writes, Acc))
      St.Reads.push_back(Acc);
  }

  // Returns whether a step was emitted.
  bool emitBackward(NodeId Last, llvm::StringRef Op,
                    llvm::ArrayRef<ValueId> Outs,
                    llvm::ArrayRef<TensorId> Saved,
                    llvm::ArrayRef<std::pair<ValueId, bool>> Ins,
                    uint64_t Scratch = 0,
                    std::optional<SymExpr> ScratchFormula = std::nullopt) {
    Step St;
    St.Kind = StepKind::Backward;
    St.Node = Last;
    // Named after the op whose gradient it computes: "MatMul.grad".
    St.Op = Op.str() + ".grad";
    TensorId Incoming = NoTensor;
    for (ValueId O : Outs)
      if (O != NoId && GradOf[GradRoot[O]] != NoTensor &&
          G.Values[GradRoot[O]].Kind != ValueKind::Weight) {
        St.Reads.push_back(GradOf[GradRoot[O]]);
        if (Incoming == NoTensor)
          Incoming = GradOf[GradRoot[O]];
      }
    if (Incoming == NoTensor)
      return false; // no gradient reaches this node
    for (TensorId T : Saved)
      if (std::find(St.Reads.begin(), St.Reads.end(), T) == St.Reads.end())
        St.Reads.push_back(T);
    std::vector<Step> ViewSteps;
    std::vector<ValueId> Done;
    for (auto [In, MayView] : Ins) {
      if (std::find(Done.begin(), Done.end(), In) != Done.end())
        continue;
      Done.push_back(In);
      contribute(St, In, ViewSteps, MayView ? Incoming : NoTensor);
    }
    for (Step &V : ViewSteps)
      S.Steps.push_back(std::move(V));
    if (St.Writes.empty())
      return false;
    if (Scratch) { // temporaries: written here, read by nobody
      TensorId T = addTensor(
          "scratch(" + G.Values[firstOutput(G.Nodes[Last])].Name + ")", Scratch,
          TensorKind::Activation);
      S.Tensors[T].SizeFormula = std::move(ScratchFormula);
      St.Writes.push_back(T);
    }
    S.Steps.push_back(std::move(St));
    return true;
  }

  // A recurrent node's backward in three steps, as PyTorch runs it. The
  // recurrence, newest time step first, reads the saved states and writes
  // the gradients of R, B and the initial states; autograd frees each time
  // step's states as it goes and keeps its gate gradient instead, a smaller
  // slice, so the states bound what it holds. Then the slices are stacked
  // (the stacked gate gradient and the slices, both live), and the input
  // projection reads the stack and writes the gradients of X and W. One
  // step would keep the states alive while dX and dW are written, which
  // PyTorch never does (measured: +17% on a 2-layer bidirectional LSTM).
  // False: nothing to split.
  bool splitRecurrentBackward(NodeId N, llvm::ArrayRef<TensorId> Saved,
                              llvm::ArrayRef<std::pair<ValueId, bool>> Ins) {
    const Node &Nd = G.Nodes[N];
    ValueId X = Nd.input(0), W = Nd.input(1);
    if (X == NoId || firstOutput(Nd) == NoId)
      return false;
    std::vector<std::pair<ValueId, bool>> Rec, Proj;
    for (const auto &P : Ins)
      (P.first == X || P.first == W ? Proj : Rec).push_back(P);
    Rec = unpacked(Rec);
    Proj = unpacked(Proj);
    std::vector<TensorId> Incoming;
    for (ValueId O : Nd.Outputs)
      if (O != NoId && GradOf[GradRoot[O]] != NoTensor &&
          G.Values[GradRoot[O]].Kind != ValueKind::Weight)
        Incoming.push_back(GradOf[GradRoot[O]]);
    if (Incoming.empty())
      return true; // no gradient reaches the node: nothing to emit
    SymExpr XElems = elementsFormula(X);
    RecurrentSaved RS =
        recurrentSaved(Nd, Shapes, elementsOf(X), S.Tensors[X].SizeBytes,
                       producerOf(X), &XElems);
    const std::string &Name = G.Values[firstOutput(Nd)].Name;
    // PyTorch's CPU recurrence computes each time step's dR and adds it to
    // the accumulated one out of place (autograd's input buffer): the new
    // contribution and the sum, two R-sized temporaries of a direction
    // beside the accumulator (measured: three w_hh-sized tensors at a
    // 2-layer tanh RNN's peak, four at a bidirectional LSTM's).
    uint64_t StepTemp = 0;
    if (ValueId R = Nd.input(2); cpuTemporaries() && R != NoId) {
      if (!PackedFrom[R].empty())
        for (ValueId L : PackedFrom[R])
          StepTemp = std::max(StepTemp, S.Tensors[L].SizeBytes);
      else
        StepTemp = S.Tensors[R].SizeBytes / std::max(1u, RS.Directions);
      StepTemp = saturatingMul(2, StepTemp);
    }
    bool Recurrence =
        emitBackward(N, Nd.OpType, Nd.Outputs, Saved, Rec, StepTemp);
    // Neither X nor W needs a gradient: no step gradient is stacked for an
    // input projection, the recurrence is the whole backward.
    if (Proj.empty())
      return true;
    Step Stack;
    Stack.Kind = StepKind::Backward;
    Stack.Node = N;
    Stack.Op = Nd.OpType + ".grad";
    Stack.Reads = Incoming;
    if (!Recurrence) // the states are read here then (R and B frozen)
      Stack.Reads.insert(Stack.Reads.end(), Saved.begin(), Saved.end());
    TensorId Gates =
        withFormula(addTensor("grad(" + Name + ":gates)", RS.GateBytes,
                              TensorKind::Activation, tensorType(X)),
                    RS.GateFormula);
    Stack.Writes = {Gates,
                    withFormula(addTensor("scratch(" + Name + ":gate-slices)",
                                          RS.GateBytes, TensorKind::Activation),
                                RS.GateFormula)};
    S.Steps.push_back(std::move(Stack));
    Step St;
    St.Kind = StepKind::Backward;
    St.Node = N;
    St.Op = Nd.OpType + ".grad";
    St.Reads = {Gates, X};
    if (W != NoId)
      St.Reads.push_back(W);
    if (InputCopiesOf[N] != NoTensor) // dW reads each direction's copy
      St.Reads.push_back(InputCopiesOf[N]);
    std::vector<Step> ViewSteps;
    for (const auto &P : Proj)
      contribute(St, P.first, ViewSteps, NoTensor);
    for (Step &V : ViewSteps)
      S.Steps.push_back(std::move(V));
    if (!St.Writes.empty())
      S.Steps.push_back(std::move(St));
    return true;
  }

  void backwardOfNode(NodeId N) {
    const Node &Nd = G.Nodes[N];
    if (!needsBackward(Nd))
      return;
    const SavedRule &R = ruleFor(Nd);
    auto NeedsGrad = [&](size_t I) {
      return I < Nd.Inputs.size() && I < 32 && Nd.Inputs[I] != NoId &&
             (R.DiffInputs & bit(I)) && RequiresGrad[Nd.Inputs[I]];
    };
    std::vector<TensorId> Saved;
    for (size_t I = 0; I < Nd.Inputs.size() && I < 32; ++I) {
      if (Nd.Inputs[I] == NoId)
        continue;
      bool Keep = R.SaveAlways & bit(I);
      if ((R.SaveIfPartnerGrad & bit(I)) && I < 2 && NeedsGrad(1 - I))
        Keep = true;
      if (Keep)
        Saved.push_back(N < CastOf.size() && I < CastOf[N].size() &&
                                CastOf[N][I] != NoTensor
                            ? CastOf[N][I]
                            : Nd.Inputs[I]);
    }
    for (size_t I = 0; I < Nd.Outputs.size() && I < 32; ++I)
      if (Nd.Outputs[I] != NoId && (R.SaveOutputs & bit(I)))
        Saved.push_back(Nd.Outputs[I]);
    Saved.insert(Saved.end(), Aux[N].begin(), Aux[N].end());
    std::vector<std::pair<ValueId, bool>> Ins;
    for (size_t I = 0; I < Nd.Inputs.size(); ++I)
      if (NeedsGrad(I))
        Ins.push_back({Nd.Inputs[I], (R.GradViewInputs & bit(I)) != 0});
    if (R.Aux == AuxKind::RecurrentStates && !Aux[N].empty() &&
        splitRecurrentBackward(N, Saved, Ins))
      return;
    uint64_t Scratch = 0;
    // The same sum and maximum as a formula, kept where the convolution
    // special cases (sizes with thresholds, numbers here) add nothing.
    SymExpr ScratchF = SymExpr::constant(0);
    auto Times = [](unsigned K, SymExpr F) { return F * SymExpr::constant(K); };
    if (cpuTemporaries() && Nd.input(0) != NoId) {
      Scratch += R.ScratchOfInput * S.Tensors[Nd.input(0)].SizeBytes;
      ScratchF += Times(R.ScratchOfInput, bytesFormula(Nd.input(0)));
    }
    if (cpuTemporaries() && !Nd.Outputs.empty() && Nd.Outputs[0] != NoId) {
      Scratch += R.ScratchOfOutput * S.Tensors[Nd.Outputs[0]].SizeBytes;
      ScratchF += Times(R.ScratchOfOutput, bytesFormula(Nd.Outputs[0]));
    }
    bool Special = false;
    // The weight's reorder outlives the others (it is kept while dW is
    // written): the step needs the larger of the two phases.
    if (cpuTemporaries() && Nd.input(1) != NoId) {
      uint64_t Large =
          largeKernelConvScratch(Nd, Shapes, S.Tensors[Nd.input(0)].SizeBytes,
                                 S.Tensors[Nd.input(1)].SizeBytes);
      uint64_t Shallow =
          Nd.Outputs.empty() || Nd.Outputs[0] == NoId
              ? 0
              : shallowConv3DScratch(
                    Nd, Shapes, Bindings, S.Tensors[Nd.input(1)].SizeBytes,
                    S.Tensors[Nd.Outputs[0]].SizeBytes,
                    std::max(1u, elementBits(tensorType(Nd.Outputs[0])) / 8));
      Special = Large || Shallow;
      Scratch = std::max<uint64_t>(
          {Scratch, R.ScratchOfInput1 * S.Tensors[Nd.input(1)].SizeBytes, Large,
           Shallow});
      if (R.ScratchOfInput1)
        ScratchF = SymExpr::max(
            ScratchF, Times(R.ScratchOfInput1, bytesFormula(Nd.input(1))));
    }
    emitBackward(N, Nd.OpType, Nd.Outputs, Saved, Ins, Scratch,
                 Special ? std::nullopt : std::optional<SymExpr>(ScratchF));
  }

  void backwardOfGroup(const FusedGroup &Grp) {
    std::vector<TensorId> Saved(Grp.Saved.begin(), Grp.Saved.end());
    if (Grp.AuxOf != NoId)
      Saved.insert(Saved.end(), Aux[Grp.AuxOf].begin(), Aux[Grp.AuxOf].end());
    std::vector<std::pair<ValueId, bool>> Ins;
    for (ValueId In : Grp.Inputs)
      if (RequiresGrad[In])
        Ins.push_back({In, Grp.Identity}); // identity: grad is a view
    // The fused attention's backward: its row sums of dO * O (fp32, as the
    // log-sum-exp), and with 16-bit q flash's fp32 accumulator of dq.
    uint64_t Scratch = 0;
    std::optional<SymExpr> ScratchF;
    auto SG = SDPAGroups.find(Grp.Nodes.back());
    if (llvm::StringRef(Grp.Pattern) == "attention" && SG != SDPAGroups.end()) {
      Scratch =
          saturatingAdd(SG->second.LSEBytes,
                        sixteenBit() ? saturatingMul(2, SG->second.QBytes) : 0);
      ScratchF = SG->second.LSEFormula;
      if (sixteenBit())
        *ScratchF += SG->second.QFormula * SymExpr::constant(2);
    }
    if (!Ins.empty())
      emitBackward(Grp.Nodes.back(), Grp.Op, {Grp.Output}, Saved, Ins, Scratch,
                   ScratchF);
  }

  // The loss an output gets: --loss, with auto decided by isLogitsOutput.
  LossKind lossFor(ValueId O) const {
    if (Opts.Loss != LossKind::Auto)
      return Opts.Loss;
    return isLogitsOutput(G, Shapes, O) ? LossKind::CrossEntropy
                                        : LossKind::Mean;
  }

  llvm::Error buildLoss() {
    Step St;
    St.Kind = StepKind::Backward;
    St.Op = "Loss";
    std::vector<ValueId> CE;
    for (ValueId O : G.Outputs) {
      if (!RequiresGrad[O])
        continue;
      LossKind K = lossFor(O);
      Sum.Losses.push_back({O, K});
      if (K == LossKind::CrossEntropy) {
        CE.push_back(O);
        continue;
      }
      St.Reads.push_back(O);
      St.Writes.push_back(gradTensor(GradRoot[O]));
    }
    if (Sum.Losses.empty())
      return makeInputError(G.SourcePath +
                            ": --train: no graph output depends on a trainable "
                            "parameter (all frozen?)");
    for (ValueId O : CE)
      if (llvm::Error E = buildCrossEntropy(O))
        return E;
    if (!St.Writes.empty())
      S.Steps.push_back(std::move(St));
    return llvm::Error::success();
  }

  llvm::Error buildCrossEntropy(ValueId O);
  llvm::Error buildAutocastCE(ValueId O, TensorId Target, ElementType T16);

  void buildBackward() {
    uint64_t Before = S.Steps.size();
    for (NodeId N = G.Nodes.size(); N-- > 0;) {
      if (GroupOf[N] < 0)
        backwardOfNode(N);
      else if (Groups[GroupOf[N]].Nodes.back() == N)
        backwardOfGroup(Groups[GroupOf[N]]);
    }
    Sum.NumBackwardSteps = S.Steps.size() - Before;
  }

  // --keep-output: `out = model(x)` in a loop keeps the previous step's
  // outputs referenced until the assignment, after this step's forward
  // (the loss reads the new ones): each lives from the step's start to the
  // step that writes its successor. Written by the first step (with the
  // accumulators under --grad-accum, so a micro-batch loop stays after it).
  void addPreviousOutputs() {
    if (!Opts.KeepPreviousOutputs)
      return;
    bool HasInit = !S.Steps.empty() && S.Steps[0].Op == "GradAccumBuffers";
    std::vector<TensorId> Prev;
    std::vector<NodeId> Producers;
    for (ValueId O : G.Outputs) {
      if (O == NoId || G.Values[O].Kind != ValueKind::NodeOutput ||
          !S.Tensors[O].SizeBytes)
        continue;
      Prev.push_back(addTensor("previous(" + G.Values[O].Name + ")",
                               S.Tensors[O].SizeBytes, TensorKind::Activation,
                               tensorType(O)));
      Producers.push_back(G.Values[O].Producer);
    }
    if (Prev.empty())
      return;
    for (size_t I = 0; I < Prev.size(); ++I) {
      Step &St = S.Steps[Producers[I] + (HasInit ? 1 : 0)];
      St.Reads.push_back(Prev[I]);
      // The new output is a fresh tensor: it never takes the old one's
      // bytes, which the caller still holds while it is written.
      if (St.MayWriteInPlace && St.InPlaceRead < 0)
        St.MayWriteInPlace = false;
    }
    if (HasInit) {
      S.Steps[0].Writes.insert(S.Steps[0].Writes.end(), Prev.begin(),
                               Prev.end());
      return;
    }
    Step Init;
    Init.Kind = StepKind::Optimizer;
    Init.Op = "PreviousOutputs";
    Init.Writes = std::move(Prev);
    S.Steps.insert(S.Steps.begin(), std::move(Init));
  }

  void buildOptimizer();
  void addState(Step &St, std::string Name, uint64_t Bytes);
  void addWarnings();
  llvm::Error run();
};

} // namespace training
} // namespace oomplan

#endif
