//===- GatherBlockQuantized.cpp - CPU kernel: rows of low-bit weights -----===//
//
// ONNX Runtime's GatherBlockQuantized (com.microsoft) for uint8 data: the
// rows of data [V, M..., P] at the indices (axis 0, negative from the end),
// each dequantized along its last axis, where P bytes hold P * 8 / bits
// values (low bits first) in blocks of block_size with a scale each and a
// zero point (packed like data; absent: 2^(bits-1)): (q - zp) * scale, in
// the scales' type (float, float16 or bfloat16; computed in float). The
// weights stay packed; only the gathered rows are dequantized. An index
// outside [-V, V) is an error, as in ONNX Runtime 1.30 (newer versions'
// documentation gives zeros).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include "TensorUtil.h"

namespace oomplan {
namespace runtime {
namespace cpu {

llvm::Error gbqGeometry(const KernelContext &C, GBQGeometry &G) {
  const TensorRef &Data = C.Inputs[0], &Idx = C.Inputs[1],
                  &Scales = C.Inputs[2];
  const TensorRef *Zp = hasInput(C, 3) ? &C.Inputs[3] : nullptr;
  G = GBQGeometry();
  G.Bits = C.N.getInt("bits", 4);
  G.Block = C.N.getInt("block_size", 128);
  if (Data.Type != ElementType::UInt8 || Data.Dims.size() < 2 ||
      (G.Bits != 2 && G.Bits != 4 && G.Bits != 8) || G.Block <= 0)
    return C.unsupported("data, bits or block_size this kernel does not read");
  G.V = Data.Dims[0];
  G.P = Data.Dims.back();
  if (G.V <= 0 || G.P <= 0)
    return C.badInput("data has an empty axis");
  G.Rows = int64_t(Data.numElements()) / (G.V * G.P);
  G.Width = G.P * (8 / G.Bits);
  G.Blocks = (G.Width + G.Block - 1) / G.Block;
  G.ZpRow = (G.Blocks * G.Bits + 7) / 8;
  if (int64_t(Scales.numElements()) != G.V * G.Rows * G.Blocks ||
      (Zp && int64_t(Zp->numElements()) != G.V * G.Rows * G.ZpRow) ||
      int64_t(C.Outputs[0].numElements()) !=
          int64_t(Idx.numElements()) * G.Rows * G.Width)
    return C.badInput("scales, zero_points or the output do not have the "
                      "sizes data and block_size give");
  return llvm::Error::success();
}

namespace {

template <typename T>
llvm::Error gatherRows(const KernelContext &C, const GBQGeometry &G) {
  const TensorRef &Data = C.Inputs[0], &Idx = C.Inputs[1],
                  &Scales = C.Inputs[2];
  const TensorRef *Zp = hasInput(C, 3) ? &C.Inputs[3] : nullptr;
  const int64_t Bits = G.Bits, Block = G.Block, V = G.V, P = G.P, Rows = G.Rows,
                Width = G.Width, Blocks = G.Blocks, ZpRow = G.ZpRow;
  const uint8_t *Q = Data.data<const uint8_t>();
  const T *S = Scales.data<const T>();
  T *Y = C.Outputs[0].data<T>();
  const unsigned Mask = (1u << Bits) - 1;
  auto At = [&](const uint8_t *Base, int64_t I) {
    const int64_t Bit = I * Bits;
    return (Base[Bit / 8] >> (Bit % 8)) & Mask;
  };
  for (uint64_t I = 0; I < Idx.numElements(); ++I) {
    int64_t Row = intAt(Idx, I);
    if (Row < -V || Row >= V)
      return C.badInput("index " + llvm::Twine(Row) + " is outside [-" +
                        llvm::Twine(V) + ", " + llvm::Twine(V) + ")");
    if (Row < 0)
      Row += V;
    for (int64_t M = 0; M < Rows; ++M) {
      const int64_t R = Row * Rows + M;
      T *Out = Y + (int64_t(I) * Rows + M) * Width;
      for (int64_t K = 0; K < Width; ++K) {
        const int64_t J = K / Block;
        const float Z = Zp ? float(At(Zp->data<const uint8_t>() + R * ZpRow, J))
                           : float(1u << (Bits - 1));
        Out[K] =
            store<T>((float(At(Q + R * P, K)) - Z) * load(S[R * Blocks + J]));
      }
    }
  }
  return llvm::Error::success();
}

llvm::Error runGatherBlockQuantized(const KernelContext &C) {
  GBQGeometry G;
  if (llvm::Error E = gbqGeometry(C, G))
    return E;
  switch (C.Inputs[2].Type) {
  case ElementType::Float:
    return gatherRows<float>(C, G);
  case ElementType::Float16:
    return gatherRows<Half>(C, G);
  case ElementType::BFloat16:
    return gatherRows<BFloat16>(C, G);
  default:
    return C.unsupported("scales of type " + elementTypeName(C.Inputs[2].Type));
  }
}

} // namespace

void registerGatherBlockQuantizedKernels(CPUKernelTable &T) {
  addKernel(T, "GatherBlockQuantized",
            Kernel{&runGatherBlockQuantized, nullptr, {ElementType::UInt8}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
