//===- NewerOpsKernels.cpp - newer opsets' ops on CUDA -------------------===//
//
// TensorScatter, AffineGrid, Col2Im, CenterCropPad, DeformConv, DFT and
// STFT: ops of
// opsets 18 to 24 that ran as host steps on CUDA. TensorScatter is
// the one that mattered: opset 24's KV-cache write, in every layer of
// every token of an LLM exported with ONNX's own Attention, copied the
// whole cache to the host and back. Its write indices are read on the
// device (no wait); AffineGrid's size, Col2Im's shapes and CenterCropPad's
// shape are small shape inputs read on the host (hostInts: from the graph
// or the host's shape values when known there). The checks are the CPU
// kernels'.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/TensorUtil.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"
#include "Kernels/NewerOpsMath.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

llvm::Error cuda::scatterArgs(const KernelContext &C, newer::ScatterArgs &A) {
  cpu::ScatterGeometry G;
  if (llvm::Error E = cpu::tensorScatterShape(C, G))
    return E;
  const TensorRef &Past = C.Inputs[0];
  A = newer::ScatterArgs();
  if (cpu::hasInput(C, 2)) {
    const TensorRef &I = C.Inputs[2];
    if (I.Type != ElementType::Int64 && I.Type != ElementType::Int32)
      return C.badInput("write_indices must be int64 or int32");
    A.Index = I.Data;
    A.Index64 = I.Type == ElementType::Int64;
  }
  A.ElemBytes = int(elementBits(Past.Type) / 8);
  if (A.ElemBytes != 1 && A.ElemBytes != 2 && A.ElemBytes != 4 &&
      A.ElemBytes != 8)
    return C.unsupported("elements of type " + elementTypeName(Past.Type));
  A.Max = G.Max;
  A.Seq = G.Seq;
  A.Row = G.Row;
  A.Prefix = G.Prefix;
  A.PerBatch = std::max<int64_t>(1, G.PerBatch);
  A.Circular = G.Circular;
  A.Update = C.Inputs[1].Data;
  A.Out = C.Outputs[0].Data;
  return llvm::Error::success();
}

llvm::Error cuda::col2ImArgs(const KernelContext &C,
                             llvm::ArrayRef<int64_t> Image,
                             llvm::ArrayRef<int64_t> Block,
                             newer::Col2ImArgs &A) {
  if (C.Inputs.size() < 3)
    return C.badInput("needs input, image_shape and block_shape");
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (X.Type != Y.Type ||
      (X.Type != ElementType::Float && X.Type != ElementType::Double))
    return C.unsupported("Col2Im on " + elementTypeName(X.Type));
  cpu::Col2ImGeometry G;
  if (llvm::Error E = cpu::col2ImShape(C, Image, Block, G))
    return E;
  if (G.Image.size() > size_t(newer::MaxAxes))
    return C.unsupported("more than " + llvm::Twine(newer::MaxAxes) +
                         " spatial axes");
  A = newer::Col2ImArgs();
  A.S = int(G.Image.size());
  A.Pixels = 1;
  for (int I = 0; I < A.S; ++I) {
    A.Image[I] = G.Image[I];
    A.Block[I] = G.Block[I];
    A.Strides[I] = G.Strides[I];
    A.Dilations[I] = G.Dilations[I];
    A.PadBegin[I] = G.PadBegin[I];
    A.Blocks[I] = G.Blocks[I];
    A.Pixels *= G.Image[I];
  }
  A.Cells = G.Cells;
  A.Columns = G.Columns;
  A.Planes = X.Dims[0] * G.Channels;
  A.Double = X.Type == ElementType::Double;
  A.X = X.Data;
  A.Y = Y.Data;
  return llvm::Error::success();
}

