//===- Indexing.cpp - CPU kernels: slicing, joining, padding, tiling ------===//
//
// Slice, Concat, Split, Tile, Pad, DepthToSpace and SpaceToDepth move bytes
// without looking at them, so they handle every fixed-width element type.
// Output dims come from the output refs (shape inference fixed them), and a
// kernel checks that they agree with the attributes rather than trusting
// either blindly. The gathers and scatters live in Gather.cpp, Resize in
// Resize.cpp, TopK in TopK.cpp; this family's register function adds them.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"

namespace oomplan {
namespace runtime {
namespace cpu {

/// Split's axis, after checking that the outputs tile the input along it
/// (the output dims, fixed by shape inference, give each piece's length).
llvm::Error splitAxis(const KernelContext &C, int64_t &Axis) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &In = C.Inputs[0];
  const int64_t R = int64_t(In.Dims.size());
  Axis = C.N.getInt("axis", 0);
  if (!normAxis(Axis, R))
    return C.badInput("axis out of range");
  int64_t At = 0;
  for (const TensorRef &Out : C.Outputs) {
    if (Out.Dims.size() != In.Dims.size())
      return C.badInput("outputs differ in rank from the input");
    for (int64_t A = 0; A < R; ++A)
      if (A != Axis && In.Dims[A] != Out.Dims[A])
        return C.badInput("an output differs from the input off the axis");
    if (At + Out.Dims[Axis] > In.Dims[Axis])
      return C.badInput("outputs are longer than the input on the axis");
    At += Out.Dims[Axis];
  }
  if (At != In.Dims[Axis])
    return C.badInput("outputs do not cover the input on the axis");
  return llvm::Error::success();
}

/// DepthToSpace (ToSpace) and SpaceToDepth as one strided copy: the
/// output's dims in the transposed order and the input's strides for them.
llvm::Error depthSpaceView(const KernelContext &C, bool ToSpace,
                           DimVector &Dims, DimVector &Src) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  if (In.Dims.size() != 4)
    return C.badInput("input must be 4-D (N, C, H, W)");
  const int64_t B = C.N.getInt("blocksize", 0);
  if (B <= 0)
    return C.badInput("blocksize must be positive");
  const int64_t N = In.Dims[0], Ch = In.Dims[1], H = In.Dims[2], W = In.Dims[3];
  if (ToSpace) {
    if (Ch % (B * B))
      return C.badInput("channels are not a multiple of blocksize^2");
    const int64_t Cp = Ch / (B * B), HW = H * W;
    Dims = {N, Cp, H, B, W, B};
    if (C.N.getString("mode", "DCR") == "CRD")
      Src = {Ch * HW, B * B * HW, W, B * HW, 1, HW};
    else // DCR: input viewed as [N, b1, b2, C', H, W]
      Src = {Ch * HW, HW, W, B * Cp * HW, 1, Cp * HW};
  } else {
    if (H % B || W % B)
      return C.badInput("height or width is not a multiple of blocksize");
    // Input viewed as [N, C, H/b, b1, W/b, b2]; output [N, b1, b2, C, .., ..].
    Dims = {N, B, B, Ch, H / B, W / B};
    Src = {Ch * H * W, W, 1, H * W, B * W, B};
  }
  if (Out.numElements() != In.numElements())
    return C.badInput("output size differs from the input's");
  return llvm::Error::success();
}

namespace {

/// Ints from input I when present, else from attribute Attr, else nothing.
bool intsFromInputOrAttr(const KernelContext &C, unsigned I,
                         llvm::StringRef Attr, DimVector &Out, bool &Found) {
  Found = false;
  if (hasInput(C, I)) {
    Found = true;
    return readInts(C.Inputs[I], Out);
  }
  if (auto A = C.N.getInts(Attr)) {
    Out.assign(A->begin(), A->end());
    Found = true;
  }
  return true;
}

llvm::Error runSlice(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  const int64_t R = int64_t(In.Dims.size());
  DimVector Starts, Ends, Axes, Steps;
  bool HasStarts, HasEnds, HasAxes, HasSteps;
  if (!intsFromInputOrAttr(C, 1, "starts", Starts, HasStarts) ||
      !intsFromInputOrAttr(C, 2, "ends", Ends, HasEnds) ||
      !intsFromInputOrAttr(C, 3, "axes", Axes, HasAxes) ||
      !intsFromInputOrAttr(C, 4, "steps", Steps, HasSteps))
    return C.badInput("starts, ends, axes and steps must be integers");
  if (!HasStarts || !HasEnds || Starts.size() != Ends.size())
    return C.badInput("starts and ends must be given, of equal length");
  if (!HasAxes)
    for (int64_t I = 0; I < int64_t(Starts.size()); ++I)
      Axes.push_back(I);
  if (!HasSteps)
    Steps.assign(Starts.size(), 1);
  if (Axes.size() != Starts.size() || Steps.size() != Starts.size())
    return C.badInput("axes and steps must match starts in length");
  DimVector Begin(R, 0), Step(R, 1), Dims(In.Dims.begin(), In.Dims.end());
  for (size_t K = 0; K < Starts.size(); ++K) {
    int64_t A = Axes[K];
    if (!normAxis(A, R))
      return C.badInput("axis " + llvm::Twine(Axes[K]) + " out of range");
    int64_t D = In.Dims[A], S = Starts[K], E = Ends[K], St = Steps[K];
    if (St == 0)
      return C.badInput("step 0");
    if (S < 0)
      S += D;
    if (E < 0)
      E += D;
    if (St > 0) {
      S = std::max<int64_t>(0, std::min(S, D));
      E = std::max<int64_t>(0, std::min(E, D));
      Dims[A] = E > S ? (E - S + St - 1) / St : 0;
    } else {
      S = std::max<int64_t>(-1, std::min(S, D - 1));
      E = std::max<int64_t>(-1, std::min(E, D - 1));
      Dims[A] = S > E ? (S - E - St - 1) / -St : 0;
    }
    Begin[A] = S;
    Step[A] = St;
  }
  if (llvm::ArrayRef<int64_t>(Dims) != llvm::ArrayRef<int64_t>(Out.Dims))
    return C.badInput("the slice's shape differs from the planned output's");
  if (Out.numElements() == 0)
    return llvm::Error::success();
  DimVector InStrides = stridesOf(In.Dims), Src(R);
  int64_t Off = 0;
  for (int64_t A = 0; A < R; ++A) {
    Off += Begin[A] * InStrides[A];
    Src[A] = Step[A] * InStrides[A];
  }
  const uint64_t EB = elemBytes(In.Type);
  stridedCopy(Out.Data, In.data<const char>() + Off * int64_t(EB), Out.Dims,
              Src, EB, &C.Pool);
  return llvm::Error::success();
}

llvm::Error runConcat(const KernelContext &C) {
  const TensorRef &Out = C.Outputs[0];
  const int64_t R = int64_t(Out.Dims.size());
  int64_t Axis = C.N.getInt("axis", 0);
  if (!normAxis(Axis, R))
    return C.badInput("axis out of range");
  const uint64_t EB = elemBytes(Out.Type);
  const int64_t Outer = productOf(Out.Dims, 0, size_t(Axis));
  const int64_t Inner = productOf(Out.Dims, size_t(Axis) + 1, size_t(R));
  int64_t At = 0;
  for (const TensorRef &In : C.Inputs) {
    if (In.Dims.size() != Out.Dims.size())
      return C.badInput("inputs differ in rank");
    for (int64_t A = 0; A < R; ++A)
      if (A != Axis && In.Dims[A] != Out.Dims[A])
        return C.badInput("an input differs from the output off the axis");
    int64_t Block = In.Dims[Axis] * Inner;
    if (At + In.Dims[Axis] > Out.Dims[Axis])
      return C.badInput("inputs are longer than the output on the axis");
    if (Block)
      for (int64_t O = 0; O < Outer; ++O)
        std::memcpy(Out.data<char>() +
                        uint64_t(O * Out.Dims[Axis] * Inner + At * Inner) * EB,
                    In.data<const char>() + uint64_t(O * Block) * EB,
                    uint64_t(Block) * EB);
    At += In.Dims[Axis];
  }
  if (At != Out.Dims[Axis])
    return C.badInput("inputs do not fill the output on the axis");
  return llvm::Error::success();
}

llvm::Error runSplit(const KernelContext &C) {
  int64_t Axis;
  if (llvm::Error E = splitAxis(C, Axis))
    return E;
  const TensorRef &In = C.Inputs[0];
  const int64_t R = int64_t(In.Dims.size());
  const uint64_t EB = elemBytes(In.Type);
  const int64_t Outer = productOf(In.Dims, 0, size_t(Axis));
  const int64_t Inner = productOf(In.Dims, size_t(Axis) + 1, size_t(R));
  int64_t At = 0;
  for (const TensorRef &Out : C.Outputs) {
    int64_t Len = Out.Dims[Axis];
    if (Out.present() && Len)
      for (int64_t O = 0; O < Outer; ++O)
        std::memcpy(Out.data<char>() + uint64_t(O * Len * Inner) * EB,
                    In.data<const char>() +
                        uint64_t(O * In.Dims[Axis] * Inner + At * Inner) * EB,
                    uint64_t(Len * Inner) * EB);
    At += Len;
  }
  return llvm::Error::success();
}

llvm::Error runTile(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  const int64_t R = int64_t(In.Dims.size());
  if (int64_t(Out.Dims.size()) != R)
    return C.badInput("output rank differs from the input's");
  for (int64_t A = 0; A < R; ++A)
    if (In.Dims[A] == 0 ? Out.Dims[A] != 0 : Out.Dims[A] % In.Dims[A] != 0)
      return C.badInput("output dims are not multiples of the input's");
  if (Out.numElements() == 0)
    return llvm::Error::success();
  if (R == 0) {
    std::memcpy(Out.Data, In.Data, Out.bytes());
    return llvm::Error::success();
  }
  const uint64_t EB = elemBytes(In.Type);
  const int64_t InRow = In.Dims[R - 1], OutRow = Out.Dims[R - 1];
  const int64_t Rows = productOf(Out.Dims, 0, size_t(R - 1));
  DimVector InStrides = stridesOf(In.Dims);
  for (int64_t Row = 0; Row < Rows; ++Row) {
    int64_t Rem = Row, Off = 0;
    for (int64_t K = R - 2; K >= 0; --K) {
      Off += (Rem % Out.Dims[K]) % In.Dims[K] * InStrides[K];
      Rem /= Out.Dims[K];
    }
    char *D = Out.data<char>() + uint64_t(Row * OutRow) * EB;
    for (int64_t J = 0; J < OutRow; J += InRow)
      std::memcpy(D + uint64_t(J) * EB, In.data<const char>() + Off * EB,
                  uint64_t(InRow) * EB);
  }
  return llvm::Error::success();
}

llvm::Error runPad(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  const int64_t R = int64_t(In.Dims.size());
  std::string ModeName = C.N.getString("mode", "constant");
  int Mode = ModeName == "constant"  ? pad::Constant
             : ModeName == "edge"    ? pad::Edge
             : ModeName == "reflect" ? pad::Reflect
             : ModeName == "wrap"    ? pad::Wrap
                                     : -1;
  if (Mode < 0)
    return C.unsupported("mode '" + ModeName + "'");
  DimVector Pads, Axes;
  bool Found;
  if (!intsFromInputOrAttr(C, 1, "pads", Pads, Found))
    return C.badInput("pads must be integers");
  if (hasInput(C, 3)) {
    if (!readInts(C.Inputs[3], Axes))
      return C.badInput("axes must be integers");
  } else {
    for (int64_t A = 0; A < R; ++A)
      Axes.push_back(A);
  }
  if (Pads.size() != 2 * Axes.size())
    return C.badInput("pads has " + llvm::Twine(Pads.size()) + " entries for " +
                      llvm::Twine(Axes.size()) + " axes");
  DimVector Begin(R, 0), Extra(R, 0);
  if (int64_t(Out.Dims.size()) != R)
    return C.badInput("output rank differs from the input's");
  for (size_t K = 0; K < Axes.size(); ++K) {
    int64_t A = Axes[K];
    if (!normAxis(A, R))
      return C.badInput("axis out of range");
    Begin[A] = Pads[K];
    Extra[A] = Pads[K] + Pads[K + Axes.size()];
  }
  for (int64_t A = 0; A < R; ++A)
    if (Out.Dims[A] != In.Dims[A] + Extra[A])
      return C.badInput("pads disagree with the planned output shape");
  // The constant, as one element of the output's type.
  uint64_t Constant = 0;
  const uint64_t EB = elemBytes(In.Type);
  double Value = C.N.getFloat("value", 0);
  if (hasInput(C, 2) && C.Inputs[2].numElements() >= 1)
    std::memcpy(&Constant, C.Inputs[2].Data, EB);
  else if (Value != 0)
    visitNumericOrBool(In.Type, [&](auto Tag) {
      using T = decltype(Tag);
      T V = T(Value);
      std::memcpy(&Constant, &V, sizeof(T));
    });
  if (Out.numElements() == 0)
    return llvm::Error::success();
  if (R == 0) {
    std::memcpy(Out.Data, In.Data, EB);
    return llvm::Error::success();
  }
  DimVector InStrides = stridesOf(In.Dims);
  const int64_t Inner = Out.Dims[R - 1];
  const int64_t Rows = productOf(Out.Dims, 0, size_t(R - 1));
  auto Work = [&](int64_t RowBegin, int64_t RowEnd) {
    for (int64_t Row = RowBegin; Row < RowEnd; ++Row) {
      char *D = Out.data<char>() + uint64_t(Row * Inner) * EB;
      int64_t Rem = Row, Off = 0;
      bool IsConstant = false;
      for (int64_t K = R - 2; K >= 0; --K) {
        int64_t S = pad::source(Rem % Out.Dims[K], Begin[K], In.Dims[K], Mode);
        Rem /= Out.Dims[K];
        if (S < 0)
          IsConstant = true;
        else
          Off += S * InStrides[K];
      }
      for (int64_t J = 0; J < Inner; ++J) {
        int64_t S = IsConstant
                        ? -1
                        : pad::source(J, Begin[R - 1], In.Dims[R - 1], Mode);
        std::memcpy(D + uint64_t(J) * EB,
                    S < 0 ? static_cast<const void *>(&Constant)
                          : In.data<const char>() + uint64_t(Off + S) * EB,
                    EB);
      }
    }
  };
  C.Pool.parallelFor(
      Rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, Inner)), Work);
  return llvm::Error::success();
}

