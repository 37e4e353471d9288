//===- SymExpr.cpp - canonical symbolic integer arithmetic ----------------===//
//
// Builds SymExpr's canonical form: polynomial arithmetic with overflow
// poisoning, and the simplifying constructors of the non-polynomial terms.
// Division and mod by a constant pull out every multiple of the divisor, so
// floor((4*seq + 3)/2) becomes 2*seq + 1 and ceil(seq/2) and floor((seq+1)/2)
// are the same expression.
//
//===----------------------------------------------------------------------===//
#include "SymExprImpl.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <numeric>

using namespace oomplan;
using namespace oomplan::symexpr_detail;

//===----------------------------------------------------------------------===//
// Ordering and hashing
//===----------------------------------------------------------------------===//

static int cmpInt(int64_t A, int64_t B) { return A < B ? -1 : (A > B ? 1 : 0); }

int symexpr_detail::compareAtom(const Atom &A, const Atom &B) {
  // Symbols sort before terms, so "batch*floor(seq/2)" prints symbols first.
  if (!A.T || !B.T) {
    if (A.T || B.T)
      return A.T ? 1 : -1;
    return cmpInt(A.Sym, B.Sym);
  }
  if (A.T == B.T)
    return 0;
  if (A.T->Kind != B.T->Kind)
    return cmpInt(int(A.T->Kind), int(B.T->Kind));
  if (A.T->Args.size() != B.T->Args.size())
    return cmpInt(A.T->Args.size(), B.T->Args.size());
  for (size_t I = 0; I < A.T->Args.size(); ++I)
    if (int C = A.T->Args[I].compare(B.T->Args[I]))
      return C;
  return 0;
}

int symexpr_detail::compareFactors(const std::vector<Factor> &A,
                                   const std::vector<Factor> &B) {
  for (size_t I = 0; I < A.size() && I < B.size(); ++I) {
    if (int C = compareAtom(A[I].A, B[I].A))
      return C;
    if (A[I].Exp != B[I].Exp)
      return A[I].Exp > B[I].Exp ? -1 : 1; // Higher powers first.
  }
  return cmpInt(A.size(), B.size());
}

/// Print order: higher degree first, the constant last.
static int compareMonomial(const Monomial &A, const Monomial &B) {
  unsigned DA = A.degree(), DB = B.degree();
  if (DA != DB)
    return DA > DB ? -1 : 1;
  return compareFactors(A.Factors, B.Factors);
}

int SymExpr::compare(const SymExpr &B) const {
  const PolyImpl *PA = Impl.get(), *PB = B.Impl.get();
  if (PA == PB)
    return 0;
  bool PoisA = PA && PA->Poisoned, PoisB = PB && PB->Poisoned;
  if (PoisA || PoisB)
    return PoisA == PoisB ? 0 : (PoisA ? 1 : -1);
  size_t NA = PA ? PA->Monos.size() : 0, NB = PB ? PB->Monos.size() : 0;
  for (size_t I = 0; I < NA && I < NB; ++I) {
    const Monomial &MA = PA->Monos[I], &MB = PB->Monos[I];
    if (int C = compareMonomial(MA, MB))
      return C;
    if (MA.Coeff != MB.Coeff)
      return cmpInt(MA.Coeff, MB.Coeff);
  }
  return cmpInt(NA, NB);
}

size_t SymExpr::hash() const { return Impl ? Impl->Hash : 0; }

static size_t hashAtom(const Atom &A) {
  return A.T ? A.T->Hash : size_t(llvm::hash_value(A.Sym));
}

//===----------------------------------------------------------------------===//
// Canonicalisation and polynomial arithmetic
//===----------------------------------------------------------------------===//

