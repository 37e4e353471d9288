//===- Fusion.cpp - running the pattern families and rebuilding the graph -===//
//
// The families match on the input graph (attention first: its Softmax chain
// would otherwise be taken apart by nothing else, but its MatMuls must not be
// claimed as epilogue roots; then matmul epilogues; then a pointwise conv
// with its depthwise one; then convs). The graph is
// then rebuilt through GraphBuilder from the rewrites: every node that no
// rewrite removed is copied, each fused node is emitted where its pattern's
// last node was, and weights only the removed nodes read (scale constants)
// are dropped, so the result passes the same checks as an imported model.
//
//===----------------------------------------------------------------------===//
#include "FusionMatch.h"
#include "oomplan/IR/FusedOps.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/STLExtras.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::fusion;

// Nodes of an If branch fuse only with nodes of the same branch: the fused
// node runs under their common guards (IR/Graph.h).
static bool sameGuards(const Node &A, const Node &B) {
  if (A.Guards.size() != B.Guards.size())
    return false;
  for (size_t I = 0; I < A.Guards.size(); ++I)
    if (A.Guards[I].Cond != B.Guards[I].Cond ||
        A.Guards[I].WhenTrue != B.Guards[I].WhenTrue)
      return false;
  return true;
}

bool MatchContext::commit(Rewrite R) {
  for (NodeId N : R.Removed)
    if (Claimed[N] || !sameGuards(G.Nodes[N], G.Nodes[R.Sink]))
      return false;
  for (const Guard &Gd : G.Nodes[R.Sink].Guards)
    R.Fused.Guards.push_back({G.Values[Gd.Cond].Name, Gd.WhenTrue});
  for (NodeId N : R.Removed)
    Claimed[N] = true;
  Stats.NodesRemoved += R.Removed.size();
  Rewrites.push_back(std::move(R));
  return true;
}

NodeId MatchContext::producer(ValueId V, StringRef Op) const {
  if (V == NoId || G.Values[V].Kind != ValueKind::NodeOutput)
    return NoId;
  NodeId P = G.Values[V].Producer;
  if (P == NoId || Claimed[P] || (!Op.empty() && G.Nodes[P].OpType != Op))
    return NoId;
  return P;
}

bool MatchContext::onlyUsedBy(ValueId V, NodeId User) const {
  const Value &Val = G.Values[V];
  if (Val.IsGraphOutput || Val.Users.size() != 1 || Val.Users[0] != User)
    return false;
  // Read once: a node reading V twice (x * x) is one user but two reads,
  // which a pattern that consumes V once does not cover.
  return llvm::count(G.Nodes[User].Inputs, V) == 1;
}

bool MatchContext::usedOnlyWithin(ValueId V, ArrayRef<NodeId> Nodes) const {
  const Value &Val = G.Values[V];
  if (Val.IsGraphOutput)
    return false;
  return llvm::all_of(Val.Users,
                      [&](NodeId U) { return llvm::is_contained(Nodes, U); });
}

std::optional<double> MatchContext::scalarConstant(ValueId V) const {
  if (V == NoId)
    return std::nullopt;
  const Value &Val = G.Values[V];
  // A Cast or Identity of a scalar constant (training exports cast
  // baddbmm's alpha); a cast to an integer type would round, so only float
  // targets pass.
  if (Val.Kind == ValueKind::NodeOutput && Val.Producer != NoId) {
    const Node &P = G.Nodes[Val.Producer];
    int64_t To = P.getInt("to", 0); // FLOAT, FLOAT16, DOUBLE, BFLOAT16
    if (P.OpType == "Identity" ||
        (P.OpType == "Cast" && (To == 1 || To == 10 || To == 11 || To == 16)))
      return scalarConstant(P.input(0));
  }
  std::shared_ptr<const TensorData> D;
  if (Val.Kind == ValueKind::Weight)
    D = Val.Data;
  else if (Val.Kind == ValueKind::NodeOutput && Val.Producer != NoId &&
           G.Nodes[Val.Producer].OpType == "Constant")
    if (const Attribute *A = G.Nodes[Val.Producer].attr("value"))
      D = A->T;
  if (!D || D->numElements() != 1)
    return std::nullopt;
  if (D->Floats.size() == 1)
    return D->Floats[0];
  if (D->Ints.size() == 1)
    return static_cast<double>(D->Ints[0]);
  return std::nullopt;
}

const ValueShape *MatchContext::shape(ValueId V) const {
  if (V == NoId || V >= Shapes.Values.size() || !Shapes.Values[V].Known ||
      Shapes.Values[V].UpperBound)
    return nullptr;
  return &Shapes.Values[V];
}

bool MatchContext::sameDims(ValueId A, ValueId B) const {
  const ValueShape *SA = shape(A), *SB = shape(B);
  return SA && SB && SA->Dims == SB->Dims;
}

bool MatchContext::isFloat32(ValueId V) const {
  const ValueShape *S = shape(V);
  return S && S->Type == ElementType::Float;
}

Attribute fusion::floatAttr(StringRef Name, double V) {
  Attribute A;
  A.Name = Name.str();
  A.Kind = AttrKind::Float;
  A.F = V;
  return A;
}

Attribute fusion::intAttr(StringRef Name, int64_t V) {
  Attribute A;
  A.Name = Name.str();
  A.Kind = AttrKind::Int;
  A.I = V;
  return A;
}

Attribute fusion::stringAttr(StringRef Name, StringRef V) {
  Attribute A;
  A.Name = Name.str();
  A.Kind = AttrKind::String;
  A.S = V.str();
  return A;
}

