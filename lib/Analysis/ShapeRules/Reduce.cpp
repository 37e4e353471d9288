//===- Reduce.cpp - rules for reductions ----------------------------------===//
//
// The Reduce* family (axes as an attribute, or as an input from opset 13 for
// ReduceSum and 18 for the rest), keepdims and noop_with_empty_axes, and
// ArgMax/ArgMin (int64 indices).
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"

using namespace oomplan;
using namespace oomplan::shapes;

namespace {

llvm::Error reduce(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0);
  bool IsArg = Ctx.node().OpType.rfind("Arg", 0) == 0;
  std::vector<int64_t> Axes;
  if (IsArg) {
    Axes.push_back(Ctx.node().getInt("axis", 0));
  } else {
    llvm::Expected<std::optional<std::vector<int64_t>>> A =
        Ctx.intsAttrOrInput("axes", 1);
    if (!A)
      return A.takeError();
    if (*A)
      Axes = **A;
  }
  bool KeepDims = Ctx.node().getInt("keepdims", 1) != 0;
  if (Axes.empty()) {
    if (Ctx.node().getInt("noop_with_empty_axes", 0)) {
      Ctx.setOutputLike(0, 0);
      return llvm::Error::success();
    }
    for (size_t I = 0; I < X.size(); ++I)
      Axes.push_back(int64_t(I));
  }
  std::vector<bool> Reduced(X.size(), false);
  for (int64_t A : Axes) {
    llvm::Expected<size_t> I = Ctx.axis(A, X.size());
    if (!I)
      return I.takeError();
    Reduced[*I] = true;
  }
  std::vector<SymExpr> Out;
  for (size_t I = 0; I < X.size(); ++I) {
    if (!Reduced[I])
      Out.push_back(X[I]);
    else if (KeepDims)
      Out.push_back(SymExpr::constant(1));
  }
  Ctx.setOutput(0, IsArg ? ElementType::Int64 : Ctx.inType(0), std::move(Out));
  // Shape arithmetic: a vector of tracked values reduced to one, as
  // torchvision's detection heads take k = min(1000, candidates) and
  // numel = prod(shape). (ReduceMin of a bound is a bound: min is monotone.)
  llvm::StringRef Op = Ctx.node().OpType;
  const std::optional<std::vector<SymExpr>> &V = Ctx.inValues(0);
  if (V && !V->empty() && X.size() == 1 && Reduced[0] &&
      isIntegerLike(Ctx.inType(0)) &&
      (Op == "ReduceMin" || Op == "ReduceMax" || Op == "ReduceSum" ||
       Op == "ReduceProd")) {
    SymExpr R = V->front();
    for (size_t I = 1; I < V->size(); ++I) {
      const SymExpr &E = (*V)[I];
      R = Op == "ReduceMin"   ? SymExpr::min(R, E)
          : Op == "ReduceMax" ? SymExpr::max(R, E)
          : Op == "ReduceSum" ? R + E
                              : R * E;
    }
    Ctx.setOutputValues(0, {R});
  }
  return llvm::Error::success();
}

} // namespace

void shapes::addReduceRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::Reduce, reduce);
}
