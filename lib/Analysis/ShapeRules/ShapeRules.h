//===- ShapeRules.h - the interface between shape rules and the driver -*-===//
//
// Private to lib/Analysis. A shape rule reads one node's input shapes (and
// the contents of small integer inputs) through a RuleContext and sets its
// outputs. Which rule an op uses is its record's ShapeRuleId in the op table
// (IR/OpTable.h); each family file supplies the functions of its ids.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_ANALYSIS_SHAPERULES_SHAPERULES_H
#define OOMPLAN_LIB_ANALYSIS_SHAPERULES_SHAPERULES_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/IR/OpTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include <array>
#include <cassert>

namespace oomplan {
namespace shapes {

/// Tensors with at most this many elements carry their integer contents.
constexpr int64_t MaxTrackedElements = 1024;

/// One node's view of the analysis state.
class RuleContext {
public:
  /// Shadow: in the exactness run (DataDependentSymbols), null; in the
  /// main run, that run's result when it succeeded (see dataDependent).
  RuleContext(const Graph &G, NodeId Id, ShapeInfo &S,
              llvm::ArrayRef<std::shared_ptr<const TensorData>> ConstData,
              bool DataDependentSymbols = false,
              const ShapeInfo *Shadow = nullptr)
      : G(G), Id(Id), S(S), ConstData(ConstData),
        DataDependentSymbols(DataDependentSymbols), Shadow(Shadow) {}

  const Graph &graph() const { return G; }
  const Node &node() const { return G.Nodes[Id]; }
  NodeId nodeId() const { return Id; }
  int64_t opset() const { return G.defaultOpset(); }

  size_t numInputs() const { return node().Inputs.size(); }
  bool hasInput(size_t I) const { return node().input(I) != NoId; }
  /// Shape of input I; the driver has checked that it is Known.
  const ValueShape &in(size_t I) const { return S.Values[node().Inputs[I]]; }
  llvm::ArrayRef<SymExpr> inDims(size_t I) const { return in(I).Dims; }
  size_t inRank(size_t I) const { return in(I).Dims.size(); }
  ElementType inType(size_t I) const { return in(I).Type; }
  /// Contents of input I when tracked (see ValueShape::IntValues).
  const std::optional<std::vector<SymExpr>> &inValues(size_t I) const {
    return in(I).IntValues;
  }
  /// Contents of input I when every element is a known constant.
  std::optional<std::vector<int64_t>> constInts(size_t I) const;
  /// Stored contents of input I when it is a weight or a Constant's output
  /// (also floats, for Resize scales); else null.
  const TensorData *constData(size_t I) const;

  size_t numOutputs() const { return node().Outputs.size(); }
  bool hasOutput(size_t I) const {
    return I < numOutputs() && node().Outputs[I] != NoId;
  }
  /// Sets output I's type and dims (ignored when the output is omitted).
  void setOutput(size_t I, ElementType Type, std::vector<SymExpr> Dims,
                 bool UpperBound = false);
  /// Sets the tracked contents of output I (after setOutput); ignored unless
  /// the output is integer-like with a constant element count Vals.size().
  void setOutputValues(size_t I, std::vector<SymExpr> Vals);
  /// Output I as a copy of input J's type and dims (not contents).
  void setOutputLike(size_t I, size_t J, bool KeepValues = false);

  /// An error naming the file, the node and its op.
  llvm::Error error(const llvm::Twine &Msg) const;
  /// Records a condition between dims A and B that this node's rule relies
  /// on (DimConstraint); it is checked once the symbols are bound. Nothing is
  /// recorded when it already holds symbolically, when an input is an upper
  /// bound (its run-time size is smaller) or in the exactness run. A
  /// condition that can never hold (both constant) is the rule's own error.
  void require(DimConstraint::Kind K, const SymExpr &A, const SymExpr &B,
               const llvm::Twine &What) const;
  /// An error for valid input this analysis cannot handle yet.
  llvm::Error unsupported(const llvm::Twine &Msg) const;
  void warn(const llvm::Twine &Msg);
  /// A new symbol "<Base>_<node name or number>" for a data-dependent size.
  SymExpr freshSymbol(llvm::StringRef Base);
  /// The dim a data-dependent rule gives for a size known only at run
  /// time: its upper bound Bound in the main run; in the exactness run a
  /// new symbol minus one (a count that may be 0, where symbols are >= 1),
  /// so that a value that does not depend on it stays a constant there.
  SymExpr dataDependent(const SymExpr &Bound, llvm::StringRef Base);
  bool exactnessRun() const { return DataDependentSymbols; }
  /// The value of input I as an If condition, when it is known to be
  /// exact: one tracked constant that is not from an upper bound, or whose
  /// value in the exactness run is a constant (it does not depend on any
  /// data-dependent size: "is this dim 1?" of a [boxes, 1] tensor).
  std::optional<bool> knownCondition(size_t I) const;

