//===- Layers.cpp - transformer layers found in a graph -------------------===//
//
// Finds the stack of repeated blocks as the longest periodic run in the
// sequence of weight-reading nodes (op type and weight dims), then walks each
// node in order applying Megatron-LM's column/row rules to say which values a
// tensor-parallel group splits. Linear time per candidate period, so a
// 96-layer graph with a thousand weight readers is analysed in milliseconds.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Parallel/Layers.h"
#include "llvm/ADT/StringRef.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::parallel;

static bool isViewLike(llvm::StringRef Op) {
  return Op == "Transpose" || Op == "Reshape" || Op == "Identity" ||
         Op == "Squeeze" || Op == "Unsqueeze" || Op == "Flatten";
}

static bool isFloatType(ElementType T) {
  return T == ElementType::Float || T == ElementType::Float16 ||
         T == ElementType::BFloat16 || T == ElementType::Double;
}

ValueId parallel::weightBehind(const Graph &G, ValueId V) {
  // A chain of views is short (Transpose of a weight, at most a Reshape
  // more); the bound only guards against a malformed graph.
  for (unsigned Hops = 0; V != NoId && Hops < 8; ++Hops) {
    const Value &Val = G.Values[V];
    if (Val.Kind == ValueKind::Weight)
      return isFloatType(Val.Type) && !Val.Shape.empty() ? V : NoId;
    if (Val.Kind != ValueKind::NodeOutput || Val.Producer == NoId)
      return NoId;
    const Node &N = G.Nodes[Val.Producer];
    if (!isViewLike(N.OpType) || N.Inputs.empty())
      return NoId;
    V = N.Inputs[0];
  }
  return NoId;
}

static uint64_t elementsOf(const Value &W) {
  uint64_t E = 1;
  for (const DeclaredDim &D : W.Shape)
    E *= D.K == DeclaredDim::Kind::Static ? uint64_t(D.Size) : 1;
  return E;
}

// A weight-reading node's signature: op type and the dims of each weight.
static std::string signature(const Graph &G, const Node &N) {
  std::string Sig = N.OpType;
  for (ValueId In : N.Inputs) {
    ValueId W = weightBehind(G, In);
    if (W == NoId)
      continue;
    Sig += ":";
    for (const DeclaredDim &D : G.Values[W].Shape)
      Sig +=
          std::to_string(D.K == DeclaredDim::Kind::Static ? D.Size : -1) + "x";
  }
  return Sig;
}

namespace {
struct Run {
  size_t Start = 0, Period = 0, Repeats = 0;
};
} // namespace

// The longest periodic run of Sig: the start, period and whole repeats that
// cover the most entries (ties: the smaller period).
static Run longestPeriodicRun(const std::vector<std::string> &Sig) {
  Run Best;
  size_t N = Sig.size();
  for (size_t P = 1; 2 * P <= N; ++P) {
    size_t I = 0;
    while (I + P < N) {
      if (Sig[I] != Sig[I + P]) {
        ++I;
        continue;
      }
      size_t J = I;
      while (J + P < N && Sig[J] == Sig[J + P])
        ++J;
      size_t Repeats = 1 + (J - I) / P;
      if (Repeats >= 2 && Repeats * P > Best.Repeats * Best.Period)
        Best = {I, P, Repeats};
      I = J + 1;
    }
  }
  return Best;
}

// The vocabulary: the last dim of the first graph output (the logits).
static int64_t vocabulary(const Graph &G, const ShapeInfo &Shapes) {
  if (G.Outputs.empty() || G.Outputs[0] >= Shapes.Values.size())
    return -1;
  const ValueShape &VS = Shapes.Values[G.Outputs[0]];
  if (VS.Dims.empty() || !VS.Dims.back().isConstant())
    return -1;
  return VS.Dims.back().getConstant().value_or(-1);
}

