//===- Elementwise.cpp - shape rules for one-input elementwise ops --------===//
//
// Ops whose first output has the shape of their first input: activations,
// math functions, Cast, Dropout, Softmax and friends. Cast, Identity, Neg and
// Abs keep tracked integer contents, since exporters cast shape values.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"

using namespace oomplan;
using namespace oomplan::shapes;

/// Output 0 is input 0 in shape and type.
static llvm::Error sameAsInput(RuleContext &Ctx) {
  Ctx.setOutputLike(0, 0);
  // Softmax, LogSoftmax and Hardmax work along an axis, which must be
  // inside the rank.
  llvm::StringRef Op = Ctx.node().OpType;
  if ((Op == "Softmax" || Op == "LogSoftmax" || Op == "Hardmax") &&
      Ctx.node().attr("axis")) {
    llvm::Expected<size_t> Axis =
        Ctx.axis(Ctx.node().getInt("axis", -1), Ctx.inRank(0));
    if (!Axis)
      return Axis.takeError();
  }
  return llvm::Error::success();
}

/// Same shape, bool result (IsNaN, IsInf, Not).
static llvm::Error boolOfInput(RuleContext &Ctx) {
  Ctx.setOutput(0, ElementType::Bool, Ctx.inDims(0).vec());
  if (Ctx.node().OpType == "Not" && Ctx.inValues(0)) {
    std::vector<SymExpr> V;
    for (const SymExpr &E : *Ctx.inValues(0)) {
      std::optional<int64_t> C = E.getConstant();
      if (!C)
        return llvm::Error::success();
      V.push_back(SymExpr::constant(*C == 0));
    }
    Ctx.setOutputValues(0, std::move(V));
  }
  return llvm::Error::success();
}

static llvm::Error identity(RuleContext &Ctx) {
  Ctx.setOutputLike(0, 0, /*KeepValues=*/true);
  return llvm::Error::success();
}

static llvm::Error negOrAbs(RuleContext &Ctx) {
  Ctx.setOutputLike(0, 0);
  if (!Ctx.inValues(0))
    return llvm::Error::success();
  bool IsNeg = Ctx.node().OpType == "Neg";
  std::vector<SymExpr> V;
  for (const SymExpr &E : *Ctx.inValues(0)) {
    if (IsNeg) {
      V.push_back(-E);
      continue;
    }
    std::optional<int64_t> C = E.getConstant();
    if (C)
      V.push_back(SymExpr::constant(*C < 0 ? -*C : *C));
    else if (E.isKnownNonNegative())
      V.push_back(E);
    else
      return llvm::Error::success();
  }
  Ctx.setOutputValues(0, std::move(V));
  return llvm::Error::success();
}

// Cast-1 (opsets 1-5) names the target type as a string ("FLOAT", "INT64");
// Cast-6 uses the DataType number.
static bool castTarget(const Node &N, ElementType &To) {
  const Attribute *A = N.attr("to");
  if (A && A->Kind == AttrKind::String) {
    for (int64_t Num = 1; Num <= MaxElementTypeNumber; ++Num)
      if (elementTypeFromNumber(Num, To) &&
          llvm::StringRef(A->S).equals_insensitive(elementTypeName(To)))
        return true;
    return false;
  }
  return elementTypeFromNumber(N.getInt("to", 0), To);
}

static llvm::Error cast(RuleContext &Ctx) {
  ElementType To;
  if (!castTarget(Ctx.node(), To) || To == ElementType::Undefined)
    return Ctx.error("Cast has no valid 'to' type");
  Ctx.setOutput(0, To, Ctx.inDims(0).vec());
  // Integer to integer or float keeps the values (shape values fit either
  // exactly; bool maps non-zero to 1). Float to integer would truncate.
  if (Ctx.inValues(0) && isIntegerLike(Ctx.inType(0))) {
    std::vector<SymExpr> V = *Ctx.inValues(0);
    if (To == ElementType::Bool)
      for (SymExpr &E : V) {
        std::optional<int64_t> C = E.getConstant();
        if (!C && !E.isKnownPositive())
          return llvm::Error::success();
        E = SymExpr::constant(C ? *C != 0 : 1);
      }
    Ctx.setOutputValues(0, std::move(V));
  }
  return llvm::Error::success();
}

static llvm::Error castLike(RuleContext &Ctx) {
  Ctx.setOutput(0, Ctx.inType(1), Ctx.inDims(0).vec());
  if (Ctx.inValues(0) && isIntegerLike(Ctx.inType(0)))
    Ctx.setOutputValues(0, *Ctx.inValues(0));
  return llvm::Error::success();
}

/// Dropout: output like the input; the optional mask is bool of that shape.
static llvm::Error dropout(RuleContext &Ctx) {
  Ctx.setOutputLike(0, 0);
  Ctx.setOutput(1, ElementType::Bool, Ctx.inDims(0).vec());
  return llvm::Error::success();
}

void shapes::addElementwiseRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::SameAsInput, sameAsInput);
  F.add(ops::ShapeRuleId::NegOrAbs, negOrAbs);
  F.add(ops::ShapeRuleId::Identity, identity);
  F.add(ops::ShapeRuleId::BoolOfInput, boolOfInput);
  F.add(ops::ShapeRuleId::Cast, cast);
  F.add(ops::ShapeRuleId::CastLike, castLike);
  F.add(ops::ShapeRuleId::Dropout, dropout);
}