SymExpr SymExprAccess::make(std::vector<Monomial> Monos, bool Poisoned) {
  if (Poisoned) {
    auto P = std::make_shared<PolyImpl>();
    P->Poisoned = true;
    P->Hash = 0x9e3779b97f4a7c15ULL;
    return SymExpr(std::move(P));
  }
  std::stable_sort(Monos.begin(), Monos.end(),
                   [](const Monomial &A, const Monomial &B) {
                     return compareMonomial(A, B) < 0;
                   });
  std::vector<Monomial> Out;
  for (Monomial &M : Monos) {
    if (!Out.empty() && compareFactors(Out.back().Factors, M.Factors) == 0) {
      if (__builtin_add_overflow(Out.back().Coeff, M.Coeff, &Out.back().Coeff))
        return poisoned();
      continue;
    }
    if (!Out.empty() && Out.back().Coeff == 0)
      Out.pop_back();
    Out.push_back(std::move(M));
  }
  if (!Out.empty() && Out.back().Coeff == 0)
    Out.pop_back();
  if (Out.empty())
    return SymExpr();
  auto P = std::make_shared<PolyImpl>();
  size_t H = 0;
  for (const Monomial &M : Out) {
    H = llvm::hash_combine(H, M.Coeff);
    for (const Factor &F : M.Factors)
      H = llvm::hash_combine(H, hashAtom(F.A), F.Exp);
    H = llvm::hash_combine(H, 0x51);
  }
  P->Monos = std::move(Out);
  P->Hash = H;
  return SymExpr(std::move(P));
}

SymExpr SymExprAccess::fromAtom(Atom A) {
  Monomial M;
  M.Coeff = 1;
  M.Factors.push_back({std::move(A), 1});
  return make({std::move(M)}, false);
}

static const std::vector<Monomial> &monos(const SymExpr &E) {
  static const std::vector<Monomial> Empty;
  const PolyImpl *P = SymExprAccess::impl(E);
  return P ? P->Monos : Empty;
}

SymExpr SymExpr::constant(int64_t C) {
  if (C == 0)
    return SymExpr();
  Monomial M;
  M.Coeff = C;
  return SymExprAccess::make({std::move(M)}, false);
}

SymExpr SymExpr::symbol(SymbolId Id) {
  Atom A;
  A.Sym = Id;
  return SymExprAccess::fromAtom(std::move(A));
}

bool SymExpr::isPoisoned() const { return Impl && Impl->Poisoned; }

bool SymExpr::isConstant() const {
  return !isPoisoned() &&
         (!Impl || (Impl->Monos.size() == 1 && Impl->Monos[0].Factors.empty()));
}

std::optional<int64_t> SymExpr::getConstant() const {
  if (!isConstant())
    return std::nullopt;
  return Impl ? Impl->Monos[0].Coeff : 0;
}

std::optional<SymbolId> SymExpr::getSymbol() const {
  if (!Impl || Impl->Poisoned || Impl->Monos.size() != 1)
    return std::nullopt;
  const Monomial &M = Impl->Monos[0];
  if (M.Coeff != 1 || M.Factors.size() != 1 || M.Factors[0].Exp != 1 ||
      M.Factors[0].A.T)
    return std::nullopt;
  return M.Factors[0].A.Sym;
}

SymExpr oomplan::operator+(const SymExpr &A, const SymExpr &B) {
  if (A.isPoisoned() || B.isPoisoned())
    return SymExprAccess::poisoned();
  if (!SymExprAccess::impl(A))
    return B;
  if (!SymExprAccess::impl(B))
    return A;
  std::vector<Monomial> M = monos(A);
  M.insert(M.end(), monos(B).begin(), monos(B).end());
  return SymExprAccess::make(std::move(M), false);
}

SymExpr oomplan::operator-(const SymExpr &A) {
  if (A.isPoisoned())
    return A;
  std::vector<Monomial> M = monos(A);
  for (Monomial &X : M)
    if (__builtin_sub_overflow(int64_t(0), X.Coeff, &X.Coeff))
      return SymExprAccess::poisoned();
  return SymExprAccess::make(std::move(M), false);
}

SymExpr oomplan::operator-(const SymExpr &A, const SymExpr &B) {
  return A + (-B);
}

