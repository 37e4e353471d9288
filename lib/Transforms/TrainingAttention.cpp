//===- TrainingAttention.cpp - attention blocks of a training graph -------===//
//
// Matched from each Softmax over the last axis, outward:
//
//   [Mul q by s] [Mul k^T by s]       (s = Sqrt(..): the SDPA export)
//   MatMul(q, k^T) -> {Mul, Div by a scalar; Add a bias or mask;
//   Where(mask, ., fill)}* -> Softmax -> [Dropout] -> MatMul(., v)
//
// Every intermediate must be read by the next node only, so that no other
// node needs a value the fused kernel does not make.
//
//===----------------------------------------------------------------------===//
#include "TrainingAttention.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::training;

namespace {
struct AttentionMatcher {
  const Graph &G;
  const ShapeInfo &Shapes;

  NodeId producer(ValueId V) const {
    if (V == NoId || G.Values[V].Kind != ValueKind::NodeOutput)
      return NoId;
    return G.Values[V].Producer;
  }
  // V is read by node U only and is not a graph output.
  bool onlyFeeds(ValueId V, NodeId U) const {
    const Value &Val = G.Values[V];
    return !Val.IsGraphOutput && Val.Users.size() == 1 && Val.Users[0] == U;
  }
  size_t rank(ValueId V) const { return Shapes.Values[V].Dims.size(); }
  // One element: a rank-0 value or one whose dims are all the constant 1.
  bool isScalar(ValueId V) const {
    if (V == NoId || V >= Shapes.Values.size())
      return false;
    for (const SymExpr &D : Shapes.Values[V].Dims)
      if (D.getConstant() != std::optional<int64_t>(1))
        return false;
    return true;
  }
  // The Softmax normalises the last axis.
  bool lastAxis(const Node &N) const {
    ValueId In = N.input(0);
    if (In == NoId || rank(In) == 0)
      return false;
    int64_t R = static_cast<int64_t>(rank(In));
    int64_t A = N.getInt("axis", -1);
    return A == -1 || A == R - 1;
  }
  // V is a MatMul's output, or reaches one through Depth scales and masks.
  bool reachesProduct(ValueId V, unsigned Depth) const {
    NodeId P = producer(V);
    if (P == NoId)
      return false;
    if (G.Nodes[P].OpType == "MatMul")
      return true;
    if (Depth == 0)
      return false;
    ValueId In = chainInput(P);
    return In != NoId && reachesProduct(In, Depth - 1);
  }
  // A node between the product and the Softmax: a scale by a scalar, a bias
  // or mask added, a masked fill. Returns the chain input it reads.
  ValueId chainInput(NodeId N) const {
    const Node &Nd = G.Nodes[N];
    if (Nd.Inputs.size() < 2)
      return NoId;
    if (Nd.OpType == "Mul" || Nd.OpType == "Div") {
      if (isScalar(Nd.Inputs[1]))
        return Nd.Inputs[0];
      if (Nd.OpType == "Mul" && isScalar(Nd.Inputs[0]))
        return Nd.Inputs[1];
      return NoId;
    }
    if (Nd.OpType == "Add") {
      // The operand that leads back to the product is the scores; the
      // other a bias or mask that broadcasts.
      return reachesProduct(Nd.Inputs[1], 4) && !reachesProduct(Nd.Inputs[0], 4)
                 ? Nd.Inputs[1]
                 : Nd.Inputs[0];
    }
    if (Nd.OpType == "Where" && Nd.Inputs.size() == 3)
      return isScalar(Nd.Inputs[1]) ? Nd.Inputs[2] : Nd.Inputs[1];
    return NoId;
  }
  // q or k^T as the product reads it: through a Mul by Sqrt(scale) (the
  // SDPA export) when that Mul feeds the product only.
  ValueId unscaled(ValueId V, NodeId MatMul, std::vector<NodeId> &Nodes,
                   std::vector<ValueId> &Interior, bool &SqrtScaled) const {
    NodeId P = producer(V);
    SqrtScaled = false;
    if (P == NoId || !onlyFeeds(V, MatMul))
      return V;
    const Node &Nd = G.Nodes[P];
    if (Nd.OpType != "Mul" || Nd.Inputs.size() != 2)
      return V;
    for (unsigned I : {1u, 0u}) {
      NodeId S = producer(Nd.Inputs[I]);
      if (!isScalar(Nd.Inputs[I]))
        continue;
      SqrtScaled = S != NoId && G.Nodes[S].OpType == "Sqrt";
      Nodes.push_back(P);
      Interior.push_back(V);
      return Nd.Inputs[1 - I];
    }
    return V;
  }
  // The tensor V is a Slice or Gather of, through views and scalar scales.
  ValueId packedSource(ValueId V) const {
    for (unsigned Depth = 0; Depth < 8 && V != NoId; ++Depth) {
      NodeId P = producer(V);
      if (P == NoId)
        return NoId;
      const Node &Nd = G.Nodes[P];
      llvm::StringRef Op = Nd.OpType;
      if (Op == "Slice" || Op == "Gather")
        return Nd.input(0);
      if (Op == "Reshape" || Op == "Transpose" || Op == "Squeeze" ||
          Op == "Unsqueeze" || Op == "Flatten" || Op == "Identity")
        V = Nd.input(0);
      else if ((Op == "Mul" || Op == "Div") && isScalar(Nd.input(1)))
        V = Nd.input(0);
      else
        return NoId;
    }
    return NoId;
  }

