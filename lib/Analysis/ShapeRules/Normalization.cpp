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

/// Per-channel parameters (BatchNorm's scale, B, mean, var; InstanceNorm's
/// scale and B): inputs First..Last of the node, each [C].
llvm::Error checkPerChannel(RuleContext &Ctx, size_t First, size_t Last,
                            llvm::ArrayRef<const char *> Names) {
  std::optional<int64_t> C = Ctx.inDims(0)[1].getConstant();
  for (size_t I = First; I <= Last && I < Ctx.numInputs(); ++I) {
    if (!Ctx.hasInput(I))
      continue;
    llvm::ArrayRef<SymExpr> P = Ctx.inDims(I);
    std::optional<int64_t> D =
        P.size() == 1 ? P[0].getConstant() : std::nullopt;
    if (P.size() != 1 || (C && D && *C != *D))
      return Ctx.error(std::string(Names[I - First]) +
                       " must be [C] with C = " +
                       (C ? std::to_string(*C) : std::string("dim 1")) +
                       ", got rank " + std::to_string(P.size()) +
                       (D ? " [" + std::to_string(*D) + "]" : std::string()));
  }
  return llvm::Error::success();
}

/// Y like X; training-mode outputs 1..4 (running/saved mean and var) are [C].
llvm::Error batchNorm(RuleContext &Ctx) {
  Ctx.setOutputLike(0, 0);
  if (Ctx.inRank(0) < 2)
    return Ctx.error("input must have rank >= 2");
  // scale, B, mean and var are [C] (before opset 9, spatial = 0 made them
  // [C, D1, ...]: not checked then).
  if (Ctx.node().getInt("spatial", 1) != 0)
    if (llvm::Error E = checkPerChannel(
            Ctx, 1, 4, {"scale", "B", "input_mean", "input_var"}))
      return E;
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
  // Scale and B broadcast to the normalized dims X[axis:] (LayerNorm-17
  // scales by a broadcasting Mul): each trailing dim is that dim or 1, and
  // dims beyond the normalized ones are 1 ([1, D] on [B, S, D]).
  for (size_t I = 1; I < 3 && I < Ctx.numInputs(); ++I) {
    if (!Ctx.hasInput(I))
      continue;
    llvm::ArrayRef<SymExpr> P = Ctx.inDims(I);
    size_t Norm = X.size() - *Axis;
    const char *What = I == 1 ? "Scale" : "B";
    for (size_t A = 0; A < P.size(); ++A) {
      std::optional<int64_t> D = P[A].getConstant();
      size_t FromEnd = P.size() - A; // 1 for the last dim
      if (FromEnd > Norm) {
        if (D && *D != 1)
          return Ctx.error(std::string(What) + " dim " + std::to_string(A) +
                           " is " + std::to_string(*D) +
                           ", outside the normalized dims it must be 1");
        continue;
      }
      std::optional<int64_t> Want = X[X.size() - FromEnd].getConstant();
      if (D && Want && *D != 1 && *D != *Want)
        return Ctx.error(std::string(What) + " dim " + std::to_string(A) +
                         " is " + std::to_string(*D) +
                         ", the normalized dim is " + std::to_string(*Want));
    }
  }
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

/// Y like X; scale and B are [C].
llvm::Error instanceNorm(RuleContext &Ctx) {
  Ctx.setOutputLike(0, 0);
  if (Ctx.inRank(0) < 3)
    return Ctx.error("input must have rank >= 3");
  return checkPerChannel(Ctx, 1, 2, {"scale", "B"});
}

} // namespace

void shapes::addNormalizationRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::InstanceNorm, instanceNorm);
  F.add(ops::ShapeRuleId::BatchNorm, batchNorm);
  F.add(ops::ShapeRuleId::LayerNorm, layerNorm);
}
