//===- IndexKernels.cpp - ArgMax, CumSum, Trilu, TopK, Einsum, Resize... --===//
//
// The ops whose result at an element depends on its position: the host
// side reads the attributes and the small inputs (CumSum's axis, Trilu's
// k, TopK's k, Resize's scales and roi) on the host, with the CPU kernels'
// checks, and the launchers (Kernels/IndexOps.cu, Kernels/Resize.cu) do the
// rest. Resize's setup and per-axis taps are the CPU kernel's own functions
// (cpu::resizeSetup, ResizeTaps.h), so both backends read a model alike.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/TensorUtil.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {
const llvm::SmallVector<ElementType, 4> NumberTypes = {
    ElementType::Float, ElementType::Double, ElementType::Int32,
    ElementType::Int64};

template <bool IsMax> llvm::Error runArg(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0];
  int64_t Axis = C.N.getInt("axis", 0);
  if (!cpu::normAxis(Axis, int64_t(In.Dims.size())))
    return C.badInput("axis out of range");
  if (In.Dims[Axis] == 0)
    return C.badInput("ArgMax/ArgMin over an empty axis");
  return launched(
      C,
      argReduce(IsMax, C.N.getInt("select_last_index", 0) != 0,
                *dtypeOf(In.Type), In.Data, C.Outputs[0].data<int64_t>(),
                cpu::productOf(In.Dims, 0, size_t(Axis)), In.Dims[Axis],
                cpu::productOf(In.Dims, size_t(Axis) + 1, In.Dims.size()),
                context().Compute),
      "ArgMax/ArgMin kernel");
}

llvm::Error runCumSum(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0];
  llvm::SmallVector<int64_t, 1> Axis;
  if (C.Inputs.size() < 2 || !C.Inputs[1].present() ||
      C.Inputs[1].numElements() != 1)
    return C.badInput("axis must be an integer scalar");
  if (llvm::Error E = hostInts(C, 1, Axis))
    return E;
  if (Axis.size() != 1 || !cpu::normAxis(Axis[0], int64_t(In.Dims.size())))
    return C.badInput("axis out of range");
  const int64_t A = Axis[0];
  return launched(C,
                  cumSum(*dtypeOf(In.Type), In.Data, C.Outputs[0].Data,
                         cpu::productOf(In.Dims, 0, size_t(A)), In.Dims[A],
                         cpu::productOf(In.Dims, size_t(A) + 1, In.Dims.size()),
                         C.N.getInt("exclusive", 0) != 0,
                         C.N.getInt("reverse", 0) != 0, context().Compute),
                  "CumSum kernel");
}

llvm::Error runTrilu(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  if (In.Dims.size() < 2)
    return C.badInput("Trilu needs a tensor of rank 2 or more");
  int64_t K = 0;
  if (cpu::hasInput(C, 1)) {
    llvm::SmallVector<int64_t, 1> V;
    if (llvm::Error E = hostInts(C, 1, V))
      return E;
    if (V.empty())
      return C.badInput("k is empty");
    K = V[0];
  }
  const int64_t Rows = In.Dims[In.Dims.size() - 2],
                Cols = In.Dims[In.Dims.size() - 1];
  // Past Rows + Cols either way every element is kept or none is: clamped
  // so that r + k cannot overflow on the device.
  K = std::clamp<int64_t>(K, -(Rows + Cols), Rows + Cols);
  return launched(C,
                  trilu(In.Data, Out.Data, int(elementBits(In.Type) / 8),
                        int64_t(Out.numElements()), Rows, Cols, K,
                        C.N.getInt("upper", 1) != 0, context().Compute),
                  "Trilu kernel");
}

