//===- DimCheck.cpp - every dim non-negative once symbols are bound -------===//
//
// Shape rules reject a dim that is negative for every binding, but a dim such
// as H - 4 (a MaxPool kernel of 5 over H) is negative only for some. Checking
// the byte count is not enough: two such dims multiply to a positive size and
// a tensor that cannot exist would be planned. So every dim of every value is
// evaluated at the bindings, before any size is used.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Support/Error.h"

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
  return llvm::Error::success();
}
