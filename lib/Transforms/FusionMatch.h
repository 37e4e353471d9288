//===- FusionMatch.h - what the fusion pattern files share ------*- C++ -*-===//
//
// Private to lib/Transforms. Each pattern family (FusionAttention.cpp,
// FusionConv.cpp, FusionMatMul.cpp) reads the graph through a MatchContext,
// claims the nodes it replaces, and records one Rewrite per match;
// Fusion.cpp rebuilds the graph from the rewrites. A node is claimed by at
// most one rewrite, so families cannot overlap.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_TRANSFORMS_FUSIONMATCH_H
#define OOMPLAN_LIB_TRANSFORMS_FUSIONMATCH_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/IR/GraphBuilder.h"
#include "oomplan/Transforms/Fusion.h"
#include <optional>
#include <string>
#include <vector>

namespace oomplan {
namespace fusion {

/// One match: Removed nodes (Sink among them) become node Fused, emitted at
/// Sink's position.
struct Rewrite {
  std::vector<NodeId> Removed;
  NodeId Sink = NoId;
  NodeDesc Fused;
};

class MatchContext {
public:
  MatchContext(const Graph &G, const ShapeInfo &S, const FusionOptions &O)
      : G(G), Shapes(S), Opts(O), Claimed(G.Nodes.size(), false) {}

  const Graph &G;
  const ShapeInfo &Shapes;
  const FusionOptions &Opts;
  std::vector<Rewrite> Rewrites;
  FusionStats Stats;

  bool supported(llvm::StringRef OpType) const {
    return !Opts.Supported || Opts.Supported(OpType);
  }
  bool claimed(NodeId N) const { return Claimed[N]; }
  /// Records R and claims its nodes; false (nothing recorded) when one of
  /// them is already claimed.
  bool commit(Rewrite R);

  /// The producer of V when it is a node of type Op, unclaimed; else NoId.
  NodeId producer(ValueId V, llvm::StringRef Op = "") const;
  /// True when V is read only by node User (once) and is not a graph
  /// output: a pattern intermediate that may disappear.
  bool onlyUsedBy(ValueId V, NodeId User) const;
  /// True when every user of V is in Nodes and V is not a graph output.
  bool usedOnlyWithin(ValueId V, llvm::ArrayRef<NodeId> Nodes) const;
  /// The value of a one-element float or integer constant (a weight or a
  /// Constant node's output), or std::nullopt.
  std::optional<double> scalarConstant(ValueId V) const;
  /// The inferred shape of V, or null when unknown.
  const ValueShape *shape(ValueId V) const;
  /// True when A and B have known, equal dims (symbolically).
  bool sameDims(ValueId A, ValueId B) const;
  bool isFloat32(ValueId V) const;
  std::string name(ValueId V) const { return G.Values[V].Name; }

private:
  std::vector<bool> Claimed;
};

/// The activations an epilogue can be: the contract's names.
enum class Activation {
  None,
  Relu,
  Sigmoid,
  Tanh,
  SiLU,
  Gelu,
  GeluTanh,
  HardSwish
};
llvm::StringRef activationName(Activation A);

/// An activation applied to X by a region of elementwise nodes starting at
/// X's users: Sink is the node whose output is act(X), Nodes the region
/// (with Sink). Identified by evaluating the region on sample points, so the
/// exporters' spellings of GELU (erf and tanh forms, x*0.5 first or last,
/// Div by sqrt(2) or Mul by 1/sqrt(2)) and SiLU all match.
struct ActivationMatch {
  Activation Act = Activation::None;
  NodeId Sink = NoId;
  std::vector<NodeId> Nodes;
};
/// The largest activation region on X, or std::nullopt; X must be read only
/// inside the region.
std::optional<ActivationMatch> matchActivation(const MatchContext &C,
                                               ValueId X);

/// The one reader of V when it is an unclaimed node of type Op reading V
/// once, and V no graph output; else NoId (FusionConv.cpp).
NodeId soleUser(const MatchContext &C, ValueId V, llvm::StringRef Op);
/// Clip node Cl's bounds (inputs 1 and 2 from opset 11, attributes before)
/// when they are constants.
std::optional<std::pair<double, double>> clipBounds(const MatchContext &C,
                                                    const Node &Cl);

// One function per family file; each appends rewrites to C.
void matchAttention(MatchContext &C);
void matchConv(MatchContext &C);
void matchConvDepthwise(MatchContext &C);
void matchMatMul(MatchContext &C);

/// An attribute helper: a float, int or string attribute.
Attribute floatAttr(llvm::StringRef Name, double V);
Attribute intAttr(llvm::StringRef Name, int64_t V);
Attribute stringAttr(llvm::StringRef Name, llvm::StringRef V);

} // namespace fusion
} // namespace oomplan

#endif
