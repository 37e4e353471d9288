//===- Indexing.cpp - rules for gather, slice, concat and friends ---------===//
//
// Gather, GatherElements, GatherND, the Scatters, Slice, Concat, Split,
// Tile, Pad and OneHot. Gather, Slice and Concat also compute tracked
// contents, the middle of the Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape chains that exporters emit.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::shapes;

namespace {

/// Product of constant dims [B, E).
int64_t product(llvm::ArrayRef<int64_t> D, size_t B, size_t E) {
  int64_t P = 1;
  for (size_t I = B; I < E; ++I)
    P *= D[I];
  return P;
}

llvm::Error gather(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> Data = Ctx.inDims(0), Idx = Ctx.inDims(1);
  ElementType IT = Ctx.inType(1);
  if (IT != ElementType::Int32 && IT != ElementType::Int64 &&
      IT != ElementType::Undefined)
    return Ctx.error(std::string("indices must be int32 or int64, not ") +
                     elementTypeName(IT));
  llvm::Expected<size_t> Axis =
      Ctx.axis(Ctx.node().getInt("axis", 0), Data.size());
  if (!Axis)
    return Axis.takeError();
  std::vector<SymExpr> Out(Data.begin(), Data.begin() + *Axis);
  Out.insert(Out.end(), Idx.begin(), Idx.end());
  Out.insert(Out.end(), Data.begin() + *Axis + 1, Data.end());
  Ctx.setOutput(0, Ctx.inType(0), Out);
  // Contents: data tracked with constant dims, indices constant.
  std::optional<std::vector<int64_t>> D = constantDims(Data);
  std::optional<std::vector<int64_t>> Ix = Ctx.constInts(1);
  if (!Ctx.inValues(0) || !D || !Ix)
    return llvm::Error::success();
  int64_t Outer = product(*D, 0, *Axis), N = (*D)[*Axis],
          Inner = product(*D, *Axis + 1, D->size());
  std::vector<SymExpr> Vals;
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t I : *Ix) {
      if (I < -N || I >= N)
        return Ctx.error("index " + llvm::Twine(I) +
                         " out of range for a "
                         "dim of " +
                         llvm::Twine(N));
      int64_t Row = I < 0 ? I + N : I;
      for (int64_t K = 0; K < Inner; ++K)
        Vals.push_back((*Ctx.inValues(0))[(O * N + Row) * Inner + K]);
    }
  Ctx.setOutputValues(0, std::move(Vals));
  return llvm::Error::success();
}

/// GatherElements: the shape of the indices.
llvm::Error gatherElements(RuleContext &Ctx) {
  Ctx.setOutput(0, Ctx.inType(0), Ctx.inDims(1).vec());
  return llvm::Error::success();
}

llvm::Error gatherND(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> Data = Ctx.inDims(0), Idx = Ctx.inDims(1);
  size_t B = size_t(Ctx.node().getInt("batch_dims", 0));
  if (Idx.empty())
    return Ctx.error("indices must have rank >= 1");
  std::optional<int64_t> Last = Idx.back().getConstant();
  if (!Last || B + size_t(*Last) > Data.size())
    return Ctx.error("the last dim of the indices must be a constant <= the "
                     "data rank minus batch_dims");
  std::vector<SymExpr> Out(Idx.begin(), Idx.end() - 1);
  Out.insert(Out.end(), Data.begin() + B + *Last, Data.end());
  Ctx.setOutput(0, Ctx.inType(0), Out);
  return llvm::Error::success();
}

/// Scatter*, ScatterND: the shape of the data.
llvm::Error likeData(RuleContext &Ctx) {
  Ctx.setOutputLike(0, 0);
  return llvm::Error::success();
}

/// Values of the optional int input I for Slice (starts, ends, axes, steps),
/// or of the attribute Name before opset 10.
llvm::Expected<std::optional<std::vector<SymExpr>>>
sliceParam(const RuleContext &Ctx, llvm::StringRef Name, size_t I) {
  if (std::optional<std::vector<int64_t>> A = Ctx.node().getInts(Name))
    return toExprs(*A);
  if (!Ctx.hasInput(I))
    return std::nullopt;
  if (!Ctx.inValues(I))
    return Ctx.error("Slice '" + Name +
                     "' is computed from data this analysis cannot follow");
  return *Ctx.inValues(I);
}

