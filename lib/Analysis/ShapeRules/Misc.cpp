//===- Misc.cpp - rules for quantization, losses, windows and the rest ----===//
//
// Ops that fit no larger family: (de)quantization, the two loss functions,
// GridSample and AffineGrid, the signal windows and MelWeightMatrix.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"

using namespace oomplan;
using namespace oomplan::shapes;

namespace {

/// QuantizeLinear: the zero point's type, else (opset 21) output_dtype's,
/// else uint8.
llvm::Error quantize(RuleContext &Ctx) {
  ElementType T = ElementType::UInt8;
  int64_t Dtype = Ctx.node().getInt("output_dtype", 0);
  if (Ctx.hasInput(2)) {
    T = Ctx.inType(2);
    ElementType D;
    if (Dtype != 0 && elementTypeFromNumber(Dtype, D) && D != T)
      return Ctx.error("output_dtype differs from the zero point's type");
  } else if (Dtype != 0) {
    if (!elementTypeFromNumber(Dtype, T) || T == ElementType::Undefined)
      return Ctx.error("output_dtype " + std::to_string(Dtype) +
                       " is not a supported element type");
  }
  Ctx.setOutput(0, T, Ctx.inDims(0).vec());
  return llvm::Error::success();
}

/// DequantizeLinear: the scale's type, else (opset 23) output_dtype's.
llvm::Error dequantize(RuleContext &Ctx) {
  ElementType T = Ctx.inType(1);
  if (int64_t Dtype = Ctx.node().getInt("output_dtype", 0); Dtype != 0) {
    if (!elementTypeFromNumber(Dtype, T) ||
        (T != ElementType::Float && T != ElementType::Float16 &&
         T != ElementType::BFloat16))
      return Ctx.error("output_dtype " + std::to_string(Dtype) +
                       " is not float, float16 or bfloat16");
  }
  Ctx.setOutput(0, T, Ctx.inDims(0).vec());
  return llvm::Error::success();
}

llvm::Error dynamicQuantize(RuleContext &Ctx) {
  Ctx.setOutput(0, ElementType::UInt8, Ctx.inDims(0).vec());
  Ctx.setOutput(1, ElementType::Float, {});
  Ctx.setOutput(2, ElementType::UInt8, {});
  return llvm::Error::success();
}

/// SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss: [N, d1, ...] without
/// the class axis when reduction is none, else a scalar; log_prob like input.
llvm::Error loss(RuleContext &Ctx) {
  std::vector<SymExpr> In = Ctx.inDims(0).vec();
  if (In.size() < 2)
    return Ctx.error("input must have rank >= 2");
  // The target is [N, d1, ...] (the input without its class axis) and the
  // optional weight has one entry per class: the kernel reads weight[t]
  // for every target class t.
  std::vector<SymExpr> NoClass = In;
  NoClass.erase(NoClass.begin() + 1);
  if (Ctx.numInputs() > 1 && Ctx.hasInput(1)) {
    llvm::ArrayRef<SymExpr> T = Ctx.inDims(1);
    if (T.size() != NoClass.size())
      return Ctx.error("target has rank " + llvm::Twine(T.size()) +
                       "; the input's rank without its class axis is " +
                       llvm::Twine(NoClass.size()));
    for (size_t I = 0; I < T.size(); ++I) {
      std::optional<int64_t> A = T[I].getConstant(),
                             B = NoClass[I].getConstant();
      if (A && B && *A != *B)
        return Ctx.error("target dim " + llvm::Twine(I) + " is " +
                         llvm::Twine(*A) + ", the input's is " +
                         llvm::Twine(*B));
      Ctx.require(DimConstraint::Kind::Equal, T[I], NoClass[I],
                  "target dim " + llvm::Twine(I) + " and the input's");
    }
  }
  if (Ctx.numInputs() > 2 && Ctx.hasInput(2)) {
    llvm::ArrayRef<SymExpr> W = Ctx.inDims(2);
    if (W.size() != 1)
      return Ctx.error("weight has rank " + llvm::Twine(W.size()) +
                       "; it must be 1-D, one entry per class");
    std::optional<int64_t> A = W[0].getConstant(), C = In[1].getConstant();
    if (A && C && *A != *C)
      return Ctx.error("weight has " + llvm::Twine(*A) + " entries for " +
                       llvm::Twine(*C) + " classes");
    Ctx.require(DimConstraint::Kind::Equal, W[0], In[1],
                "weight length and the class count");
  }
  std::vector<SymExpr> Out;
  if (Ctx.node().getString("reduction", "mean") == "none") {
    Out = In;
    Out.erase(Out.begin() + 1);
  }
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  Ctx.setOutputLike(1, 0);
  return llvm::Error::success();
}

/// GridSample: [N, C] + the grid's spatial dims.
llvm::Error gridSample(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0), Grid = Ctx.inDims(1);
  if (X.size() < 3 || Grid.size() != X.size())
    return Ctx.error("input and grid must have the same rank >= 3");
  std::vector<SymExpr> Out = {X[0], X[1]};
  Out.insert(Out.end(), Grid.begin() + 1, Grid.end() - 1);
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

/// AffineGrid (opset 20): size [N, C, H, W] gives [N, H, W, 2], size
/// [N, C, D, H, W] gives [N, D, H, W, 3]; theta's type.
llvm::Error affineGrid(RuleContext &Ctx) {
  const std::optional<std::vector<SymExpr>> &Size = Ctx.inValues(1);
  if (!Size || (Size->size() != 4 && Size->size() != 5))
    return Ctx.error("size must be known, [N, C, H, W] or [N, C, D, H, W]");
  std::vector<SymExpr> Out = {(*Size)[0]};
  Out.insert(Out.end(), Size->begin() + 2, Size->end());
  Out.push_back(SymExpr::constant(int64_t(Size->size()) - 2));
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

/// HannWindow and friends: [size], output_datatype (float by default).
llvm::Error window(RuleContext &Ctx) {
  if (!Ctx.inValues(0) || Ctx.inValues(0)->size() != 1)
    return Ctx.error("size must be a known scalar");
  ElementType T;
  if (!elementTypeFromNumber(Ctx.node().getInt("output_datatype", 1), T))
    T = ElementType::Float;
  Ctx.setOutput(0, T, {(*Ctx.inValues(0))[0]});
  return llvm::Error::success();
}

/// MelWeightMatrix: [floor(dft_length / 2) + 1, num_mel_bins].
llvm::Error melWeightMatrix(RuleContext &Ctx) {
  const std::optional<std::vector<SymExpr>> &Bins = Ctx.inValues(0),
                                            &Dft = Ctx.inValues(1);
  if (!Bins || !Dft || Bins->size() != 1 || Dft->size() != 1)
    return Ctx.error("num_mel_bins and dft_length must be known");
  ElementType T;
  if (!elementTypeFromNumber(Ctx.node().getInt("output_datatype", 1), T))
    T = ElementType::Float;
  Ctx.setOutput(0, T,
                {SymExpr::floorDiv((*Dft)[0], SymExpr::constant(2)) +
                     SymExpr::constant(1),
                 (*Bins)[0]});
  return llvm::Error::success();
}

/// A known scalar from input I (tracked integer contents), or std::nullopt.
std::optional<SymExpr> scalarInput(const RuleContext &Ctx, size_t I) {
  if (!Ctx.hasInput(I) || !Ctx.inValues(I) || Ctx.inValues(I)->size() != 1)
    return std::nullopt;
  return (*Ctx.inValues(I))[0];
}

/// DFT (opset 17): the transformed axis becomes dft_length (or half of it
/// plus one when onesided); the last axis becomes 2 (complex).
llvm::Error dft(RuleContext &Ctx) {
  std::vector<SymExpr> Out = Ctx.inDims(0).vec();
  if (Out.size() < 2)
    return Ctx.error("input must have rank >= 2");
  llvm::Expected<size_t> Axis =
      Ctx.axis(Ctx.node().getInt("axis", 1), Out.size() - 1);
  if (!Axis)
    return Axis.takeError();
  SymExpr N = Out[*Axis];
  if (Ctx.hasInput(1)) {
    std::optional<SymExpr> L = scalarInput(Ctx, 1);
    if (!L)
      return Ctx.error("dft_length must be known");
    N = *L;
  }
  if (Ctx.node().getInt("onesided", 0))
    N = SymExpr::floorDiv(N, SymExpr::constant(2)) + SymExpr::constant(1);
  Out[*Axis] = N;
  Out.back() = SymExpr::constant(2);
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

/// STFT: [batch, frames, bins, 2] with frames = floor((length - frame) /
/// step) + 1 and bins = frame (or frame/2 + 1 when onesided).
llvm::Error stft(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> Sig = Ctx.inDims(0);
  if (Sig.size() != 3)
    return Ctx.error("signal must be 3-D");
  std::optional<SymExpr> Step = scalarInput(Ctx, 1);
  std::optional<SymExpr> Frame = scalarInput(Ctx, 3);
  if (!Frame && Ctx.hasInput(2) && Ctx.inRank(2) == 1)
    Frame = Ctx.inDims(2)[0];
  if (!Step || !Frame)
    return Ctx.error("frame_step and the frame length must be known");
  SymExpr Frames =
      SymExpr::floorDiv(Sig[1] - *Frame, *Step) + SymExpr::constant(1);
  SymExpr Bins = Ctx.node().getInt("onesided", 1)
                     ? SymExpr::floorDiv(*Frame, SymExpr::constant(2)) +
                           SymExpr::constant(1)
                     : *Frame;
  Ctx.setOutput(0, Ctx.inType(0), {Sig[0], Frames, Bins, SymExpr::constant(2)});
  return llvm::Error::success();
}

} // namespace

void shapes::addMiscRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::Quantize, quantize);
  F.add(ops::ShapeRuleId::Dequantize, dequantize);
  F.add(ops::ShapeRuleId::DynamicQuantize, dynamicQuantize);
  F.add(ops::ShapeRuleId::Loss, loss);
  F.add(ops::ShapeRuleId::GridSample, gridSample);
  F.add(ops::ShapeRuleId::AffineGrid, affineGrid);
  F.add(ops::ShapeRuleId::Window, window);
  F.add(ops::ShapeRuleId::MelWeightMatrix, melWeightMatrix);
  F.add(ops::ShapeRuleId::DFT, dft);
  F.add(ops::ShapeRuleId::STFT, stft);
}