// Megatron's rules within the blocks, in node order.
static void splitValues(const Graph &G, const ShapeInfo &Shapes,
                        LayerStructure &L) {
  L.TPSplit.assign(G.Values.size(), false);
  L.WeightTPSplit.assign(G.Values.size(), false);
  L.DataPath.assign(G.Values.size(), false);
  ValueId Logits = G.Outputs.empty() ? NoId : G.Outputs[0];
  int64_t Vocab = vocabulary(G, Shapes);
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    const Node &Nd = G.Nodes[N];
    bool InBlock = L.BlockOfNode[N] >= 0;
    bool AnySplit = false, Data = false;
    ValueId Weight2D = NoId;
    std::vector<ValueId> Weights;
    for (ValueId In : Nd.Inputs) {
      if (In == NoId)
        continue;
      ValueId W = weightBehind(G, In);
      if (W != NoId) {
        Weights.push_back(W);
        if (G.Values[W].Shape.size() == 2)
          Weight2D = W;
        continue;
      }
      AnySplit |= L.TPSplit[In];
      Data |= L.DataPath[In];
    }
    bool WeightView = isViewLike(Nd.OpType) && !Weights.empty();
    Data |= !Weights.empty() && !WeightView;
    bool Split = AnySplit;
    if ((Nd.OpType == "MatMul" || Nd.OpType == "Gemm") && Weight2D != NoId) {
      // Column-parallel when the input is whole, row-parallel when split.
      // After the blocks only the LM head (vocabulary-parallel) splits.
      bool Head = !InBlock && Nd.Outputs.size() == 1 && Nd.Outputs[0] == Logits;
      if (InBlock || Head) {
        Split = !AnySplit;
        L.WeightTPSplit[Weight2D] = true;
        if (InBlock)
          ++(AnySplit ? L.RowLinears : L.ColumnLinears);
      }
    } else if (Nd.OpType == "Gather" && Weight2D != NoId) {
      // Vocabulary-parallel embedding: the table is split, the output is
      // whole after the all-reduce. Position tables stay whole.
      const Value &W = G.Values[Weight2D];
      L.WeightTPSplit[Weight2D] =
          W.Shape[0].K == DeclaredDim::Kind::Static && W.Shape[0].Size == Vocab;
    } else if (AnySplit) {
      for (ValueId W : Weights) // a column-parallel bias
        L.WeightTPSplit[W] = true;
    }
    if (WeightView)
      Split = Data = false; // a view of a weight: model state
    for (ValueId Out : Nd.Outputs)
      if (Out != NoId) {
        L.TPSplit[Out] = Split;
        L.DataPath[Out] = Data;
      }
  }
}

// The attention cores: from a MatMul of two activations (the scores) up to
// the MatMul that applies the probabilities, exclusive.
static void markAttentionCores(const Graph &G, LayerStructure &L) {
  L.AttentionCore.assign(G.Nodes.size(), false);
  auto ActMatMul = [&](const Node &N) {
    return N.OpType == "MatMul" && N.Inputs.size() == 2 &&
           weightBehind(G, N.Inputs[0]) == NoId &&
           weightBehind(G, N.Inputs[1]) == NoId;
  };
  NodeId Open = NoId;
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    if (L.BlockOfNode[N] < 0 || !ActMatMul(G.Nodes[N]))
      continue;
    if (Open == NoId) {
      Open = N;
      continue;
    }
    bool SameBlock = L.BlockOfNode[Open] == L.BlockOfNode[N];
    if (SameBlock)
      for (NodeId M = Open; M < N; ++M)
        L.AttentionCore[M] = L.BlockOfNode[M] == L.BlockOfNode[N];
    Open = SameBlock ? NoId : N;
  }
}

LayerStructure parallel::analyzeLayers(const Graph &G,
                                       const ShapeInfo &Shapes) {
  LayerStructure L;
  size_t NN = G.Nodes.size();
  L.BlockOfNode.assign(NN, Prologue);
  L.FirstUser.assign(G.Values.size(), NoId);
  std::vector<std::string> Sig;
  std::vector<NodeId> SigNode;
  for (NodeId N = 0; N < NN; ++N) {
    const Node &Nd = G.Nodes[N];
    bool ReadsWeight = false;
    for (ValueId In : Nd.Inputs) {
      ValueId W = weightBehind(G, In);
      if (W == NoId)
        continue;
      if (L.FirstUser[W] == NoId)
        L.FirstUser[W] = N;
      L.LargestWeightElems =
          std::max(L.LargestWeightElems, elementsOf(G.Values[W]));
      ReadsWeight = true;
    }
    if (ReadsWeight && !isViewLike(Nd.OpType)) {
      Sig.push_back(signature(G, Nd));
      SigNode.push_back(N);
    }
  }
  Run R = longestPeriodicRun(Sig);
  if (R.Repeats < 2) {
    L.Why = "no repeated blocks of weight-reading nodes in the graph";
    splitValues(G, Shapes, L);
    markAttentionCores(G, L);
    return L;
  }
  L.Found = true;
  L.NumBlocks = unsigned(R.Repeats);
  L.WeightNodesPerBlock = unsigned(R.Period);
  // Block I ends at its last weight reader; block I+1 starts right after it
  // (the residual Add joins the next block, which reads its output). Block 0
  // starts as far before its first weight reader as block 1 does.
  std::vector<NodeId> Begin(R.Repeats + 1);
  for (size_t B = 1; B <= R.Repeats; ++B)
    Begin[B] = SigNode[R.Start + B * R.Period - 1] + 1;
  NodeId First1 = SigNode[R.Start + R.Period];
  NodeId Lead = First1 - Begin[1];
  NodeId First0 = SigNode[R.Start];
  Begin[0] = First0 >= Lead ? First0 - Lead : 0;
  for (size_t B = 0; B < R.Repeats; ++B)
    for (NodeId N = Begin[B]; N < Begin[B + 1]; ++N)
      L.BlockOfNode[N] = int(B);
  for (NodeId N = Begin[R.Repeats]; N < NN; ++N)
    L.BlockOfNode[N] = Epilogue;
  splitValues(G, Shapes, L);
  markAttentionCores(G, L);
  return L;
}