/// Product of two sorted factor lists, merging powers of equal atoms.
static std::vector<Factor> mulFactors(const std::vector<Factor> &A,
                                      const std::vector<Factor> &B) {
  std::vector<Factor> Out;
  size_t I = 0, J = 0;
  while (I < A.size() || J < B.size()) {
    int C = I == A.size()   ? 1
            : J == B.size() ? -1
                            : compareAtom(A[I].A, B[J].A);
    if (C < 0) {
      Out.push_back(A[I++]);
    } else if (C > 0) {
      Out.push_back(B[J++]);
    } else {
      Out.push_back(A[I]);
      Out.back().Exp += B[J].Exp;
      ++I;
      ++J;
    }
  }
  return Out;
}

SymExpr oomplan::operator*(const SymExpr &A, const SymExpr &B) {
  if (A.isPoisoned() || B.isPoisoned())
    return SymExprAccess::poisoned();
  if (!SymExprAccess::impl(A) || !SymExprAccess::impl(B))
    return SymExpr();
  std::vector<Monomial> Out;
  for (const Monomial &X : monos(A))
    for (const Monomial &Y : monos(B)) {
      Monomial M;
      if (__builtin_mul_overflow(X.Coeff, Y.Coeff, &M.Coeff))
        return SymExprAccess::poisoned();
      M.Factors = mulFactors(X.Factors, Y.Factors);
      Out.push_back(std::move(M));
    }
  return SymExprAccess::make(std::move(Out), false);
}

//===----------------------------------------------------------------------===//
// Non-polynomial terms
//===----------------------------------------------------------------------===//

static SymExpr makeTerm(TermKind Kind, std::vector<SymExpr> Args) {
  auto T = std::make_shared<Term>();
  T->Kind = Kind;
  size_t H = llvm::hash_value(int(Kind) + 1000);
  for (const SymExpr &E : Args)
    H = llvm::hash_combine(H, E.hash());
  T->Hash = H;
  T->Args = std::move(Args);
  Atom A;
  A.T = std::move(T);
  return SymExprAccess::fromAtom(std::move(A));
}

static int64_t floorDivInt(int64_t A, int64_t B) {
  int64_t Q = A / B;
  if ((A % B != 0) && ((A < 0) != (B < 0)))
    --Q;
  return Q;
}

/// Splits A = C*Q + R where every coefficient of R is in [0, C) (C > 0).
static void splitByConstant(const SymExpr &A, int64_t C, SymExpr &Q,
                            SymExpr &R) {
  std::vector<Monomial> QM, RM;
  for (const Monomial &M : monos(A)) {
    int64_t Quot = floorDivInt(M.Coeff, C);
    int64_t Rem = M.Coeff - Quot * C; // Cannot overflow: 0 <= Rem < C.
    if (Quot) {
      QM.push_back(M);
      QM.back().Coeff = Quot;
    }
    if (Rem) {
      RM.push_back(M);
      RM.back().Coeff = Rem;
    }
  }
  Q = SymExprAccess::make(std::move(QM), false);
  R = SymExprAccess::make(std::move(RM), false);
}

/// The gcd of Start and every coefficient of A.
static int64_t coeffGcd(const SymExpr &A, int64_t Start) {
  int64_t G = Start;
  for (const Monomial &M : monos(A))
    G = std::gcd(G, M.Coeff);
  return G;
}

/// A / G for a G that divides every coefficient.
static SymExpr divideCoeffs(const SymExpr &A, int64_t G) {
  std::vector<Monomial> M = monos(A);
  for (Monomial &X : M)
    X.Coeff /= G;
  return SymExprAccess::make(std::move(M), false);
}

