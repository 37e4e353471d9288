//===- FusionMatMul.cpp - MatMul/Gemm + bias + activation -> OomplanMatMul ===//
//
// MatMul(A, B) or Gemm(A, B[, C]), then an Add of a bias that does not widen
// the product (a Gemm that has C takes no second bias), then an activation
// (FusionActivation.cpp identifies it, GELU's decompositions included). The
// saving is the activation's input: a decomposed GELU holds its argument and
// one temporary of the same size at its last step (108 MiB in gpt_like at
// batch 8, seq 512), the fused epilogue writes only its result.
//
//===----------------------------------------------------------------------===//
#include "FusionMatch.h"
#include "oomplan/IR/FusedOps.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::fusion;

namespace {
void matchAt(MatchContext &C, NodeId N) {
  const Graph &G = C.G;
  const Node &Mm = G.Nodes[N];
  bool Gemm = Mm.OpType == "Gemm";
  if (Mm.Outputs.size() != 1 || !C.isFloat32(Mm.Outputs[0]))
    return;
  for (unsigned I : {0u, 1u}) {
    const ValueShape *S = C.shape(Mm.input(I));
    if (!S || S->Dims.size() < 2 || S->Type != ElementType::Float)
      return;
  }
  std::vector<NodeId> Nodes = {N};
  ValueId Y = Mm.Outputs[0], Bias = NoId;
  bool HasC = Gemm && Mm.input(2) != NoId;
  if (HasC)
    Bias = Mm.input(2);
  // + bias, when the product's only reader is an Add that keeps its shape.
  const Value &YV = G.Values[Y];
  if (!HasC && YV.Users.size() == 1 && C.onlyUsedBy(Y, YV.Users[0])) {
    NodeId A = YV.Users[0];
    const Node &An = G.Nodes[A];
    ValueId Other = An.input(0) == Y ? An.input(1) : An.input(0);
    if (!C.claimed(A) && An.OpType == "Add" && An.Inputs.size() == 2 &&
        C.isFloat32(Other) && C.sameDims(An.Outputs[0], Y)) {
      Nodes.push_back(A);
      Bias = Other;
      Y = An.Outputs[0];
    }
  }
  std::optional<ActivationMatch> Act = matchActivation(C, Y);
  if (Act) {
    llvm::append_range(Nodes, Act->Nodes);
    Y = G.Nodes[Act->Sink].Outputs[0];
  }
  if (Nodes.size() == 1)
    return; // nothing to fuse into
  Rewrite R;
  R.Removed = Nodes;
  R.Sink = *std::max_element(Nodes.begin(), Nodes.end());
  R.Fused.Name = Mm.Name;
  R.Fused.OpType = fused::MatMulOp.str();
  R.Fused.Inputs = {G.Values[Mm.Inputs[0]].Name, G.Values[Mm.Inputs[1]].Name};
  if (Bias != NoId)
    R.Fused.Inputs.push_back(G.Values[Bias].Name);
  R.Fused.Outputs = {G.Values[Y].Name};
  R.Fused.Attrs = {
      stringAttr("activation",
                 activationName(Act ? Act->Act : Activation::None)),
      intAttr("gemm", Gemm)};
  if (Gemm) {
    R.Fused.Attrs.push_back(intAttr("transA", Mm.getInt("transA", 0)));
    R.Fused.Attrs.push_back(intAttr("transB", Mm.getInt("transB", 0)));
    R.Fused.Attrs.push_back(floatAttr("alpha", Mm.getFloat("alpha", 1.0)));
    // A bias taken from an Add is added once, as Gemm's C with beta 1.
    R.Fused.Attrs.push_back(
        floatAttr("beta", HasC ? Mm.getFloat("beta", 1.0) : 1.0));
  }
  if (C.commit(std::move(R)))
    ++C.Stats.MatMul;
}
} // namespace

void fusion::matchMatMul(MatchContext &C) {
  for (NodeId N = 0; N < C.G.Nodes.size(); ++N) {
    llvm::StringRef Op = C.G.Nodes[N].OpType;
    if ((Op == "MatMul" || Op == "Gemm") && !C.claimed(N))
      matchAt(C, N);
  }
}
