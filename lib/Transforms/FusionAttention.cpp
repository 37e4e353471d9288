//===- FusionAttention.cpp - the attention pattern -> OomplanAttention ----===//
//
// Matched from each Softmax over the last axis, outward:
//
//   Q [-> Mul/Div by c] -> MatMul(Q, K^T)     K^T: Transpose(K) of the last
//     -> Mul/Div by c (any number)                two axes (dropped,
//     -> [Add bias]                               k_transposed = 0), or any
//     -> [Where(mask, fill, s) or (mask, s, fill)] tensor (k_transposed = 1)
//     -> Softmax(last axis) -> [Dropout in inference] -> MatMul(., V)
//
// which is what torch.onnx makes of nn.MultiheadAttention (Q pre-divided by
// sqrt(d), baddbmm's Mul by 1 and Add of the mask), of HuggingFace-style
// modules (Div of the scores, Add of the extended mask) and of causal masks
// through Where. The heads may be reshaped before or after: the fused op
// takes the MatMuls' batch dims as they are. Every intermediate must be read
// only by the next node of the pattern. Scale, bias and mask must come in
// the contract's order (scale, then bias, then mask), which these exporters
// all use; another order is left unfused.
//
//===----------------------------------------------------------------------===//
#include "FusionMatch.h"
#include "oomplan/IR/FusedOps.h"
#include "oomplan/Schedule/Schedule.h"
#include <cmath>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::fusion;

