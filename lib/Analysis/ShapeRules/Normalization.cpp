//===- Normalization.cpp - rules for normalization layers -----------------===//
//
// BatchNormalization (training mode's running statistics outputs),
// InstanceNormalization, LayerNormalization (Mean and InvStdDev outputs),
// GroupNormalization and LpNormalization.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"

using namespace oomplan;
using namespace oomplan::shapes;

namespace {

/// Y like X; training-mode outputs 1..4 (running/saved mean and var) are [C].
llvm::Error batchNorm(RuleContext &Ctx) {
  Ctx.setOutputLike(0, 0);
  if (Ctx.inRank(0) < 2)
    return Ctx.error("input must have rank >= 2");
  for (size_t I = 1; I < Ctx.numOutputs(); ++I) {
    // Statistics have the type of the mean input (opset 15 allows it to
    // differ from X).
    ElementType T = Ctx.hasInput(3) ? Ctx.inType(3) : Ctx.inType(0);
    Ctx.setOutput(I, T, {Ctx.inDims(0)[1]});
  }
  return llvm::Error::success();
}

/// Y like X; Mean and InvStdDev keep dims before axis, 1 after, in the
/// stash_type (float by default).
llvm::Error layerNorm(RuleContext &Ctx) {
  Ctx.setOutputLike(0, 0);
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0);
  llvm::Expected<size_t> Axis =
      Ctx.axis(Ctx.node().getInt("axis", -1), X.size());
  if (!Axis)
    return Axis.takeError();
  std::vector<SymExpr> Stat = X.vec();
  for (size_t I = *Axis; I < Stat.size(); ++I)
    Stat[I] = SymExpr::constant(1);
  ElementType Stash;
  if (!elementTypeFromNumber(Ctx.node().getInt("stash_type", 1), Stash))
    Stash = ElementType::Float;
  Ctx.setOutput(1, Stash, Stat);
  Ctx.setOutput(2, Stash, Stat);
  return llvm::Error::success();
}

} // namespace

void shapes::addNormalizationRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::BatchNorm, batchNorm);
  F.add(ops::ShapeRuleId::LayerNorm, layerNorm);
}
