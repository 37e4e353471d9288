//===- TrainingAux.cpp - the tensors an op saves beyond its values -------===//
//
// The saved(...) tensors of the forward steps that no graph value holds: a
// dropout's mask, a norm's statistics, a pool's indices, a recurrent
// layer's states and input projection. Each carries the formula its size
// was computed by, so the report's formulas follow batch and sequence.
//
//===----------------------------------------------------------------------===//
#include "TrainingBuilder.h"

using namespace oomplan;
using namespace oomplan::training;

// The saved(...) tensors an op keeps beyond the graph's values.
void TrainingBuilder::addAuxTensors(NodeId N) {
  const Node &Nd = G.Nodes[N];
  const SavedRule &R = ruleFor(Nd);
  if (R.Aux == AuxKind::None || !needsBackward(Nd))
    return;
  ValueId X = Nd.input(0), Y = firstOutput(Nd);
  if (X == NoId || Y == NoId)
    return;
  std::string Base = G.Values[Y].Name;
  auto Add = [&](std::string Name, uint64_t Size, ElementType Type, SymExpr F) {
    TensorId T = withFormula(
        addTensor("saved(" + Name + ")", Size, TensorKind::Activation, Type),
        std::move(F));
    S.Steps[N].Writes.push_back(T);
    Aux[N].push_back(T);
    Sum.SavedBytes += Size;
  };
  auto Const = [](uint64_t Size) {
    return SymExpr::constant(static_cast<int64_t>(Size));
  };
  switch (R.Aux) {
  case AuxKind::DropoutMask: {
    ValueId M = Nd.Outputs.size() > 1 ? Nd.Outputs[1] : NoId;
    std::string Name = M != NoId ? G.Values[M].Name : Base + ":mask";
    // PyTorch on the CPU keeps the mask in the input's type; its fused
    // CUDA kernel, one bool per element.
    if (Opts.DropoutMask == DropoutMaskKind::Byte || !cpuTemporaries())
      Add(Name, elementsOf(X), ElementType::Bool, elementsFormula(X));
    else
      Add(Name, S.Tensors[X].SizeBytes, tensorType(X), bytesFormula(X));
    break;
  }
  case AuxKind::BatchNormStats: {
    uint64_t C = Nd.input(1) != NoId ? elementsOf(Nd.input(1)) : 0;
    Add(Base + ":mean", saturatingMul(4, C), ElementType::Float,
        Const(saturatingMul(4, C)));
    Add(Base + ":invstd", saturatingMul(4, C), ElementType::Float,
        Const(saturatingMul(4, C)));
    break;
  }
  case AuxKind::NormStats: {
    // LayerNorm: one mean and one rstd per normalised row, in fp32.
    // Instance/GroupNorm keep per-(sample, channel) stats; counted per
    // channel here (a few bytes).
    uint64_t Row = Nd.input(1) != NoId ? elementsOf(Nd.input(1)) : 1;
    bool PerRow = Nd.OpType == "LayerNormalization" && Row;
    uint64_t Rows = PerRow ? elementsOf(X) / Row : Row;
    SymExpr RowsF =
        PerRow ? SymExpr::floorDiv(elementsFormula(X), Const(Row)) : Const(Row);
    Add(Base + ":mean", saturatingMul(4, Rows), ElementType::Float,
        RowsF * Const(4));
    Add(Base + ":rstd", saturatingMul(4, Rows), ElementType::Float,
        RowsF * Const(4));
    break;
  }
  case AuxKind::PoolIndices:
    Add(Base + ":indices", saturatingMul(8, elementsOf(Y)), ElementType::Int64,
        elementsFormula(Y) * Const(8));
    break;
  case AuxKind::RecurrentStates: {
    SymExpr XElems = elementsFormula(X);
    RecurrentSaved R =
        recurrentSaved(Nd, Shapes, elementsOf(X), S.Tensors[X].SizeBytes,
                       producerOf(X), &XElems);
    if (R.StateBytes)
      Add(Base + ":states", R.StateBytes, tensorType(X), R.StateFormula);
    if (R.InputCopyBytes) {
      Add(Base + ":input-copies", R.InputCopyBytes, tensorType(X),
          R.InputCopyFormula);
      InputCopiesOf[N] = Aux[N].back(); // read again by dW's step
    }
    if (!R.HiddenKnown)
      Warnings.push_back("--train: node '" + Nd.Name + "' (" + Nd.OpType +
                         "): hidden size unknown (no hidden_size, R and Y "
                         "dims not constant); its states are counted with "
                         "X's input size instead");
    // The input projection of one direction's whole sequence (linear_ih
    // over every time step, [T, N, gates x H]) lives while that
    // direction's recurrence runs: written here, read by nobody.
    // With two directions each also stacks its step outputs ([T, N, H])
    // before they are concatenated into Y, the last stack made while its
    // input projection is still alive (measured: PyTorch's peak of a
    // 2-layer bidirectional LSTM holds one projection and both stacks).
    uint64_t Dirs = std::max<uint64_t>(1, R.Directions);
    uint64_t Scratch = R.GateBytes / Dirs;
    SymExpr ScratchF = SymExpr::floorDiv(R.GateFormula, Const(Dirs));
    if (Dirs > 1) {
      Scratch = saturatingAdd(Scratch, saturatingMul(Dirs, R.StepOutputBytes));
      ScratchF += R.StepOutputFormula * Const(Dirs);
    }
    if (Scratch)
      S.Steps[N].Writes.push_back(
          withFormula(addTensor("scratch(" + Base + ":input-projection)",
                                Scratch, TensorKind::Activation, tensorType(X)),
                      ScratchF));
    break;
  }
  case AuxKind::None:
    break;
  }
}
