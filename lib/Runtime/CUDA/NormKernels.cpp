//===- NormKernels.cpp - softmax, normalizations, reductions on CUDA ------===//
//
// Most ops here reduce over one block of contiguous axes, so they are the
// launcher's [Outer, Axis, Inner] view of their input: Softmax and
// LpNormalization along their axis, LayerNormalization over the axes from
// its axis on, a Reduce over its (contiguous) axes, a global pool over the
// spatial axes. A Reduce over axes apart and MeanVarianceNormalization
// take the scattered reduction's offsets (ReduceAxes). Float only, but for
// the reductions.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/TensorUtil.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"
#include "Kernels/ThreadMath.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {
const llvm::SmallVector<ElementType, 4> F32 = {ElementType::Float};

// The [Outer, Mid, Inner] view of Softmax, LogSoftmax and Hardmax: opset
// 13 normalizes along one axis (default -1); earlier opsets over every axis
// from `axis` (default 1) on, as a 2-d matrix.
llvm::Error softmaxView(const KernelContext &C, int64_t &Outer, int64_t &Mid,
                        int64_t &Inner) {
  const TensorRef &In = C.Inputs[0];
  int64_t R = int64_t(In.Dims.size());
  int64_t Opset = C.G.defaultOpset();
  int64_t Axis = C.N.getInt("axis", Opset >= 13 ? -1 : 1);
  if (!cpu::normAxis(Axis, std::max<int64_t>(R, 1)))
    return C.badInput("axis out of range");
  if (R == 0)
    return C.unsupported("a scalar input");
  Outer = cpu::productOf(In.Dims, 0, size_t(Axis));
  Mid = Opset >= 13 ? In.Dims[Axis]
                    : cpu::productOf(In.Dims, size_t(Axis), size_t(R));
  Inner =
      Opset >= 13 ? cpu::productOf(In.Dims, size_t(Axis) + 1, size_t(R)) : 1;
  return llvm::Error::success();
}

template <bool Log> llvm::Error runSoftmax(const KernelContext &C) {
  int64_t Outer, Mid, Inner;
  if (llvm::Error E = softmaxView(C, Outer, Mid, Inner))
    return E;
  return launched(C,
                  softmax(C.Inputs[0].data<float>(), C.Outputs[0].data<float>(),
                          Outer, Mid, Inner, Log, context().Compute),
                  "Softmax kernel");
}

// Hardmax: 1 at the first largest element of each line, as the CPU's (a
// NaN is never larger, so a line starting with NaN marks its first).
llvm::Error runHardmax(const KernelContext &C) {
  int64_t Outer, Mid, Inner;
  if (llvm::Error E = softmaxView(C, Outer, Mid, Inner))
    return E;
  return launched(C,
                  hardmax(C.Inputs[0].data<float>(), C.Outputs[0].data<float>(),
                          Outer, Mid, Inner, context().Compute),
                  "Hardmax kernel");
}

llvm::Error runLayerNorm(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &Scale = C.Inputs[1];
  int64_t R = int64_t(X.Dims.size());
  int64_t Axis = C.N.getInt("axis", -1);
  if (!cpu::normAxis(Axis, R))
    return C.badInput("axis out of range");
  int64_t Rows = cpu::productOf(X.Dims, 0, size_t(Axis));
  int64_t Cols = cpu::productOf(X.Dims, size_t(Axis), size_t(R));
  bool HasBias = C.Inputs.size() > 2 && C.Inputs[2].present();
  // The CPU kernel's two forms: one value per normalized element, or one
  // value for all of them.
  auto Form = [&](unsigned I) { return int64_t(C.Inputs[I].numElements()); };
  if ((Form(1) != Cols && Form(1) != 1) ||
      (HasBias && Form(2) != Cols && Form(2) != 1))
    return C.unsupported("Scale and B must have the normalized shape or one "
                         "element");
  if (Scale.Type != ElementType::Float ||
      (HasBias && C.Inputs[2].Type != ElementType::Float))
    return C.unsupported("Scale and B must be float, as X");
  auto Opt = [&](unsigned I) {
    return I < C.Outputs.size() && C.Outputs[I].present()
               ? C.Outputs[I].data<float>()
               : nullptr;
  };
  for (unsigned I = 1; I < 3; ++I)
    if (Opt(I) && (C.Outputs[I].Type != ElementType::Float ||
                   int64_t(C.Outputs[I].numElements()) != Rows))
      return C.unsupported("Mean and InvStdDev must be one float per row");
  return launched(C,
                  layerNorm(X.data<float>(), Scale.data<float>(),
                            HasBias ? C.Inputs[2].data<float>() : nullptr,
                            C.Outputs[0].data<float>(), Opt(1), Opt(2), Rows,
                            Cols, float(C.N.getFloat("epsilon", 1e-5)),
                            Form(1) == 1, HasBias && Form(2) == 1,
                            context().Compute),
                  "LayerNormalization kernel");
}

