//===- GatherScatterKernels.cpp - element and ND gathers, scatters (CUDA) -===//
//
// The CPU kernels' checks (Gather.cpp) on the host, then one launcher each
// (Kernels/Scatter.cu); OneHot, a scatter of ones, too. Indices are read on
// the device: one out of range raises the device flag that Gather uses,
// and the executor reports it after the run. The scatters start from a
// copy of the data (none when the planner gave the output the data's
// bytes). Reductions: none, add, max and min (mul is
// refused, so it runs as a host step: the device has no atomic product
// that keeps the CPU's rounding).
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/TensorUtil.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {
int elemBytesOf(const TensorRef &T) { return int(elementBits(T.Type) / 8); }

/// The reductions the device's atomics keep the CPU's results for: none;
/// add (up to the order of the terms), max and min on float, double, int32
/// and int64 (Kernel::Refuses: mul, and other types, run as host steps).
std::string reductionRefuses(const Node &N, llvm::ArrayRef<TensorRef> In,
                             llvm::ArrayRef<TensorRef>) {
  std::string R = N.getString("reduction", "none");
  if (R == "none")
    return "";
  if (R != "add" && R != "max" && R != "min")
    return "reduction '" + R + "' (the CUDA kernel has none, add, max, min)";
  ElementType T = In.empty() ? ElementType::Undefined : In[0].Type;
  if (T != ElementType::Float && T != ElementType::Double &&
      T != ElementType::Int32 && T != ElementType::Int64)
    return ("reduction " + R + " on type " + elementTypeName(T).str());
  return "";
}

/// The scatter's reduction code (Launch.h's: 0 none, 1 add, 3 max, 4
/// min); an error for a reduction the kernel lacks.
llvm::Expected<int> reductionCode(const KernelContext &C) {
  if (std::string Why = reductionRefuses(C.N, C.Inputs, C.Outputs);
      !Why.empty())
    return C.unsupported(Why);
  const std::string R = C.N.getString("reduction", "none");
  return R == "add" ? 1 : R == "max" ? 3 : R == "min" ? 4 : 0;
}

llvm::Expected<ElementsArgs> elementsArgs(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Idx = C.Inputs[1];
  const int64_t R = int64_t(In.Dims.size());
  int64_t Axis = C.N.getInt("axis", 0);
  if (!cpu::normAxis(Axis, R))
    return C.badInput("axis out of range");
  if (int64_t(Idx.Dims.size()) != R)
    return C.badInput("indices and data differ in rank");
  for (int64_t D = 0; D < R; ++D) // as the CPU's forEachElementIndex
    if (D != Axis && Idx.Dims[D] > In.Dims[D])
      return C.badInput("indices dim " + llvm::Twine(D) + " (" +
                        llvm::Twine(Idx.Dims[D]) + ") exceeds data's (" +
                        llvm::Twine(In.Dims[D]) + ")");
  if (R > MaxRank)
    return C.unsupported("rank above " + llvm::Twine(MaxRank));
  if (Idx.Type != ElementType::Int64 && Idx.Type != ElementType::Int32)
    return C.unsupported("indices must be int32 or int64");
  ElementsArgs A;
  A.Rank = int(R);
  A.Axis = int(Axis);
  A.AxisDim = In.Dims[Axis];
  cpu::DimVector S = cpu::stridesOf(In.Dims);
  for (int64_t D = 0; D < R; ++D) {
    A.IdxDims[D] = Idx.Dims[D];
    A.DataStride[D] = S[D];
  }
  return A;
}

llvm::Error runGatherElements(const KernelContext &C) {
  auto A = elementsArgs(C);
  if (!A)
    return A.takeError();
  const TensorRef &Idx = C.Inputs[1], &Out = C.Outputs[0];
  if (Out.numElements() != Idx.numElements())
    return C.badInput("output and indices differ in size");
  return launched(C,
                  gatherElements(*A, C.Inputs[0].Data, Idx.Data,
                                 Idx.Type == ElementType::Int64, Out.Data,
                                 elemBytesOf(Out), int64_t(Idx.numElements()),
                                 context().BadIndex, context().Compute),
                  "GatherElements kernel");
}

llvm::Error runScatterElements(const KernelContext &C) {
  auto A = elementsArgs(C);
  if (!A)
    return A.takeError();
  auto Reduce = reductionCode(C);
  if (!Reduce)
    return Reduce.takeError();
  const TensorRef &In = C.Inputs[0], &Idx = C.Inputs[1], &Upd = C.Inputs[2];
  if (Upd.numElements() != Idx.numElements())
    return C.badInput("updates and indices differ in size");
  if (llvm::Error E = copyUnlessAliased(C))
    return E;
  return launched(C,
                  scatterElements(*A, C.Outputs[0].Data, Idx.Data,
                                  Idx.Type == ElementType::Int64, Upd.Data,
                                  *Reduce,
                                  dtypeOf(In.Type).value_or(DType::F32),
                                  elemBytesOf(In), int64_t(Idx.numElements()),
                                  context().BadIndex, context().Compute),
                  "ScatterElements kernel");
}

// The index tuples of GatherND and ScatterND (cpu::ndShape's checks, then
// the device's: int64 indices, tuples of at most MaxRank values); Count:
// the tuples over all batches.
llvm::Expected<NDArgs> ndArgs(const KernelContext &C, int64_t BatchDims,
                              int64_t &Count) {
  const TensorRef &In = C.Inputs[0], &Idx = C.Inputs[1];
  cpu::NDShape S;
  if (llvm::Error E = cpu::ndShape(C, In, Idx, BatchDims, S))
    return std::move(E);
  if (Idx.Type != ElementType::Int64)
    return C.badInput("indices must be int64");
  if (S.K > MaxRank)
    return C.unsupported("index tuples of more than " + llvm::Twine(MaxRank) +
                         " values");
  NDArgs A;
  A.K = int(S.K);
  A.Slice = S.Slice;
  A.Tuples = S.Tuples;
  A.DataBatch = S.DataBatch;
  Count = S.Batches * S.Tuples;
  cpu::DimVector Strides = cpu::stridesOf(In.Dims);
  for (int64_t J = 0; J < S.K; ++J) {
    A.Dims[J] = In.Dims[S.Batch + J];
    A.Stride[J] = Strides[S.Batch + J];
  }
  return A;
}

llvm::Error runScatterND(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Upd = C.Inputs[2];
  auto Reduce = reductionCode(C);
  if (!Reduce)
    return Reduce.takeError();
  int64_t Tuples = 0;
  auto A = ndArgs(C, 0, Tuples);
  if (!A)
    return A.takeError();
  if (int64_t(Upd.numElements()) != Tuples * A->Slice)
    return C.badInput("updates size disagrees with data and indices");
  if (llvm::Error E = copyUnlessAliased(C))
    return E;
  return launched(C,
                  scatterND(*A, C.Outputs[0].Data, C.Inputs[1].data<int64_t>(),
                            Upd.Data, *Reduce,
                            dtypeOf(In.Type).value_or(DType::F32),
                            elemBytesOf(In), int64_t(Upd.numElements()),
                            context().BadIndex, context().Compute),
                  "ScatterND kernel");
}

llvm::Error runGatherND(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  int64_t Tuples = 0;
  auto A = ndArgs(C, C.N.getInt("batch_dims", 0), Tuples);
  if (!A)
    return A.takeError();
  if (int64_t(Out.numElements()) != Tuples * A->Slice)
    return C.badInput("output size disagrees with data and indices");
  return launched(C,
                  gatherND(*A, In.Data, C.Inputs[1].data<int64_t>(), Out.Data,
                           elemBytesOf(In), int64_t(Out.numElements()),
                           context().BadIndex, context().Compute),
                  "GatherND kernel");
}

// Depth is the planned output's dim on the axis (shape inference put the
// depth input's value there; a depth known only at run time makes the
// output data-dependent, and that step runs on the host), so the depth
// input's bytes are never read on the device.
llvm::Error runOneHot(const KernelContext &C) {
  const TensorRef &Idx = C.Inputs[0], &Out = C.Outputs[0];
  if (C.Inputs.size() < 3 || !C.Inputs[1].present() || !C.Inputs[2].present() ||
      C.Inputs[2].numElements() != 2)
    return C.badInput("OneHot needs depth and a two-element values input");
  const TensorRef &Values = C.Inputs[2];
  const int64_t R = int64_t(Out.Dims.size());
  int64_t Axis = C.N.getInt("axis", -1);
  if (!cpu::normAxis(Axis, R) || Values.Type != Out.Type)
    return C.badInput("axis or values disagree with the planned output");
  auto T = dtypeOf(Idx.Type);
  if (!T)
    return C.unsupported("indices of type " + elementTypeName(Idx.Type));
  return launched(C,
                  oneHot(*T, Idx.Data, Values.Data, Out.Data, elemBytesOf(Out),
                         cpu::productOf(Out.Dims, 0, size_t(Axis)),
                         Out.Dims[Axis],
                         cpu::productOf(Out.Dims, size_t(Axis) + 1, size_t(R)),
                         context().Compute),
                  "OneHot kernel");
}
} // namespace

void cuda::registerGatherScatterKernels(CUDAKernelTable &T) {
  addKernel(T, "GatherND", {runGatherND, nullptr, {}});
  // Indices: the types the launcher reads (a float truncated, as the CPU's).
  addKernel(T, "OneHot",
            {runOneHot,
             nullptr,
             {ElementType::Float, ElementType::Double, ElementType::Int32,
              ElementType::Int64},
             /*DeviceUnread=*/1u << 1});
  addKernel(T, "GatherElements", {runGatherElements, nullptr, {}});
  addKernel(T, "ScatterElements",
            {runScatterElements, nullptr, {}, 0, reductionRefuses});
  // Scatter (opset 9 and 10) is ScatterElements under its old name.
  addKernel(T, "Scatter",
            {runScatterElements, nullptr, {}, 0, reductionRefuses});
  addKernel(T, "ScatterND", {runScatterND, nullptr, {}, 0, reductionRefuses});
}
