//===- DataDependent.cpp - rules for ops whose sizes depend on data -------===//
//
// NonZero, Unique, Compress, TopK with a run-time k, NonMaxSuppression. The
// output dims are an upper bound (ValueShape::UpperBound) in terms of the
// input sizes, so memory can still be planned, and a warning says so. When
// the data is tracked (small constant tensors) the exact size is used.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::shapes;

namespace {

/// Number of non-zero constants in input I, when tracked and constant.
std::optional<int64_t> countNonZero(const RuleContext &Ctx, size_t I) {
  std::optional<std::vector<int64_t>> V = Ctx.constInts(I);
  if (!V)
    return std::nullopt;
  int64_t N = 0;
  for (int64_t X : *V)
    N += X != 0;
  return N;
}

void warnBound(RuleContext &Ctx, const SymExpr &Bound) {
  Ctx.warn("data-dependent size; planning with the upper bound " +
           Bound.str(Ctx.graph().Symbols));
}

llvm::Error nonZero(RuleContext &Ctx) {
  SymExpr Rank = SymExpr::constant(int64_t(Ctx.inRank(0)));
  if (std::optional<int64_t> N = countNonZero(Ctx, 0)) {
    Ctx.setOutput(0, ElementType::Int64, {Rank, SymExpr::constant(*N)});
    return llvm::Error::success();
  }
  SymExpr Bound = numElements(Ctx.inDims(0));
  Ctx.setOutput(0, ElementType::Int64,
                {Rank, Ctx.dataDependent(Bound, "nonzero")},
                /*UpperBound=*/true);
  warnBound(Ctx, Bound);
  return llvm::Error::success();
}

llvm::Error compress(RuleContext &Ctx) {
  std::vector<SymExpr> Out = Ctx.inDims(0).vec();
  size_t Axis = 0;
  if (Ctx.node().attr("axis")) {
    llvm::Expected<size_t> A =
        Ctx.axis(Ctx.node().getInt("axis", 0), Out.size());
    if (!A)
      return A.takeError();
    Axis = *A;
  } else {
    Out = {numElements(Out)};
  }
  if (std::optional<int64_t> N = countNonZero(Ctx, 1)) {
    Out[Axis] = SymExpr::min(SymExpr::constant(*N), Out[Axis]);
    Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
    return llvm::Error::success();
  }
  Out[Axis] = SymExpr::min(Out[Axis], numElements(Ctx.inDims(1)));
  warnBound(Ctx, Out[Axis]);
  Out[Axis] = Ctx.dataDependent(Out[Axis], "compress");
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out), /*UpperBound=*/true);
  return llvm::Error::success();
}

llvm::Error unique(RuleContext &Ctx) {
  std::vector<SymExpr> Out = Ctx.inDims(0).vec();
  SymExpr K, InverseLen;
  std::optional<size_t> Axis;
  if (Ctx.node().attr("axis")) {
    llvm::Expected<size_t> A =
        Ctx.axis(Ctx.node().getInt("axis", 0), Out.size());
    if (!A)
      return A.takeError();
    Axis = *A;
    K = Out[*A];
    InverseLen = Out[*A];
  } else {
    K = numElements(Out);
    InverseLen = K;
    Out = {K};
  }
  std::optional<std::vector<int64_t>> V = Ctx.constInts(0);
  bool Exact = V && !Ctx.node().attr("axis");
  if (Exact) {
    std::vector<int64_t> S = *V;
    std::sort(S.begin(), S.end());
    K = SymExpr::constant(std::unique(S.begin(), S.end()) - S.begin());
    Out = {K};
  } else {
    warnBound(Ctx, K);
    K = Ctx.dataDependent(K, "unique");
    if (Axis)
      Out[*Axis] = K;
    else
      Out = {K};
  }
  Ctx.setOutput(0, Ctx.inType(0), Out, !Exact);
  Ctx.setOutput(1, ElementType::Int64, {K}, !Exact);
  Ctx.setOutput(2, ElementType::Int64, {InverseLen});
  Ctx.setOutput(3, ElementType::Int64, {K}, !Exact);
  return llvm::Error::success();
}

llvm::Error topK(RuleContext &Ctx) {
  std::vector<SymExpr> Out = Ctx.inDims(0).vec();
  llvm::Expected<size_t> Axis =
      Ctx.axis(Ctx.node().getInt("axis", -1), Out.size());
  if (!Axis)
    return Axis.takeError();
  bool Bound = false;
  if (Ctx.node().attr("k")) { // Opset 1-9.
    Out[*Axis] = SymExpr::constant(Ctx.node().getInt("k", 0));
  } else if (Ctx.inValues(1) && Ctx.inValues(1)->size() == 1) {
    Out[*Axis] = SymExpr::min((*Ctx.inValues(1))[0], Out[*Axis]);
  } else {
    Bound = true;
    warnBound(Ctx, Out[*Axis]);
    Out[*Axis] = Ctx.dataDependent(Out[*Axis], "topk");
  }
  Ctx.setOutput(0, Ctx.inType(0), Out, Bound);
  Ctx.setOutput(1, ElementType::Int64, Out, Bound);
  return llvm::Error::success();
}

/// NonMaxSuppression: [selected, 3] with selected <= batches * classes *
/// min(boxes, max_output_boxes_per_class).
llvm::Error nms(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> Boxes = Ctx.inDims(0), Scores = Ctx.inDims(1);
  if (Boxes.size() != 3 || Scores.size() != 3)
    return Ctx.error("boxes and scores must be 3-D");
  SymExpr PerClass = Boxes[1];
  if (Ctx.hasInput(2) && Ctx.inValues(2) && Ctx.inValues(2)->size() == 1)
    PerClass = SymExpr::min(PerClass, (*Ctx.inValues(2))[0]);
  else if (!Ctx.hasInput(2))
    PerClass = SymExpr(); // Default max_output_boxes_per_class is 0.
  SymExpr Bound = Scores[0] * Scores[1] * PerClass;
  warnBound(Ctx, Bound);
  Ctx.setOutput(0, ElementType::Int64,
                {Ctx.dataDependent(Bound, "nms"), SymExpr::constant(3)},
                /*UpperBound=*/true);
  return llvm::Error::success();
}

} // namespace

void shapes::addDataDependentRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::NonZero, nonZero);
  F.add(ops::ShapeRuleId::Compress, compress);
  F.add(ops::ShapeRuleId::Unique, unique);
  F.add(ops::ShapeRuleId::TopK, topK);
  F.add(ops::ShapeRuleId::NonMaxSuppression, nms);
}
