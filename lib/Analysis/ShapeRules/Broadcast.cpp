//===- Broadcast.cpp - shape rules for numpy-broadcasting ops -------------===//
//
// Arithmetic, comparison and logic ops with multidirectional broadcasting,
// and Where. Integer arithmetic also computes tracked contents, symbolically:
// exporters compute Reshape targets as Gather(Shape(x)) / 12 and the like.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"

using namespace oomplan;
using namespace oomplan::shapes;

namespace {

/// Row-major index of output element Flat in an input of shape In that is
/// broadcast to Out (all constant).
int64_t sourceIndex(int64_t Flat, llvm::ArrayRef<int64_t> Out,
                    llvm::ArrayRef<int64_t> In) {
  int64_t Index = 0, Stride = 1;
  for (size_t K = Out.size(); K-- > 0;) {
    int64_t Coord = Flat % Out[K];
    Flat /= Out[K];
    size_t InAxis = K + In.size();
    if (InAxis < Out.size())
      continue;
    InAxis -= Out.size();
    int64_t D = In[InAxis];
    Index += (D == 1 ? 0 : Coord) * Stride;
    Stride *= D;
  }
  return Index;
}

/// The contents of input I broadcast to OutDims, when tracked.
std::optional<std::vector<SymExpr>>
broadcastValues(const RuleContext &Ctx, size_t I,
                llvm::ArrayRef<SymExpr> OutDims) {
  const std::optional<std::vector<SymExpr>> &V = Ctx.inValues(I);
  std::optional<std::vector<int64_t>> Out = constantDims(OutDims);
  std::optional<std::vector<int64_t>> In = constantDims(Ctx.inDims(I));
  std::optional<int64_t> N = constantNumElements(OutDims);
  if (!V || !Out || !In || !N || *N > MaxTrackedElements)
    return std::nullopt;
  std::vector<SymExpr> R;
  for (int64_t F = 0; F < *N; ++F)
    R.push_back((*V)[sourceIndex(F, *Out, *In)]);
  return R;
}

/// ONNX integer Div truncates toward zero; shape values are non-negative,
/// where truncation is floor division.
std::optional<SymExpr> intDiv(const SymExpr &A, const SymExpr &B) {
  std::optional<int64_t> CA = A.getConstant(), CB = B.getConstant();
  if (CA && CB) {
    if (*CB == 0 || (*CA == INT64_MIN && *CB == -1))
      return std::nullopt;
    return SymExpr::constant(*CA / *CB);
  }
  if (A.isKnownNonNegative() && B.isKnownPositive())
    return SymExpr::floorDiv(A, B);
  return std::nullopt;
}

/// 1, 0, or unknown for a comparison of two expressions.
std::optional<bool> compareValues(llvm::StringRef Op, const SymExpr &A,
                                  const SymExpr &B) {
  if (Op == "Equal") {
    SymExpr D = A - B;
    if (std::optional<int64_t> C = D.getConstant())
      return *C == 0;
    if (D.isKnownPositive() || (-D).isKnownPositive())
      return false;
    return std::nullopt;
  }
  // Reduce to "D > 0" (strict) or "D >= 0".
  bool Less = Op == "Less" || Op == "LessOrEqual";
  bool Strict = Op == "Greater" || Op == "Less";
  SymExpr D = Less ? B - A : A - B;
  if (Strict ? D.isKnownPositive() : D.isKnownNonNegative())
    return true;
  if (Strict ? (-D).isKnownNonNegative() : (-D).isKnownPositive())
    return false;
  return std::nullopt;
}

/// Element value of op Op; std::nullopt when not computable.
std::optional<SymExpr> combine(llvm::StringRef Op, const SymExpr &A,
                               const SymExpr &B) {
  if (Op == "Add" || Op == "Sum")
    return A + B;
  if (Op == "Sub")
    return A - B;
  if (Op == "Mul")
    return A * B;
  if (Op == "Div")
    return intDiv(A, B);
  if (Op == "Mod") {
    if (B.getConstant() == 0)
      return std::nullopt;
    return SymExpr::mod(A, B);
  }
  if (Op == "Max")
    return SymExpr::max(A, B);
  if (Op == "Min")
    return SymExpr::min(A, B);
  if (Op == "And" || Op == "Or" || Op == "Xor") {
    std::optional<int64_t> CA = A.getConstant(), CB = B.getConstant();
    if (!CA || !CB)
      return std::nullopt;
    bool X = *CA != 0, Y = *CB != 0;
    return SymExpr::constant(Op == "And"  ? X && Y
                             : Op == "Or" ? X || Y
                                          : X != Y);
  }
  bool IsCompare = Op == "Equal" || Op == "Greater" || Op == "Less" ||
                   Op == "GreaterOrEqual" || Op == "LessOrEqual";
  std::optional<bool> C;
  if (IsCompare)
    C = compareValues(Op, A, B);
  if (!C)
    return std::nullopt;
  return SymExpr::constant(*C);
}

bool isComparison(llvm::StringRef Op) {
  return Op == "Equal" || Op == "Greater" || Op == "Less" ||
         Op == "GreaterOrEqual" || Op == "LessOrEqual" || Op == "And" ||
         Op == "Or" || Op == "Xor";
}

/// Add, Mul, Equal, ... and the variadic Sum, Max, Min, Mean.
llvm::Error broadcastOp(RuleContext &Ctx) {
  llvm::StringRef Op = Ctx.node().OpType;
  std::vector<SymExpr> Dims = Ctx.inDims(0).vec();
  for (size_t I = 1; I < Ctx.numInputs(); ++I) {
    if (!Ctx.hasInput(I))
      continue;
    llvm::Expected<std::vector<SymExpr>> B =
        broadcastShapes(Ctx, Dims, Ctx.inDims(I));
    if (!B)
      return B.takeError();
    Dims = std::move(*B);
  }
  ElementType Type = isComparison(Op) ? ElementType::Bool : Ctx.inType(0);
  Ctx.setOutput(0, Type, Dims);
  // Float contents are whole numbers (see ValueShape::IntValues): exact under
  // +, -, *, min and max, not under division.
  bool FloatExact = isFloatingPoint(Ctx.inType(0)) &&
                    (Op == "Add" || Op == "Sub" || Op == "Mul" || Op == "Sum" ||
                     Op == "Max" || Op == "Min");
  if ((!isIntegerLike(Ctx.inType(0)) && !FloatExact) || Op == "Pow" ||
      Op == "Mean")
    return llvm::Error::success();
  std::optional<std::vector<SymExpr>> Acc = broadcastValues(Ctx, 0, Dims);
  for (size_t I = 1; Acc && I < Ctx.numInputs(); ++I) {
    std::optional<std::vector<SymExpr>> B = broadcastValues(Ctx, I, Dims);
    if (!B)
      return llvm::Error::success();
    for (size_t K = 0; K < Acc->size(); ++K) {
      std::optional<SymExpr> R = combine(Op, (*Acc)[K], (*B)[K]);
      if (!R)
        return llvm::Error::success();
      (*Acc)[K] = *R;
    }
  }
  if (Acc)
    Ctx.setOutputValues(0, std::move(*Acc));
  return llvm::Error::success();
}

llvm::Error where(RuleContext &Ctx) {
  llvm::Expected<std::vector<SymExpr>> D1 =
      broadcastShapes(Ctx, Ctx.inDims(0), Ctx.inDims(1));
  if (!D1)
    return D1.takeError();
  llvm::Expected<std::vector<SymExpr>> Dims =
      broadcastShapes(Ctx, *D1, Ctx.inDims(2));
  if (!Dims)
    return Dims.takeError();
  Ctx.setOutput(0, Ctx.inType(1), *Dims);
  std::optional<std::vector<SymExpr>> C = broadcastValues(Ctx, 0, *Dims),
                                      X = broadcastValues(Ctx, 1, *Dims),
                                      Y = broadcastValues(Ctx, 2, *Dims);
  if (!C || !X || !Y)
    return llvm::Error::success();
  std::vector<SymExpr> R;
  for (size_t K = 0; K < C->size(); ++K) {
    std::optional<int64_t> Cond = (*C)[K].getConstant();
    if (!Cond)
      return llvm::Error::success();
    R.push_back(*Cond ? (*X)[K] : (*Y)[K]);
  }
  Ctx.setOutputValues(0, std::move(R));
  return llvm::Error::success();
}

/// PRelu: the slope broadcasts unidirectionally to X.
llvm::Error prelu(RuleContext &Ctx) {
  Ctx.setOutputLike(0, 0);
  return llvm::Error::success();
}

} // namespace

void shapes::addBroadcastRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::Broadcast, broadcastOp);
  F.add(ops::ShapeRuleId::Where, where);
  F.add(ops::ShapeRuleId::PRelu, prelu);
}