// Training mode (opset 14's attribute, or the running statistics asked
// for as outputs) runs as a host step on the CPU kernel: the CUDA kernel
// is inference only (the first GPU run's node tests failed on it).
std::string batchNormRefuses(const Node &N, llvm::ArrayRef<TensorRef>,
                             llvm::ArrayRef<TensorRef>) {
  bool Stats = false;
  for (size_t I = 1; I < N.Outputs.size(); ++I)
    Stats |= N.Outputs[I] != NoId;
  return N.getInt("training_mode", 0) || Stats
             ? "training mode (the CUDA kernel is inference only)"
             : "";
}

llvm::Error runBatchNorm(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0];
  if (std::string Why = batchNormRefuses(C.N, C.Inputs, C.Outputs);
      !Why.empty())
    return C.unsupported(Why);
  if (X.Dims.size() < 2)
    return C.badInput("input rank below 2");
  int64_t N = X.Dims[0], Ch = X.Dims[1];
  int64_t Spatial = cpu::productOf(X.Dims, 2, X.Dims.size());
  // One float per channel each, as the CPU kernel requires (opset 7's
  // spatial=0 gives them X's per-sample shape).
  for (unsigned I = 1; I < 5; ++I)
    if (I >= C.Inputs.size() || !C.Inputs[I].present() ||
        C.Inputs[I].Type != ElementType::Float ||
        int64_t(C.Inputs[I].numElements()) != Ch)
      return C.unsupported("scale, B, mean and var must be per channel, of "
                           "X's type");
  return launched(
      C,
      batchNorm(X.data<float>(), C.Inputs[1].data<float>(),
                C.Inputs[2].data<float>(), C.Inputs[3].data<float>(),
                C.Inputs[4].data<float>(), C.Outputs[0].data<float>(), N, Ch,
                Spatial, float(C.N.getFloat("epsilon", 1e-5)),
                context().Compute),
      "BatchNormalization kernel");
}

// InstanceNormalization: each (n, c) plane normalized by its own
// statistics, then scaled by its channel's scale and B (the CPU kernel's
// checks; the statistics in double as there).
llvm::Error runInstanceNorm(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0];
  if (X.Dims.size() < 3 || C.Inputs.size() < 3)
    return C.badInput("needs X (rank >= 3), scale and B");
  const int64_t Ch = X.Dims[1];
  for (unsigned I = 1; I < 3; ++I)
    if (!C.Inputs[I].present() || C.Inputs[I].Type != ElementType::Float ||
        int64_t(C.Inputs[I].numElements()) != Ch)
      return C.badInput("scale and B must be per channel, of X's type");
  return launched(
      C,
      instanceNorm(X.data<float>(), C.Inputs[1].data<float>(),
                   C.Inputs[2].data<float>(), C.Outputs[0].data<float>(),
                   X.Dims[0] * Ch, Ch, cpu::productOf(X.Dims, 2, X.Dims.size()),
                   float(C.N.getFloat("epsilon", 1e-5)), context().Compute),
      "InstanceNormalization kernel");
}

// GroupNormalization (opset 18: scale and bias per group; 21: per
// channel; their length tells which): each group of C / num_groups
// channels of a sample normalized by its own statistics (in double), the
// CPU kernel's checks (cpu::groupNormDims).
llvm::Error runGroupNorm(const KernelContext &C) {
  cpu::GroupNormDims D;
  if (llvm::Error E = cpu::groupNormDims(C, D))
    return E;
  return launched(
      C,
      groupNorm(C.Inputs[0].data<float>(), C.Inputs[1].data<float>(),
                C.Inputs[2].data<float>(), C.Outputs[0].data<float>(), D.Groups,
                D.G, D.PerGroup, D.Plane, D.PerChannel,
                float(C.N.getFloat("epsilon", 1e-5)), context().Compute),
      "GroupNormalization kernel");
}