  /// Axis A (possibly negative) of a rank-Rank tensor, in [0, Rank).
  llvm::Expected<size_t> axis(int64_t A, size_t Rank) const;
  /// Ints attribute Name, or the constant input I (opset-dependent spelling
  /// of axes, pads, ...); std::nullopt when neither is present.
  llvm::Expected<std::optional<std::vector<int64_t>>>
  intsAttrOrInput(llvm::StringRef Name, size_t I) const;

private:
  const Graph &G;
  NodeId Id;
  ShapeInfo &S;
  llvm::ArrayRef<std::shared_ptr<const TensorData>> ConstData;
  bool DataDependentSymbols;
  const ShapeInfo *Shadow;
};

using ShapeRule = llvm::Error (*)(RuleContext &);
/// Op type -> rule of every op-table record that has one, built once.
using RuleTable = llvm::StringMap<ShapeRule>;
const RuleTable &shapeRuleTable();

/// The rule function of each ops::ShapeRuleId.
class RuleFunctions {
public:
  /// Each id gets one function, from the family file that owns it.
  void add(ops::ShapeRuleId Id, ShapeRule Fn) {
    assert(!Fns[unsigned(Id)] && "shape rule id registered twice");
    Fns[unsigned(Id)] = Fn;
  }
  /// Null for Declared, Undecided, or an id no family registered.
  ShapeRule get(ops::ShapeRuleId Id) const { return Fns[unsigned(Id)]; }

private:
  std::array<ShapeRule, ops::NumShapeRuleIds> Fns{};
};

// One function per family file.
void addElementwiseRules(RuleFunctions &F);
void addBroadcastRules(RuleFunctions &F);
void addNormalizationRules(RuleFunctions &F);
void addShapeOpRules(RuleFunctions &F);
void addReshapeRules(RuleFunctions &F);
void addIndexingRules(RuleFunctions &F);
void addMatMulRules(RuleFunctions &F);
void addConvPoolRules(RuleFunctions &F);
void addReduceRules(RuleFunctions &F);
void addRecurrentRules(RuleFunctions &F);
void addDataDependentRules(RuleFunctions &F);
void addMiscRules(RuleFunctions &F);
void addControlFlowRules(RuleFunctions &F);

/// The value of an If condition (ControlFlow.cpp): V's one tracked value
/// when it is a constant and, unless IgnoreBound (the exactness run, where
/// data-dependent sizes are symbols), not from an upper bound; Shadow: the
/// value in the exactness run, whose constant counts too.
std::optional<bool> knownCondition(const ValueShape &V, bool IgnoreBound,
                                   const ValueShape *Shadow);

//===----------------------------------------------------------------------===//
// Helpers shared by several families
//===----------------------------------------------------------------------===//

/// The numpy-broadcast size of two dims: equal dims stay, a 1 gives way to the
/// other, a known constant wins over a symbol, else max(A, B).
SymExpr broadcastDim(const SymExpr &A, const SymExpr &B);
/// Multidirectional (numpy) broadcast of two shapes; errors on two different
/// constant dims, neither of them 1.
llvm::Expected<std::vector<SymExpr>> broadcastShapes(const RuleContext &Ctx,
                                                     llvm::ArrayRef<SymExpr> A,
                                                     llvm::ArrayRef<SymExpr> B);
/// Constant element count of Dims, if every dim is constant.
std::optional<int64_t> constantNumElements(llvm::ArrayRef<SymExpr> Dims);
/// Constant dims of Dims, if every dim is constant.
std::optional<std::vector<int64_t>> constantDims(llvm::ArrayRef<SymExpr> Dims);
/// Symbolic dims from constant ints.
std::vector<SymExpr> toExprs(llvm::ArrayRef<int64_t> Ints);

/// Tracked contents Vals of a tensor of (constant) dims InDims, transposed
/// by Perm; std::nullopt unless every dim is constant (ValueLayout.cpp).
std::optional<std::vector<SymExpr>>
transposeValues(llvm::ArrayRef<SymExpr> Vals, llvm::ArrayRef<SymExpr> InDims,
                llvm::ArrayRef<size_t> Perm);
/// Tracked contents of a Slice: per input axis its first index and step
/// (0 and 1 for axes not sliced), OutDims the result's dims.
std::optional<std::vector<SymExpr>> sliceValues(llvm::ArrayRef<SymExpr> Vals,
                                                llvm::ArrayRef<SymExpr> InDims,
                                                llvm::ArrayRef<SymExpr> OutDims,
                                                llvm::ArrayRef<int64_t> Starts,
                                                llvm::ArrayRef<int64_t> Steps);

} // namespace shapes
} // namespace oomplan

#endif
