//===- ConvPool.cpp - rules for convolution, pooling and resizing ---------===//
//
// Conv, ConvTranspose, ConvInteger, QLinearConv, the pools (with pads,
// strides, dilations, auto_pad and ceil_mode), RoI pools, MaxUnpool, Resize
// and Upsample. Spatial sizes use floor/ceil division so that symbolic
// heights and widths stay exact formulas.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::shapes;

namespace {

/// The window parameters of a conv or pool over Spatial dims.
struct Window {
  std::vector<int64_t> Kernel, Strides, Dilations, Pads;
  std::string AutoPad;
  bool CeilMode = false;
};

llvm::Expected<Window> readWindow(const RuleContext &Ctx, size_t Spatial,
                                  std::optional<std::vector<int64_t>> Kernel) {
  const Node &N = Ctx.node();
  Window W;
  if (!Kernel)
    Kernel = N.getInts("kernel_shape");
  if (!Kernel || Kernel->size() != Spatial)
    return Ctx.error("kernel_shape must have one entry per spatial dim (" +
                     llvm::Twine(Spatial) + ")");
  W.Kernel = *Kernel;
  W.Strides = N.getInts("strides").value_or(std::vector<int64_t>(Spatial, 1));
  W.Dilations =
      N.getInts("dilations").value_or(std::vector<int64_t>(Spatial, 1));
  W.Pads = N.getInts("pads").value_or(std::vector<int64_t>(2 * Spatial, 0));
  W.AutoPad = N.getString("auto_pad", "NOTSET");
  W.CeilMode = N.getInt("ceil_mode", 0) != 0;
  if (W.Strides.size() != Spatial || W.Dilations.size() != Spatial ||
      W.Pads.size() != 2 * Spatial)
    return Ctx.error("strides, dilations or pads do not match " +
                     llvm::Twine(Spatial) + " spatial dims");
  // Bounded by the largest dim, so that window arithmetic cannot overflow.
  auto InRange = [](llvm::ArrayRef<int64_t> L, int64_t Lo) {
    return llvm::all_of(L,
                        [&](int64_t V) { return V >= Lo && V <= MaxDimSize; });
  };
  if (!InRange(W.Strides, 1) || !InRange(W.Dilations, 1))
    return Ctx.error("strides and dilations must be in [1, 2^48]");
  if (!InRange(W.Kernel, 1) || !InRange(W.Pads, 0))
    return Ctx.error("kernel_shape must be in [1, 2^48] and pads in [0, 2^48]");
  for (size_t I = 0; I < Spatial; ++I)
    if (W.Dilations[I] > MaxDimSize / W.Kernel[I])
      return Ctx.error("dilated kernel extent exceeds 2^48");
  return W;
}

/// Output size of spatial axis I of size D.
SymExpr windowOut(const Window &W, size_t I, const SymExpr &D) {
  int64_t S = W.Strides[I];
  int64_t Extent = W.Dilations[I] * (W.Kernel[I] - 1) + 1;
  SymExpr Stride = SymExpr::constant(S);
  if (W.AutoPad == "SAME_UPPER" || W.AutoPad == "SAME_LOWER")
    return SymExpr::ceilDiv(D, Stride);
  if (W.AutoPad == "VALID")
    return SymExpr::ceilDiv(D - SymExpr::constant(Extent - 1), Stride);
  int64_t Spatial = int64_t(W.Kernel.size());
  SymExpr Span =
      D + SymExpr::constant(W.Pads[I] + W.Pads[I + Spatial] - Extent);
  if (!W.CeilMode)
    return SymExpr::floorDiv(Span, Stride) + SymExpr::constant(1);
  SymExpr Out = SymExpr::ceilDiv(Span, Stride) + SymExpr::constant(1);
  // The last window must start inside the input or left padding (ONNX and
  // PyTorch); only checkable when the size is a constant.
  std::optional<int64_t> O = Out.getConstant(), DC = D.getConstant();
  if (O && DC && (*O - 1) * S >= *DC + W.Pads[I])
    return SymExpr::constant(*O - 1);
  return Out;
}

/// The window of a convolution whose kernel size, unless the kernel_shape
/// attribute gives it, is the weight's spatial dims (which must be constant).
static llvm::Expected<Window>
readWeightWindow(RuleContext &Ctx, llvm::ArrayRef<SymExpr> Wt, size_t Spatial) {
  std::optional<std::vector<int64_t>> K;
  if (!Ctx.node().getInts("kernel_shape")) {
    K = constantDims(Wt.drop_front(2));
    if (!K)
      return Ctx.error("the kernel size must be constant");
  }
  return readWindow(Ctx, Spatial, K);
}

/// Conv, ConvInteger, QLinearConv: [N, M, spatial...].
llvm::Error conv(RuleContext &Ctx) {
  llvm::StringRef Op = Ctx.node().OpType;
  size_t WIndex = Op == "QLinearConv" ? 3 : 1;
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0), Wt = Ctx.inDims(WIndex);
  if (X.size() < 3 || Wt.size() != X.size())
    return Ctx.error("input and weight must have the same rank >= 3");
  size_t Spatial = X.size() - 2;
  int64_t Group = Ctx.node().getInt("group", 1);
  if (Group < 1)
    return Ctx.error("group must be at least 1, got " + std::to_string(Group));
  // Channels: X is [N, C, ...], W [M, C / group, ...], M a multiple of
  // group. Checked where the dims are numbers.
  std::optional<int64_t> C = X[1].getConstant(), WC = Wt[1].getConstant(),
                         M = Wt[0].getConstant();
  if (C && WC && (*C % Group != 0 || *C / Group != *WC)) // no overflow
    return Ctx.error("input has " + std::to_string(*C) +
                     " channels, the weight takes " + std::to_string(*WC) +
                     " x group " + std::to_string(Group));
  if (M && *M % Group)
    return Ctx.error("the weight's " + std::to_string(*M) +
                     " output channels are not a multiple of group " +
                     std::to_string(Group));
  llvm::Expected<Window> W = readWeightWindow(Ctx, Wt, Spatial);
  if (!W)
    return W.takeError();
  std::vector<SymExpr> Out = {X[0], Wt[0]};
  for (size_t I = 0; I < Spatial; ++I)
    Out.push_back(windowOut(*W, I, X[2 + I]));
  ElementType Type = Op == "ConvInteger"   ? ElementType::Int32
                     : Op == "QLinearConv" ? Ctx.inType(7)
                                           : Ctx.inType(0);
  Ctx.setOutput(0, Type, std::move(Out));
  return llvm::Error::success();
}