template <ReduceOp Op> llvm::Error runGlobalPool(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0];
  if (X.Dims.size() < 2)
    return C.badInput("input rank below 2");
  if (cpu::productOf(X.Dims, 2, X.Dims.size()) == 0)
    return C.badInput("empty spatial dims"); // the CPU kernel's refusal
  return launched(
      C,
      reduce(Op, DType::F32, X.Data, C.Outputs[0].Data, X.Dims[0] * X.Dims[1],
             cpu::productOf(X.Dims, 2, X.Dims.size()), 1, context().Compute),
      "global pool kernel");
}

// Reduced axes with a kept axis of size above 1 between them: a thread per
// output walks its reduced positions (Reduce.cu's reduceAxes). Axes are
// normalized, sorted and unique.
llvm::Error reduceScattered(const KernelContext &C, ReduceOp Op,
                            llvm::ArrayRef<int64_t> Axes) {
  const TensorRef &X = C.Inputs[0];
  const int64_t R = int64_t(X.Dims.size());
  if (R > MaxRank)
    return C.unsupported("rank above " + llvm::Twine(MaxRank));
  ReduceAxes A = thread::reduceAxesOf(X.Dims.data(), int(R), Axes.data(),
                                      int(Axes.size()));
  return launched(C,
                  reduceAxes(Op, *dtypeOf(X.Type), X.Data, C.Outputs[0].Data, A,
                             context().Compute),
                  "Reduce kernel");
}

// LRN: the CPU kernel's checks and per-element function (LRNPoint.h), a
// thread an element (each reads its size channels).
llvm::Error runLRN(const KernelContext &C) {
  lrn::Params P;
  if (llvm::Error E = cpu::lrnSetup(C, P))
    return E;
  return launched(C,
                  localResponseNorm(
                      P, C.Inputs[0].data<float>(), C.Outputs[0].data<float>(),
                      int64_t(C.Outputs[0].numElements()), context().Compute),
                  "LRN kernel");
}

// LpNormalization: the CPU kernel's checks (cpu::lpNormSetup), a thread a
// line along the axis (Normalize.cu).
llvm::Error runLpNorm(const KernelContext &C) {
  int64_t Axis, P;
  if (llvm::Error E = cpu::lpNormSetup(C, Axis, P))
    return E;
  const TensorRef &X = C.Inputs[0];
  return launched(
      C,
      lpNormalize(X.data<float>(), C.Outputs[0].data<float>(),
                  cpu::productOf(X.Dims, 0, size_t(Axis)), X.Dims[Axis],
                  cpu::productOf(X.Dims, size_t(Axis) + 1, X.Dims.size()),
                  int(P), context().Compute),
      "LpNormalization kernel");
}

// MeanVarianceNormalization over the CPU kernel's axes (cpu::mvnAxes): a
// block per group of the kept axes (Normalize.cu), with the scattered
// reduction's offsets.
llvm::Error runMVN(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0];
  const int64_t R = int64_t(X.Dims.size());
  cpu::DimVector Axes;
  if (!cpu::mvnAxes(C.N, R, Axes))
    return C.badInput("axis out of range");
  if (R > MaxRank)
    return C.unsupported("rank above " + llvm::Twine(MaxRank));
  ReduceAxes A = thread::reduceAxesOf(X.Dims.data(), int(R), Axes.data(),
                                      int(Axes.size()));
  return launched(C,
                  meanVarianceNormalize(X.data<float>(),
                                        C.Outputs[0].data<float>(), A,
                                        context().Compute),
                  "MeanVarianceNormalization kernel");
}

