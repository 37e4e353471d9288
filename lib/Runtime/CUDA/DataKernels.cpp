//===- DataKernels.cpp - views, layout and shape ops on CUDA --------------===//
//
// Output dims were fixed by shape inference before the run, so these
// kernels take them from the output refs. Values that steer a copy (Slice's
// starts, Pad's pads) are read on the host: from the graph when they are
// constants, else from the device (hostInts). Shape, Size and
// ConstantOfShape write values known on the host, by kernel arguments, so
// that no host buffer must outlive the call.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/Elementwise.h"
#include "../CPU/Kernels/TensorUtil.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"
#include <cstring>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {
int elemBytesOf(const TensorRef &T) { return int(elementBits(T.Type) / 8); }

/// The bytes of one element of type T holding the value (IsInt: I, else F),
/// converted as the CPU kernels store it: bool is 0 or 1, float16 and
/// bfloat16 are rounded from the double (a plain integer cast would give
/// the wrong bits), complex64 is the real part.
uint64_t patternOf(ElementType T, double F, int64_t I, bool IsInt) {
  const double D = IsInt ? double(I) : F;
  uint64_t P = 0;
  switch (T) {
  case ElementType::Float:
  case ElementType::Complex64: {
    float G = float(D);
    std::memcpy(&P, &G, 4);
    return P;
  }
  case ElementType::Double:
    std::memcpy(&P, &D, 8);
    return P;
  case ElementType::Float16:
    return cpu::toHalf(D).Bits;
  case ElementType::BFloat16:
    return cpu::toBFloat16(D).Bits;
  case ElementType::Bool:
    return IsInt ? I != 0 : F != 0;
  default:
    return uint64_t(IsInt ? I : int64_t(F));
  }
}

llvm::Error runView(const KernelContext &C) {
  if (C.Inputs[0].numElements() != C.Outputs[0].numElements())
    return C.badInput("input has " + llvm::Twine(C.Inputs[0].numElements()) +
                      " elements, output " +
                      llvm::Twine(C.Outputs[0].numElements()));
  return copyUnlessAliased(C);
}

/// OomplanIf (a flattened If, IR/Graph.h): each output is a copy of the
/// taken branch's result. The condition is read on the host (it also
/// decided which branch's steps ran); the checks, and the dims reported
/// for a result smaller than the plan's bound, are the CPU kernel's
/// (cpu::ifSelectSource).
llvm::Error runIfSelect(const KernelContext &C) {
  if (C.Inputs.size() != 1 + 2 * C.Outputs.size())
    return C.badInput("needs a bool condition and both branches' results");
  auto Cond = hostScalar(C, 0);
  if (!Cond)
    return Cond.takeError();
  for (size_t I = 0; I < C.Outputs.size(); ++I) {
    llvm::Expected<const TensorRef *> From =
        cpu::ifSelectSource(C, *Cond != 0, I);
    if (!From)
      return From.takeError();
    const TensorRef &To = C.Outputs[I];
    if (*From && (*From)->Data != To.Data && (*From)->bytes())
      if (llvm::Error E = launched(
              C,
              cudaMemcpyAsync(To.Data, (*From)->Data, (*From)->bytes(),
                              cudaMemcpyDeviceToDevice, context().Compute),
              "If result copy"))
        return E;
  }
  return llvm::Error::success();
}

llvm::Error runTranspose(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  size_t R = In.Dims.size();
  if (R > size_t(MaxRank))
    return C.unsupported("rank above " + llvm::Twine(MaxRank));
  std::vector<int64_t> Perm;
  if (auto P = C.N.getInts("perm"))
    Perm = *P;
  else
    for (size_t I = 0; I < R; ++I)
      Perm.push_back(int64_t(R - 1 - I));
  if (Perm.size() != R || Out.Dims.size() != R)
    return C.badInput("perm does not match the rank");
  cpu::DimVector InStride = cpu::stridesOf(In.Dims);
  Strided S;
  S.Rank = int(R);
  // As the CPU kernel: a negative entry counts from the end, and perm must
  // be a permutation matching the output (else the copy reads garbage).
  llvm::SmallVector<bool, MaxRank> Seen(R, false);
  for (size_t I = 0; I < R; ++I) {
    if (!cpu::normAxis(Perm[I], int64_t(R)) || Seen[Perm[I]] ||
        Out.Dims[I] != In.Dims[Perm[I]])
      return C.badInput("perm is not a permutation matching the output");
    Seen[Perm[I]] = true;
    S.Dims[I] = Out.Dims[I];
    S.Stride[0][I] = InStride[Perm[I]];
  }
  return launched(
      C,
      stridedCopy(In.Data, 0, Out.Data, elemBytesOf(In), S, context().Compute),
      "Transpose kernel");
}

