//===- DimCheck.cpp - every dim non-negative once symbols are bound -------===//
//
// Shape rules reject a dim that is negative for every binding, but a dim such
// as H - 4 (a MaxPool kernel of 5 over H) is negative only for some. Checking
// the byte count is not enough: two such dims multiply to a positive size and
// a tensor that cannot exist would be planned. So every dim of every value is
// evaluated at the bindings, before any size is used.
//
// The same holds for the conditions shape rules assumed about two dims
// (ShapeInfo::Constraints): broadcasting [1, n] with [1, m] plans max(n, m)
// elements, which is only right when n == m or one of them is 1. At the
// bindings each is a pair of numbers, and a pair that disagrees is a model
// that cannot run at these sizes; planning it would let a kernel read past
// its smaller input.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

using namespace oomplan;

// True when every symbol E mentions has a value in Bindings.
static bool allBound(const SymExpr &E,
                     llvm::ArrayRef<std::optional<int64_t>> Bindings) {
  llvm::SmallVector<SymbolId, 4> Syms;
  E.collectSymbols(Syms);
  for (SymbolId S : Syms)
    if (S >= Bindings.size() || !Bindings[S])
      return false;
  return true;
}

llvm::Error
oomplan::checkDimsAtBindings(const Graph &G, const ShapeInfo &Shapes,
                             llvm::ArrayRef<std::optional<int64_t>> Bindings) {
  for (ValueId Id = 0; Id < G.Values.size() && Id < Shapes.Values.size();
       ++Id) {
    const ValueShape &VS = Shapes.Values[Id];
    if (!VS.Known)
      continue;
    const std::string &Name = G.Values[Id].Name;
    for (size_t Axis = 0; Axis < VS.Dims.size(); ++Axis) {
      const SymExpr &D = VS.Dims[Axis];
      // Unbound symbols and dims that overflowed while being built are
      // reported, by name, where the sizes are evaluated.
      if (D.isPoisoned() || !allBound(D, Bindings))
        continue;
      auto V = D.evaluate(Bindings, Shapes.SymbolNames);
      if (!V)
        return prependContext(V.takeError(), G.SourcePath + ": value '" + Name +
                                                 "' (axis " +
                                                 llvm::Twine(Axis) + "): ");
      if (*V < 0)
        return makeInputError(
            G.SourcePath + ": value '" + Name + "' has a negative dim " +
            llvm::Twine(*V) + " (axis " + llvm::Twine(Axis) + ", " +
            D.str(Shapes.SymbolNames) +
            ") at these bindings; an attribute or input is out of range "
            "for them");
    }
  }
  return checkConstraintsAtBindings(G, Shapes, Bindings);
}

static const char *describeKind(DimConstraint::Kind K) {
  switch (K) {
  case DimConstraint::Kind::Broadcast:
    return "must be equal or one of them 1 to broadcast";
  case DimConstraint::Kind::Equal:
    return "must be equal";
  case DimConstraint::Kind::Divides:
    return "must divide evenly (the first a multiple of the second)";
  }
  return "";
}

static bool holds(DimConstraint::Kind K, int64_t A, int64_t B) {
  switch (K) {
  case DimConstraint::Kind::Broadcast:
    return A == B || A == 1 || B == 1;
  case DimConstraint::Kind::Equal:
    return A == B;
  case DimConstraint::Kind::Divides:
    return B > 0 && A % B == 0;
  }
  return false;
}

llvm::Error oomplan::checkConstraintsAtBindings(
    const Graph &G, const ShapeInfo &Shapes,
    llvm::ArrayRef<std::optional<int64_t>> Bindings) {
  for (const DimConstraint &C : Shapes.Constraints) {
    if (C.Node >= G.Nodes.size() || neverRuns(Shapes, C.Node))
      continue;
    // A guarded node (an If branch chosen by data) may not run at all, so
    // its inputs need not agree; the runtime checks the branch that runs.
    if (!G.Nodes[C.Node].Guards.empty())
      continue;
    if (!allBound(C.A, Bindings) || !allBound(C.B, Bindings))
      continue;
    auto A = C.A.evaluate(Bindings, Shapes.SymbolNames);
    if (!A)
      return prependContext(A.takeError(), G.SourcePath + ": " +
                                               G.describeNode(C.Node) + ": ");
    auto B = C.B.evaluate(Bindings, Shapes.SymbolNames);
    if (!B)
      return prependContext(B.takeError(), G.SourcePath + ": " +
                                               G.describeNode(C.Node) + ": ");
    if (holds(C.K, *A, *B))
      continue;
    return makeInputError(llvm::formatv(
        "{0}: {1}: {2}: dims {3} and {4} {5}, but they are {6} and {7} at "
        "these bindings",
        G.SourcePath, G.describeNode(C.Node), C.What,
        C.A.str(Shapes.SymbolNames), C.B.str(Shapes.SymbolNames),
        describeKind(C.K), *A, *B));
  }
  return llvm::Error::success();
}