// TopK. k is read on the host (a constant from the graph, else copied
// back after a wait for the compute stream), so a k computed at run time
// is no host step: the plan reserved the outputs' bound (ActualDims set),
// the kernel writes them densely for k, and reports their dims
// (Kernel::ReportsSizes), as the CPU kernel does.
llvm::Error runTopK(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0];
  int64_t Axis = C.N.getInt("axis", -1);
  if (!cpu::normAxis(Axis, int64_t(X.Dims.size())))
    return C.badInput("axis out of range");
  int64_t K = C.N.getInt("k", -1);
  if (cpu::hasInput(C, 1)) {
    llvm::SmallVector<int64_t, 1> V;
    if (llvm::Error E = hostInts(C, 1, V))
      return E;
    if (V.size() != 1)
      return C.badInput("k must hold one value");
    K = V[0];
  }
  if (K < 0 || K > X.Dims[Axis])
    return C.badInput("k = " + llvm::Twine(K) + " is outside [0, " +
                      llvm::Twine(X.Dims[Axis]) + "]");
  void *Values = nullptr;
  int64_t *Indices = nullptr;
  for (unsigned I = 0; I < C.Outputs.size() && I < 2; ++I) {
    const TensorRef &Out = C.Outputs[I];
    if (!Out.present())
      continue;
    const bool Bounded = C.ActualDims != nullptr;
    if (Out.Dims.size() != X.Dims.size() ||
        (Bounded ? Out.Dims[Axis] < K : Out.Dims[Axis] != K))
      return C.badInput("outputs disagree with k");
    if (Bounded) {
      C.ActualDims[I].assign(X.Dims.begin(), X.Dims.end());
      C.ActualDims[I][Axis] = K;
    }
    if (I == 0)
      Values = Out.Data;
    else if (Out.Type != ElementType::Int64)
      return C.badInput("Indices must be int64");
    else
      Indices = Out.data<int64_t>();
  }
  return launched(C,
                  topK(*dtypeOf(X.Type), X.Data, Values, Indices,
                       cpu::productOf(X.Dims, 0, size_t(Axis)), X.Dims[Axis],
                       cpu::productOf(X.Dims, size_t(Axis) + 1, X.Dims.size()),
                       K, C.N.getInt("largest", 1) != 0, context().Compute),
                  "TopK kernel");
}

// ReverseSequence: the CPU kernel's checks (cpu::reverseSequenceAxes); the
// lengths are read on the device, one out of range raising the index flag
// (the CPU's bad input).
llvm::Error runReverseSequence(const KernelContext &C) {
  int64_t TA, BA;
  if (llvm::Error E = cpu::reverseSequenceAxes(C, TA, BA))
    return E;
  const TensorRef &X = C.Inputs[0], &Lens = C.Inputs[1];
  if (Lens.Type != ElementType::Int64)
    return C.badInput("sequence_lens must be int64");
  const int EB = int(elementBits(X.Type) / 8);
  return launched(
      C,
      reverseSequence(X.Data, C.Outputs[0].Data, Lens.data<int64_t>(), EB,
                      X.Dims[TA], X.Dims[BA],
                      cpu::productOf(X.Dims, 2, X.Dims.size()), TA == 0,
                      context().BadIndex, context().Compute),
      "ReverseSequence kernel");
}

// MaxUnpool: the CPU kernel's checks and default dims (cpu::maxUnpoolShape);
// the indices are read on the device, one outside the output raising the
// index flag (the CPU's bad input).
llvm::Error runMaxUnpool(const KernelContext &C) {
  cpu::DimVector Def;
  if (llvm::Error E = cpu::maxUnpoolShape(C, Def))
    return E;
  const TensorRef &X = C.Inputs[0], &Idx = C.Inputs[1], &Y = C.Outputs[0];
  if (Idx.Type != ElementType::Int64)
    return C.badInput("indices must be int64");
  if (Y.Dims.size() > size_t(MaxRank))
    return C.unsupported("rank above " + llvm::Twine(MaxRank));
  UnpoolArgs A;
  A.Rank = int(Y.Dims.size());
  const cpu::DimVector YStride = cpu::stridesOf(Y.Dims);
  A.DefCount = 1;
  for (int D = 0; D < A.Rank; ++D) {
    A.Def[D] = Def[size_t(D)];
    A.YDims[D] = Y.Dims[size_t(D)];
    A.YStride[D] = YStride[size_t(D)];
    A.DefCount *= Def[size_t(D)];
  }
  return launched(C,
                  maxUnpool(X.Data, Idx.data<int64_t>(), Y.Data, Y.bytes(),
                            int(elementBits(X.Type) / 8),
                            int64_t(X.numElements()), A, context().BadIndex,
                            context().Compute),
                  "MaxUnpool kernel");
}