/// Index X of an axis of size D made non-negative (Python style).
llvm::Expected<SymExpr> wrapIndex(const RuleContext &Ctx, const SymExpr &X,
                                  const SymExpr &D) {
  if (X.isKnownNonNegative())
    return X;
  if (std::optional<int64_t> Hi = X.upperBound(); Hi && *Hi < 0)
    return X + D;
  return Ctx.error("cannot tell the sign of slice index " +
                   X.str(Ctx.graph().Symbols));
}

llvm::Error slice(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> In = Ctx.inDims(0);
  auto Starts = sliceParam(Ctx, "starts", 1);
  auto Ends = sliceParam(Ctx, "ends", 2);
  auto Axes = sliceParam(Ctx, "axes", 3);
  auto Steps = sliceParam(Ctx, "steps", 4);
  for (auto *P : {&Starts, &Ends, &Axes, &Steps})
    if (!*P)
      return P->takeError();
  if (!*Starts || !*Ends || (*Starts)->size() != (*Ends)->size())
    return Ctx.error("starts and ends must be given, with equal lengths");
  size_t N = (*Starts)->size();
  // Axes and steps are read per start below (found by the fuzzer).
  if ((*Axes && (*Axes)->size() != N) || (*Steps && (*Steps)->size() != N))
    return Ctx.error("axes and steps, when given, must have as many entries "
                     "as starts (" +
                     llvm::Twine(N) + ")");
  std::vector<SymExpr> Out = In.vec();
  // Per axis (start, step) for the contents of 1-D data.
  std::optional<int64_t> FirstStart, FirstStep;
  // The same for data of any rank (ValueLayout.cpp), while all constant.
  std::vector<int64_t> AxStart(In.size(), 0), AxStep(In.size(), 1);
  bool AxConst = true;
  for (size_t K = 0; K < N; ++K) {
    int64_t A = int64_t(K), Step = 1;
    if (*Axes) {
      std::optional<int64_t> C = (**Axes)[K].getConstant();
      if (!C)
        return Ctx.error("Slice axes must be constants");
      A = *C;
    }
    if (*Steps) {
      std::optional<int64_t> C = (**Steps)[K].getConstant();
      if (!C || *C == 0)
        return Ctx.error("Slice steps must be non-zero constants");
      // Any step longer than the largest dim takes one element; clamping
      // keeps the length formula (and negating the step) free of overflow.
      Step = std::clamp(*C, -MaxDimSize, MaxDimSize);
    }
    llvm::Expected<size_t> X = Ctx.axis(A, In.size());
    if (!X)
      return X.takeError();
    const SymExpr &D = In[*X];
    llvm::Expected<SymExpr> S = wrapIndex(Ctx, (**Starts)[K], D);
    if (!S)
      return S.takeError();
    llvm::Expected<SymExpr> E = wrapIndex(Ctx, (**Ends)[K], D);
    if (!E)
      return E.takeError();
    SymExpr Zero = SymExpr::constant(0), One = SymExpr::constant(1);
    SymExpr Len;
    std::optional<int64_t> NegStart = (**Starts)[K].getConstant();
    if (Step > 0) {
      SymExpr S2 = SymExpr::min(SymExpr::max(*S, Zero), D);
      SymExpr E2 = SymExpr::min(SymExpr::max(*E, Zero), D);
      Len = SymExpr::ceilDiv(E2 - S2, SymExpr::constant(Step));
      // x[-k:] has min(k, D) elements; the clamp form above, D - max(D - k,
      // 0), is equal but unreadable.
      if (NegStart && *NegStart < 0 && *NegStart > INT64_MIN && E2 == D)
        Len = SymExpr::ceilDiv(SymExpr::min(SymExpr::constant(-*NegStart), D),
                               SymExpr::constant(Step));
      FirstStart = S2.getConstant();
    } else {
      SymExpr S2 = SymExpr::min(SymExpr::max(*S, Zero), D - One);
      SymExpr E2 = SymExpr::min(SymExpr::max(*E, -One), D - One);
      Len = SymExpr::ceilDiv(S2 - E2, SymExpr::constant(-Step));
      FirstStart = S2.getConstant();
    }
    Out[*X] = SymExpr::max(Len, Zero);
    FirstStep = Step;
    if (FirstStart)
      AxStart[*X] = *FirstStart, AxStep[*X] = Step;
    AxConst &= FirstStart.has_value();
  }
  Ctx.setOutput(0, Ctx.inType(0), Out);
  std::optional<int64_t> Count = constantNumElements(Out);
  if (Ctx.inValues(0) && In.size() == 1 && N == 1 && FirstStart && Count) {
    std::vector<SymExpr> Vals;
    for (int64_t I = 0; I < *Count; ++I)
      Vals.push_back((*Ctx.inValues(0))[*FirstStart + I * *FirstStep]);
    Ctx.setOutputValues(0, std::move(Vals));
  } else if (Ctx.inValues(0) && AxConst && Count) {
    if (auto V = sliceValues(*Ctx.inValues(0), In, Out, AxStart, AxStep))
      Ctx.setOutputValues(0, std::move(*V));
  }
  return llvm::Error::success();
}