llvm::Error runOneHot(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &Idx = C.Inputs[0], &Out = C.Outputs[0];
  if (!hasInput(C, 1) || !hasInput(C, 2) || C.Inputs[2].numElements() != 2)
    return C.badInput("OneHot needs depth and a two-element values input");
  const TensorRef &Values = C.Inputs[2];
  int64_t Depth = int64_t(numberAt(C.Inputs[1], 0));
  const int64_t R = int64_t(Out.Dims.size());
  int64_t Axis = C.N.getInt("axis", -1);
  if (!normAxis(Axis, R) || Out.Dims[Axis] != Depth)
    return C.badInput("axis or depth disagrees with the planned output");
  const uint64_t EB = elemBytes(Values.Type);
  const int64_t Outer = productOf(Out.Dims, 0, size_t(Axis));
  const int64_t Inner = productOf(Out.Dims, size_t(Axis) + 1, size_t(R));
  const char *Off = Values.data<const char>(), *On = Off + EB;
  bool FloatIdx = isFloatingPoint(Idx.Type);
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t I = 0; I < Inner; ++I) {
      int64_t V = FloatIdx ? int64_t(numberAt(Idx, uint64_t(O * Inner + I)))
                           : intAt(Idx, uint64_t(O * Inner + I));
      if (V < 0)
        V += Depth;
      for (int64_t D = 0; D < Depth; ++D)
        std::memcpy(Out.data<char>() +
                        uint64_t((O * Depth + D) * Inner + I) * EB,
                    D == V ? On : Off, EB);
    }
  return llvm::Error::success();
}

