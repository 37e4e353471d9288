//===- ShapeInference.h - symbolic shapes and byte sizes --------*- C++ -*-===//
//
// Gives every value of a Graph a dtype, dims as SymExprs over the graph's
// symbols, and a byte size formula, by running one rule per operator in
// schedule order. Small integer tensors (shape computations such as
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape) also carry their contents
// symbolically, so Reshape targets computed at run time still resolve to
// formulas of batch and seq. An unknown size is never taken as 0: an op
// without a rule is an error, unless the file declares a complete static
// shape for its outputs (used, with a warning).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_ANALYSIS_SHAPEINFERENCE_H
#define OOMPLAN_ANALYSIS_SHAPEINFERENCE_H

#include "oomplan/Analysis/SymExpr.h"
#include "oomplan/IR/Graph.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace oomplan {

/// What the analysis knows about one value.
struct ValueShape {
  ElementType Type = ElementType::Undefined;
  /// False only for omitted or unused values the analysis could not reach.
  bool Known = false;
  /// One expression per axis (elements); empty for a scalar.
  std::vector<SymExpr> Dims;
  /// ceil(numElements * bits / 8): the tensor's size in bytes.
  SymExpr Bytes;
  /// Data-dependent (NonZero, Unique, TopK with a run-time k, NMS, ...): Dims
  /// are an upper bound on the run-time dims.
  bool UpperBound = false;
  /// Contents of small integer tensors (shape tensors), flattened row-major;
  /// set only when the element count is a known constant. Float tensors
  /// carry them only when cast from integer contents (whole numbers).
  std::optional<std::vector<SymExpr>> IntValues;
};

/// A condition between two dims that a shape rule relies on but cannot
/// decide while a symbol is unbound: broadcasting [1, n] with [1, m] gives
/// max(n, m), which is right only when n == m or one of them is 1. The rule
/// records the condition; checkDimsAtBindings evaluates it once the symbols
/// are bound, so a model whose sizes disagree is refused instead of planned
/// (and run past the end of a buffer).
struct DimConstraint {
  enum class Kind {
    Broadcast, ///< A == B, or one of them is 1
    Equal,     ///< A == B (a contraction dim, a concatenated shape)
    Divides,   ///< B > 0 and A is a multiple of B (a Reshape's -1, Split)
  };
  Kind K = Kind::Equal;
  NodeId Node = NoId;
  SymExpr A, B;
  /// What the two dims are, for the message: "axis 1", "K of A and B".
  std::string What;
};

/// Result of inferShapes.
struct ShapeInfo {
  /// Indexed by ValueId.
  std::vector<ValueShape> Values;
  /// Graph::Symbols first (same ids), then symbols the analysis created:
  /// "unk_<value>_<axis>" for an unnamed dynamic dim of a graph input,
  /// "<op>_<node>" for a data-dependent size.
  std::vector<std::string> SymbolNames;
  /// Upper bounds used, declared shapes used for ops without a rule, ...
  std::vector<std::string> Warnings;
  /// Indexed by NodeId: the node is in an If branch that the analysis knows
  /// is not taken. Its outputs are zero-byte placeholders; a run skips it
  /// (its guard is false there too).
  std::vector<bool> NeverRuns;
  /// For graphs with a data-dependent op or an If: the exactness run
  /// (inferShapes), where each data-dependent size is a symbol of its own,
  /// appended to SymbolNames ("nonzero_<node>" stands for the count + 1).
  /// Its dims are exact formulas: the runtime evaluates them once the
  /// kernels have reported those sizes. Null when not made or when it
  /// failed.
  std::shared_ptr<const ShapeInfo> Exact;
  /// Conditions the rules assumed (see DimConstraint), in schedule order.
  std::vector<DimConstraint> Constraints;
};

/// True when node N is in an If branch the analysis knows is not taken.
inline bool neverRuns(const ShapeInfo &S, NodeId N) {
  return N < S.NeverRuns.size() && S.NeverRuns[N];
}
/// Element count of Dims (1 for a scalar).
SymExpr numElements(llvm::ArrayRef<SymExpr> Dims);

/// Byte size of a tensor: ceil(numElements * bits / 8).
SymExpr tensorBytes(ElementType Type, llvm::ArrayRef<SymExpr> Dims);

/// Runs shape inference over G in schedule order. Errors name the file
/// (G.SourcePath), the node (G.describeNode) and its op.
llvm::Expected<ShapeInfo> inferShapes(const Graph &G);

/// Shape inference over a graph that grows by appending nodes: the
/// importer's prefixes, which it asks about while it imports (DimOracle).
/// Each call infers only the nodes added since the previous one when the
/// new graph extends the old (its first values and nodes are the same) and
/// needs no exactness run (no If guards, no data-dependent sizes); otherwise
/// it infers the whole graph, as inferShapes. Answers are inferShapes's, in
/// time linear in the final graph's size rather than in the number of calls
/// times it.
class IncrementalShapeInference {
public:
  IncrementalShapeInference();
  ~IncrementalShapeInference();
  /// The shapes of every value of G; valid until the next call.
  llvm::Expected<const ShapeInfo *> infer(const Graph &G);
  /// Nodes the last call inferred (twice each with the exactness run).
  uint64_t lastNodesInferred() const { return LastNodes; }

private:
  struct State;
  std::unique_ptr<State> St;
  uint64_t LastNodes = 0;
};

/// Checks that every dim of every known value is >= 0 at Bindings (dims with
/// unbound symbols are skipped); an error names the value, the axis and the
/// dim's formula. Sizes alone would miss two negative dims whose product is
/// positive. Then every DimConstraint whose symbols are bound must hold; an
/// error names the node, its op, both dims as formulas and their values.
llvm::Error
checkDimsAtBindings(const Graph &G, const ShapeInfo &Shapes,
                    llvm::ArrayRef<std::optional<int64_t>> Bindings);
/// The second half of checkDimsAtBindings: every ShapeInfo::Constraints
/// entry whose symbols are bound holds (nodes that may not run, in an If
/// branch, are skipped).
llvm::Error
checkConstraintsAtBindings(const Graph &G, const ShapeInfo &Shapes,
                           llvm::ArrayRef<std::optional<int64_t>> Bindings);

/// The --emit=shapes listing: one line per value (graph inputs, weights, then
/// node outputs in schedule order) with name, kind, dtype, [dims], the bytes
/// formula and, when every symbol it uses is bound in Bindings (indexed by
/// SymbolId, as ShapeInfo::SymbolNames), the bytes at those values.
void printShapes(llvm::raw_ostream &OS, const Graph &G, const ShapeInfo &S,
                 llvm::ArrayRef<std::optional<int64_t>> Bindings);

/// Number of op types (default domain) that have a shape rule.
size_t numShapeRules();
/// True when OpType (default domain) has a shape rule.
bool hasShapeRule(llvm::StringRef OpType);

} // namespace oomplan

#endif