/// OomplanConvDepthwise (IR/FusedOps.h): X [N, C, spatial...], the
/// pointwise W1 [M, C, 1...] (input 1), the depthwise W2 [M, 1, k...]
/// (input 3) with the node's window attributes: [N, M, windows...].
llvm::Error convDepthwise(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0), W1 = Ctx.inDims(1),
                          W2 = Ctx.inDims(3);
  if (X.size() < 3 || W1.size() != X.size() || W2.size() != X.size())
    return Ctx.error("input and both weights must have the same rank >= 3");
  size_t Spatial = X.size() - 2;
  std::optional<int64_t> C = X[1].getConstant(), WC = W1[1].getConstant(),
                         M = W1[0].getConstant(), M2 = W2[0].getConstant(),
                         One = W2[1].getConstant();
  if (C && WC && *C != *WC)
    return Ctx.error("input has " + std::to_string(*C) +
                     " channels, the pointwise weight takes " +
                     std::to_string(*WC));
  if (!M || !M2 || *M != *M2 || !One || *One != 1 ||
      Ctx.node().getInt("group", 1) != *M)
    return Ctx.error("the depthwise weight must be [M, 1, ...] with group M, "
                     "M the pointwise weight's output channels");
  llvm::Expected<Window> W = readWeightWindow(Ctx, W2, Spatial);
  if (!W)
    return W.takeError();
  std::vector<SymExpr> Out = {X[0], W1[0]};
  for (size_t I = 0; I < Spatial; ++I)
    Out.push_back(windowOut(*W, I, X[2 + I]));
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

