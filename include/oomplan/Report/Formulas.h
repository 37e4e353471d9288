//===- Formulas.h - size formulas of tensors and their growth -*- C++ -*-===//
//
// The report states every size as a formula of the model's symbols (batch,
// seq, ...). Graph values carry one from shape inference; synthetic tensors a
// transform added (grad(x), saved(x)) borrow the formula of the value they
// name when it agrees with their size. The growth helpers answer "how much of
// this grows with seq^2": the second finite difference of a formula in the
// sequence symbols, exact for polynomials of degree two.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_FORMULAS_H
#define OOMPLAN_REPORT_FORMULAS_H

#include "oomplan/Analysis/SymExpr.h"
#include "oomplan/Plan/PlanPrinter.h"
#include <optional>

namespace oomplan {
namespace report {

/// The graph value whose shape tensor T of P has: its own value, or for a
/// synthetic tensor named "f(<value>)" (any f, nested) the named value.
/// NoId when neither exists.
ValueId describedValue(const Plan &P, const PlanContext &C, TensorId T);

/// The byte formula of tensor T: its dims (those of describedValue(T)) times
/// the size of the element type its bytes were counted in, when that
/// evaluates to T's size at C.Bindings; otherwise the constant size in bytes
/// (describeTensor in Plan/TensorInfo.h).
SymExpr tensorFormula(const Plan &P, const PlanContext &C, TensorId T);

/// Bindings with every symbol in Syms set to Value.
std::vector<std::optional<int64_t>>
withSymbols(llvm::ArrayRef<std::optional<int64_t>> Bindings,
            llvm::ArrayRef<SymbolId> Syms, int64_t Value);

/// The value bound to the first symbol of Syms (the role's symbols all take
/// one value), or 0 when Syms is empty or that symbol is unbound.
int64_t boundValue(llvm::ArrayRef<std::optional<int64_t>> Bindings,
                   llvm::ArrayRef<SymbolId> Syms);

/// The part of F (bytes) quadratic in the symbols Syms at their bound value
/// s: (F(3s) - 2 F(2s) + F(s)) / 2, which is c*s^2 for F = a + b*s + c*s^2.
/// 0 when Syms is empty or unbound, or F cannot be evaluated there.
int64_t quadraticPart(const SymExpr &F, const PlanContext &C,
                      llvm::ArrayRef<SymbolId> Syms);

/// F at C.Bindings, or std::nullopt when it cannot be evaluated.
std::optional<int64_t> evaluateAt(const SymExpr &F, const PlanContext &C);

} // namespace report
} // namespace oomplan

#endif
