//===- NewerOpsKernels.cpp - newer opsets' ops on CUDA -------------------===//
//
// TensorScatter, AffineGrid, Col2Im, CenterCropPad and DeformConv: ops of
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
  if (C.Inputs.size() < 2 || !C.Inputs[0].present() || !C.Inputs[1].present())
    return C.badInput("needs past_cache and update");
  const TensorRef &Past = C.Inputs[0], &Upd = C.Inputs[1], &Out = C.Outputs[0];
  const int64_t R = int64_t(Past.Dims.size());
  int64_t Axis = C.N.getInt("axis", -2);
  if (!cpu::normAxis(Axis, R) || Axis == 0)
    return C.badInput("axis must name a dim other than the batch's");
  const std::string Mode = C.N.getString("mode", "linear");
  if (Mode != "linear" && Mode != "circular")
    return C.unsupported("mode '" + Mode + "'");
  if (int64_t(Upd.Dims.size()) != R || Upd.Type != Past.Type ||
      Out.Type != Past.Type || Out.numElements() != Past.numElements())
    return C.badInput("update must have past_cache's rank and type");
  for (int64_t D = 0; D < R; ++D)
    if (D != Axis && Upd.Dims[D] != Past.Dims[D])
      return C.badInput("update and past_cache differ in dim " +
                        llvm::Twine(D));
  A = newer::ScatterArgs();
  A.Max = Past.Dims[Axis];
  A.Seq = Upd.Dims[Axis];
  if (A.Seq > A.Max)
    return C.badInput("update is longer than the cache");
  if (cpu::hasInput(C, 2)) {
    const TensorRef &I = C.Inputs[2];
    if ((I.Type != ElementType::Int64 && I.Type != ElementType::Int32) ||
        int64_t(I.numElements()) != Past.Dims[0])
      return C.badInput("write_indices must hold one integer per batch row");
    A.Index = I.Data;
    A.Index64 = I.Type == ElementType::Int64;
  }
  A.ElemBytes = int(elementBits(Past.Type) / 8);
  if (A.ElemBytes != 1 && A.ElemBytes != 2 && A.ElemBytes != 4 &&
      A.ElemBytes != 8)
    return C.unsupported("elements of type " + elementTypeName(Past.Type));
  A.Row = cpu::productOf(Past.Dims, size_t(Axis) + 1, size_t(R));
  A.Prefix = cpu::productOf(Past.Dims, 0, size_t(Axis));
  A.PerBatch = std::max<int64_t>(1, cpu::productOf(Past.Dims, 1, size_t(Axis)));
  A.Circular = Mode == "circular";
  A.Update = Upd.Data;
  A.Out = Out.Data;
  return llvm::Error::success();
}

llvm::Error cuda::affineArgs(const KernelContext &C,
                             llvm::ArrayRef<int64_t> Size,
                             newer::AffineArgs &A) {
  const TensorRef &Theta = C.Inputs[0], &Y = C.Outputs[0];
  if (Size.size() != 4 && Size.size() != 5)
    return C.badInput("size must be [N, C, H, W] or [N, C, D, H, W]");
  const int64_t S = int64_t(Size.size()) - 2, N = Size[0];
  if (Theta.Type != ElementType::Float || Y.Type != ElementType::Float)
    return C.unsupported("AffineGrid on " + elementTypeName(Theta.Type));
  if (Theta.Dims.size() != 3 || Theta.Dims[0] != N || Theta.Dims[1] != S ||
      Theta.Dims[2] != S + 1)
    return C.badInput("theta must be [N, 2, 3] (2-D) or [N, 3, 4] (3-D)");
  if (int64_t(Y.Dims.size()) != S + 2 || Y.Dims[0] != N || Y.Dims[S + 1] != S)
    return C.badInput("output disagrees with size");
  A = newer::AffineArgs();
  A.Points = 1;
  for (int64_t I = 0; I < S; ++I) {
    if (Y.Dims[size_t(I + 1)] != Size[size_t(I + 2)])
      return C.badInput("output disagrees with size");
    A.Size[I] = Size[size_t(I + 2)];
    A.Points *= A.Size[I];
  }
  A.S = int(S);
  A.N = N;
  A.Align = C.N.getInt("align_corners", 0) != 0;
  A.Theta = Theta.data<const float>();
  A.Y = Y.data<float>();
  return llvm::Error::success();
}

