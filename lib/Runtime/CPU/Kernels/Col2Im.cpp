//===- Col2Im.cpp - CPU kernel: Col2Im (opset 18) -------------------------===//
//
// The inverse of im2col, torch's fold: input [N, C * prod(block), L] holds
// one column per sliding block (L of them, row-major over the blocks of
// every spatial axis); each column's C * prod(block) values are summed into
// the image [N, C] + image_shape at the positions the block covers
// (position = block * stride - pad_begin + tap * dilation), positions in
// the padding being dropped. Any number of spatial axes; sums in the
// element type, in ONNX's reference order (column, then block).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cstring>

namespace oomplan {
namespace runtime {
namespace cpu {

llvm::Error col2ImShape(const KernelContext &C, llvm::ArrayRef<int64_t> Image,
                        llvm::ArrayRef<int64_t> Block, Col2ImGeometry &G) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (Image.size() != Block.size() || Image.empty())
    return C.badInput("image_shape and block_shape must be integers of one "
                      "length");
  G = Col2ImGeometry();
  G.Image.assign(Image.begin(), Image.end());
  G.Block.assign(Block.begin(), Block.end());
  const size_t S = G.Image.size();
  auto Ints = [&](const char *Name, int64_t Default, size_t N, DimVector &Out) {
    Out.assign(N, Default);
    if (auto A = C.N.getInts(Name)) {
      if (A->size() != N)
        return false;
      Out.assign(A->begin(), A->end());
    }
    return true;
  };
  DimVector Pads;
  if (!Ints("strides", 1, S, G.Strides) ||
      !Ints("dilations", 1, S, G.Dilations) || !Ints("pads", 0, 2 * S, Pads))
    return C.badInput("strides, dilations and pads need one value per "
                      "spatial axis (pads two)");
  if (X.Dims.size() != 3 || Y.Dims.size() != S + 2)
    return C.badInput("input must be [N, C * prod(block_shape), L]");
  G.Blocks.assign(S, 0);
  for (size_t I = 0; I < S; ++I) {
    if (G.Block[I] <= 0 || G.Strides[I] <= 0 || G.Dilations[I] <= 0 ||
        G.Image[I] < 0 || Pads[I] < 0 || Pads[S + I] < 0)
      return C.badInput("block_shape, strides and dilations must be "
                        "positive, pads not negative");
    G.Cells *= G.Block[I];
    int64_t Span = G.Dilations[I] * (G.Block[I] - 1) + 1;
    int64_t Room = G.Image[I] + Pads[I] + Pads[S + I] - Span;
    G.Blocks[I] = Room < 0 ? 0 : Room / G.Strides[I] + 1;
    G.Columns *= G.Blocks[I];
  }
  G.PadBegin.assign(Pads.begin(), Pads.begin() + long(S));
  if (X.Dims[1] % G.Cells != 0 || X.Dims[2] != G.Columns)
    return C.badInput("input is [" + std::to_string(X.Dims[0]) + ", " +
                      std::to_string(X.Dims[1]) + ", " +
                      std::to_string(X.Dims[2]) +
                      "], expected dim 1 a "
                      "multiple of " +
                      std::to_string(G.Cells) + " and dim 2 the " +
                      std::to_string(G.Columns) + " sliding blocks");
  G.Channels = X.Dims[1] / G.Cells;
  if (Y.Dims[0] != X.Dims[0] || Y.Dims[1] != G.Channels)
    return C.badInput("output disagrees with the input's batch and channels");
  for (size_t I = 0; I < S; ++I)
    if (Y.Dims[I + 2] != G.Image[I])
      return C.badInput("image_shape disagrees with the planned output");
  return llvm::Error::success();
}

namespace {

llvm::Error col2ImGeometry(const KernelContext &C, Col2ImGeometry &G) {
  if (llvm::Error E = requireInputs(C, 3))
    return E;
  DimVector Image, Block;
  if (!readInts(C.Inputs[1], Image) || !readInts(C.Inputs[2], Block))
    return C.badInput("image_shape and block_shape must be integers of one "
                      "length");
  return col2ImShape(C, Image, Block, G);
}

template <typename T>
void col2Im(const Col2ImGeometry &G, const T *X, T *Y, int64_t Batch,
            ThreadPool &Pool) {
  const size_t S = G.Image.size();
  const int64_t Pixels = productOf(G.Image, 0, S);
  DimVector ImStride = stridesOf(G.Image);
  // A task per (sample, channel): its image is written by it alone.
  Pool.parallelFor(Batch * G.Channels, 1, [&](int64_t Begin, int64_t End) {
    DimVector Tap(S), Blk(S);
    for (int64_t Plane = Begin; Plane < End; ++Plane) {
      T *Img = Y + Plane * Pixels;
      const T *Col = X + Plane * G.Cells * G.Columns;
      std::fill(Tap.begin(), Tap.end(), 0);
      for (int64_t Cell = 0; Cell < G.Cells; ++Cell) {
        std::fill(Blk.begin(), Blk.end(), 0);
        for (int64_t B = 0; B < G.Columns; ++B) {
          int64_t Off = 0;
          bool Inside = true;
          for (size_t I = 0; I < S && Inside; ++I) {
            int64_t P =
                Blk[I] * G.Strides[I] - G.PadBegin[I] + Tap[I] * G.Dilations[I];
            Inside = P >= 0 && P < G.Image[I];
            Off += P * ImStride[I];
          }
          if (Inside)
            Img[Off] += Col[Cell * G.Columns + B];
          for (size_t I = S; I-- > 0;)
            if (++Blk[I] < G.Blocks[I])
              break;
            else
              Blk[I] = 0;
        }
        for (size_t I = S; I-- > 0;)
          if (++Tap[I] < G.Block[I])
            break;
          else
            Tap[I] = 0;
      }
    }
  });
}

llvm::Error runCol2Im(const KernelContext &C) {
  Col2ImGeometry G;
  if (llvm::Error E = col2ImGeometry(C, G))
    return E;
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  std::memset(Y.Data, 0, Y.numElements() * elemBytes(Y.Type));
  if (X.Type == ElementType::Float)
    col2Im(G, X.data<const float>(), Y.data<float>(), X.Dims[0], C.Pool);
  else if (X.Type == ElementType::Double)
    col2Im(G, X.data<const double>(), Y.data<double>(), X.Dims[0], C.Pool);
  else
    return C.unsupported("Col2Im on " + elementTypeName(X.Type));
  return llvm::Error::success();
}

} // namespace

void registerCol2ImKernels(CPUKernelTable &T) {
  addKernel(
      T, "Col2Im",
      Kernel{&runCol2Im, nullptr, {ElementType::Float, ElementType::Double}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