/// A / B when B is one monomial dividing every monomial of A exactly.
static std::optional<SymExpr> exactQuotient(const SymExpr &A,
                                            const SymExpr &B) {
  const std::vector<Monomial> &BM = monos(B);
  if (BM.size() != 1 || BM[0].Coeff == 0)
    return std::nullopt;
  const Monomial &D = BM[0];
  std::vector<Monomial> Out;
  for (const Monomial &M : monos(A)) {
    if (M.Coeff % D.Coeff != 0)
      return std::nullopt;
    Monomial Q;
    Q.Coeff = M.Coeff / D.Coeff;
    size_t J = 0;
    for (const Factor &F : M.Factors) {
      if (J < D.Factors.size() && compareAtom(F.A, D.Factors[J].A) == 0) {
        if (F.Exp < D.Factors[J].Exp)
          return std::nullopt;
        if (F.Exp > D.Factors[J].Exp)
          Q.Factors.push_back({F.A, F.Exp - D.Factors[J].Exp});
        ++J;
        continue;
      }
      Q.Factors.push_back(F);
    }
    if (J != D.Factors.size())
      return std::nullopt;
    Out.push_back(std::move(Q));
  }
  return SymExprAccess::make(std::move(Out), false);
}

/// floor(R / Div) as one floor division when R is floor(A/C1) + K.
static std::optional<SymExpr> mergeNestedFloor(const SymExpr &R, int64_t Div) {
  const std::vector<Monomial> &M = monos(R);
  if (M.empty() || M.size() > 2 || M[0].Coeff != 1 ||
      M[0].Factors.size() != 1 || M[0].Factors[0].Exp != 1)
    return std::nullopt;
  const Atom &A = M[0].Factors[0].A;
  if (!A.T || A.T->Kind != TermKind::FloorDiv)
    return std::nullopt;
  std::optional<int64_t> C1 = A.T->Args[1].getConstant();
  int64_t K = M.size() == 2 ? M[1].Coeff : 0;
  int64_t KC1, C1C2;
  if (!C1 || *C1 <= 0 || (M.size() == 2 && !M[1].Factors.empty()) ||
      __builtin_mul_overflow(K, *C1, &KC1) ||
      __builtin_mul_overflow(*C1, Div, &C1C2))
    return std::nullopt;
  return SymExpr::floorDiv(A.T->Args[0] + SymExpr::constant(KC1),
                           SymExpr::constant(C1C2));
}

SymExpr SymExpr::floorDiv(const SymExpr &A, const SymExpr &B) {
  if (A.isPoisoned() || B.isPoisoned())
    return SymExprAccess::poisoned();
  if (std::optional<int64_t> C = B.getConstant()) {
    if (*C == 0)
      return makeTerm(TermKind::FloorDiv, {A, B}); // Fails to evaluate.
    if (*C < 0) {
      if (*C == INT64_MIN)
        return SymExprAccess::poisoned();
      return floorDiv(-A, constant(-*C));
    }
    if (*C == 1)
      return A;
    SymExpr Q, R;
    splitByConstant(A, *C, Q, R);
    int64_t G = coeffGcd(R, *C);
    int64_t Div = *C / G;
    R = divideCoeffs(R, G);
    // R >= 0 here; when R < Div always, floor(R/Div) is 0.
    std::optional<int64_t> Lo = R.lowerBound(), Hi = R.upperBound();
    if (Lo && Hi && floorDivInt(*Lo, Div) == floorDivInt(*Hi, Div))
      return Q + constant(floorDivInt(*Lo, Div));
    if (Div == 1)
      return Q + R;
    // floor((floor(A/C1) + K)/C2) = floor((A + K*C1)/(C1*C2)).
    if (std::optional<SymExpr> Merged = mergeNestedFloor(R, Div))
      return Q + *Merged;
    return Q + makeTerm(TermKind::FloorDiv, {R, constant(Div)});
  }
  if (!A.Impl)
    return SymExpr();
  if (A == B)
    return constant(1);
  if (std::optional<SymExpr> Q = exactQuotient(A, B))
    return *Q;
  return makeTerm(TermKind::FloorDiv, {A, B});
}

SymExpr SymExpr::ceilDiv(const SymExpr &A, const SymExpr &B) {
  // For a positive constant C, ceil(A/C) = floor((A + C - 1)/C) keeps the
  // result in floor form, so both spellings compare equal.
  if (std::optional<int64_t> C = B.getConstant(); C && *C > 0)
    return floorDiv(A + constant(*C - 1), B);
  return -floorDiv(-A, B);
}