llvm::Error convTranspose(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0), Wt = Ctx.inDims(1);
  if (X.size() < 3 || Wt.size() != X.size())
    return Ctx.error("input and weight must have the same rank >= 3");
  size_t Spatial = X.size() - 2;
  llvm::Expected<Window> W = readWeightWindow(Ctx, Wt, Spatial);
  if (!W)
    return W.takeError();
  int64_t Group = Ctx.node().getInt("group", 1);
  if (Group < 1)
    return Ctx.error("group must be at least 1, got " + std::to_string(Group));
  // ConvTranspose's weight is [C, M / group, ...]: dim 0 is the input's.
  std::optional<int64_t> C = X[1].getConstant(), WC = Wt[0].getConstant();
  if (C && WC && *C != *WC)
    return Ctx.error("input has " + std::to_string(*C) +
                     " channels, the weight's dim 0 is " + std::to_string(*WC));
  std::vector<SymExpr> Out = {X[0], Wt[1] * SymExpr::constant(Group)};
  std::optional<std::vector<int64_t>> OutShape =
      Ctx.node().getInts("output_shape");
  std::vector<int64_t> OutPad = Ctx.node()
                                    .getInts("output_padding")
                                    .value_or(std::vector<int64_t>(Spatial, 0));
  if (OutPad.size() != Spatial)
    return Ctx.error("output_padding does not match the spatial dims");
  for (size_t I = 0; I < Spatial; ++I) {
    if (OutShape && OutShape->size() >= Spatial) {
      Out.push_back(
          SymExpr::constant((*OutShape)[OutShape->size() - Spatial + I]));
      continue;
    }
    SymExpr S = SymExpr::constant(W->Strides[I]);
    if (W->AutoPad == "SAME_UPPER" || W->AutoPad == "SAME_LOWER") {
      Out.push_back(X[2 + I] * S);
      continue;
    }
    int64_t Extent = W->Dilations[I] * (W->Kernel[I] - 1) + 1;
    int64_t Pads =
        W->AutoPad == "VALID" ? 0 : W->Pads[I] + W->Pads[I + Spatial];
    Out.push_back(S * (X[2 + I] - SymExpr::constant(1)) +
                  SymExpr::constant(OutPad[I]) +
                  SymExpr::constant(Extent - Pads));
  }
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

/// MaxPool, AveragePool, LpPool; MaxPool's optional Indices output.
llvm::Error pool(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0);
  if (X.size() < 3)
    return Ctx.error("input must have rank >= 3");
  size_t Spatial = X.size() - 2;
  llvm::Expected<Window> W = readWindow(Ctx, Spatial, std::nullopt);
  if (!W)
    return W.takeError();
  std::vector<SymExpr> Out = {X[0], X[1]};
  for (size_t I = 0; I < Spatial; ++I)
    Out.push_back(windowOut(*W, I, X[2 + I]));
  Ctx.setOutput(0, Ctx.inType(0), Out);
  Ctx.setOutput(1, ElementType::Int64, Out);
  return llvm::Error::success();
}

llvm::Error globalPool(RuleContext &Ctx) {
  std::vector<SymExpr> Out = Ctx.inDims(0).vec();
  if (Out.size() < 2)
    return Ctx.error("input must have rank >= 2");
  for (size_t I = 2; I < Out.size(); ++I)
    Out[I] = SymExpr::constant(1);
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

/// MaxRoiPool and RoiAlign: [num_rois, C, out_h, out_w].
llvm::Error roiPool(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0), Rois = Ctx.inDims(1);
  if (X.size() != 4 || Rois.size() != 2)
    return Ctx.error("expects a 4-D input and 2-D rois");
  int64_t H, W;
  if (Ctx.node().OpType == "MaxRoiPool") {
    std::optional<std::vector<int64_t>> P = Ctx.node().getInts("pooled_shape");
    if (!P || P->size() != 2)
      return Ctx.error("pooled_shape must have two entries");
    H = (*P)[0];
    W = (*P)[1];
  } else {
    H = Ctx.node().getInt("output_height", 1);
    W = Ctx.node().getInt("output_width", 1);
  }
  Ctx.setOutput(0, Ctx.inType(0),
                {Rois[0], X[1], SymExpr::constant(H), SymExpr::constant(W)});
  return llvm::Error::success();
}

