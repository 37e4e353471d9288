//===- TrainingPatterns.cpp - recognising decomposed fused ops ------------===//
//
// Patterns as torch.onnx.export (1.13, opset 17) writes them, each with what
// the PyTorch op it came from keeps for backward (derivatives.yaml of 1.13,
// checked by measurement; docs/training.md):
//
//   GELU (erf form):  d = x / sqrt(2)   (or x * 1/sqrt(2))
//                     y = (x * (erf(d) + 1)) * 0.5
//     PyTorch's gelu keeps x only.
//
//   LayerNorm before opset 17:
//     m = ReduceMean(x); s = x - m; v = ReduceMean(s ^ 2); r = Sqrt(v + eps)
//     y = s / r  [* gamma]  [+ beta]
//     PyTorch's native_layer_norm keeps x, mean and rstd (one value per
//     row each): here x, m and r.
//
//   SiLU / Swish:  y = x * Sigmoid(x)
//     F.silu / nn.SiLU keep x only (silu_backward(grad, self)); the
//     sigmoid is recomputed. Node by node, Sigmoid would keep its output and
//     Mul both operands: one x-sized tensor too many.
//
//   GroupNorm:  r = Reshape(x, [N, G, -1]); n = InstanceNormalization(r,
//     ones, zeros); y = Reshape(n, Shape(x)) [* gamma] [+ beta]
//     native_group_norm keeps x and per-(sample, group) mean and rstd, not
//     the normalised tensor that Mul(gamma) would keep node by node.
//
//   Dropout that is an identity (ratio 0, or training_mode false): PyTorch's
//     dropout returns its input when p == 0 or not training (no mask, no
//     copy); the exporter still writes the node.
//
// A match requires every intermediate to be used only inside the pattern,
// so fusing never hides a tensor that something else reads.
//
//===----------------------------------------------------------------------===//
#include "TrainingPatterns.h"
#include "oomplan/IR/OpTable.h"
#include <algorithm>
#include <optional>

using namespace oomplan;
using namespace oomplan::training;

namespace {
struct Matcher {
  const Graph &G;
  std::vector<bool> Taken;

  explicit Matcher(const Graph &G) : G(G), Taken(G.Nodes.size(), false) {}

  NodeId producer(ValueId V, llvm::StringRef Op) const {
    if (V == NoId || G.Values[V].Kind != ValueKind::NodeOutput)
      return NoId;
    NodeId N = G.Values[V].Producer;
    return G.Nodes[N].OpType == Op && !Taken[N] ? N : NoId;
  }
  // The only user of V, when it has that op and V is not a graph output.
  NodeId onlyUser(ValueId V, llvm::StringRef Op) const {
    const Value &Val = G.Values[V];
    if (Val.IsGraphOutput || Val.Users.size() != 1)
      return NoId;
    NodeId U = Val.Users[0];
    return G.Nodes[U].OpType == Op && !Taken[U] ? U : NoId;
  }
  bool isConstantLike(ValueId V) const {
    if (V == NoId)
      return false;
    const Value &Val = G.Values[V];
    return Val.Kind == ValueKind::Weight ||
           (Val.Kind == ValueKind::NodeOutput &&
            G.Nodes[Val.Producer].OpType == "Constant");
  }
  // For a binary node with V as one operand: the other operand.
  static ValueId other(const Node &N, ValueId V) {
    if (N.Inputs.size() != 2)
      return NoId;
    return N.Inputs[0] == V ? N.Inputs[1]
                            : (N.Inputs[1] == V ? N.Inputs[0] : NoId);
  }
  ValueId out(NodeId N) const { return G.Nodes[N].Outputs[0]; }