llvm::Error runExpand(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  Strided S;
  if (!setBroadcast(S, 0, In.Dims, Out.Dims))
    return C.unsupported("input does not broadcast to the output");
  return launched(
      C,
      stridedCopy(In.Data, 0, Out.Data, elemBytesOf(In), S, context().Compute),
      "Expand kernel");
}

llvm::Error runConcat(const KernelContext &C) {
  const TensorRef &Out = C.Outputs[0];
  int64_t Axis = C.N.getInt("axis", 0);
  if (!cpu::normAxis(Axis, int64_t(Out.Dims.size())))
    return C.badInput("axis out of range");
  uint64_t EB = elemBytesOf(Out);
  int64_t Outer = cpu::productOf(Out.Dims, 0, size_t(Axis));
  int64_t Inner = cpu::productOf(Out.Dims, size_t(Axis) + 1, Out.Dims.size());
  uint64_t OutRow = uint64_t(Out.Dims[Axis] * Inner) * EB, At = 0;
  for (const TensorRef &In : C.Inputs) {
    if (!In.present())
      continue;
    uint64_t Row = uint64_t(In.Dims[Axis] * Inner) * EB;
    if (Row && Outer) {
      int E = 0;
      if (Outer == 1) // one block: a plain copy (no pitch limit)
        E = cudaMemcpyAsync(Out.data<char>() + At, In.Data, Row,
                            cudaMemcpyDeviceToDevice, context().Compute);
      else if (OutRow <= uint64_t(INT32_MAX))
        E = cudaMemcpy2DAsync(Out.data<char>() + At, OutRow, In.Data, Row, Row,
                              size_t(Outer), cudaMemcpyDeviceToDevice,
                              context().Compute);
      else {
        // cudaMemcpy2D rejects pitches above the device's memPitch (2^31 - 1
        // bytes): a strided copy kernel of Outer rows instead.
        Strided S;
        S.Rank = 2;
        S.Dims[0] = Outer;
        S.Dims[1] = int64_t(Row / EB);
        S.Stride[0][0] = int64_t(Row / EB);
        S.Stride[0][1] = 1;
        S.Stride[1][0] = int64_t(OutRow / EB);
        S.Stride[1][1] = 1;
        E = stridedCopy2(In.Data, 0, Out.Data, int64_t(At / EB), int(EB), S,
                         context().Compute);
      }
      if (E)
        return kernelFailure(C, E, "Concat copy");
    }
    At += Row;
  }
  return llvm::Error::success();
}