llvm::Error maxUnpool(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0);
  if (Ctx.hasInput(2)) {
    if (!Ctx.inValues(2))
      return Ctx.error("output_shape must be known");
    Ctx.setOutput(0, Ctx.inType(0), *Ctx.inValues(2));
    return llvm::Error::success();
  }
  if (X.size() < 3)
    return Ctx.error("input must have rank >= 3");
  size_t Spatial = X.size() - 2;
  llvm::Expected<Window> W = readWindow(Ctx, Spatial, std::nullopt);
  if (!W)
    return W.takeError();
  std::vector<SymExpr> Out = {X[0], X[1]};
  for (size_t I = 0; I < Spatial; ++I)
    Out.push_back(
        SymExpr::constant(W->Strides[I]) * (X[2 + I] - SymExpr::constant(1)) +
        SymExpr::constant(W->Kernel[I] - W->Pads[I] - W->Pads[I + Spatial]));
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

/// floor(D * Scale), exact for symbolic D when Scale or 1/Scale is integral.
/// Scale is positive and finite (checked by the caller).
std::optional<SymExpr> scaleDim(const SymExpr &D, double Scale) {
  if (std::optional<int64_t> C = D.getConstant()) {
    double Out = std::floor(double(*C) * Scale);
    if (Out > double(MaxDimSize))
      return std::nullopt;
    return SymExpr::constant(int64_t(Out));
  }
  if (Scale > double(MaxDimSize))
    return std::nullopt;
  if (Scale >= 1 && Scale == std::floor(Scale))
    return D * SymExpr::constant(int64_t(Scale));
  double Inv = 1 / Scale;
  if (Inv <= double(MaxDimSize) && std::abs(Inv - std::round(Inv)) < 1e-9)
    return SymExpr::floorDiv(D, SymExpr::constant(int64_t(std::round(Inv))));
  return std::nullopt;
}