llvm::Error concat(RuleContext &Ctx) {
  size_t R = Ctx.inRank(0);
  // Concat-1 (opsets 1-3) defaults the axis to 1; Concat-4 requires it.
  if (!Ctx.node().attr("axis") && Ctx.opset() >= 4)
    return Ctx.error("attribute 'axis' is required from opset 4");
  llvm::Expected<size_t> Axis = Ctx.axis(Ctx.node().getInt("axis", 1), R);
  if (!Axis)
    return Axis.takeError();
  std::vector<SymExpr> Out = Ctx.inDims(0).vec();
  Out[*Axis] = SymExpr();
  bool Tracked = true;
  for (size_t I = 0; I < Ctx.numInputs(); ++I) {
    if (!Ctx.hasInput(I))
      continue;
    if (Ctx.inRank(I) != R)
      return Ctx.error("input " + llvm::Twine(I) + " has rank " +
                       llvm::Twine(Ctx.inRank(I)) + ", expected " +
                       llvm::Twine(R));
    for (size_t A = 0; A < R; ++A) {
      std::optional<int64_t> C0 = Ctx.inDims(0)[A].getConstant(),
                             CI = Ctx.inDims(I)[A].getConstant();
      if (A != *Axis && C0 && CI && *C0 != *CI)
        return Ctx.error("input " + llvm::Twine(I) + " has dim " +
                         llvm::Twine(*CI) + " on axis " + llvm::Twine(A) +
                         ", input 0 has " + llvm::Twine(*C0));
      if (A != *Axis)
        Ctx.require(
            DimConstraint::Kind::Equal, Ctx.inDims(0)[A], Ctx.inDims(I)[A],
            "axis " + llvm::Twine(A) + " of inputs 0 and " + llvm::Twine(I));
    }
    Out[*Axis] = Out[*Axis] + Ctx.inDims(I)[*Axis];
    Tracked &= Ctx.inValues(I).has_value();
  }
  Ctx.setOutput(0, Ctx.inType(0), Out);
  std::optional<std::vector<int64_t>> D = constantDims(Out);
  if (!Tracked || !D)
    return llvm::Error::success();
  int64_t Outer = product(*D, 0, *Axis), Inner = product(*D, *Axis + 1, R);
  std::vector<SymExpr> Vals;
  for (int64_t O = 0; O < Outer; ++O)
    for (size_t I = 0; I < Ctx.numInputs(); ++I) {
      if (!Ctx.hasInput(I))
        continue;
      int64_t Block = *Ctx.inDims(I)[*Axis].getConstant() * Inner;
      for (int64_t K = 0; K < Block; ++K)
        Vals.push_back((*Ctx.inValues(I))[O * Block + K]);
    }
  Ctx.setOutputValues(0, std::move(Vals));
  return llvm::Error::success();
}

