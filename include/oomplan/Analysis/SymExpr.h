//===- SymExpr.h - integer expressions over dimension symbols ---*- C++ -*-===//
//
// A SymExpr is an integer formula over the graph's symbols (batch, seq, any
// dim_param): +, -, *, floor and ceil division, mod, min and max. Every
// expression is kept in one canonical form, a polynomial (sorted monomials
// with int64 coefficients) whose atoms are symbols or canonical non-polynomial
// terms (floor division, mod, min, max), so that expressions built in
// different ways compare equal and print the same.
//
// Every symbol stands for a tensor dimension a user plans for, so
// simplification may assume 1 <= symbol <= SymbolMaxValue (min(seq, INT64_MAX)
// is seq, max(seq - 1, 0) is seq - 1); evaluate() rejects bindings outside
// that range. Empty (0-sized) dims are only ever constants. Constant arithmetic
// that overflows int64 does not wrap: the result is "poisoned", prints as
// "<overflow>" and fails to evaluate.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_ANALYSIS_SYMEXPR_H
#define OOMPLAN_ANALYSIS_SYMEXPR_H

#include "oomplan/IR/Graph.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace oomplan {

/// Smallest and largest values a symbol may take (a dimension size).
constexpr int64_t SymbolMinValue = 1;
constexpr int64_t SymbolMaxValue = MaxDimSize;

namespace symexpr_detail {
struct PolyImpl;
} // namespace symexpr_detail

/// An immutable integer expression; a cheap-to-copy value type (the canonical
/// form lives in shared, immutable nodes).
class SymExpr {
public:
  /// The constant 0.
  SymExpr() = default;
  static SymExpr constant(int64_t C);
  static SymExpr symbol(SymbolId Id);

  friend SymExpr operator+(const SymExpr &A, const SymExpr &B);
  friend SymExpr operator-(const SymExpr &A, const SymExpr &B);
  friend SymExpr operator*(const SymExpr &A, const SymExpr &B);
  friend SymExpr operator-(const SymExpr &A);
  SymExpr &operator+=(const SymExpr &B) { return *this = *this + B; }
  SymExpr &operator-=(const SymExpr &B) { return *this = *this - B; }
  SymExpr &operator*=(const SymExpr &B) { return *this = *this * B; }

  /// floor(A / B), rounding toward negative infinity (Python's //).
  static SymExpr floorDiv(const SymExpr &A, const SymExpr &B);
  /// ceil(A / B), rounding toward positive infinity.
  static SymExpr ceilDiv(const SymExpr &A, const SymExpr &B);
  /// A - B * floor(A / B): the result has the sign of B (Python's %).
  static SymExpr mod(const SymExpr &A, const SymExpr &B);
  static SymExpr min(const SymExpr &A, const SymExpr &B);
  static SymExpr max(const SymExpr &A, const SymExpr &B);

  bool isConstant() const;
  /// The value when the expression is a constant (and not poisoned).
  std::optional<int64_t> getConstant() const;
  /// The symbol when the expression is exactly one symbol.
  std::optional<SymbolId> getSymbol() const;
  /// True when constant arithmetic overflowed int64 somewhere inside.
  bool isPoisoned() const;

  /// Bounds of the value over all symbol values in [1, SymbolMaxValue];
  /// std::nullopt where unbounded or beyond int64.
  std::optional<int64_t> lowerBound() const;
  std::optional<int64_t> upperBound() const;
  /// True when the value is >= 0 (or > 0) for every symbol value allowed.
  bool isKnownNonNegative() const;
  bool isKnownPositive() const;

  bool operator==(const SymExpr &B) const { return compare(B) == 0; }
  bool operator!=(const SymExpr &B) const { return compare(B) != 0; }
  /// A total order on canonical forms (for maps); not numeric order.
  bool operator<(const SymExpr &B) const { return compare(B) < 0; }
  /// Negative, zero or positive, as for strcmp.
  int compare(const SymExpr &B) const;
  /// Consistent with operator==.
  size_t hash() const;

  /// Appends every symbol the expression mentions, sorted, once each.
  void collectSymbols(llvm::SmallVectorImpl<SymbolId> &Out) const;

  /// The value with symbol I bound to Bindings[I]. Errors name the first
  /// unbound symbol, and report int64 overflow and division by zero.
  llvm::Expected<int64_t>
  evaluate(llvm::ArrayRef<std::optional<int64_t>> Bindings,
           llvm::ArrayRef<std::string> SymbolNames) const;

  /// Replaces each symbol I that has Map[I] set by that expression.
  SymExpr substitute(llvm::ArrayRef<std::optional<SymExpr>> Map) const;

  /// Deterministic text: monomials by decreasing degree, then by symbol id,
  /// the constant last: "12*batch*seq^2 + 4*seq - 1", "floor((seq + 1)/2)",
  /// "min(seq, 512)", "mod(seq, 8)". Symbols without a name print as "s<id>".
  void print(llvm::raw_ostream &OS,
             llvm::ArrayRef<std::string> SymbolNames) const;
  std::string str(llvm::ArrayRef<std::string> SymbolNames) const;

private:
  friend struct SymExprAccess;
  explicit SymExpr(std::shared_ptr<const symexpr_detail::PolyImpl> P)
      : Impl(std::move(P)) {}
  /// Null means the constant 0.
  std::shared_ptr<const symexpr_detail::PolyImpl> Impl;
};

SymExpr operator+(const SymExpr &A, const SymExpr &B);
SymExpr operator-(const SymExpr &A, const SymExpr &B);
SymExpr operator*(const SymExpr &A, const SymExpr &B);
SymExpr operator-(const SymExpr &A);

} // namespace oomplan

namespace std {
template <> struct hash<oomplan::SymExpr> {
  size_t operator()(const oomplan::SymExpr &E) const { return E.hash(); }
};
} // namespace std

#endif