llvm::Error runDepthSpace(const KernelContext &C, bool ToSpace) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  DimVector Dims, Src;
  if (llvm::Error E = depthSpaceView(C, ToSpace, Dims, Src))
    return E;
  stridedCopy(Out.Data, In.Data, Dims, Src, elemBytes(In.Type), &C.Pool);
  return llvm::Error::success();
}

llvm::Error runDepthToSpace(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  return runDepthSpace(C, true);
}
llvm::Error runSpaceToDepth(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  return runDepthSpace(C, false);
}

/// Reverses the first sequence_lens[b] steps along time_axis for each batch
/// row b, copying the rest as is.
llvm::Error runReverseSequence(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const int64_t R = int64_t(X.Dims.size());
  int64_t TA, BA;
  if (llvm::Error E = reverseSequenceAxes(C, TA, BA))
    return E;
  const int64_t T = X.Dims[TA], B = X.Dims[BA];
  const uint64_t Row =
      uint64_t(productOf(X.Dims, 2, size_t(R))) * elemBytes(X.Type);
  for (int64_t Bi = 0; Bi < B; ++Bi) {
    int64_t Len = intAt(C.Inputs[1], uint64_t(Bi));
    if (Len < 0 || Len > T)
      return C.badInput("a sequence length is outside [0, " + llvm::Twine(T) +
                        "]");
    for (int64_t Ti = 0; Ti < T; ++Ti) {
      int64_t Src = Ti < Len ? Len - 1 - Ti : Ti;
      auto At = [&](int64_t Time) {
        return uint64_t(TA == 0 ? Time * B + Bi : Bi * T + Time) * Row;
      };
      std::memcpy(Y.data<char>() + At(Ti), X.data<const char>() + At(Src), Row);
    }
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error reverseSequenceAxes(const KernelContext &C, int64_t &TA,
                                int64_t &BA) {
  const TensorRef &X = C.Inputs[0];
  const int64_t R = int64_t(X.Dims.size());
  TA = C.N.getInt("time_axis", 0);
  BA = C.N.getInt("batch_axis", 1);
  if (R < 2 || !normAxis(TA, R) || !normAxis(BA, R) || TA == BA ||
      std::max(TA, BA) != 1)
    return C.badInput("time_axis and batch_axis must be 0 and 1");
  if (!hasInput(C, 1) || int64_t(C.Inputs[1].numElements()) != X.Dims[BA])
    return C.badInput("sequence_lens must hold one length per batch row");
  return llvm::Error::success();
}

void registerIndexingKernels(CPUKernelTable &T) {
  addKernel(T, "Slice", Kernel{&runSlice, nullptr, {}});
  addKernel(T, "Concat", Kernel{&runConcat, nullptr, {}});
  addKernel(T, "Split", Kernel{&runSplit, nullptr, {}});
  addKernel(T, "Tile", Kernel{&runTile, nullptr, {}});
  addKernel(T, "Pad", Kernel{&runPad, nullptr, {}});
  addKernel(T, "OneHot", Kernel{&runOneHot, nullptr, {}});
  addKernel(T, "DepthToSpace", Kernel{&runDepthToSpace, nullptr, {}});
  addKernel(T, "SpaceToDepth", Kernel{&runSpaceToDepth, nullptr, {}});
  addKernel(T, "ReverseSequence", Kernel{&runReverseSequence, nullptr, {}});
  registerGatherKernels(T);
  registerResizeKernels(T);
  registerTopKKernels(T);
  registerGridSampleKernels(T);
  registerCenterCropPadKernels(T);
  registerTensorScatterKernels(T);
  registerGatherBlockQuantizedKernels(T);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