llvm::Error split(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> In = Ctx.inDims(0);
  llvm::Expected<size_t> Axis =
      Ctx.axis(Ctx.node().getInt("axis", 0), In.size());
  if (!Axis)
    return Axis.takeError();
  std::vector<SymExpr> Parts;
  size_t N = Ctx.numOutputs();
  if (std::optional<std::vector<int64_t>> S = Ctx.node().getInts("split")) {
    Parts = toExprs(*S);
  } else if (Ctx.hasInput(1)) {
    if (!Ctx.inValues(1))
      return Ctx.error("split sizes are computed from data this analysis "
                       "cannot follow");
    Parts = *Ctx.inValues(1);
  } else {
    // Equal parts; opset 18 lets the last one be smaller. Before it the
    // axis must divide evenly (ONNX and ONNX Runtime refuse the model).
    if (Ctx.opset() < 18) {
      std::optional<int64_t> Len = In[*Axis].getConstant();
      if (Len && *Len % int64_t(N) != 0)
        return Ctx.error("axis " + llvm::Twine(*Axis) + " has length " +
                         llvm::Twine(*Len) + ", which does not split into " +
                         llvm::Twine(N) +
                         " equal parts (opset < 18 has no smaller last part)");
      Ctx.require(DimConstraint::Kind::Divides, In[*Axis],
                  SymExpr::constant(int64_t(N)),
                  "split axis " + llvm::Twine(*Axis) + " into " +
                      llvm::Twine(N) + " equal parts");
    }
    SymExpr Each = SymExpr::ceilDiv(In[*Axis], SymExpr::constant(N));
    for (size_t I = 0; I < N; ++I)
      Parts.push_back(I + 1 < N ? Each
                                : In[*Axis] - Each * SymExpr::constant(N - 1));
  }
  if (Parts.size() != N)
    return Ctx.error("split has " + llvm::Twine(Parts.size()) + " sizes for " +
                     llvm::Twine(N) + " outputs");
  SymExpr Sum = SymExpr::constant(0);
  for (const SymExpr &P : Parts)
    Sum = Sum + P;
  std::optional<int64_t> Total = In[*Axis].getConstant(),
                         Got = Sum.getConstant();
  if (Total && Got && *Total != *Got)
    return Ctx.error("split sizes add up to " + llvm::Twine(*Got) +
                     ", the axis has " + llvm::Twine(*Total));
  Ctx.require(DimConstraint::Kind::Equal, Sum, In[*Axis],
              "split sizes' sum and axis " + llvm::Twine(*Axis));
  // Tracked contents go to the pieces (torch's repeat_interleave splits a
  // shape-sized repeats tensor and expands by each piece), where every dim
  // and offset is a constant.
  const std::optional<std::vector<SymExpr>> &Vals = Ctx.inValues(0);
  SymExpr Start = SymExpr::constant(0);
  for (size_t I = 0; I < N; ++I) {
    std::vector<SymExpr> Out = In.vec();
    Out[*Axis] = Parts[I];
    std::optional<int64_t> From = Start.getConstant();
    Start = Start + Parts[I];
    Ctx.setOutput(I, Ctx.inType(0), Out);
    if (!Vals || !From)
      continue;
    std::vector<int64_t> Starts(In.size(), 0), Steps(In.size(), 1);
    Starts[*Axis] = *From;
    if (auto V = sliceValues(*Vals, In, Out, Starts, Steps))
      Ctx.setOutputValues(I, std::move(*V));
  }
  return llvm::Error::success();
}

