//===- RuleContext.cpp - what shape rules see of the analysis -------------===//
//
// The RuleContext accessors and the helpers several op families share
// (broadcasting, axis normalisation, constant inputs).
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"
#include "oomplan/Support/Error.h"

using namespace oomplan;
using namespace oomplan::shapes;

std::optional<std::vector<int64_t>> RuleContext::constInts(size_t I) const {
  if (!hasInput(I))
    return std::nullopt;
  const std::optional<std::vector<SymExpr>> &V = inValues(I);
  if (!V)
    return std::nullopt;
  std::vector<int64_t> Out;
  for (const SymExpr &E : *V) {
    std::optional<int64_t> C = E.getConstant();
    if (!C)
      return std::nullopt;
    Out.push_back(*C);
  }
  return Out;
}

const TensorData *RuleContext::constData(size_t I) const {
  if (!hasInput(I))
    return nullptr;
  return ConstData[node().Inputs[I]].get();
}

void RuleContext::setOutput(size_t I, ElementType Type,
                            std::vector<SymExpr> Dims, bool UpperBound) {
  if (!hasOutput(I))
    return;
  ValueShape &V = S.Values[node().Outputs[I]];
  V.Type = Type;
  V.Known = true;
  V.Bytes = tensorBytes(Type, Dims);
  V.Dims = std::move(Dims);
  V.UpperBound = UpperBound;
  V.IntValues.reset();
}

void RuleContext::setOutputValues(size_t I, std::vector<SymExpr> Vals) {
  if (!hasOutput(I))
    return;
  ValueShape &V = S.Values[node().Outputs[I]];
  std::optional<int64_t> N = constantNumElements(V.Dims);
  // Float tensors carry contents only when a rule knows them to be whole
  // numbers (Cast of an integer tensor), for float Range over a shape value.
  bool Numeric = isIntegerLike(V.Type) || isFloatingPoint(V.Type);
  if (!V.Known || V.UpperBound || !Numeric || !N ||
      *N != int64_t(Vals.size()) || *N > MaxTrackedElements)
    return;
  for (const SymExpr &E : Vals)
    if (E.isPoisoned())
      return;
  V.IntValues = std::move(Vals);
}

void RuleContext::setOutputLike(size_t I, size_t J, bool KeepValues) {
  const ValueShape &In = in(J);
  setOutput(I, In.Type, In.Dims, In.UpperBound);
  if (KeepValues && In.IntValues)
    setOutputValues(I, *In.IntValues);
}

llvm::Error RuleContext::error(const llvm::Twine &Msg) const {
  return makeInputError(G.SourcePath + ": " + G.describeNode(Id) + ": " + Msg);
}

llvm::Error RuleContext::unsupported(const llvm::Twine &Msg) const {
  return makeUnsupportedError(G.SourcePath + ": " + G.describeNode(Id) + ": " +
                              Msg);
}

void RuleContext::warn(const llvm::Twine &Msg) {
  if (!DataDependentSymbols) // the exactness run's result is not reported
    S.Warnings.push_back((G.describeNode(Id) + ": " + Msg).str());
}

SymExpr RuleContext::freshSymbol(llvm::StringRef Base) {
  std::string Name = Base.str() + "_" +
                     (node().Name.empty() ? std::to_string(Id) : node().Name);
  S.SymbolNames.push_back(Name);
  return SymExpr::symbol(SymbolId(S.SymbolNames.size() - 1));
}

SymExpr RuleContext::dataDependent(const SymExpr &Bound, llvm::StringRef Base) {
  if (!DataDependentSymbols)
    return Bound;
  return freshSymbol(Base) - SymExpr::constant(1);
}