// Slice (opset 10+: starts, ends, axes, steps inputs; opset 1: attributes).
llvm::Error runSlice(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  size_t R = In.Dims.size();
  if (R > size_t(MaxRank))
    return C.unsupported("rank above " + llvm::Twine(MaxRank));
  llvm::SmallVector<int64_t, 8> Starts, Axes, Steps;
  if (C.Inputs.size() > 1) {
    if (llvm::Error E = hostInts(C, 1, Starts))
      return E;
    if (llvm::Error E = hostInts(C, 3, Axes))
      return E;
    if (llvm::Error E = hostInts(C, 4, Steps))
      return E;
  } else {
    if (auto A = C.N.getInts("starts"))
      Starts.assign(A->begin(), A->end());
    if (auto A = C.N.getInts("axes"))
      Axes.assign(A->begin(), A->end());
  }
  if (Axes.empty())
    for (size_t I = 0; I < Starts.size(); ++I)
      Axes.push_back(int64_t(I));
  if (Steps.empty())
    Steps.assign(Starts.size(), 1);
  if (Axes.size() != Starts.size() || Steps.size() != Starts.size())
    return C.badInput("starts, axes and steps differ in length");
  if (Out.numElements() == 0) // also keeps std::clamp's bounds ordered below
    return llvm::Error::success();
  cpu::DimVector InStride = cpu::stridesOf(In.Dims);
  Strided S;
  S.Rank = int(R);
  int64_t Offset = 0;
  for (size_t I = 0; I < R; ++I) {
    S.Dims[I] = Out.Dims[I];
    S.Stride[0][I] = InStride[I];
  }
  for (size_t K = 0; K < Starts.size(); ++K) {
    int64_t A = Axes[K];
    if (!cpu::normAxis(A, int64_t(R)) || Steps[K] == 0)
      return C.badInput("bad axis or zero step");
    int64_t D = In.Dims[A], St = Starts[K];
    if (St < 0)
      St += D;
    // ONNX clamps: [0, D] going forward, [0, D - 1] going backward.
    St = Steps[K] > 0 ? std::clamp<int64_t>(St, 0, D)
                      : std::clamp<int64_t>(St, 0, D - 1);
    Offset += St * InStride[A];
    S.Stride[0][A] = InStride[A] * Steps[K];
  }
  return launched(C,
                  stridedCopy(In.Data, Offset, Out.Data, elemBytesOf(In), S,
                              context().Compute),
                  "Slice kernel");
}

llvm::Error runGather(const KernelContext &C) {
  const TensorRef &Data = C.Inputs[0], &Idx = C.Inputs[1], &Out = C.Outputs[0];
  int64_t Axis = C.N.getInt("axis", 0);
  if (!cpu::normAxis(Axis, int64_t(Data.Dims.size())))
    return C.badInput("axis out of range");
  if (Idx.Type != ElementType::Int64 && Idx.Type != ElementType::Int32)
    return C.unsupported("indices must be int32 or int64");
  return launched(
      C,
      gather(Data.Data, Idx.Data, Idx.Type == ElementType::Int64, Out.Data,
             cpu::productOf(Data.Dims, 0, size_t(Axis)), Data.Dims[Axis],
             cpu::productOf(Data.Dims, size_t(Axis) + 1, Data.Dims.size()),
             int64_t(Idx.numElements()), elemBytesOf(Data), context().BadIndex,
             context().Compute),
      "Gather kernel");
}

// Pad's mode as pad::Mode, or -1.
int padMode(const Node &N) {
  std::string Mode = N.getString("mode", "constant");
  return Mode == "constant"  ? pad::Constant
         : Mode == "edge"    ? pad::Edge
         : Mode == "reflect" ? pad::Reflect
         : Mode == "wrap"    ? pad::Wrap
                             : -1;
}

std::string padRefuses(const Node &N, llvm::ArrayRef<TensorRef>,
                       llvm::ArrayRef<TensorRef>) {
  return padMode(N) < 0 ? "mode '" + N.getString("mode", "") + "'" : "";
}

static_assert(pad::MaxRank == MaxRank, "one rank limit");

