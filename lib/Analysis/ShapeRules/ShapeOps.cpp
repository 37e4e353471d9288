//===- ShapeOps.cpp - rules for ops that make shapes and constants --------===//
//
// Shape, Size, Constant, ConstantOfShape, Range, EyeLike and the random
// generators with a shape attribute. These are where symbolic dims turn into
// tracked integer contents (Shape) and back into dims (ConstantOfShape,
// Range).
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"
#include <algorithm>
#include <cmath>

using namespace oomplan;
using namespace oomplan::shapes;

namespace {

llvm::Error shape(RuleContext &Ctx) {
  std::vector<SymExpr> Dims = Ctx.inDims(0).vec();
  int64_t R = int64_t(Dims.size());
  // Opset 15: optional start/end, clamped like Slice.
  int64_t Start = Ctx.node().getInt("start", 0);
  int64_t End = Ctx.node().getInt("end", R);
  if (Start < 0)
    Start += R;
  if (End < 0)
    End += R;
  Start = std::clamp<int64_t>(Start, 0, R);
  End = std::clamp<int64_t>(End, 0, R);
  std::vector<SymExpr> Vals;
  for (int64_t I = Start; I < End; ++I)
    Vals.push_back(Dims[I]);
  Ctx.setOutput(0, ElementType::Int64,
                {SymExpr::constant(int64_t(Vals.size()))});
  Ctx.setOutputValues(0, std::move(Vals));
  return llvm::Error::success();
}

llvm::Error size(RuleContext &Ctx) {
  Ctx.setOutput(0, ElementType::Int64, {});
  Ctx.setOutputValues(0, {numElements(Ctx.inDims(0))});
  return llvm::Error::success();
}

llvm::Error constant(RuleContext &Ctx) {
  const Node &N = Ctx.node();
  if (const Attribute *A = N.attr("value"); A && A->T) {
    const TensorData &D = *A->T;
    Ctx.setOutput(0, D.Type, toExprs(D.Dims));
    if (isIntegerLike(D.Type) && D.Ints.size() == D.numElements())
      Ctx.setOutputValues(0, toExprs(D.Ints));
    // Whole-number float constants (0, 1, 2 of a float Range) are exact.
    std::vector<int64_t> Whole;
    for (double F : D.Floats)
      if (std::abs(F) < 9.0e15 && F == std::floor(F))
        Whole.push_back(int64_t(F));
    if (isFloatingPoint(D.Type) && Whole.size() == D.numElements())
      Ctx.setOutputValues(0, toExprs(Whole));
    return llvm::Error::success();
  }
  if (const Attribute *A = N.attr("value_int")) {
    Ctx.setOutput(0, ElementType::Int64, {});
    Ctx.setOutputValues(0, {SymExpr::constant(A->I)});
    return llvm::Error::success();
  }
  if (const Attribute *A = N.attr("value_ints")) {
    Ctx.setOutput(0, ElementType::Int64,
                  {SymExpr::constant(int64_t(A->Ints.size()))});
    Ctx.setOutputValues(0, toExprs(A->Ints));
    return llvm::Error::success();
  }
  if (N.attr("value_float")) {
    Ctx.setOutput(0, ElementType::Float, {});
    return llvm::Error::success();
  }
  if (const Attribute *A = N.attr("value_floats")) {
    Ctx.setOutput(0, ElementType::Float,
                  {SymExpr::constant(int64_t(A->Floats.size()))});
    return llvm::Error::success();
  }
  if (N.attr("value_string")) {
    Ctx.setOutput(0, ElementType::String, {});
    return llvm::Error::success();
  }
  if (const Attribute *A = N.attr("value_strings")) {
    Ctx.setOutput(0, ElementType::String,
                  {SymExpr::constant(int64_t(A->Strings.size()))});
    return llvm::Error::success();
  }
  return Ctx.unsupported(
      "Constant has no value attribute this analysis can read "
      "(sparse_value is not supported)");
}

/// Dims given by the tracked contents of input I (a 1-D shape tensor).
llvm::Expected<std::vector<SymExpr>> dimsFromInput(const RuleContext &Ctx,
                                                   size_t I) {
  const std::optional<std::vector<SymExpr>> &V = Ctx.inValues(I);
  if (!V)
    return Ctx.error("the shape input is computed from data this analysis "
                     "cannot follow");
  for (const SymExpr &D : *V)
    if (std::optional<int64_t> C = D.getConstant(); C && *C < 0)
      return Ctx.error("negative dim " + llvm::Twine(*C) + " in shape input");
  return *V;
}

llvm::Error constantOfShape(RuleContext &Ctx) {
  llvm::Expected<std::vector<SymExpr>> Dims = dimsFromInput(Ctx, 0);
  if (!Dims)
    return Dims.takeError();
  ElementType Type = ElementType::Float;
  std::optional<int64_t> Fill = 0;
  if (const Attribute *A = Ctx.node().attr("value"); A && A->T) {
    Type = A->T->Type;
    Fill = A->T->Ints.empty() ? std::nullopt
                              : std::optional<int64_t>(A->T->Ints[0]);
  }
  Ctx.setOutput(0, Type, *Dims);
  std::optional<int64_t> N = constantNumElements(*Dims);
  if (Fill && N && *N <= MaxTrackedElements)
    Ctx.setOutputValues(0, std::vector<SymExpr>(*N, SymExpr::constant(*Fill)));
  return llvm::Error::success();
}

/// Range: max(ceil((limit - start) / delta), 0) elements.
llvm::Error range(RuleContext &Ctx) {
  ElementType Type = Ctx.inType(0);
  const std::optional<std::vector<SymExpr>> &S = Ctx.inValues(0),
                                            &L = Ctx.inValues(1),
                                            &D = Ctx.inValues(2);
  if (!S || !L || !D || S->size() != 1 || L->size() != 1 || D->size() != 1) {
    if (isIntegerLike(Type))
      return Ctx.error("start, limit and delta must be known (symbolic "
                       "integers are fine)");
    // Float ranges: sizes only from constant float contents.
    const TensorData *TS = Ctx.constData(0), *TL = Ctx.constData(1),
                     *TD = Ctx.constData(2);
    if (!TS || !TL || !TD || TS->Floats.size() != 1 || TL->Floats.size() != 1 ||
        TD->Floats.size() != 1 || TD->Floats[0] == 0)
      return Ctx.error("a floating-point Range needs constant start, limit "
                       "and delta");
    double Count = std::ceil((TL->Floats[0] - TS->Floats[0]) / TD->Floats[0]);
    if (!(Count <= double(MaxDimSize))) // Also NaN.
      return Ctx.error("a floating-point Range with more than 2^48 elements");
    Ctx.setOutput(0, Type, {SymExpr::constant(int64_t(std::max(Count, 0.0)))});
    return llvm::Error::success();
  }
  const SymExpr &Start = (*S)[0], &Limit = (*L)[0], &Delta = (*D)[0];
  std::optional<int64_t> Step = Delta.getConstant();
  if (!Step || *Step == 0)
    return Ctx.error("Range needs a constant, non-zero delta");
  SymExpr Count = SymExpr::max(SymExpr::ceilDiv(Limit - Start, Delta),
                               SymExpr::constant(0));
  Ctx.setOutput(0, Type, {Count});
  if (std::optional<int64_t> N = Count.getConstant();
      N && *N <= MaxTrackedElements) {
    std::vector<SymExpr> Vals;
    for (int64_t I = 0; I < *N; ++I)
      Vals.push_back(Start + SymExpr::constant(I * *Step));
    Ctx.setOutputValues(0, std::move(Vals));
  }
  return llvm::Error::success();
}

/// dtype attribute, or Default.
ElementType dtypeAttr(const RuleContext &Ctx, ElementType Default) {
  ElementType T;
  if (Ctx.node().attr("dtype") &&
      elementTypeFromNumber(Ctx.node().getInt("dtype", 0), T) &&
      T != ElementType::Undefined)
    return T;
  return Default;
}

llvm::Error eyeLike(RuleContext &Ctx) {
  Ctx.setOutput(0, dtypeAttr(Ctx, Ctx.inType(0)), Ctx.inDims(0).vec());
  return llvm::Error::success();
}

/// RandomNormal, RandomUniform: the shape attribute.
llvm::Error randomWithShape(RuleContext &Ctx) {
  std::optional<std::vector<int64_t>> Shape = Ctx.node().getInts("shape");
  if (!Shape)
    return Ctx.error("missing 'shape' attribute");
  Ctx.setOutput(0, dtypeAttr(Ctx, ElementType::Float), toExprs(*Shape));
  return llvm::Error::success();
}

/// Multinomial: [batch, sample_size].
llvm::Error multinomial(RuleContext &Ctx) {
  if (Ctx.inRank(0) != 2)
    return Ctx.error("input must be 2-D");
  Ctx.setOutput(0, dtypeAttr(Ctx, ElementType::Int32),
                {Ctx.inDims(0)[0],
                 SymExpr::constant(Ctx.node().getInt("sample_size", 1))});
  return llvm::Error::success();
}

/// Same-shape ops with an optional dtype attribute (Bernoulli, *Like).
llvm::Error likeWithDtype(RuleContext &Ctx) {
  Ctx.setOutput(0, dtypeAttr(Ctx, Ctx.inType(0)), Ctx.inDims(0).vec());
  return llvm::Error::success();
}

} // namespace

void shapes::addShapeOpRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::Shape, shape);
  F.add(ops::ShapeRuleId::Size, size);
  F.add(ops::ShapeRuleId::Constant, constant);
  F.add(ops::ShapeRuleId::ConstantOfShape, constantOfShape);
  F.add(ops::ShapeRuleId::Range, range);
  F.add(ops::ShapeRuleId::EyeLike, eyeLike);
  F.add(ops::ShapeRuleId::RandomWithShape, randomWithShape);
  F.add(ops::ShapeRuleId::Multinomial, multinomial);
  F.add(ops::ShapeRuleId::LikeWithDtype, likeWithDtype);
}
