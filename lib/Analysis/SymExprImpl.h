//===- SymExprImpl.h - canonical form behind SymExpr ------------*- C++ -*-===//
//
// Private to lib/Analysis: the node types of SymExpr's canonical form, shared
// by the arithmetic (SymExpr.cpp) and the evaluation, bounds and printing
// code (SymExprEval.cpp).
//
// A PolyImpl is a sum of monomials sorted by monomialLess, no two with the
// same factors, no zero coefficient. A monomial is a coefficient times atoms
// raised to positive powers, atoms sorted by compareAtom. An atom is a symbol
// or a Term, whose arguments are themselves canonical.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_ANALYSIS_SYMEXPRIMPL_H
#define OOMPLAN_LIB_ANALYSIS_SYMEXPRIMPL_H

#include "oomplan/Analysis/SymExpr.h"
#include <vector>

namespace oomplan {
namespace symexpr_detail {

enum class TermKind : uint8_t { FloorDiv, Mod, Min, Max };

/// A non-polynomial atom. FloorDiv and Mod have two arguments (numerator,
/// divisor); Min and Max have two or more, sorted and distinct.
struct Term {
  TermKind Kind;
  std::vector<SymExpr> Args;
  size_t Hash = 0;
};

/// A symbol (T null) or a Term.
struct Atom {
  SymbolId Sym = NoId;
  std::shared_ptr<const Term> T;
};

struct Factor {
  Atom A;
  uint32_t Exp = 1;
};

struct Monomial {
  std::vector<Factor> Factors; ///< Empty for the constant monomial.
  int64_t Coeff = 0;
  unsigned degree() const {
    unsigned D = 0;
    for (const Factor &F : Factors)
      D += F.Exp;
    return D;
  }
};

struct PolyImpl {
  std::vector<Monomial> Monos;
  bool Poisoned = false;
  size_t Hash = 0;
};

int compareAtom(const Atom &A, const Atom &B);
int compareFactors(const std::vector<Factor> &A, const std::vector<Factor> &B);

} // namespace symexpr_detail

/// SymExpr's private door for the implementation files.
struct SymExprAccess {
  static const symexpr_detail::PolyImpl *impl(const SymExpr &E) {
    return E.Impl.get();
  }
  /// Canonicalises Monos (sort, merge, drop zeros) into an expression.
  static SymExpr make(std::vector<symexpr_detail::Monomial> Monos,
                      bool Poisoned);
  static SymExpr poisoned() { return make({}, true); }
  static SymExpr fromAtom(symexpr_detail::Atom A);
};

} // namespace oomplan

#endif