  std::optional<double> constScalar(ValueId V) const {
    return scalarConstant(G, V);
  }
  // A weight, or a view of one (Unsqueeze(gamma)): an affine parameter.
  bool isWeightLike(ValueId V) const {
    for (unsigned Depth = 0; V != NoId && Depth < 4; ++Depth) {
      const Value &Val = G.Values[V];
      if (Val.Kind == ValueKind::Weight)
        return true;
      if (Val.Kind != ValueKind::NodeOutput)
        return false;
      const Node &P = G.Nodes[Val.Producer];
      const ops::OpInfo *Op = ops::lookupOp(P.OpType);
      if (!Op || (Op->Alias != ops::AliasClass::View &&
                  Op->Alias != ops::AliasClass::ParamView))
        return false;
      V = P.input(0);
    }
    return false;
  }
  // Appends "[* gamma] [+ beta]" after Last to Grp; returns the last node.
  NodeId takeAffine(FusedGroup &Grp, NodeId Last, bool AllowViews) {
    for (const char *Op : {"Mul", "Add"}) {
      NodeId Next = onlyUser(out(Last), Op);
      if (Next == NoId)
        break;
      ValueId P = other(G.Nodes[Next], out(Last));
      if (P == NoId || (AllowViews ? !isWeightLike(P)
                                   : G.Values[P].Kind == ValueKind::NodeOutput))
        break;
      Grp.Nodes.push_back(Next);
      Grp.Inputs.push_back(P);
      Last = Next;
    }
    return Last;
  }

  void take(FusedGroup &Grp, std::vector<FusedGroup> &Out) {
    std::sort(Grp.Nodes.begin(), Grp.Nodes.end());
    for (NodeId N : Grp.Nodes)
      Taken[N] = true;
    Grp.Output = out(Grp.Nodes.back());
    Out.push_back(std::move(Grp));
  }

  bool matchGelu(NodeId Erf, std::vector<FusedGroup> &Out) {
    ValueId D = G.Nodes[Erf].input(0);
    NodeId Scale = producer(D, "Div");
    if (Scale == NoId)
      Scale = producer(D, "Mul");
    if (Scale == NoId || G.Values[D].Users.size() != 1)
      return false;
    ValueId X = G.Nodes[Scale].input(0);
    if (!isConstantLike(other(G.Nodes[Scale], X)))
      return false;
    NodeId Add = onlyUser(out(Erf), "Add");
    if (Add == NoId || !isConstantLike(other(G.Nodes[Add], out(Erf))))
      return false;
    NodeId Mul1 = onlyUser(out(Add), "Mul");
    if (Mul1 == NoId || other(G.Nodes[Mul1], out(Add)) != X)
      return false;
    NodeId Mul2 = onlyUser(out(Mul1), "Mul");
    if (Mul2 == NoId || !isConstantLike(other(G.Nodes[Mul2], out(Mul1))))
      return false;
    FusedGroup Grp;
    Grp.Pattern = "gelu-erf";
    Grp.Op = "Gelu";
    Grp.Nodes = {Scale, Erf, Add, Mul1, Mul2};
    Grp.Inputs = {X};
    Grp.Saved = {X};
    take(Grp, Out);
    return true;
  }

  // Starts at the Sqrt; walks up to x and down to the optional affine.
  bool matchLayerNorm(NodeId Sqrt, std::vector<FusedGroup> &Out) {
    NodeId AddEps = producer(G.Nodes[Sqrt].input(0), "Add");
    if (AddEps == NoId || G.Values[out(AddEps)].Users.size() != 1)
      return false;
    const Node &AE = G.Nodes[AddEps];
    ValueId VarV = isConstantLike(AE.input(1)) ? AE.input(0) : AE.input(1);
    NodeId Var = producer(VarV, "ReduceMean");
    if (Var == NoId || G.Values[VarV].Users.size() != 1)
      return false;
    NodeId Pow = producer(G.Nodes[Var].input(0), "Pow");
    if (Pow == NoId || G.Values[out(Pow)].Users.size() != 1)
      return false;
    ValueId S = G.Nodes[Pow].input(0);
    NodeId Sub = producer(S, "Sub");
    if (Sub == NoId || G.Values[S].Users.size() != 2)
      return false;
    ValueId X = G.Nodes[Sub].input(0);
    NodeId Mean = producer(G.Nodes[Sub].input(1), "ReduceMean");
    if (Mean == NoId || G.Nodes[Mean].input(0) != X ||
        G.Values[out(Mean)].Users.size() != 1)
      return false;
    NodeId Div = onlyUser(out(Sqrt), "Div");
    if (Div == NoId || G.Nodes[Div].input(0) != S)
      return false;
    FusedGroup Grp;
    Grp.Pattern = "layernorm-decomposed";
    Grp.Op = "LayerNormalization";
    Grp.Nodes = {Mean, Sub, Pow, Var, AddEps, Sqrt, Div};
    Grp.Inputs = {X};
    Grp.Saved = {X, out(Mean), out(Sqrt)};
    // The affine part, when the exporter kept it next to the normalisation.
    takeAffine(Grp, Div, /*AllowViews=*/false);
    take(Grp, Out);
    return true;
  }

