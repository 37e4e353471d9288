//===- LayoutKernels.cpp - Split, Tile, DepthToSpace, SpaceToDepth on CUDA ===//
//
// Each of these moves bytes only, so each is one or more strided copies
// (Launch.h's stridedCopy): the output dense over an index space, the input
// read at strides that encode the op. Split and Tile take their geometry
// from the output dims, which shape inference fixed before the run, as the
// CPU kernels do; so the `split` and `repeats` inputs are never read on
// the device.
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

// Split: output k is the input's [At_k, At_k + len_k) on the axis, a copy
// over [Outer, len_k * Inner] from rows of In.Dims[Axis] * Inner.
llvm::Error runSplit(const KernelContext &C) {
  int64_t Axis;
  if (llvm::Error E = cpu::splitAxis(C, Axis))
    return E;
  const TensorRef &In = C.Inputs[0];
  const int64_t Outer = cpu::productOf(In.Dims, 0, size_t(Axis));
  const int64_t Inner =
      cpu::productOf(In.Dims, size_t(Axis) + 1, In.Dims.size());
  int64_t At = 0;
  for (const TensorRef &Out : C.Outputs) {
    const int64_t Len = Out.Dims[Axis];
    if (Out.present() && Len && Outer && Inner) {
      Strided S;
      S.Rank = 2;
      S.Dims[0] = Outer;
      S.Dims[1] = Len * Inner;
      S.Stride[0][0] = In.Dims[Axis] * Inner;
      S.Stride[0][1] = 1;
      if (int E = stridedCopy(In.Data, At * Inner, Out.Data, elemBytesOf(In), S,
                              context().Compute))
        return kernelFailure(C, E, "Split copy");
    }
    At += Len;
  }
  return llvm::Error::success();
}

// Tile: an axis repeated r times is two axes of the index space, [r, d],
// the outer one at stride 0; an axis not repeated merges into the data
// axis before it (the input is dense, so d_a * d_a+1 elements at the inner
// stride are the same elements). So up to four repeated axes fit MaxRank
// at any rank.
llvm::Error runTile(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  const size_t R = In.Dims.size();
  if (Out.Dims.size() != R)
    return C.badInput("output rank differs from the input's");
  for (size_t A = 0; A < R; ++A)
    if (In.Dims[A] == 0 ? Out.Dims[A] != 0 : Out.Dims[A] % In.Dims[A] != 0)
      return C.badInput("output dims are not multiples of the input's");
  if (Out.numElements() == 0)
    return llvm::Error::success();
  cpu::DimVector InStride = cpu::stridesOf(In.Dims);
  Strided S;
  bool LastIsData = false; // the last index axis is one of data, not a repeat
  for (size_t A = 0; A < R; ++A) {
    const int64_t Rep = Out.Dims[A] / In.Dims[A];
    if (Rep == 1 && LastIsData) {
      S.Dims[S.Rank - 1] *= In.Dims[A];
      S.Stride[0][S.Rank - 1] = InStride[A];
      continue;
    }
    const int Need = Rep > 1 ? 2 : 1;
    if (S.Rank + Need > MaxRank)
      return C.unsupported("more than " + llvm::Twine(MaxRank) +
                           " dims once the repeated axes are split");
    if (Rep > 1) {
      S.Dims[S.Rank] = Rep;
      S.Stride[0][S.Rank++] = 0;
    }
    S.Dims[S.Rank] = In.Dims[A];
    S.Stride[0][S.Rank++] = InStride[A];
    LastIsData = true;
  }
  return launched(
      C,
      stridedCopy(In.Data, 0, Out.Data, elemBytesOf(In), S, context().Compute),
      "Tile kernel");
}

// DepthToSpace and SpaceToDepth: the CPU kernel's view (cpu::depthSpaceView).
template <bool ToSpace> llvm::Error runDepthSpace(const KernelContext &C) {
  cpu::DimVector Dims, Src;
  if (llvm::Error E = cpu::depthSpaceView(C, ToSpace, Dims, Src))
    return E;
  Strided S;
  S.Rank = int(Dims.size());
  for (size_t I = 0; I < Dims.size(); ++I) {
    S.Dims[I] = Dims[I];
    S.Stride[0][I] = Src[I];
  }
  return launched(C,
                  stridedCopy(C.Inputs[0].Data, 0, C.Outputs[0].Data,
                              elemBytesOf(C.Inputs[0]), S, context().Compute),
                  ToSpace ? "DepthToSpace kernel" : "SpaceToDepth kernel");
}
} // namespace

void cuda::registerLayoutKernels(CUDAKernelTable &T) {
  // DeviceUnread (0b10): Split's split and Tile's repeats are never read.
  addKernel(T, "Split", {runSplit, nullptr, {}, 0b10});
  addKernel(T, "Tile", {runTile, nullptr, {}, 0b10});
  addKernel(T, "DepthToSpace", {runDepthSpace<true>, nullptr, {}});
  addKernel(T, "SpaceToDepth", {runDepthSpace<false>, nullptr, {}});
}
