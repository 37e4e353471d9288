//===- SymExprEval.cpp - evaluating, bounding and printing SymExprs -------===//
//
// Everything that walks a finished SymExpr: evaluation with checked int64
// arithmetic, interval bounds under the assumption 1 <= symbol <=
// SymbolMaxValue (used by the simplifier), substitution, and the printer.
//
//===----------------------------------------------------------------------===//
#include "SymExprImpl.h"
#include "oomplan/Support/Error.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::symexpr_detail;

static const std::vector<Monomial> &monos(const SymExpr &E) {
  static const std::vector<Monomial> Empty;
  const PolyImpl *P = SymExprAccess::impl(E);
  return P ? P->Monos : Empty;
}

//===----------------------------------------------------------------------===//
// Interval bounds
//===----------------------------------------------------------------------===//

namespace {
/// Bounds in 128-bit integers; +-Inf stands for "unbounded or too large".
using Wide = __int128;
constexpr Wide Inf = Wide(1) << 100;

Wide clampWide(Wide V) { return V > Inf ? Inf : (V < -Inf ? -Inf : V); }

Wide addWide(Wide A, Wide B) { return clampWide(A + B); }

Wide mulWide(Wide A, Wide B) {
  if (A == 0 || B == 0)
    return 0;
  Wide R;
  if (__builtin_mul_overflow(A, B, &R))
    return (A < 0) != (B < 0) ? -Inf : Inf;
  return clampWide(R);
}

Wide floorDivWide(Wide A, Wide B) {
  if (A == Inf || A == -Inf)
    return A; // B > 0 here.
  Wide Q = A / B;
  if (A % B != 0 && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}

struct Interval {
  Wide Lo = 0, Hi = 0;
};

Interval mulInterval(Interval A, Interval B) {
  Wide P[4] = {mulWide(A.Lo, B.Lo), mulWide(A.Lo, B.Hi), mulWide(A.Hi, B.Lo),
               mulWide(A.Hi, B.Hi)};
  return {*std::min_element(P, P + 4), *std::max_element(P, P + 4)};
}

Interval boundsOf(const SymExpr &E);

Interval boundsOfTerm(const Term &T) {
  switch (T.Kind) {
  case TermKind::FloorDiv: {
    Interval N = boundsOf(T.Args[0]), D = boundsOf(T.Args[1]);
    if (D.Lo > 0 && D.Lo == D.Hi)
      return {floorDivWide(N.Lo, D.Lo), floorDivWide(N.Hi, D.Lo)};
    if (D.Lo > 0 && N.Lo >= 0)
      return {0, N.Hi};
    return {-Inf, Inf};
  }
  case TermKind::Mod: {
    Interval N = boundsOf(T.Args[0]), D = boundsOf(T.Args[1]);
    if (D.Lo > 0)
      return {0, N.Lo >= 0 ? std::min(N.Hi, D.Hi - 1) : D.Hi - 1};
    return {-Inf, Inf};
  }
  case TermKind::Min:
  case TermKind::Max: {
    bool IsMin = T.Kind == TermKind::Min;
    Interval R = boundsOf(T.Args[0]);
    for (size_t I = 1; I < T.Args.size(); ++I) {
      Interval X = boundsOf(T.Args[I]);
      R.Lo = IsMin ? std::min(R.Lo, X.Lo) : std::max(R.Lo, X.Lo);
      R.Hi = IsMin ? std::min(R.Hi, X.Hi) : std::max(R.Hi, X.Hi);
    }
    return R;
  }
  }
  return {-Inf, Inf};
}

Interval boundsOf(const SymExpr &E) {
  if (E.isPoisoned())
    return {-Inf, Inf};
  Interval Sum;
  for (const Monomial &M : monos(E)) {
    Interval P{M.Coeff, M.Coeff};
    for (const Factor &F : M.Factors) {
      Interval A = F.A.T ? boundsOfTerm(*F.A.T)
                         : Interval{SymbolMinValue, SymbolMaxValue};
      for (uint32_t I = 0; I < F.Exp; ++I)
        P = mulInterval(P, A);
    }
    Sum = {addWide(Sum.Lo, P.Lo), addWide(Sum.Hi, P.Hi)};
  }
  return Sum;
}

std::optional<int64_t> toInt64(Wide V) {
  if (V > INT64_MAX || V < INT64_MIN)
    return std::nullopt;
  return int64_t(V);
}
} // namespace

std::optional<int64_t> SymExpr::lowerBound() const {
  return toInt64(boundsOf(*this).Lo);
}

std::optional<int64_t> SymExpr::upperBound() const {
  return toInt64(boundsOf(*this).Hi);
}

bool SymExpr::isKnownNonNegative() const { return boundsOf(*this).Lo >= 0; }

bool SymExpr::isKnownPositive() const { return boundsOf(*this).Lo > 0; }

//===----------------------------------------------------------------------===//
// Symbols and substitution
//===----------------------------------------------------------------------===//

static void collectInto(const SymExpr &E,
                        llvm::SmallVectorImpl<SymbolId> &Out) {
  for (const Monomial &M : monos(E))
    for (const Factor &F : M.Factors) {
      if (!F.A.T) {
        Out.push_back(F.A.Sym);
        continue;
      }
      for (const SymExpr &Arg : F.A.T->Args)
        collectInto(Arg, Out);
    }
}

void SymExpr::collectSymbols(llvm::SmallVectorImpl<SymbolId> &Out) const {
  collectInto(*this, Out);
  std::sort(Out.begin(), Out.end());
  Out.erase(std::unique(Out.begin(), Out.end()), Out.end());
}

static SymExpr rebuildTerm(const Term &T, std::vector<SymExpr> Args) {
  switch (T.Kind) {
  case TermKind::FloorDiv:
    return SymExpr::floorDiv(Args[0], Args[1]);
  case TermKind::Mod:
    return SymExpr::mod(Args[0], Args[1]);
  case TermKind::Min:
  case TermKind::Max: {
    SymExpr R = Args[0];
    for (size_t I = 1; I < Args.size(); ++I)
      R = T.Kind == TermKind::Min ? SymExpr::min(R, Args[I])
                                  : SymExpr::max(R, Args[I]);
    return R;
  }
  }
  return SymExpr();
}

SymExpr SymExpr::substitute(llvm::ArrayRef<std::optional<SymExpr>> Map) const {
  if (isPoisoned())
    return *this;
  SymExpr Sum;
  for (const Monomial &M : monos(*this)) {
    SymExpr P = constant(M.Coeff);
    for (const Factor &F : M.Factors) {
      SymExpr A;
      if (F.A.T) {
        std::vector<SymExpr> Args;
        for (const SymExpr &Arg : F.A.T->Args)
          Args.push_back(Arg.substitute(Map));
        A = rebuildTerm(*F.A.T, std::move(Args));
      } else if (F.A.Sym < Map.size() && Map[F.A.Sym]) {
        A = *Map[F.A.Sym];
      } else {
        A = symbol(F.A.Sym);
      }
      for (uint32_t I = 0; I < F.Exp; ++I)
        P = P * A;
    }
    Sum = Sum + P;
  }
  return Sum;
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

namespace {
struct Evaluator {
  llvm::ArrayRef<std::optional<int64_t>> Bindings;
  llvm::ArrayRef<std::string> Names;
  const SymExpr &Root;

  llvm::Error overflow() const {
    return makeOverflowError("integer overflow evaluating " + Root.str(Names));
  }

  llvm::Expected<int64_t> symbol(SymbolId Id) const {
    std::string Name = Id < Names.size() ? Names[Id] : "s" + std::to_string(Id);
    if (Id >= Bindings.size() || !Bindings[Id])
      return makeInputError("symbol '" + Name + "' is not bound (evaluating " +
                            Root.str(Names) + ")");
    int64_t V = *Bindings[Id];
    if (V < SymbolMinValue || V > SymbolMaxValue)
      return makeInputError("symbol '" + Name + "' is bound to " +
                            std::to_string(V) + ", outside [1, 2^48]");
    return V;
  }

  llvm::Expected<int64_t> term(const Term &T) const {
    std::vector<int64_t> Args;
    for (const SymExpr &A : T.Args) {
      llvm::Expected<int64_t> V = expr(A);
      if (!V)
        return V.takeError();
      Args.push_back(*V);
    }
    switch (T.Kind) {
    case TermKind::FloorDiv:
    case TermKind::Mod: {
      int64_t N = Args[0], D = Args[1];
      if (D == 0)
        return makeInputError("division by zero evaluating " + Root.str(Names));
      if (N == INT64_MIN && D == -1)
        return overflow();
      int64_t Q = N / D, R = N % D;
      if (R != 0 && ((R < 0) != (D < 0))) {
        --Q;
        R += D;
      }
      return T.Kind == TermKind::FloorDiv ? Q : R;
    }
    case TermKind::Min:
      return *std::min_element(Args.begin(), Args.end());
    case TermKind::Max:
      return *std::max_element(Args.begin(), Args.end());
    }
    return 0;
  }

  llvm::Expected<int64_t> expr(const SymExpr &E) const {
    if (E.isPoisoned())
      return makeOverflowError(
          "integer overflow while building a size expression");
    int64_t Sum = 0;
    for (const Monomial &M : monos(E)) {
      int64_t P = M.Coeff;
      for (const Factor &F : M.Factors) {
        llvm::Expected<int64_t> A = F.A.T ? term(*F.A.T) : symbol(F.A.Sym);
        if (!A)
          return A.takeError();
        for (uint32_t I = 0; I < F.Exp; ++I)
          if (__builtin_mul_overflow(P, *A, &P))
            return overflow();
      }
      if (__builtin_add_overflow(Sum, P, &Sum))
        return overflow();
    }
    return Sum;
  }
};
} // namespace

llvm::Expected<int64_t>
SymExpr::evaluate(llvm::ArrayRef<std::optional<int64_t>> Bindings,
                  llvm::ArrayRef<std::string> SymbolNames) const {
  Evaluator Ev{Bindings, SymbolNames, *this};
  return Ev.expr(*this);
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

static void printExpr(llvm::raw_ostream &OS, const SymExpr &E,
                      llvm::ArrayRef<std::string> Names);

/// True when E prints as one sum-free token (an atom, a constant, a product).
static bool isSingleMonomial(const SymExpr &E) {
  return monos(E).size() <= 1 &&
         !(monos(E).size() == 1 && monos(E)[0].Coeff < 0);
}

static void printWrapped(llvm::raw_ostream &OS, const SymExpr &E,
                         llvm::ArrayRef<std::string> Names, bool Strict) {
  // Strict (a divisor): wrap anything but a lone atom or a constant.
  bool Plain = isSingleMonomial(E);
  if (Strict && Plain && !monos(E).empty()) {
    const Monomial &M = monos(E)[0];
    Plain = M.Factors.empty() ||
            (M.Coeff == 1 && M.Factors.size() == 1 && M.Factors[0].Exp == 1);
  }
  if (Plain) {
    printExpr(OS, E, Names);
    return;
  }
  OS << '(';
  printExpr(OS, E, Names);
  OS << ')';
}

static void printAtom(llvm::raw_ostream &OS, const Atom &A,
                      llvm::ArrayRef<std::string> Names) {
  if (!A.T) {
    if (A.Sym < Names.size() && !Names[A.Sym].empty())
      OS << Names[A.Sym];
    else
      OS << 's' << A.Sym;
    return;
  }
  const Term &T = *A.T;
  switch (T.Kind) {
  case TermKind::FloorDiv:
    OS << "floor(";
    printWrapped(OS, T.Args[0], Names, /*Strict=*/false);
    OS << '/';
    printWrapped(OS, T.Args[1], Names, /*Strict=*/true);
    OS << ')';
    return;
  case TermKind::Mod:
  case TermKind::Min:
  case TermKind::Max:
    OS << (T.Kind == TermKind::Mod   ? "mod("
           : T.Kind == TermKind::Min ? "min("
                                     : "max(");
    for (size_t I = 0; I < T.Args.size(); ++I) {
      if (I)
        OS << ", ";
      printExpr(OS, T.Args[I], Names);
    }
    OS << ')';
    return;
  }
}

static void printExpr(llvm::raw_ostream &OS, const SymExpr &E,
                      llvm::ArrayRef<std::string> Names) {
  if (E.isPoisoned()) {
    OS << "<overflow>";
    return;
  }
  const std::vector<Monomial> &Ms = monos(E);
  if (Ms.empty()) {
    OS << '0';
    return;
  }
  for (size_t I = 0; I < Ms.size(); ++I) {
    const Monomial &M = Ms[I];
    bool Neg = M.Coeff < 0;
    // Magnitude as uint64_t: -INT64_MIN does not fit in int64_t.
    uint64_t Mag = Neg ? 0 - uint64_t(M.Coeff) : uint64_t(M.Coeff);
    if (I == 0)
      OS << (Neg ? "-" : "");
    else
      OS << (Neg ? " - " : " + ");
    if (M.Factors.empty()) {
      OS << Mag;
      continue;
    }
    if (Mag != 1)
      OS << Mag << '*';
    for (size_t J = 0; J < M.Factors.size(); ++J) {
      if (J)
        OS << '*';
      printAtom(OS, M.Factors[J].A, Names);
      if (M.Factors[J].Exp > 1)
        OS << '^' << M.Factors[J].Exp;
    }
  }
}

void SymExpr::print(llvm::raw_ostream &OS,
                    llvm::ArrayRef<std::string> SymbolNames) const {
  printExpr(OS, *this, SymbolNames);
}

std::string SymExpr::str(llvm::ArrayRef<std::string> SymbolNames) const {
  std::string S;
  llvm::raw_string_ostream OS(S);
  print(OS, SymbolNames);
  return OS.str();
}
