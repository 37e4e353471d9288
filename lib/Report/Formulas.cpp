//===- Formulas.cpp - size formulas of plan tensors and their growth ------===//
//
// Resolves the byte formula of any plan tensor (Plan/TensorInfo.h: in the
// element type its bytes were counted in) and measures how much
// of a formula is quadratic in the sequence symbols by finite differences, so
// no knowledge of SymExpr's internal polynomial form is needed.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Formulas.h"
#include "oomplan/Plan/TensorInfo.h"

using namespace oomplan;
using namespace oomplan::report;

ValueId report::describedValue(const Plan &P, const PlanContext &C,
                               TensorId T) {
  return oomplan::describedValue(P.Sched, C.G, T);
}

std::optional<int64_t> report::evaluateAt(const SymExpr &F,
                                          const PlanContext &C) {
  auto V = F.evaluate(C.Bindings, C.Shapes.SymbolNames);
  if (!V) {
    // No value is this function's answer for an unbound symbol or an
    // overflow; callers fall back to the planned byte count.
    llvm::consumeError(V.takeError());
    return std::nullopt;
  }
  return *V;
}

SymExpr report::tensorFormula(const Plan &P, const PlanContext &C, TensorId T) {
  return describeTensor(P, C, T).Formula;
}

std::vector<std::optional<int64_t>>
report::withSymbols(llvm::ArrayRef<std::optional<int64_t>> Bindings,
                    llvm::ArrayRef<SymbolId> Syms, int64_t Value) {
  std::vector<std::optional<int64_t>> Out(Bindings.begin(), Bindings.end());
  for (SymbolId S : Syms) {
    if (S >= Out.size())
      Out.resize(S + 1);
    Out[S] = Value;
  }
  return Out;
}

int64_t report::boundValue(llvm::ArrayRef<std::optional<int64_t>> Bindings,
                           llvm::ArrayRef<SymbolId> Syms) {
  if (Syms.empty() || Syms[0] >= Bindings.size() || !Bindings[Syms[0]])
    return 0;
  return *Bindings[Syms[0]];
}

int64_t report::quadraticPart(const SymExpr &F, const PlanContext &C,
                              llvm::ArrayRef<SymbolId> Syms) {
  if (Syms.empty() || Syms[0] >= C.Bindings.size() || !C.Bindings[Syms[0]])
    return 0;
  int64_t S = *C.Bindings[Syms[0]];
  int64_t At[3];
  for (int K = 1; K <= 3; ++K) {
    std::vector<std::optional<int64_t>> B =
        withSymbols(C.Bindings, Syms, K * S);
    auto V = F.evaluate(B, C.Shapes.SymbolNames);
    if (!V) {
      // At 2S or 3S the size may overflow: no quadratic part is reported
      // then, which only drops a hint from the report.
      llvm::consumeError(V.takeError());
      return 0;
    }
    At[K - 1] = *V;
  }
  // Second difference; doubles keep huge sizes from overflowing.
  double D = (double(At[2]) - 2.0 * double(At[1]) + double(At[0])) / 2.0;
  return D > 0 ? static_cast<int64_t>(D) : 0;
}