  std::optional<AttentionBlock> match(NodeId SoftmaxNode) const;
};

std::optional<AttentionBlock>
AttentionMatcher::match(NodeId SoftmaxNode) const {
  const Node &Sm = G.Nodes[SoftmaxNode];
  if (!lastAxis(Sm) || Sm.Outputs.empty() || Sm.Outputs[0] == NoId)
    return std::nullopt;
  AttentionBlock B;
  std::vector<NodeId> Nodes{SoftmaxNode};
  // Backward from the Softmax to the q @ k^T product.
  ValueId V = Sm.Inputs[0];
  NodeId User = SoftmaxNode;
  NodeId QK = NoId;
  for (unsigned Depth = 0; Depth < 6; ++Depth) {
    NodeId P = producer(V);
    if (P == NoId || !onlyFeeds(V, User))
      return std::nullopt;
    B.Interior.push_back(V);
    Nodes.push_back(P);
    if (G.Nodes[P].OpType == "MatMul") {
      QK = P;
      break;
    }
    V = chainInput(P);
    if (V == NoId)
      return std::nullopt;
    User = P;
  }
  if (QK == NoId)
    return std::nullopt;
  B.Scores = G.Nodes[QK].Outputs[0];
  // Forward from the Softmax to the product with v.
  ValueId Probs = Sm.Outputs[0];
  B.Interior.push_back(Probs);
  const Value &PV = G.Values[Probs];
  if (PV.IsGraphOutput || PV.Users.size() != 1)
    return std::nullopt;
  NodeId Next = PV.Users[0];
  if (G.Nodes[Next].OpType == "Dropout") {
    const Node &D = G.Nodes[Next];
    for (size_t I = 1; I < D.Outputs.size(); ++I)
      if (D.Outputs[I] != NoId && !G.Values[D.Outputs[I]].Users.empty())
        return std::nullopt; // the mask is read: keep the ops as they are
    ValueId DOut = D.Outputs[0];
    if (G.Values[DOut].IsGraphOutput || G.Values[DOut].Users.size() != 1)
      return std::nullopt;
    Nodes.push_back(Next);
    B.Interior.push_back(DOut);
    B.HasDropout = true;
    Next = G.Values[DOut].Users[0];
  }
  const Node &AV = G.Nodes[Next];
  if (AV.OpType != "MatMul" || AV.Inputs.size() != 2 ||
      AV.Inputs[1] == AV.Inputs[0] || AV.Outputs[0] == NoId ||
      producer(AV.Inputs[0]) == NoId ||
      std::find(Nodes.begin(), Nodes.end(), producer(AV.Inputs[0])) ==
          Nodes.end())
    return std::nullopt;
  Nodes.push_back(Next);
  const Node &QKNode = G.Nodes[QK];
  bool QSqrt = false, KSqrt = false;
  ValueId Q = unscaled(QKNode.Inputs[0], QK, Nodes, B.Interior, QSqrt);
  ValueId K = unscaled(QKNode.Inputs[1], QK, Nodes, B.Interior, KSqrt);
  ValueId Vv = AV.Inputs[1];
  if (QSqrt && KSqrt)
    B.Evidence = SDPAEvidence::ExportedSDPA;
  else if (ValueId Src = packedSource(Q);
           Src != NoId && Src == packedSource(K) && Src == packedSource(Vv))
    B.Evidence = SDPAEvidence::PackedMHA;
  std::sort(Nodes.begin(), Nodes.end());
  B.Group.Pattern = "attention";
  B.Group.Op = "ScaledDotProductAttention";
  B.Group.Nodes = std::move(Nodes);
  B.Group.Inputs = {Q, K, Vv};
  B.Group.Output = AV.Outputs[0];
  B.Group.Saved = {Q, K, Vv, AV.Outputs[0]};
  return B;
}
} // namespace

std::vector<AttentionBlock>
training::findAttentionBlocks(const Graph &G, const ShapeInfo &Shapes) {
  AttentionMatcher M{G, Shapes};
  std::vector<AttentionBlock> Out;
  std::vector<bool> Taken(G.Nodes.size(), false);
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    if (G.Nodes[N].OpType != "Softmax" || Taken[N])
      continue;
    std::optional<AttentionBlock> B = M.match(N);
    if (!B)
      continue;
    bool Overlaps = false;
    for (NodeId X : B->Group.Nodes)
      Overlaps |= Taken[X];
    if (Overlaps)
      continue;
    for (NodeId X : B->Group.Nodes)
      Taken[X] = true;
    Out.push_back(std::move(*B));
  }
  return Out;
}