llvm::Error cuda::col2ImArgs(const KernelContext &C,
                             llvm::ArrayRef<int64_t> Image,
                             llvm::ArrayRef<int64_t> Block,
                             newer::Col2ImArgs &A) {
  if (C.Inputs.size() < 3)
    return C.badInput("needs input, image_shape and block_shape");
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (Image.size() != Block.size() || Image.empty())
    return C.badInput("image_shape and block_shape must be integers of one "
                      "length");
  const size_t S = Image.size();
  if (S > size_t(newer::MaxAxes))
    return C.unsupported("more than " + llvm::Twine(newer::MaxAxes) +
                         " spatial axes");
  if (X.Type != Y.Type ||
      (X.Type != ElementType::Float && X.Type != ElementType::Double))
    return C.unsupported("Col2Im on " + elementTypeName(X.Type));
  auto Ints = [&](const char *Name, int64_t Default, size_t Count,
                  llvm::SmallVectorImpl<int64_t> &Out) {
    Out.assign(Count, Default);
    if (auto V = C.N.getInts(Name)) {
      if (V->size() != Count)
        return false;
      Out.assign(V->begin(), V->end());
    }
    return true;
  };
  llvm::SmallVector<int64_t, 12> Strides, Dilations, Pads;
  if (!Ints("strides", 1, S, Strides) || !Ints("dilations", 1, S, Dilations) ||
      !Ints("pads", 0, 2 * S, Pads))
    return C.badInput("strides, dilations and pads need one value per "
                      "spatial axis (pads two)");
  if (X.Dims.size() != 3 || Y.Dims.size() != S + 2)
    return C.badInput("input must be [N, C * prod(block_shape), L]");
  A = newer::Col2ImArgs();
  A.S = int(S);
  A.Cells = 1;
  A.Columns = 1;
  A.Pixels = 1;
  for (size_t I = 0; I < S; ++I) {
    if (Block[I] <= 0 || Strides[I] <= 0 || Dilations[I] <= 0 || Image[I] < 0 ||
        Pads[I] < 0 || Pads[S + I] < 0)
      return C.badInput("block_shape, strides and dilations must be "
                        "positive, pads not negative");
    A.Image[I] = Image[I];
    A.Block[I] = Block[I];
    A.Strides[I] = Strides[I];
    A.Dilations[I] = Dilations[I];
    A.PadBegin[I] = Pads[I];
    const int64_t Span = Dilations[I] * (Block[I] - 1) + 1;
    const int64_t Room = Image[I] + Pads[I] + Pads[S + I] - Span;
    A.Blocks[I] = Room < 0 ? 0 : Room / Strides[I] + 1;
    A.Cells *= Block[I];
    A.Columns *= A.Blocks[I];
    A.Pixels *= Image[I];
  }
  if (X.Dims[1] % A.Cells != 0 || X.Dims[2] != A.Columns)
    return C.badInput("input's dims 1 and 2 are not a multiple of the "
                      "block's cells and the sliding blocks");
  const int64_t Channels = X.Dims[1] / A.Cells;
  if (Y.Dims[0] != X.Dims[0] || Y.Dims[1] != Channels)
    return C.badInput("output disagrees with the input's batch and channels");
  for (size_t I = 0; I < S; ++I)
    if (Y.Dims[I + 2] != Image[I])
      return C.badInput("image_shape disagrees with the planned output");
  A.Planes = X.Dims[0] * Channels;
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
  newer::AffineArgs A;
  if (llvm::Error E = affineArgs(C, Size, A))
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
  llvm::SmallVector<int64_t, 8> Shape, Axes;
  if (llvm::Error E = hostInts(C, 1, Shape))
    return E;
  if (auto V = C.N.getInts("axes"))
    Axes.assign(V->begin(), V->end());
  else
    for (int64_t D = 0; D < R; ++D)
      Axes.push_back(D);
  if (Shape.size() != Axes.size() || int64_t(Y.Dims.size()) != R)
    return C.badInput("shape needs one length per axis");
  llvm::SmallVector<int64_t, 8> Want(X.Dims.begin(), X.Dims.end());
  for (size_t K = 0; K < Axes.size(); ++K) {
    int64_t D = Axes[K];
    if (!cpu::normAxis(D, R))
      return C.badInput("axis out of range");
    Want[size_t(D)] = Shape[K];
  }
  for (int64_t D = 0; D < R; ++D)
    if (Want[size_t(D)] != Y.Dims[size_t(D)])
      return C.badInput("shape disagrees with the planned output shape");
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
  addKernel(T, "DeformConv", {runDeformConv, nullptr, {ElementType::Float}});
  addKernel(T, "CenterCropPad",
            {runCenterCropPad, nullptr, {}, 0b10, cropRefuses});
}