// Indices other than int64 (the CPU reads any integer type) run on the
// host; so do ReverseSequence's lengths.
std::string int64InputRefuses(const Node &N, llvm::ArrayRef<TensorRef> In,
                              llvm::ArrayRef<TensorRef>) {
  if (In.size() < 2 || In[1].Type == ElementType::Int64 ||
      In[1].Type == ElementType::Undefined)
    return "";
  return (N.OpType + " input 1 of type " + elementTypeName(In[1].Type)).str();
}

// Einsum: the CPU kernel's setup, then its loop on the device.
llvm::Error runEinsum(const KernelContext &C) {
  cpu::EinsumSetup S;
  if (llvm::Error E = cpu::einsumSetup(C, S))
    return E;
  if (C.Inputs.size() > size_t(EinsumArgs::MaxOps))
    return C.unsupported("more than " + llvm::Twine(EinsumArgs::MaxOps) +
                         " operands");
  if (S.OutDims.size() > size_t(MaxRank) || S.SumDims.size() > size_t(MaxRank))
    return C.unsupported("more than " + llvm::Twine(MaxRank) +
                         " output or summed labels");
  EinsumArgs A;
  A.NOp = int(C.Inputs.size());
  A.OutRank = int(S.OutDims.size());
  A.SumRank = int(S.SumDims.size());
  for (int K = 0; K < A.OutRank; ++K)
    A.OutDims[K] = S.OutDims[K];
  for (int K = 0; K < A.SumRank; ++K)
    A.SumDims[K] = S.SumDims[K];
  for (int P = 0; P < A.NOp; ++P) {
    A.Data[P] = C.Inputs[P].Data;
    for (int K = 0; K < A.OutRank; ++K)
      A.OutStride[P][K] = S.OutStrides[P][K];
    for (int K = 0; K < A.SumRank; ++K)
      A.SumStride[P][K] = S.SumStrides[P][K];
  }
  return launched(C,
                  einsum(A, *dtypeOf(C.Outputs[0].Type), C.Outputs[0].Data,
                         context().Compute),
                  "Einsum kernel");
}

// The CPU kernel's checks and attributes (cpu::roiAlignSetup); the batch
// indices are read on the device.
llvm::Error runRoiAlign(const KernelContext &C) {
  roialign::Params P;
  if (llvm::Error E = cpu::roiAlignSetup(C, P))
    return E;
  const TensorRef &X = C.Inputs[0], &Rois = C.Inputs[1], &Batch = C.Inputs[2];
  return launched(C,
                  roiAlign(P, X.data<float>(), Rois.data<float>(), Batch.Data,
                           Batch.Type == ElementType::Int64,
                           C.Outputs[0].data<float>(), X.Dims[0], X.Dims[1],
                           X.Dims[2], X.Dims[3], Rois.Dims[0],
                           context().BadIndex, context().Compute),
                  "RoiAlign kernel");
}

llvm::Error runGridSample(const KernelContext &C) {
  gridsample::Mode M;
  gridsample::Padding Pad;
  bool Align;
  if (llvm::Error E = cpu::gridSampleSetup(C, M, Pad, Align))
    return E;
  const TensorRef &X = C.Inputs[0], &Grid = C.Inputs[1], &Y = C.Outputs[0];
  return launched(C,
                  gridSample(X.data<float>(), Grid.data<float>(),
                             Y.data<float>(), X.Dims[0], X.Dims[1], X.Dims[2],
                             X.Dims[3], Grid.Dims[1], Grid.Dims[2], M, Pad,
                             Align, context().Compute),
                  "GridSample kernel");
}