// Pad, constant mode: the output filled with the value, then the input's
// kept part copied to its place (negative pads crop). Edge, reflect and
// wrap: every output element gathered from its source (Pad.cu), the
// constant only where an input axis is empty (the CPU kernel's).
llvm::Error runPad(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  if (std::string Why = padRefuses(C.N, C.Inputs, C.Outputs); !Why.empty())
    return C.unsupported(Why);
  size_t R = In.Dims.size();
  if (R > size_t(MaxRank))
    return C.unsupported("rank above " + llvm::Twine(MaxRank));
  llvm::SmallVector<int64_t, 16> Pads, Axes;
  double Value = C.N.getFloat("value", 0);
  // An integer constant is read as an integer: through a double, int64
  // values past 2^53 would change (the CPU copies the bytes).
  std::optional<int64_t> IntValue;
  if (C.Inputs.size() > 1) {
    if (llvm::Error E = hostInts(C, 1, Pads))
      return E;
    if (C.Inputs.size() > 2 && C.Inputs[2].present()) {
      ElementType VT = C.Inputs[2].Type;
      if (VT == ElementType::Int64 || VT == ElementType::Int32) {
        llvm::SmallVector<int64_t, 1> V;
        if (llvm::Error E = hostInts(C, 2, V))
          return E;
        if (V.empty())
          return C.badInput("constant_value is empty");
        IntValue = V[0];
      } else {
        auto V = hostScalar(C, 2);
        if (!V)
          return V.takeError();
        Value = *V;
      }
    }
    if (llvm::Error E = hostInts(C, 3, Axes))
      return E;
  } else if (auto P = C.N.getInts("pads")) {
    Pads.assign(P->begin(), P->end());
  }
  if (Axes.empty())
    for (size_t I = 0; I < R; ++I)
      Axes.push_back(int64_t(I));
  if (Pads.size() != 2 * Axes.size())
    return C.badInput("pads has " + llvm::Twine(Pads.size()) + " values for " +
                      llvm::Twine(Axes.size()) + " axes");
  llvm::SmallVector<int64_t, 8> Begin(R, 0), End(R, 0);
  for (size_t K = 0; K < Axes.size(); ++K) {
    int64_t A = Axes[K];
    if (!cpu::normAxis(A, int64_t(R)))
      return C.badInput("axis out of range");
    Begin[A] = Pads[K];
    End[A] = Pads[K + Axes.size()];
  }
  uint64_t Pattern = IntValue ? patternOf(Out.Type, 0, *IntValue, true)
                              : patternOf(Out.Type, Value, 0, false);
  int EB = elemBytesOf(Out);
  if (EB == 0)
    return C.unsupported("element type " + elementTypeName(Out.Type));
  if (const int Mode = padMode(C.N); Mode != pad::Constant) {
    pad::Geometry G;
    G.Rank = int(R);
    G.M = Mode;
    for (size_t I = 0; I < R; ++I) {
      G.InDims[I] = In.Dims[I];
      G.OutDims[I] = Out.Dims[I];
      G.Begin[I] = Begin[I];
      if (Out.Dims[I] != In.Dims[I] + Begin[I] + End[I])
        return C.badInput("pads disagree with the planned output shape");
    }
    return launched(
        C, padGather(In.Data, Out.Data, EB, G, Pattern, context().Compute),
        "Pad kernel");
  }
  if (int E = fill(Out.Data, Out.bytes(), Pattern, EB, context().Compute))
    return kernelFailure(C, E, "Pad fill");
  cpu::DimVector InStride = cpu::stridesOf(In.Dims),
                 OutStride = cpu::stridesOf(Out.Dims);
  Strided S;
  S.Rank = int(R);
  int64_t InOff = 0, OutOff = 0;
  for (size_t I = 0; I < R; ++I) {
    int64_t Kept = In.Dims[I] + std::min<int64_t>(Begin[I], 0) +
                   std::min<int64_t>(End[I], 0);
    S.Dims[I] = std::max<int64_t>(Kept, 0);
    S.Stride[0][I] = InStride[I];
    S.Stride[1][I] = OutStride[I];
    InOff += std::max<int64_t>(-Begin[I], 0) * InStride[I];
    OutOff += std::max<int64_t>(Begin[I], 0) * OutStride[I];
  }
  return launched(
      C,
      stridedCopy2(In.Data, InOff, Out.Data, OutOff, EB, S, context().Compute),
      "Pad kernel");
}

llvm::Error runShape(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  auto [Start, End] = cpu::shapeRange(C.N, int64_t(In.Dims.size()));
  if (End - Start > MaxRank)
    return C.unsupported("more than " + llvm::Twine(MaxRank) + " dims");
  SmallInts V;
  for (int64_t I = Start; I < End; ++I)
    V.V[V.N++] = In.Dims[I];
  if (uint64_t(V.N) != Out.numElements())
    return C.badInput("output has " + llvm::Twine(Out.numElements()) +
                      " elements for " + llvm::Twine(V.N) + " dims");
  return launched(C, writeInts(Out.data<int64_t>(), V, context().Compute),
                  "Shape kernel");
}