// Tile-1 (opsets 1-5): inputs (input, tiles, axis), two scalars: only axis
// is repeated, tiles times.
static llvm::Error tileOpset1(RuleContext &Ctx) {
  std::vector<SymExpr> Out = Ctx.inDims(0).vec();
  std::optional<std::vector<int64_t>> Axis = Ctx.constInts(2);
  if (!Ctx.inValues(1) || Ctx.inValues(1)->size() != 1 || !Axis ||
      Axis->size() != 1)
    return Ctx.error("tiles and axis must be known scalars (Tile-1)");
  llvm::Expected<size_t> A = Ctx.axis((*Axis)[0], Out.size());
  if (!A)
    return A.takeError();
  Out[*A] = Out[*A] * (*Ctx.inValues(1))[0];
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

llvm::Error tile(RuleContext &Ctx) {
  if (Ctx.opset() < 6)
    return tileOpset1(Ctx);
  llvm::ArrayRef<SymExpr> In = Ctx.inDims(0);
  if (!Ctx.inValues(1) || Ctx.inValues(1)->size() != In.size())
    return Ctx.error("repeats must be known, one per axis");
  std::vector<SymExpr> Out;
  for (size_t I = 0; I < In.size(); ++I)
    Out.push_back(In[I] * (*Ctx.inValues(1))[I]);
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

llvm::Error pad(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> In = Ctx.inDims(0);
  std::vector<SymExpr> Pads;
  // Pad-1 spelled the attribute 'paddings'; Pad-2 renamed it; Pad-11 made
  // it an input.
  if (std::optional<std::vector<int64_t>> P = Ctx.node().getInts("pads"))
    Pads = toExprs(*P);
  else if (std::optional<std::vector<int64_t>> P1 =
               Ctx.node().getInts("paddings"))
    Pads = toExprs(*P1);
  else if (Ctx.hasInput(1) && Ctx.inValues(1))
    Pads = *Ctx.inValues(1);
  else
    return Ctx.error("pads must be known");
  // Opset 18 'axes' input: pads only those axes.
  std::vector<int64_t> Axes;
  if (std::optional<std::vector<int64_t>> A = Ctx.constInts(3)) {
    Axes = *A;
  } else {
    for (size_t I = 0; I < In.size(); ++I)
      Axes.push_back(int64_t(I));
  }
  if (Pads.size() != 2 * Axes.size())
    return Ctx.error("pads has " + llvm::Twine(Pads.size()) +
                     " entries, expected " + llvm::Twine(2 * Axes.size()));
  std::vector<SymExpr> Out = In.vec();
  for (size_t K = 0; K < Axes.size(); ++K) {
    llvm::Expected<size_t> X = Ctx.axis(Axes[K], In.size());
    if (!X)
      return X.takeError();
    Out[*X] = Out[*X] + Pads[K] + Pads[K + Axes.size()];
  }
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

/// CenterCropPad (opset 18): each axis named by the axes attribute (all by
/// default) takes its length from the shape input.
llvm::Error centerCropPad(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> In = Ctx.inDims(0);
  if (!Ctx.inValues(1))
    return Ctx.error("shape must be known");
  const std::vector<SymExpr> &Shape = *Ctx.inValues(1);
  std::vector<int64_t> Axes;
  if (std::optional<std::vector<int64_t>> A = Ctx.node().getInts("axes"))
    Axes = *A;
  else
    for (size_t I = 0; I < In.size(); ++I)
      Axes.push_back(int64_t(I));
  if (Shape.size() != Axes.size())
    return Ctx.error("shape has " + llvm::Twine(Shape.size()) +
                     " entries for " + llvm::Twine(Axes.size()) + " axes");
  std::vector<SymExpr> Out = In.vec();
  for (size_t K = 0; K < Axes.size(); ++K) {
    llvm::Expected<size_t> X = Ctx.axis(Axes[K], In.size());
    if (!X)
      return X.takeError();
    Out[*X] = Shape[K];
  }
  Ctx.setOutput(0, Ctx.inType(0), std::move(Out));
  return llvm::Error::success();
}

llvm::Error oneHot(RuleContext &Ctx) {
  SymExpr Depth;
  if (Ctx.inValues(1) && Ctx.inValues(1)->size() == 1) {
    Depth = (*Ctx.inValues(1))[0];
  } else if (const TensorData *T = Ctx.constData(1);
             T && T->Floats.size() == 1 && T->Floats[0] >= 0 &&
             T->Floats[0] <= double(MaxDimSize)) {
    Depth = SymExpr::constant(int64_t(T->Floats[0]));
  } else {
    return Ctx.error("depth must be a known scalar in [0, 2^48]");
  }
  std::vector<SymExpr> Out = Ctx.inDims(0).vec();
  llvm::Expected<size_t> Axis =
      Ctx.axis(Ctx.node().getInt("axis", -1), Out.size() + 1);
  if (!Axis)
    return Axis.takeError();
  Out.insert(Out.begin() + *Axis, Depth);
  Ctx.setOutput(0, Ctx.inType(2), std::move(Out));
  return llvm::Error::success();
}

} // namespace

/// GatherBlockQuantized (ONNX Runtime's, com.microsoft), uint8 data:
/// data [V, ..., P] holds P * 8 / bits values a row along its last axis
/// (the quantized one, packed low bits first), in blocks of block_size,
/// each with a scale (scales [V, ..., blocks]) and a zero point (packed
/// like data, or 2^(bits-1)); gathered along axis 0: the indices' dims,
/// then data's middle dims and the unpacked row, of the scales' type.
namespace {
llvm::Error gatherBlockQuantized(RuleContext &Ctx) {
  const Node &N = Ctx.node();
  const int64_t Bits = N.getInt("bits", 4), Block = N.getInt("block_size", 128);
  llvm::ArrayRef<SymExpr> Data = Ctx.inDims(0), Scales = Ctx.inDims(2);
  const int64_t R = int64_t(Data.size());
  if (Ctx.inType(0) != ElementType::UInt8)
    return Ctx.unsupported("data of type " + elementTypeName(Ctx.inType(0)) +
                           " (oomplan reads packed uint8 data)");
  if (R < 2)
    return Ctx.error("data must have rank >= 2");
  int64_t GAxis = N.getInt("gather_axis", 0),
          QAxis = N.getInt("quantize_axis", 1);
  if (GAxis < 0)
    GAxis += R;
  if (QAxis < 0)
    QAxis += R;
  if (GAxis != 0 || QAxis != R - 1)
    return Ctx.unsupported("gather_axis must be 0 and quantize_axis the last "
                           "(uint8 data)");
  if (Bits != 2 && Bits != 4 && Bits != 8)
    return Ctx.error("bits " + llvm::Twine(Bits) + " is not 2, 4 or 8");
  if (Block < 16 || Block > (int64_t(1) << 20) || (Block & (Block - 1)))
    return Ctx.error("block_size " + llvm::Twine(Block) +
                     " is not a power of 2 from 16");
  if (!isFloatingPoint(Ctx.inType(2)))
    return Ctx.error("scales must be float, float16 or bfloat16");
  std::optional<int64_t> Packed = Data.back().getConstant();
  if (!Packed || *Packed <= 0 || *Packed > (int64_t(1) << 40))
    return Ctx.unsupported("data's last dim is not a known number");
  const int64_t Row = *Packed * (8 / Bits), Blocks = (Row + Block - 1) / Block;
  if (Scales.size() != Data.size())
    return Ctx.error("scales must have data's rank");
  for (int64_t I = 0; I < R; ++I) {
    std::optional<int64_t> S = Scales[I].getConstant(),
                           D = Data[I].getConstant();
    const int64_t Want = I == R - 1 ? Blocks : D.value_or(-1);
    if (S && Want >= 0 && *S != Want)
      return Ctx.error("scales' dim " + llvm::Twine(I) + " is " +
                       llvm::Twine(*S) + "; data and block_size make it " +
                       llvm::Twine(Want));
  }
  if (Ctx.hasInput(3)) {
    llvm::ArrayRef<SymExpr> Zp = Ctx.inDims(3);
    std::optional<int64_t> Last =
        Zp.size() == Data.size() ? Zp.back().getConstant() : std::nullopt;
    if (Ctx.inType(3) != ElementType::UInt8 || Zp.size() != Data.size() ||
        (Last && *Last != (Blocks * Bits + 7) / 8))
      return Ctx.error("zero_points must be uint8 of data's rank, " +
                       llvm::Twine((Blocks * Bits + 7) / 8) +
                       " bytes a row (packed like data)");
  }
  std::vector<SymExpr> Out = Ctx.inDims(1).vec();
  for (int64_t I = 1; I + 1 < R; ++I)
    Out.push_back(Data[I]);
  Out.push_back(SymExpr::constant(Row));
  Ctx.setOutput(0, Ctx.inType(2), std::move(Out));
  return llvm::Error::success();
}
} // namespace

void shapes::addIndexingRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::GatherBlockQuantized, gatherBlockQuantized);
  F.add(ops::ShapeRuleId::Gather, gather);
  F.add(ops::ShapeRuleId::GatherElements, gatherElements);
  F.add(ops::ShapeRuleId::GatherND, gatherND);
  F.add(ops::ShapeRuleId::LikeData, likeData);
  F.add(ops::ShapeRuleId::Slice, slice);
  F.add(ops::ShapeRuleId::Concat, concat);
  F.add(ops::ShapeRuleId::Split, split);
  F.add(ops::ShapeRuleId::Tile, tile);
  F.add(ops::ShapeRuleId::Pad, pad);
  F.add(ops::ShapeRuleId::CenterCropPad, centerCropPad);
  F.add(ops::ShapeRuleId::OneHot, oneHot);
}