namespace {
struct Scores {
  NodeId MatMul = NoId;
  double Scale = 1;
  std::vector<NodeId> Nodes; // the scale nodes and the MatMul
};

struct AttentionMatch {
  Scores S;
  ValueId Bias = NoId, Mask = NoId;
  double Fill = 0;
  int FillWhere = 1;
  std::vector<NodeId> Nodes;
};

// A Mul or Div of V by a scalar constant: the factor, and the other input.
std::optional<std::pair<double, ValueId>> scaleOf(const MatchContext &C,
                                                  NodeId N) {
  const Node &Nd = C.G.Nodes[N];
  if ((Nd.OpType != "Mul" && Nd.OpType != "Div") || Nd.Inputs.size() != 2)
    return std::nullopt;
  for (unsigned I : {1u, 0u}) {
    if (Nd.OpType == "Div" && I == 0)
      break; // c / v is not a scale
    std::optional<double> K = C.scalarConstant(Nd.Inputs[I]);
    if (!K || *K == 0 || !std::isfinite(*K))
      continue;
    ValueId Other = Nd.Inputs[1 - I];
    if (!C.sameDims(Nd.Outputs[0], Other))
      return std::nullopt; // a constant of rank > the operand's broadcasts
    return std::make_pair(Nd.OpType == "Div" ? 1 / *K : *K, Other);
  }
  return std::nullopt;
}

// Walks from V (read only by User) back through scales to the MatMul.
std::optional<Scores> traceScores(const MatchContext &C, ValueId V,
                                  NodeId User) {
  Scores S;
  for (unsigned Depth = 0; Depth < 4; ++Depth) {
    if (!C.onlyUsedBy(V, User))
      return std::nullopt;
    NodeId P = C.producer(V);
    if (P == NoId)
      return std::nullopt;
    S.Nodes.push_back(P);
    if (C.G.Nodes[P].OpType == "MatMul") {
      S.MatMul = P;
      return S;
    }
    auto K = scaleOf(C, P);
    if (!K)
      return std::nullopt;
    S.Scale *= K->first;
    V = K->second;
    User = P;
  }
  return std::nullopt;
}

// Softmax input -> scores, through an optional Where and an optional Add.
std::optional<AttentionMatch> traceChain(const MatchContext &C, ValueId V,
                                         NodeId User) {
  AttentionMatch M;
  NodeId P = C.producer(V, "Where");
  if (P != NoId && C.onlyUsedBy(V, User)) {
    const Node &W = C.G.Nodes[P];
    ValueId Cond = W.input(0);
    for (unsigned I : {1u, 2u}) {
      std::optional<double> Fill = C.scalarConstant(W.input(I));
      const ValueShape *CS = C.shape(Cond);
      if (!Fill || !CS || CS->Type != ElementType::Bool ||
          !C.sameDims(W.Outputs[0], W.input(3 - I)))
        continue;
      M.Mask = Cond;
      M.Fill = *Fill;
      M.FillWhere = I == 1 ? 1 : 0; // Where(mask, fill, s): true gets fill
      M.Nodes.push_back(P);
      V = W.input(3 - I);
      User = P;
      break;
    }
    if (M.Mask == NoId)
      return std::nullopt;
  }
  P = C.producer(V, "Add");
  if (P != NoId && C.onlyUsedBy(V, User)) {
    const Node &A = C.G.Nodes[P];
    for (unsigned I : {0u, 1u}) {
      ValueId Chain = A.input(I), Bias = A.input(1 - I);
      if (Chain == Bias || !C.sameDims(A.Outputs[0], Chain) ||
          !C.isFloat32(Bias))
        continue;
      if (auto S = traceScores(C, Chain, P)) {
        M.S = std::move(*S);
        M.Bias = Bias;
        M.Nodes.push_back(P);
        return M;
      }
    }
  }
  if (auto S = traceScores(C, V, User)) {
    M.S = std::move(*S);
    return M;
  }
  return std::nullopt;
}

bool lastAxisSoftmax(const MatchContext &C, const Node &Sm) {
  const ValueShape *S = C.shape(Sm.Inputs[0]);
  if (!S || S->Dims.size() < 2)
    return false;
  int64_t Rank = static_cast<int64_t>(S->Dims.size());
  // Before opset 13 the axis flattens to 2-D; at rank - 1 that is the same
  // last-axis softmax.
  int64_t Axis = Sm.getInt("axis", C.G.defaultOpset() >= 13 ? -1 : 1);
  if (Axis < 0)
    Axis += Rank;
  return Axis == Rank - 1;
}

bool swapsLastTwo(const Node &T, size_t Rank) {
  std::optional<std::vector<int64_t>> Perm = T.getInts("perm");
  if (!Perm || Perm->size() != Rank || Rank < 2)
    return false;
  for (size_t I = 0; I + 2 < Rank; ++I)
    if ((*Perm)[I] != static_cast<int64_t>(I))
      return false;
  return (*Perm)[Rank - 2] == int64_t(Rank - 1) &&
         (*Perm)[Rank - 1] == int64_t(Rank - 2);
}

void matchAt(MatchContext &C, NodeId SmId) {
  const Graph &G = C.G;
  const Node &Sm = G.Nodes[SmId];
  if (Sm.Inputs.empty() || Sm.Outputs.size() != 1 ||
      !C.isFloat32(Sm.Outputs[0]) || !lastAxisSoftmax(C, Sm))
    return;
  std::vector<NodeId> Nodes = {SmId};
  // Softmax -> [Dropout] -> MatMul(P, V).
  ValueId P = Sm.Outputs[0];
  if (G.Values[P].Users.size() == 1 &&
      G.Nodes[G.Values[P].Users[0]].OpType == "Dropout") {
    NodeId D = G.Values[P].Users[0];
    const Node &Dn = G.Nodes[D];
    // In inference Dropout is the identity; its mask must be unread.
    bool MaskUnused = Dn.Outputs.size() < 2 || Dn.Outputs[1] == NoId ||
                      (G.Values[Dn.Outputs[1]].Users.empty() &&
                       !G.Values[Dn.Outputs[1]].IsGraphOutput);
    // The training estimate also takes a training-mode Dropout: flash
    // attention draws its mask from a saved RNG state, tile by tile, in the
    // forward and again in the backward, and keeps no mask.
    bool Identity = isViewOp(G, Dn) || C.Opts.AttentionLogSumExp;
    if (C.claimed(D) || !Identity || !MaskUnused || !C.onlyUsedBy(P, D) ||
        Dn.Inputs[0] != P)
      return;
    Nodes.push_back(D);
    P = Dn.Outputs[0];
  }
  if (G.Values[P].Users.size() != 1)
    return;
  NodeId M2 = G.Values[P].Users[0];
  const Node &Mm2 = G.Nodes[M2];
  if (C.claimed(M2) || Mm2.OpType != "MatMul" || Mm2.input(0) != P ||
      !C.onlyUsedBy(P, M2) || !C.isFloat32(Mm2.Outputs[0]))
    return;
  Nodes.push_back(M2);
  std::optional<AttentionMatch> M = traceChain(C, Sm.Inputs[0], SmId);
  if (!M)
    return;
  const Node &Mm1 = G.Nodes[M->S.MatMul];
  ValueId Q = Mm1.input(0), K = Mm1.input(1), V = Mm2.input(1);
  for (ValueId T : {Q, K, V}) {
    const ValueShape *S = C.shape(T);
    if (!S || S->Dims.size() < 2 || S->Type != ElementType::Float)
      return;
  }
  llvm::append_range(Nodes, M->Nodes);
  llvm::append_range(Nodes, M->S.Nodes);
  double Scale = M->S.Scale;
  // Q pre-scaled (nn.MultiheadAttention divides Q by sqrt(d)).
  if (NodeId QP = C.producer(Q); QP != NoId && C.onlyUsedBy(Q, M->S.MatMul))
    if (auto K2 = scaleOf(C, QP)) {
      Scale *= K2->first;
      Q = K2->second;
      Nodes.push_back(QP);
    }
  int KTransposed = 1;
  if (NodeId T = C.producer(K, "Transpose");
      T != NoId && C.onlyUsedBy(K, M->S.MatMul) &&
      swapsLastTwo(G.Nodes[T], C.shape(K)->Dims.size())) {
    K = G.Nodes[T].Inputs[0];
    KTransposed = 0;
    Nodes.push_back(T);
  }
  Rewrite R;
  R.Removed = std::move(Nodes);
  R.Sink = M2;
  R.Fused.Name = Sm.Name.empty() ? Mm2.Name : Sm.Name;
  R.Fused.OpType = fused::AttentionOp.str();
  auto Name = [&](ValueId V) {
    return V == NoId ? std::string() : G.Values[V].Name;
  };
  R.Fused.Inputs = {Name(Q), Name(K), Name(V), Name(M->Bias), Name(M->Mask)};
  while (!R.Fused.Inputs.empty() && R.Fused.Inputs.back().empty())
    R.Fused.Inputs.pop_back();
  R.Fused.Outputs = {Name(Mm2.Outputs[0])};
  if (C.Opts.AttentionLogSumExp) {
    // A name no value of the model has (GraphBuilder rejects duplicates).
    std::string LSE = Name(Mm2.Outputs[0]) + ":logsumexp";
    while (G.findValue(LSE) != NoId)
      LSE += "_";
    R.Fused.Outputs.push_back(LSE);
  }
  R.Fused.Attrs = {floatAttr("scale", Scale),
                   intAttr("k_transposed", KTransposed)};
  if (M->Mask != NoId) {
    R.Fused.Attrs.push_back(floatAttr("mask_fill", M->Fill));
    R.Fused.Attrs.push_back(intAttr("mask_fill_where", M->FillWhere));
  }
  if (C.commit(std::move(R)))
    ++C.Stats.Attention;
}
} // namespace

void fusion::matchAttention(MatchContext &C) {
  for (NodeId N = 0; N < C.G.Nodes.size(); ++N)
    if (C.G.Nodes[N].OpType == "Softmax" && !C.claimed(N))
      matchAt(C, N);
}