SymExpr SymExpr::mod(const SymExpr &A, const SymExpr &B) {
  if (A.isPoisoned() || B.isPoisoned())
    return SymExprAccess::poisoned();
  if (std::optional<int64_t> C = B.getConstant()) {
    if (*C == 0)
      return makeTerm(TermKind::Mod, {A, B});
    if (*C < 0) {
      if (*C == INT64_MIN)
        return SymExprAccess::poisoned();
      return -mod(-A, constant(-*C));
    }
    SymExpr Q, R;
    splitByConstant(A, *C, Q, R);
    int64_t G = coeffGcd(R, *C);
    int64_t Div = *C / G;
    R = divideCoeffs(R, G);
    // mod(G*R, G*Div) = G*mod(R, Div); R needs no reduction below Div.
    std::optional<int64_t> Hi = R.upperBound();
    if (Div == 1)
      return SymExpr();
    if (Hi && *Hi < Div && R.isKnownNonNegative())
      return constant(G) * R;
    return constant(G) * makeTerm(TermKind::Mod, {R, constant(Div)});
  }
  if (!A.Impl || A == B || exactQuotient(A, B))
    return SymExpr();
  return makeTerm(TermKind::Mod, {A, B});
}

/// Adds X to the argument list of a min (IsMin) or max, dropping arguments
/// that can never be the result.
static void addMinMaxArg(std::vector<SymExpr> &Args, const SymExpr &X,
                         bool IsMin) {
  auto Dominates = [&](const SymExpr &P, const SymExpr &Q) {
    // P makes Q redundant: P <= Q always for min, P >= Q for max.
    SymExpr D = IsMin ? Q - P : P - Q;
    if (D.isKnownNonNegative())
      return true;
    // Absorption: max(a, min(a, b)) = a and min(a, max(a, b)) = a (a
    // broadcast of seq with a sliced table's min(seq, 512) gives the first).
    const std::vector<Monomial> &M = monos(Q);
    if (M.size() != 1 || M[0].Coeff != 1 || M[0].Factors.size() != 1 ||
        M[0].Factors[0].Exp != 1 || !M[0].Factors[0].A.T)
      return false;
    const auto &T = *M[0].Factors[0].A.T;
    return T.Kind == (IsMin ? TermKind::Max : TermKind::Min) &&
           llvm::is_contained(T.Args, P);
  };
  for (const SymExpr &K : Args)
    if (Dominates(K, X))
      return;
  Args.erase(std::remove_if(Args.begin(), Args.end(),
                            [&](const SymExpr &K) { return Dominates(X, K); }),
             Args.end());
  Args.push_back(X);
}

static SymExpr makeMinMax(const SymExpr &A, const SymExpr &B, bool IsMin) {
  if (A.isPoisoned() || B.isPoisoned())
    return SymExprAccess::poisoned();
  TermKind Kind = IsMin ? TermKind::Min : TermKind::Max;
  std::vector<SymExpr> Args;
  for (const SymExpr *E : {&A, &B}) {
    // Flatten min(min(a, b), c) into min(a, b, c).
    const std::vector<Monomial> &M = monos(*E);
    if (M.size() == 1 && M[0].Coeff == 1 && M[0].Factors.size() == 1 &&
        M[0].Factors[0].Exp == 1 && M[0].Factors[0].A.T &&
        M[0].Factors[0].A.T->Kind == Kind) {
      for (const SymExpr &X : M[0].Factors[0].A.T->Args)
        addMinMaxArg(Args, X, IsMin);
      continue;
    }
    addMinMaxArg(Args, *E, IsMin);
  }
  if (Args.size() == 1)
    return Args[0];
  std::sort(Args.begin(), Args.end());
  return makeTerm(Kind, std::move(Args));
}

SymExpr SymExpr::min(const SymExpr &A, const SymExpr &B) {
  return makeMinMax(A, B, /*IsMin=*/true);
}

SymExpr SymExpr::max(const SymExpr &A, const SymExpr &B) {
  return makeMinMax(A, B, /*IsMin=*/false);
}
