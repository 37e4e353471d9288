//===- MatMulNBits.cpp - CPU kernel: A times blocked low-bit weights ------===//
//
// ONNX Runtime's MatMulNBits (com.microsoft): Y = A * W^T (+ bias), W [N, K]
// stored as B, 2, 4 or 8 bits per weight packed into bytes from the low
// bits up, in blocks of block_size along K, each block with a scale and a
// zero point (packed like B, or of the scales' type; absent: 2^(bits-1)):
// W[n][k] = (q - zero point) * scale.
//
// The weights stay packed: rows of W are dequantized a tile at a time into
// the step's workspace (TileRows rows of K floats, planned) and multiplied
// there, so that the step's scratch is bounded whatever N is, as in ONNX
// Runtime's kernels, rather than a float copy of all of W.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Gemm.h"
#include "TensorUtil.h"

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// Rows of W dequantized at once.
constexpr int64_t TileRows = 128;

NBitsGeometry shapeOf(const Node &Nd) {
  NBitsGeometry S;
  S.K = Nd.getInt("K", 0);
  S.N = Nd.getInt("N", 0);
  S.Bits = Nd.getInt("bits", 4);
  S.Block = Nd.getInt("block_size", 16);
  S.Blocks = S.Block > 0 ? (S.K + S.Block - 1) / S.Block : 0;
  S.Blob = S.Block * S.Bits / 8;
  S.ZpRowBytes = (S.Blocks * S.Bits + 7) / 8;
  return S;
}

uint64_t nbitsWorkspace(const Node &Nd, llvm::ArrayRef<TensorRef>,
                        llvm::ArrayRef<TensorRef>) {
  NBitsGeometry S = shapeOf(Nd);
  return uint64_t(std::min(S.N, TileRows)) * uint64_t(S.K) * sizeof(float);
}

} // namespace

llvm::Error nbitsGeometry(const KernelContext &C, NBitsGeometry &S) {
  S = shapeOf(C.N);
  const TensorRef &A = C.Inputs[0], &B = C.Inputs[1], &Scales = C.Inputs[2];
  const TensorRef *Zp = hasInput(C, 3) ? &C.Inputs[3] : nullptr;
  const TensorRef *Bias = hasInput(C, 5) ? &C.Inputs[5] : nullptr;
  const TensorRef &Y = C.Outputs[0];
  if (A.Type != ElementType::Float || Y.Type != ElementType::Float)
    return C.unsupported("A of type " + elementTypeName(A.Type));
  // The shape rule checked every count; what it could not (symbolic A)
  // is checked here.
  if (S.K <= 0 || S.N <= 0 || S.Block <= 0 || A.Dims.empty() ||
      A.Dims.back() != S.K)
    return C.badInput("A's last dim is not K = " + llvm::Twine(S.K));
  S.M = int64_t(A.numElements()) / S.K;
  if (uint64_t(Y.numElements()) != uint64_t(S.M) * uint64_t(S.N))
    return C.badInput("Y does not have M x N values");
  if (uint64_t(S.N) * uint64_t(S.Blocks) * uint64_t(S.Blob) !=
          B.numElements() ||
      uint64_t(S.N * S.Blocks) != Scales.numElements())
    return C.badInput("B or scales do not have the sizes K, N, bits and "
                      "block_size give");
  S.ZpPacked = Zp && Zp->Type == ElementType::UInt8;
  if (Zp && Zp->numElements() !=
                uint64_t(S.N) * uint64_t(S.ZpPacked ? S.ZpRowBytes : S.Blocks))
    return C.badInput("zero_points do not have the size K, N, bits and "
                      "block_size give");
  if (Bias && Bias->numElements() != uint64_t(S.N))
    return C.badInput("the bias does not have N values");
  return llvm::Error::success();
}

namespace {

/// Value I of a packed array of Bits-bit values, low bits first.
inline unsigned packedAt(const uint8_t *P, int64_t I, int64_t Bits) {
  const int64_t Bit = I * Bits;
  return (P[Bit / 8] >> (Bit % 8)) & ((1u << Bits) - 1);
}

llvm::Error runMatMulNBits(const KernelContext &C) {
  NBitsGeometry S;
  if (llvm::Error E = nbitsGeometry(C, S))
    return E;
  const TensorRef &A = C.Inputs[0], &B = C.Inputs[1], &Scales = C.Inputs[2];
  const TensorRef *Zp = hasInput(C, 3) ? &C.Inputs[3] : nullptr;
  const TensorRef *Bias = hasInput(C, 5) ? &C.Inputs[5] : nullptr;
  const TensorRef &Y = C.Outputs[0];
  const bool Packed = S.ZpPacked;
  if (C.WorkspaceBytes < nbitsWorkspace(C.N, C.Inputs, C.Outputs))
    return C.badInput("the plan gave too little workspace");
  const double DefaultZp = double(1u << (S.Bits - 1));
  const int64_t M = S.M;
  const uint8_t *Q = B.data<const uint8_t>();
  const float *AData = A.data<const float>();
  float *YData = Y.data<float>(), *W = static_cast<float *>(C.Workspace);
  useBlasThreads(C.Pool.threads());
  for (int64_t N0 = 0; N0 < S.N; N0 += TileRows) {
    const int64_t Rows = std::min(TileRows, S.N - N0);
    C.Pool.parallelFor(Rows, 1, [&](int64_t R0, int64_t R1) {
      for (int64_t R = R0; R < R1; ++R) {
        const int64_t Row = N0 + R;
        float *WRow = W + R * S.K;
        for (int64_t J = 0; J < S.Blocks; ++J) {
          const int64_t Index = Row * S.Blocks + J;
          const double Scale = numberAt(Scales, uint64_t(Index));
          const double Z = !Zp ? DefaultZp
                           : Packed
                               ? double(packedAt(Zp->data<const uint8_t>() +
                                                     Row * S.ZpRowBytes,
                                                 J, S.Bits))
                               : numberAt(*Zp, uint64_t(Index));
          const uint8_t *Blk = Q + Index * S.Blob;
          const int64_t K0 = J * S.Block, K1 = std::min(S.K, K0 + S.Block);
          for (int64_t Kk = K0; Kk < K1; ++Kk)
            WRow[Kk] =
                float((double(packedAt(Blk, Kk - K0, S.Bits)) - Z) * Scale);
        }
      }
    });
    parallelGemm<float>(C.Pool, false, true, M, Rows, S.K, 1.0f, AData, S.K, W,
                        S.K, 0.0f, YData + N0, S.N);
  }
  if (Bias)
    for (int64_t I = 0; I < M; ++I)
      for (int64_t J = 0; J < S.N; ++J)
        YData[I * S.N + J] += float(numberAt(*Bias, uint64_t(J)));
  return llvm::Error::success();
}

} // namespace

void registerMatMulNBitsKernels(CPUKernelTable &T) {
  addKernel(T, "MatMulNBits",
            Kernel{&runMatMulNBits, &nbitsWorkspace, {ElementType::Float}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