// Reduce*: axes from the attribute (opset < 18, ReduceSum < 13) or input 1.
template <ReduceOp Op> llvm::Error runReduce(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0];
  int64_t R = int64_t(X.Dims.size());
  llvm::SmallVector<int64_t, 8> Axes;
  if (auto A = C.N.getInts("axes"))
    Axes.assign(A->begin(), A->end());
  else if (llvm::Error E = hostInts(C, 1, Axes))
    return E;
  if (Axes.empty()) {
    // Nothing reduced, but the op's per-element map still applies (x^2
    // for ReduceSumSquare, |x| for ReduceL1 and ReduceL2), as on the CPU:
    // each element is a row of one (Inner: one thread each).
    if (C.N.getInt("noop_with_empty_axes", 0))
      return launched(C,
                      reduce(Op, *dtypeOf(X.Type), X.Data, C.Outputs[0].Data, 1,
                             1, int64_t(X.numElements()), context().Compute),
                      "Reduce kernel");
    for (int64_t I = 0; I < R; ++I)
      Axes.push_back(I);
  }
  if (R == 0) // a scalar: one element reduced (Axes.back() needs an axis)
    return launched(C,
                    reduce(Op, *dtypeOf(X.Type), X.Data, C.Outputs[0].Data, 1,
                           1, 1, context().Compute),
                    "Reduce kernel");
  for (int64_t &A : Axes)
    if (!cpu::normAxis(A, R))
      return C.badInput("axis out of range");
  llvm::sort(Axes);
  Axes.erase(std::unique(Axes.begin(), Axes.end()), Axes.end());
  // A kept axis of size 1 between reduced ones changes nothing: reducing it
  // too gives the same values in the same order.
  for (int64_t A = Axes.front(), K = 0; A <= Axes.back(); ++A) {
    if (Axes[size_t(K)] == A)
      ++K;
    else if (X.Dims[size_t(A)] != 1)
      return reduceScattered(C, Op, Axes);
  }
  return launched(
      C,
      reduce(
          Op, *dtypeOf(X.Type), X.Data, C.Outputs[0].Data,
          cpu::productOf(X.Dims, 0, size_t(Axes.front())),
          cpu::productOf(X.Dims, size_t(Axes.front()), size_t(Axes.back()) + 1),
          cpu::productOf(X.Dims, size_t(Axes.back()) + 1, size_t(R)),
          context().Compute),
      "Reduce kernel");
}
} // namespace

void cuda::registerNormKernels(CUDAKernelTable &T) {
  addKernel(T, "Softmax", {runSoftmax<false>, nullptr, F32});
  addKernel(T, "LogSoftmax", {runSoftmax<true>, nullptr, F32});
  addKernel(T, "Hardmax", {runHardmax, nullptr, F32});
  addKernel(T, "LayerNormalization", {runLayerNorm, nullptr, F32});
  addKernel(T, "BatchNormalization",
            {runBatchNorm, nullptr, F32, 0, batchNormRefuses});
  addKernel(T, "InstanceNormalization", {runInstanceNorm, nullptr, F32});
  addKernel(T, "GroupNormalization", {runGroupNorm, nullptr, F32});
  addKernel(T, "LRN", {runLRN, nullptr, F32});
  addKernel(T, "LpNormalization", {runLpNorm, nullptr, F32});
  addKernel(T, "MeanVarianceNormalization", {runMVN, nullptr, F32});
  addKernel(T, "GlobalAveragePool",
            {runGlobalPool<ReduceOp::Mean>, nullptr, F32});
  addKernel(T, "GlobalMaxPool", {runGlobalPool<ReduceOp::Max>, nullptr, F32});
  // Reduce*: float, double and the 32- and 64-bit integers (shape and
  // index arithmetic: detection post-processing reduces int64), in the
  // CPU's accumulators; the log reductions on the floating types only.
  const llvm::SmallVector<ElementType, 4> Num = {
      ElementType::Float, ElementType::Double, ElementType::Int32,
      ElementType::Int64};
  const llvm::SmallVector<ElementType, 4> Flt = {ElementType::Float,
                                                 ElementType::Double};
  addKernel(T, "ReduceSum", {runReduce<ReduceOp::Sum>, nullptr, Num, 0b10});
  addKernel(T, "ReduceMean", {runReduce<ReduceOp::Mean>, nullptr, Num, 0b10});
  addKernel(T, "ReduceMax", {runReduce<ReduceOp::Max>, nullptr, Num, 0b10});
  addKernel(T, "ReduceMin", {runReduce<ReduceOp::Min>, nullptr, Num, 0b10});
  addKernel(T, "ReduceProd", {runReduce<ReduceOp::Prod>, nullptr, Num, 0b10});
  addKernel(T, "ReduceSumSquare",
            {runReduce<ReduceOp::SumSquare>, nullptr, Num, 0b10});
  addKernel(T, "ReduceL1", {runReduce<ReduceOp::L1>, nullptr, Num, 0b10});
  addKernel(T, "ReduceL2", {runReduce<ReduceOp::L2>, nullptr, Num, 0b10});
  addKernel(T, "ReduceLogSum",
            {runReduce<ReduceOp::LogSum>, nullptr, Flt, 0b10});
  addKernel(T, "ReduceLogSumExp",
            {runReduce<ReduceOp::LogSumExp>, nullptr, Flt, 0b10});
}
