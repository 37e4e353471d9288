//===- TrainingPatterns.cpp - recognising decomposed fused ops ------------===//
//
// Two patterns, as torch.onnx.export (1.13) writes them:
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
// A match requires every intermediate to be used only inside the pattern,
// so fusing never hides a tensor that something else reads.
//
//===----------------------------------------------------------------------===//
#include "TrainingPatterns.h"
#include <algorithm>

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
    NodeId Last = Div;
    for (const char *Op : {"Mul", "Add"}) {
      NodeId Next = onlyUser(out(Last), Op);
      if (Next == NoId)
        break;
      ValueId P = other(G.Nodes[Next], out(Last));
      if (P == NoId || G.Values[P].Kind == ValueKind::NodeOutput)
        break;
      Grp.Nodes.push_back(Next);
      Grp.Inputs.push_back(P);
      Last = Next;
    }
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
    if (Nd.OpType == "Erf" && !M.Taken[N])
      M.matchGelu(N, Out);
    else if (Nd.OpType == "Sqrt" && !M.Taken[N])
      M.matchLayerNorm(N, Out);
  }
  return Out;
}