llvm::Error runResize(const KernelContext &C) {
  cpu::ResizeSetup S;
  if (llvm::Error E = cpu::resizeSetup(
          C,
          [&](unsigned I, llvm::SmallVectorImpl<double> &V) {
            return hostDoubles(C, I, V);
          },
          S))
    return E;
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (Y.numElements() == 0)
    return llvm::Error::success();
  for (int64_t D : X.Dims)
    if (D == 0)
      return C.badInput("resizing an empty input");
  if (X.Dims.empty())
    return copyUnlessAliased(C);
  if (X.Dims.size() > size_t(MaxRank))
    return C.unsupported("rank above " + llvm::Twine(MaxRank));
  ResizeArgs A;
  A.M = S.M;
  A.Rank = int(X.Dims.size());
  A.Extrapolation = S.Extrapolation;
  cpu::DimVector Strides = cpu::stridesOf(X.Dims);
  for (int D = 0; D < A.Rank; ++D) {
    A.InDims[D] = X.Dims[D];
    A.OutDims[D] = Y.Dims[D];
    A.InStride[D] = Strides[D];
    A.Axes[D] = S.Axes[D];
  }
  if (X.Type == ElementType::Float || X.Type == ElementType::Double)
    return launched(C,
                    resizeInterpolate(A, *dtypeOf(X.Type), X.Data, Y.Data,
                                      context().Compute),
                    "Resize kernel");
  const int EB = int(elementBits(X.Type) / 8);
  if (S.M.M == resize::Mode::Nearest && EB >= 1 && EB <= 8)
    return launched(C, resizeNearest(A, EB, X.Data, Y.Data, context().Compute),
                    "Resize kernel");
  return C.unsupported("linear or cubic Resize of type " +
                       elementTypeName(X.Type));
}
// The count a kernel wrote to Context::DeviceCount, back on the host
// through pinned scratch after a wait for the compute stream.
llvm::Expected<int64_t> readCount(const KernelContext &C,
                                  const llvm::Twine &What) {
  Context &Ctx = context();
  if (int E = cudaMemcpyAsync(Ctx.HostScratch, Ctx.DeviceCount, sizeof(int64_t),
                              cudaMemcpyDeviceToHost, Ctx.Compute))
    return kernelFailure(C, E, "reading " + What);
  if (int E = cudaStreamSynchronize(Ctx.Compute))
    return kernelFailure(C, E, "reading " + What);
  return Ctx.HostScratch[0];
}

// NonZero on the device (Kernels/NonZero.cu): the count comes back to the
// host (readCount) and is reported as the output's dims
// (Kernel::ReportsSizes), so the step is no host step: only 8 bytes cross
// to the host, not the input.
llvm::Error runNonZero(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  auto T = dtypeOf(X.Type);
  if (!T)
    return C.unsupported("element type " + elementTypeName(X.Type));
  if (X.Dims.size() > size_t(MaxRank))
    return C.unsupported("rank above " + llvm::Twine(MaxRank));
  NonZeroDims D;
  D.Rank = int(X.Dims.size());
  for (int I = 0; I < D.Rank; ++I)
    D.Dims[I] = X.Dims[size_t(I)];
  const int64_t Bound = Y.Dims.size() == 2 ? Y.Dims[1] : 0;
  Context &Ctx = context();
  if (llvm::Error E = launched(C,
                               nonZero(X.Data, *T, int64_t(X.numElements()), D,
                                       Y.data<int64_t>(), Bound,
                                       Ctx.DeviceCount, Ctx.Compute),
                               "NonZero kernel"))
    return E;
  auto Count = readCount(C, "NonZero's count");
  if (!Count)
    return Count.takeError();
  if (*Count > Bound)
    return C.badInput("more nonzero elements than the planned bound");
  if (C.ActualDims)
    C.ActualDims[0] = {int64_t(D.Rank), *Count};
  return llvm::Error::success();
}