namespace {

llvm::Error runTensorScatter(const KernelContext &C) {
  newer::ScatterArgs A;
  if (llvm::Error E = scatterArgs(C, A))
    return E;
  if (llvm::Error E = copyUnlessAliased(C))
    return E;
  return launched(
      C, newer::tensorScatter(A, context().BadIndex, context().Compute),
      "TensorScatter kernel");
}

llvm::Error runAffineGrid(const KernelContext &C) {
  llvm::SmallVector<int64_t, 8> Size;
  if (llvm::Error E = hostInts(C, 1, Size))
    return E;
  affine::Params A;
  if (llvm::Error E = cpu::affineGridParams(C, Size, A))
    return E;
  return launched(C, newer::affineGrid(A, context().Compute),
                  "AffineGrid kernel");
}

llvm::Error runCol2Im(const KernelContext &C) {
  llvm::SmallVector<int64_t, 8> Image, Block;
  if (llvm::Error E = hostInts(C, 1, Image))
    return E;
  if (llvm::Error E = hostInts(C, 2, Block))
    return E;
  newer::Col2ImArgs A;
  if (llvm::Error E = col2ImArgs(C, Image, Block, A))
    return E;
  return launched(C, newer::col2Im(A, context().Compute), "Col2Im kernel");
}

// CenterCropPad: zeros, then the kept block copied from X's centre to Y's
// (Pad's strided copy), as the CPU kernel places it.
llvm::Error runCenterCropPad(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const int64_t R = int64_t(X.Dims.size());
  llvm::SmallVector<int64_t, 8> Shape;
  if (llvm::Error E = hostInts(C, 1, Shape))
    return E;
  if (llvm::Error E = cpu::centerCropCheck(C, Shape))
    return E;
  const int EB = int(elementBits(X.Type) / 8);
  if (llvm::Error E =
          launched(C, fill(Y.Data, Y.bytes(), 0, 1, context().Compute), "fill"))
    return E;
  if (X.numElements() == 0 || Y.numElements() == 0)
    return llvm::Error::success();
  Strided S;
  S.Rank = int(R);
  int64_t InOff = 0, OutOff = 0, SX = 1, SY = 1;
  for (int64_t D = R - 1; D >= 0; --D) {
    const int64_t In = X.Dims[size_t(D)], Out = Y.Dims[size_t(D)];
    S.Dims[D] = std::min(In, Out);
    S.Stride[0][D] = SX;
    S.Stride[1][D] = SY;
    InOff += (In > Out ? (In - Out) / 2 : 0) * SX;
    OutOff += (Out > In ? (Out - In) / 2 : 0) * SY;
    SX *= In;
    SY *= Out;
  }
  return launched(
      C, stridedCopy2(X.Data, InOff, Y.Data, OutOff, EB, S, context().Compute),
      "CenterCropPad copy");
}

// DeformConv (torchvision's deform_conv2d): the CPU kernel's checks and
// per-element arithmetic (DeformConvPoint.h), a thread per output element.
llvm::Error runDeformConv(const KernelContext &C) {
  deform::Params P;
  if (llvm::Error E = cpu::deformParams(C, P))
    return E;
  return launched(C, deformConv(P, context().Compute), "DeformConv kernel");
}

// DFT and STFT: the direct sums of the CPU kernels (DFTPoint.h), a thread
// per bin; dft_length, frame_step and frame_length read on the host.
llvm::Error runDFT(const KernelContext &C) {
  std::optional<int64_t> Len;
  if (cpu::hasInput(C, 1)) {
    llvm::SmallVector<int64_t, 1> V;
    if (llvm::Error E = hostInts(C, 1, V))
      return E;
    if (V.size() != 1)
      return C.badInput("dft_length must be one integer");
    Len = V[0];
  }
  dft::Params D;
  if (llvm::Error E = cpu::dftParams(C, Len, D))
    return E;
  return launched(C, newer::dft(D, context().Compute), "DFT kernel");
}

llvm::Error runSTFT(const KernelContext &C) {
  llvm::SmallVector<int64_t, 1> Step, Length;
  if (llvm::Error E = hostInts(C, 1, Step))
    return E;
  if (llvm::Error E = hostInts(C, 3, Length))
    return E;
  if (Step.size() != 1)
    return C.badInput("frame_step is required");
  dft::STFTParams S;
  if (llvm::Error E =
          cpu::stftParams(C, Step[0], Length.empty() ? 0 : Length[0], S))
    return E;
  return launched(C, newer::stft(S, context().Compute), "STFT kernel");
}

// A rank above the strided copy's runs on the host.
std::string cropRefuses(const Node &, llvm::ArrayRef<TensorRef> In,
                        llvm::ArrayRef<TensorRef>) {
  if (!In.empty() && In[0].Dims.size() > size_t(MaxRank))
    return "CenterCropPad of rank above " + std::to_string(MaxRank);
  return "";
}

} // namespace

void cuda::registerNewerOpsKernels(CUDAKernelTable &T) {
  addKernel(T, "TensorScatter", {runTensorScatter, nullptr, {}});
  addKernel(T, "AffineGrid",
            {runAffineGrid, nullptr, {ElementType::Float}, 0b10});
  addKernel(
      T, "Col2Im",
      {runCol2Im, nullptr, {ElementType::Float, ElementType::Double}, 0b110});
  const llvm::SmallVector<ElementType, 4> Real = {ElementType::Float,
                                                  ElementType::Double};
  addKernel(T, "DFT", {runDFT, nullptr, Real, 0b110});
  addKernel(T, "STFT", {runSTFT, nullptr, Real, 0b1010});
  addKernel(T, "DeformConv", {runDeformConv, nullptr, {ElementType::Float}});
  addKernel(T, "CenterCropPad",
            {runCenterCropPad, nullptr, {}, 0b10, cropRefuses});
}