static ValueDesc describe(const Value &V) {
  ValueDesc D;
  D.Name = V.Name;
  D.Type = V.Type;
  D.HasShape = V.HasDeclaredShape;
  D.Shape = V.Shape;
  return D;
}

static NodeDesc copyNode(const Graph &G, const Node &N) {
  NodeDesc D;
  D.Name = N.Name;
  D.OpType = N.OpType;
  D.Domain = N.Domain;
  for (ValueId V : N.Inputs)
    D.Inputs.push_back(V == NoId ? std::string() : G.Values[V].Name);
  for (ValueId V : N.Outputs)
    D.Outputs.push_back(V == NoId ? std::string() : G.Values[V].Name);
  D.Attrs = N.Attrs;
  for (const Guard &Gd : N.Guards)
    D.Guards.push_back({G.Values[Gd.Cond].Name, Gd.WhenTrue});
  D.SourceNode = N.SourceNode;
  return D;
}

// The graph with the rewrites applied, through GraphBuilder's checks.
static Expected<std::unique_ptr<Graph>> rebuild(const Graph &G,
                                                ArrayRef<Rewrite> Rewrites) {
  std::vector<bool> Removed(G.Nodes.size(), false);
  std::vector<const Rewrite *> AtSink(G.Nodes.size(), nullptr);
  for (const Rewrite &R : Rewrites) {
    for (NodeId N : R.Removed)
      Removed[N] = true;
    AtSink[R.Sink] = &R;
  }
  // Values the fused nodes read: they stay, whoever else read them.
  std::vector<bool> FusedReads(G.Values.size(), false);
  for (const Rewrite &R : Rewrites)
    for (const std::string &In : R.Fused.Inputs)
      if (!In.empty()) {
        ValueId V = G.findValue(In);
        if (V != NoId)
          FusedReads[V] = true;
      }
  // A Constant whose every reader was removed (a scale) goes too, unless a
  // fused node reads it (a bias or a mask given by a Constant node).
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    const Node &Nd = G.Nodes[N];
    if (Nd.OpType != "Constant" || Removed[N] || Nd.Outputs.size() != 1 ||
        FusedReads[Nd.Outputs[0]])
      continue;
    const Value &V = G.Values[Nd.Outputs[0]];
    if (!V.IsGraphOutput && !V.Users.empty() &&
        llvm::all_of(V.Users, [&](NodeId U) { return Removed[U]; }))
      Removed[N] = true;
  }
  // Values still read: a weight that only removed nodes read goes too.
  std::vector<bool> Read(G.Values.size(), false);
  for (NodeId N = 0; N < G.Nodes.size(); ++N)
    if (!Removed[N])
      for (ValueId V : G.Nodes[N].Inputs)
        if (V != NoId)
          Read[V] = true;

  GraphBuilder B(G.SourcePath);
  for (const std::string &S : G.Symbols)
    B.getOrAddSymbol(S);
  B.setModelInfo(G.Name, G.IrVersion, G.ProducerName, G.Opsets);
  for (ValueId V : G.Inputs)
    if (Error E = B.addInput(describe(G.Values[V])))
      return E;
  for (ValueId V : G.Weights) {
    const Value &W = G.Values[V];
    bool Dropped =
        !Read[V] && !FusedReads[V] && !W.IsGraphOutput && !W.Users.empty();
    if (Dropped)
      continue;
    if (Error E = B.addWeight(describe(W), W.Data, W.ExternalLocation))
      return E;
  }
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    if (AtSink[N])
      B.addNode(AtSink[N]->Fused);
    else if (!Removed[N])
      B.addNode(copyNode(G, G.Nodes[N]));
  }
  // Declared shapes of the values that survive (the fused outputs keep the
  // pattern's last value, so its declaration too).
  std::vector<bool> Gone(G.Values.size(), false);
  for (NodeId N = 0; N < G.Nodes.size(); ++N)
    if (Removed[N])
      for (ValueId V : G.Nodes[N].Outputs)
        if (V != NoId)
          Gone[V] = true;
  for (const Rewrite &R : Rewrites)
    for (const std::string &Out : R.Fused.Outputs)
      if (ValueId V = G.findValue(Out); V != NoId) // not a new output
        Gone[V] = false;
  for (ValueId V = 0; V < G.Values.size(); ++V) {
    const Value &Val = G.Values[V];
    if (Val.Kind == ValueKind::NodeOutput && !Gone[V] && Val.HasDeclaredShape &&
        !Val.IsGraphOutput)
      B.addValueInfo(describe(Val));
  }
  for (ValueId V : G.Outputs)
    B.addOutput(describe(G.Values[V]));
  return B.finish();
}

Expected<FusedGraph> oomplan::fuseGraph(const Graph &G, const ShapeInfo &Shapes,
                                        const FusionOptions &Opts) {
  MatchContext C(G, Shapes, Opts);
  if (C.supported(fused::AttentionOp))
    matchAttention(C);
  if (C.supported(fused::MatMulOp))
    matchMatMul(C);
  // Before the single convs, which would claim its two.
  if (C.supported(fused::ConvDepthwiseOp))
    matchConvDepthwise(C);
  if (C.supported(fused::ConvOp))
    matchConv(C);
  FusedGraph Out;
  Out.Stats = C.Stats;
  if (C.Rewrites.empty())
    return Out;
  auto NG = rebuild(G, C.Rewrites);
  if (!NG)
    return makeInternalError("fusion produced an invalid graph: " +
                             toString(NG.takeError()));
  Out.G = std::move(*NG);
  return Out;
}