/// Resize (sizes or scales input) and Upsample (scales input or attribute).
/// Opset 18's axes attribute names the axes that sizes and scales give
/// (the others keep their length); its keep_aspect_ratio_policy scales
/// every named axis by the smallest (not_larger) or largest (not_smaller)
/// ratio of size to length, rounding half up.
llvm::Error resize(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0);
  const size_t R = X.size();
  bool IsUpsample = Ctx.node().OpType == "Upsample";
  bool Old = IsUpsample || Ctx.opset() < 11;
  size_t ScalesIndex = Old ? 1 : 2, SizesIndex = 3;
  std::vector<size_t> Axes;
  if (const Attribute *A = Ctx.node().attr("axes")) {
    for (int64_t Ax : A->Ints) {
      if (Ax < -int64_t(R) || Ax >= int64_t(R))
        return Ctx.error("axes holds " + std::to_string(Ax) +
                         ", out of range for rank " + std::to_string(R));
      Axes.push_back(size_t(Ax < 0 ? Ax + int64_t(R) : Ax));
    }
  } else {
    for (size_t I = 0; I < R; ++I)
      Axes.push_back(I);
  }
  std::vector<SymExpr> Out(X.begin(), X.end());
  if (!Old && Ctx.hasInput(SizesIndex) && Ctx.inRank(SizesIndex) == 1 &&
      Ctx.inDims(SizesIndex)[0].getConstant() != 0) {
    if (!Ctx.inValues(SizesIndex) ||
        Ctx.inValues(SizesIndex)->size() != Axes.size())
      return Ctx.error("sizes must be known, one per axis");
    const std::vector<SymExpr> &Sizes = *Ctx.inValues(SizesIndex);
    std::string Policy =
        Ctx.node().getString("keep_aspect_ratio_policy", "stretch");
    if (Policy == "stretch") {
      for (size_t I = 0; I < Axes.size(); ++I)
        Out[Axes[I]] = Sizes[I];
    } else if (Policy == "not_larger" || Policy == "not_smaller") {
      double Scale = 0;
      for (size_t I = 0; I < Axes.size(); ++I) {
        std::optional<int64_t> S = Sizes[I].getConstant(),
                               D = X[Axes[I]].getConstant();
        if (!S || !D || *D <= 0 || *S < 0)
          return Ctx.error("keep_aspect_ratio_policy '" + Policy +
                           "' needs constant sizes and input dims");
        double Ratio = double(*S) / double(*D);
        Scale = I == 0                   ? Ratio
                : Policy == "not_larger" ? std::min(Scale, Ratio)
                                         : std::max(Scale, Ratio);
      }
      for (size_t Ax : Axes) {
        double Len = std::floor(Scale * double(*X[Ax].getConstant()) + 0.5);
        if (Len > double(MaxDimSize))
          return Ctx.error("the resized dim exceeds 2^48");
        Out[Ax] = SymExpr::constant(int64_t(Len));
      }
    } else {
      return Ctx.error("keep_aspect_ratio_policy '" + Policy +
                       "' is none of stretch, not_larger, not_smaller");
    }
    Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
    return llvm::Error::success();
  }
  std::vector<double> Scales;
  if (const Attribute *A = Ctx.node().attr("scales"))
    Scales = A->Floats;
  else if (const TensorData *T = Ctx.constData(ScalesIndex))
    Scales = T->Floats;
  if (Scales.size() != Axes.size())
    return Ctx.error("scales must be constant, one per axis");
  for (size_t I = 0; I < Axes.size(); ++I) {
    if (!(Scales[I] > 0) || !std::isfinite(Scales[I]))
      return Ctx.error("scale " + std::to_string(Scales[I]) +
                       " is not a positive number");
    std::optional<SymExpr> D = scaleDim(X[Axes[I]], Scales[I]);
    if (!D)
      return Ctx.error("scale " + std::to_string(Scales[I]) +
                       " of a symbolic dim is not a whole number or its "
                       "inverse, or the scaled dim exceeds 2^48");
    Out[Axes[I]] = *D;
  }
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

/// Col2Im (opset 18): [N, C * prod(block_shape), L] to [N, C] +
/// image_shape.
llvm::Error col2Im(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0);
  if (X.size() != 3)
    return Ctx.error("input must be [N, C * prod(block_shape), L]");
  std::optional<std::vector<int64_t>> Block = Ctx.constInts(2);
  if (!Ctx.inValues(1) || !Block || Block->size() != Ctx.inValues(1)->size())
    return Ctx.error("image_shape and block_shape must be known, of one "
                     "length");
  int64_t Cells = 1;
  for (int64_t B : *Block) {
    if (B <= 0 || B > MaxDimSize / Cells)
      return Ctx.error("block_shape must be positive");
    Cells *= B;
  }
  std::optional<int64_t> Cols = X[1].getConstant();
  if (Cols && *Cols % Cells != 0)
    return Ctx.error("input dim 1 (" + std::to_string(*Cols) +
                     ") is not a multiple of prod(block_shape) (" +
                     std::to_string(Cells) + ")");
  std::vector<SymExpr> Out = {
      X[0], SymExpr::floorDiv(X[1], SymExpr::constant(Cells))};
  for (const SymExpr &D : *Ctx.inValues(1))
    Out.push_back(D);
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

} // namespace

void shapes::addConvPoolRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::Conv, conv);
  F.add(ops::ShapeRuleId::ConvTranspose, convTranspose);
  F.add(ops::ShapeRuleId::ConvDepthwise, convDepthwise);
  F.add(ops::ShapeRuleId::Pool, pool);
  F.add(ops::ShapeRuleId::GlobalPool, globalPool);
  F.add(ops::ShapeRuleId::RoiPool, roiPool);
  F.add(ops::ShapeRuleId::MaxUnpool, maxUnpool);
  F.add(ops::ShapeRuleId::Resize, resize);
  F.add(ops::ShapeRuleId::Col2Im, col2Im);
}