// Compress on the device (Kernels/Compress.cu), its kept count read back
// and reported as NonZero's is. The checks are the CPU kernel's: a bool
// condition, which may be shorter than the axis (the rest is dropped) and
// is read only as far as the axis goes.
llvm::Error runCompress(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &Cond = C.Inputs[1], &Y = C.Outputs[0];
  if (Cond.Type != ElementType::Bool)
    return C.unsupported("condition of type " + elementTypeName(Cond.Type));
  const int EB = int(elementBits(X.Type) / 8);
  if (EB == 0 || X.Type == ElementType::String)
    return C.unsupported("element type " + elementTypeName(X.Type));
  int64_t Outer = 1, XLen = int64_t(X.numElements()), Inner = 1;
  int64_t Axis = -1;
  if (C.N.attr("axis")) {
    Axis = C.N.getInt("axis", 0);
    if (!cpu::normAxis(Axis, int64_t(X.Dims.size())))
      return C.badInput("axis out of range");
    Outer = cpu::productOf(X.Dims, 0, size_t(Axis));
    XLen = X.Dims[Axis];
    Inner = cpu::productOf(X.Dims, size_t(Axis) + 1, X.Dims.size());
  }
  const int64_t Len = std::min<int64_t>(XLen, int64_t(Cond.numElements()));
  // Rows of no elements hold any count.
  const int64_t Row = Outer * Inner,
                BoundKept = Row ? int64_t(Y.numElements()) / Row : Len;
  Context &Ctx = context();
  if (llvm::Error E = launched(C,
                               compress(X.Data, EB, Cond.data<uint8_t>(), Len,
                                        XLen, Outer, Inner, Y.Data, BoundKept,
                                        Ctx.DeviceCount, Ctx.Compute),
                               "Compress kernel"))
    return E;
  auto Kept = readCount(C, "Compress's count");
  if (!Kept)
    return Kept.takeError();
  if (*Kept > BoundKept)
    return C.badInput("more elements than the planned bound");
  if (C.ActualDims) {
    if (Axis < 0)
      C.ActualDims[0] = {*Kept};
    else {
      C.ActualDims[0].assign(X.Dims.begin(), X.Dims.end());
      C.ActualDims[0][Axis] = *Kept;
    }
  }
  return llvm::Error::success();
}
} // namespace

void cuda::registerIndexKernels(CUDAKernelTable &T) {
  addKernel(T, "ArgMax", {runArg<true>, nullptr, NumberTypes});
  addKernel(T, "ArgMin", {runArg<false>, nullptr, NumberTypes});
  // DeviceUnread: CumSum's axis, Trilu's and TopK's k, and Resize's roi, scales
  // and sizes are read on the host (hostInts, hostDoubles).
  addKernel(T, "CumSum", {runCumSum, nullptr, NumberTypes, 0b10});
  addKernel(T, "Trilu", {runTrilu, nullptr, {}, 0b10});
  {
    Kernel TopK{runTopK, nullptr, NumberTypes, 0b10};
    TopK.ReportsSizes = true;
    addKernel(T, "TopK", TopK);
  }
  addKernel(T, "Einsum", {runEinsum, nullptr, NumberTypes});
  addKernel(T, "ReverseSequence",
            {runReverseSequence, nullptr, {}, 0, int64InputRefuses});
  // DeviceUnread: output_shape gives only the dims, which Y has.
  addKernel(T, "MaxUnpool",
            {runMaxUnpool, nullptr, {}, 0b100, int64InputRefuses});
  addKernel(T, "GridSample", {runGridSample, nullptr, {ElementType::Float}});
  addKernel(T, "RoiAlign", {runRoiAlign, nullptr, {ElementType::Float}});
  {
    Kernel NZ{runNonZero, nullptr, {}};
    for (ElementType E :
         {ElementType::Float, ElementType::Double, ElementType::Int32,
          ElementType::Int64, ElementType::Bool, ElementType::UInt8,
          ElementType::Int8, ElementType::Float16, ElementType::BFloat16})
      NZ.Types.push_back(E);
    NZ.ReportsSizes = true;
    addKernel(T, "NonZero", NZ);
  }
  {
    Kernel Compress{runCompress, nullptr, {}};
    Compress.ReportsSizes = true;
    addKernel(T, "Compress", Compress);
  }
  // Every type but the 16-bit floats, which run on float copies
  // (HalfInFloat.h): linear and cubic modes interpolate in float.
  const llvm::SmallVector<ElementType, 4> NotHalf = {
      ElementType::Float,  ElementType::Double, ElementType::Int8,
      ElementType::Int16,  ElementType::Int32,  ElementType::Int64,
      ElementType::UInt8,  ElementType::UInt16, ElementType::UInt32,
      ElementType::UInt64, ElementType::Bool};
  addKernel(T, "Resize", {runResize, nullptr, NotHalf, 0b1110});
  addKernel(T, "Upsample", {runResize, nullptr, NotHalf, 0b10});
}