llvm::Error runSize(const KernelContext &C) {
  SmallInts V;
  V.N = 1;
  V.V[0] = int64_t(C.Inputs[0].numElements());
  return launched(C,
                  writeInts(C.Outputs[0].data<int64_t>(), V, context().Compute),
                  "Size kernel");
}

llvm::Error runConstantOfShape(const KernelContext &C) {
  const TensorRef &Out = C.Outputs[0];
  uint64_t Pattern = 0;
  if (const Attribute *A = C.N.attr("value")) {
    if (!A->T || A->T->numElements() != 1)
      return C.badInput("attribute 'value' is not a one-element tensor");
    double F = A->T->Floats.empty() ? 0 : A->T->Floats[0];
    int64_t I = A->T->Ints.empty() ? 0 : A->T->Ints[0];
    Pattern = patternOf(Out.Type, F, I, !A->T->Ints.empty());
  }
  int EB = elemBytesOf(Out);
  if (EB == 0)
    return C.unsupported("element type " + elementTypeName(Out.Type));
  return launched(C,
                  fill(Out.Data, Out.bytes(), Pattern, EB, context().Compute),
                  "ConstantOfShape kernel");
}

// EyeLike: ones (in the output's type, patternOf's bits) on the diagonal
// j = i + k, zeros elsewhere, in one pass. The input gives only the dims.
llvm::Error runEyeLike(const KernelContext &C) {
  const TensorRef &Out = C.Outputs[0];
  if (Out.Dims.size() != 2)
    return C.badInput("EyeLike needs a 2-D input");
  const int EB = elemBytesOf(Out);
  if (EB == 0 || Out.Type == ElementType::Complex64 ||
      Out.Type == ElementType::String)
    return C.unsupported("output type " + elementTypeName(Out.Type));
  return launched(C,
                  eyeLike(Out.Data, EB, Out.Dims[0], Out.Dims[1],
                          C.N.getInt("k", 0), patternOf(Out.Type, 1, 1, true),
                          context().Compute),
                  "EyeLike kernel");
}

llvm::Error runRange(const KernelContext &C) {
  const TensorRef &Out = C.Outputs[0];
  auto T = dtypeOf(Out.Type);
  if (!T)
    return C.unsupported("element type " + elementTypeName(Out.Type));
  return launched(C,
                  range(*T, C.Inputs[0].Data, C.Inputs[2].Data, Out.Data,
                        int64_t(Out.numElements()), context().Compute),
                  "Range kernel");
}
} // namespace

void cuda::registerDataKernels(CUDAKernelTable &T) {
  // DeviceUnread: inputs used only by their dims, or read on the host
  // (hostInts); a shape value computed on the host for them stays there.
  for (const char *Op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
    addKernel(T, Op, {runView, nullptr, {}, 0b10});
  addKernel(T, "Transpose", {runTranspose, nullptr, {}});
  // The taken branch's dims are the host's (it ran that branch's steps):
  // the kernel reports them itself (Kernel::ReportsSizes), so a branch
  // whose result has a data-dependent size needs no host step.
  addKernel(T, "OomplanIf", {runIfSelect, nullptr, {}, 0b1, nullptr, true});
  addKernel(T, "Expand", {runExpand, nullptr, {}, 0b10});
  addKernel(T, "Concat", {runConcat, nullptr, {}});
  addKernel(T, "Slice", {runSlice, nullptr, {}, 0b11110});
  addKernel(T, "Gather", {runGather, nullptr, {}});
  addKernel(T, "Pad", {runPad, nullptr, {}, 0b1110, padRefuses});
  addKernel(T, "Shape", {runShape, nullptr, {}, 0b1});
  addKernel(T, "Size", {runSize, nullptr, {}, 0b1});
  addKernel(T, "ConstantOfShape", {runConstantOfShape, nullptr, {}, 0b1});
  addKernel(T, "Range", {runRange, nullptr, {}});
  addKernel(T, "EyeLike", {runEyeLike, nullptr, {}, 0b1});
}