  // x * Sigmoid(x), the sigmoid read by that Mul only.
  bool matchSiLU(NodeId Sig, std::vector<FusedGroup> &Out) {
    ValueId X = G.Nodes[Sig].input(0);
    NodeId Mul = onlyUser(out(Sig), "Mul");
    if (X == NoId || Mul == NoId || other(G.Nodes[Mul], out(Sig)) != X)
      return false;
    FusedGroup Grp;
    Grp.Pattern = "silu";
    Grp.Op = "SiLU";
    Grp.Nodes = {Sig, Mul};
    Grp.Inputs = {X};
    Grp.Saved = {X};
    take(Grp, Out);
    return true;
  }

  // Reshape -> InstanceNormalization(ones, zeros) -> Reshape [-> affine].
  bool matchGroupNorm(NodeId In, std::vector<FusedGroup> &Out) {
    const Node &IN = G.Nodes[In];
    NodeId R1 = producer(IN.input(0), "Reshape");
    if (R1 == NoId || G.Values[IN.input(0)].Users.size() != 1 ||
        !isConstantLike(IN.input(1)) || !isConstantLike(IN.input(2)))
      return false;
    NodeId R2 = onlyUser(out(In), "Reshape");
    if (R2 == NoId)
      return false;
    FusedGroup Grp;
    Grp.Pattern = "groupnorm";
    Grp.Op = "GroupNorm";
    ValueId X = G.Nodes[R1].input(0);
    Grp.Nodes = {R1, In, R2};
    Grp.Inputs = {X};
    Grp.Saved = {X};
    Grp.AuxOf = In;
    takeAffine(Grp, R2, /*AllowViews=*/true);
    take(Grp, Out);
    return true;
  }

  // Dropout whose ratio is the constant 0 or whose training_mode is absent
  // or the constant false.
  bool matchIdentityDropout(NodeId D, std::vector<FusedGroup> &Out) {
    const Node &Nd = G.Nodes[D];
    std::optional<double> Ratio = Nd.input(1) == NoId
                                      ? std::optional<double>(0.5)
                                      : constScalar(Nd.input(1));
    std::optional<double> Train = Nd.input(2) == NoId
                                      ? std::optional<double>(0)
                                      : constScalar(Nd.input(2));
    bool IsIdentity = (Ratio && *Ratio == 0) || (Train && *Train == 0);
    ValueId X = Nd.input(0);
    if (!IsIdentity || X == NoId || Nd.Outputs.empty() || Nd.Outputs[0] == NoId)
      return false;
    FusedGroup Grp;
    Grp.Pattern = "dropout-identity";
    Grp.Op = "Identity";
    Grp.Nodes = {D};
    Grp.Inputs = {X};
    Grp.Identity = true;
    take(Grp, Out);
    return true;
  }
};
} // namespace

std::vector<FusedGroup> training::findFusedGroups(const Graph &G) {
  Matcher M(G);
  std::vector<FusedGroup> Out;
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    const Node &Nd = G.Nodes[N];
    if (M.Taken[N])
      continue;
    if (Nd.OpType == "Erf")
      M.matchGelu(N, Out);
    else if (Nd.OpType == "Sqrt")
      M.matchLayerNorm(N, Out);
    else if (Nd.OpType == "Sigmoid")
      M.matchSiLU(N, Out);
    else if (Nd.OpType == "InstanceNormalization")
      M.matchGroupNorm(N, Out);
    else if (Nd.OpType == "Dropout")
      M.matchIdentityDropout(N, Out);
  }
  return Out;
}

std::optional<double> training::scalarConstant(const Graph &G, ValueId V) {
  if (V == NoId)
    return std::nullopt;
  const Value &Val = G.Values[V];
  const TensorData *D = Val.Data.get();
  if (!D && Val.Kind == ValueKind::NodeOutput &&
      G.Nodes[Val.Producer].OpType == "Constant")
    if (const Attribute *A = G.Nodes[Val.Producer].attr("value"))
      D = A->T.get();
  if (!D || D->numElements() != 1)
    return std::nullopt;
  if (!D->Floats.empty())
    return D->Floats[0];
  if (!D->Ints.empty())
    return double(D->Ints[0]);
  return std::nullopt;
}
