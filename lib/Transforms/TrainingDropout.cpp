//===- TrainingDropout.cpp - dropout an eval-mode export lost -------------===//
//
// The sites are read from the graph's structure only: an embedding is a
// Gather of a weight; a residual branch is a product (MatMul, Gemm; through
// a bias Add of a weight) added to a tensor that is not a weight.
//
//===----------------------------------------------------------------------===//
#include "TrainingDropout.h"

using namespace oomplan;
using namespace oomplan::training;

namespace {
struct SiteFinder {
  const Graph &G;

  NodeId producer(ValueId V) const {
    if (V == NoId || G.Values[V].Kind != ValueKind::NodeOutput)
      return NoId;
    return G.Values[V].Producer;
  }
  bool isWeight(ValueId V) const {
    return V != NoId && G.Values[V].Kind == ValueKind::Weight;
  }
  // V is a lookup of a weight table (through views).
  bool isEmbedding(ValueId V) const {
    for (unsigned Depth = 0; Depth < 4; ++Depth) {
      NodeId P = producer(V);
      if (P == NoId)
        return false;
      const Node &N = G.Nodes[P];
      if (N.OpType == "Gather")
        return isWeight(N.input(0));
      if (N.OpType != "Unsqueeze" && N.OpType != "Reshape" &&
          N.OpType != "Expand")
        return false;
      V = N.input(0);
    }
    return false;
  }
  // A weight, or a view of one (Transpose(W) of a Linear).
  bool isWeightOrView(ValueId V) const {
    if (isWeight(V))
      return true;
    NodeId P = producer(V);
    return P != NoId &&
           (G.Nodes[P].OpType == "Transpose" ||
            G.Nodes[P].OpType == "Reshape") &&
           isWeight(G.Nodes[P].input(0));
  }
  // A Linear: a product with a weight operand (not attention's q @ k^T).
  bool isLinear(NodeId P) const {
    const Node &N = G.Nodes[P];
    if (N.OpType != "MatMul" && N.OpType != "Gemm")
      return false;
    for (ValueId In : N.Inputs)
      if (In != NoId && isWeightOrView(In))
        return true;
    return false;
  }
  // V is a Linear's output, or a Linear's plus a bias weight.
  bool isProduct(ValueId V) const {
    NodeId P = producer(V);
    if (P == NoId)
      return false;
    if (isLinear(P))
      return true;
    const Node &N = G.Nodes[P];
    if (N.OpType != "Add" || N.Inputs.size() != 2)
      return false;
    for (unsigned I : {0u, 1u})
      if (isWeight(N.Inputs[1 - I])) {
        NodeId Q = producer(N.Inputs[I]);
        return Q != NoId && isLinear(Q);
      }
    return false;
  }
};
} // namespace

std::vector<DropoutSite> training::findDropoutSites(const Graph &G) {
  SiteFinder F{G};
  std::vector<DropoutSite> Out;
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    const Node &Nd = G.Nodes[N];
    if (Nd.OpType != "Add" || Nd.Inputs.size() != 2 || Nd.Outputs.empty() ||
        Nd.Outputs[0] == NoId)
      continue;
    ValueId A = Nd.Inputs[0], B = Nd.Inputs[1];
    if (A == NoId || B == NoId || F.isWeight(A) || F.isWeight(B))
      continue;
    if (F.isEmbedding(A) && F.isEmbedding(B)) {
      Out.push_back({N, Nd.Outputs[0]}); // dropped after the sum
      continue;
    }
    // A residual: one side a product (the branch), the other not the same
    // product's input chain (a bias add is not a residual).
    bool PA = F.isProduct(A), PB = F.isProduct(B);
    if (PA != PB)
      Out.push_back({N, PA ? A : B});
  }
  return Out;
}

unsigned training::countDropouts(const Graph &G) {
  unsigned N = 0;
  for (const Node &Nd : G.Nodes)
    N += Nd.OpType == "Dropout";
  return N;
}