void RuleContext::require(DimConstraint::Kind K, const SymExpr &A,
                          const SymExpr &B, const llvm::Twine &What) const {
  if (DataDependentSymbols || A.isPoisoned() || B.isPoisoned())
    return;
  std::optional<int64_t> CA = A.getConstant(), CB = B.getConstant();
  switch (K) {
  case DimConstraint::Kind::Broadcast:
    if (A == B || CA == 1 || CB == 1)
      return;
    break;
  case DimConstraint::Kind::Equal:
    if (A == B)
      return;
    break;
  case DimConstraint::Kind::Divides:
    if (CB == 1 || (CB && *CB > 0 && SymExpr::mod(A, B).getConstant() == 0))
      return;
    break;
  }
  if (CA && CB)
    return; // decided now: the rule reports it
  // A bound is at least the run-time size, so a condition on it says
  // nothing about the sizes that will meet.
  for (size_t I = 0; I < numInputs(); ++I)
    if (hasInput(I) && in(I).UpperBound)
      return;
  S.Constraints.push_back({K, Id, A, B, What.str()});
}

llvm::Expected<size_t> RuleContext::axis(int64_t A, size_t Rank) const {
  int64_t R = int64_t(Rank);
  if (A < -R || A >= R)
    return error("axis " + llvm::Twine(A) + " is out of range for rank " +
                 llvm::Twine(R));
  return size_t(A < 0 ? A + R : A);
}

llvm::Expected<std::optional<std::vector<int64_t>>>
RuleContext::intsAttrOrInput(llvm::StringRef Name, size_t I) const {
  if (std::optional<std::vector<int64_t>> A = node().getInts(Name))
    return A;
  if (!hasInput(I))
    return std::nullopt;
  if (std::optional<std::vector<int64_t>> V = constInts(I))
    return V;
  return error("input " + llvm::Twine(I) + " ('" + Name +
               "') must be a constant known before run time");
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

SymExpr shapes::broadcastDim(const SymExpr &A, const SymExpr &B) {
  if (A == B)
    return A;
  std::optional<int64_t> CA = A.getConstant(), CB = B.getConstant();
  if (CA == 1)
    return B;
  if (CB == 1)
    return A;
  if (CA)
    return A;
  if (CB)
    return B;
  // Two different symbols: a valid broadcast has them equal or one of them
  // 1, and in both cases the result is the larger.
  return SymExpr::max(A, B);
}

llvm::Expected<std::vector<SymExpr>>
shapes::broadcastShapes(const RuleContext &Ctx, llvm::ArrayRef<SymExpr> A,
                        llvm::ArrayRef<SymExpr> B) {
  size_t R = std::max(A.size(), B.size());
  std::vector<SymExpr> Out(R);
  for (size_t I = 0; I < R; ++I) {
    SymExpr One = SymExpr::constant(1);
    const SymExpr &DA = I < R - A.size() ? One : A[I - (R - A.size())];
    const SymExpr &DB = I < R - B.size() ? One : B[I - (R - B.size())];
    std::optional<int64_t> CA = DA.getConstant(), CB = DB.getConstant();
    if (CA && CB && *CA != *CB && *CA != 1 && *CB != 1)
      return Ctx.error("cannot broadcast dims " + llvm::Twine(*CA) + " and " +
                       llvm::Twine(*CB) + " (axis " + llvm::Twine(I) + ")");
    // max(DA, DB) for two symbols (and the constant for a constant and a
    // symbol) is right only if they agree at the bindings: record it.
    Ctx.require(DimConstraint::Kind::Broadcast, DA, DB,
                "axis " + llvm::Twine(I));
    Out[I] = broadcastDim(DA, DB);
  }
  return Out;
}

std::optional<int64_t>
shapes::constantNumElements(llvm::ArrayRef<SymExpr> Dims) {
  int64_t N = 1;
  for (const SymExpr &D : Dims) {
    std::optional<int64_t> C = D.getConstant();
    if (!C || __builtin_mul_overflow(N, *C, &N))
      return std::nullopt;
  }
  return N;
}

std::optional<std::vector<int64_t>>
shapes::constantDims(llvm::ArrayRef<SymExpr> Dims) {
  std::vector<int64_t> Out;
  for (const SymExpr &D : Dims) {
    std::optional<int64_t> C = D.getConstant();
    if (!C)
      return std::nullopt;
    Out.push_back(*C);
  }
  return Out;
}

std::vector<SymExpr> shapes::toExprs(llvm::ArrayRef<int64_t> Ints) {
  std::vector<SymExpr> Out;
  for (int64_t V : Ints)
    Out.push_back(SymExpr::constant(V));
  return Out;
}
