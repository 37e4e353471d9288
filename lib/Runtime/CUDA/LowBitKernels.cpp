//===- LowBitKernels.cpp - MatMulNBits and GatherBlockQuantized on CUDA ---===//
//
// The int4 LLM ops of ONNX Runtime's quantizer and GenAI model builder,
// which ran as host steps (a wait for the device and a copy of the packed
// weight each, every layer of every token). The checks are the CPU
// kernels'; the arithmetic is theirs to the bit (Kernels/LowBitMath.h).
//
// MatMulNBits' workspace is a function of A's rows, known when the plan is
// made (CUDAWorkspaces.h's nbitsWorkspace, which `oomplan --backend=cuda`
// evaluates too): none for a decode step (GEMV, up to GemvRows rows), else
// one tile of TileRows dequantized rows of W and cuBLAS's workspace after
// it. A prompt's product is then one cuBLAS call per tile, never a float
// copy of all of W.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/TensorUtil.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"
#include "Kernels/LowBitMath.h"
#include "oomplan/Runtime/CUDAWorkspaces.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;
using lowbit::GemvRows;
using lowbit::TileRows;

namespace {

static_assert(GemvRows == int64_t(NBitsGemvRows) &&
                  TileRows == int64_t(NBitsTileRows),
              "the kernels' paths are the planner's formula's");

struct NBitsDims {
  int64_t K, N, M, Bits, Block;
};

NBitsDims dimsOf(const Node &Nd, const TensorRef &A) {
  NBitsDims D;
  D.K = Nd.getInt("K", 0);
  D.N = Nd.getInt("N", 0);
  D.Bits = Nd.getInt("bits", 4);
  D.Block = Nd.getInt("block_size", 16);
  D.M = D.K > 0 ? int64_t(A.numElements()) / D.K : 0;
  return D;
}

// The tile's bytes: the formula's, without cuBLAS's part.
uint64_t tileBytes(const NBitsDims &D) {
  return nbitsWorkspace(uint64_t(D.M), uint64_t(D.N), uint64_t(D.K), 0);
}

uint64_t nbitsWorkspaceBytes(const Node &Nd, llvm::ArrayRef<TensorRef> In,
                             llvm::ArrayRef<TensorRef>) {
  if (In.empty())
    return 0;
  const NBitsDims D = dimsOf(Nd, In[0]);
  return nbitsWorkspace(uint64_t(D.M), uint64_t(D.N), uint64_t(D.K),
                        blasWorkspaceBytes());
}

} // namespace

llvm::Error cuda::nbitsArgs(const KernelContext &C, lowbit::NBitsArgs &P) {
  const TensorRef &A = C.Inputs[0], &B = C.Inputs[1], &Scales = C.Inputs[2];
  const TensorRef *Zp = cpu::hasInput(C, 3) ? &C.Inputs[3] : nullptr;
  const TensorRef *Bias = cpu::hasInput(C, 5) ? &C.Inputs[5] : nullptr;
  const TensorRef &Y = C.Outputs[0];
  if (A.Type != ElementType::Float || Y.Type != ElementType::Float ||
      Scales.Type != ElementType::Float || (Bias && Bias->Type != A.Type))
    return C.unsupported("A, scales, bias or Y not float");
  if (cpu::hasInput(C, 4))
    return C.unsupported("g_idx");
  const NBitsDims D = dimsOf(C.N, A);
  if (D.Bits < 2 || D.Bits > 8 || (D.Bits & (D.Bits - 1)) || D.Block < 16 ||
      D.K <= 0 || D.N <= 0)
    return C.badInput("bits, block_size, K or N out of range");
  P = lowbit::NBitsArgs();
  P.M = D.M;
  P.N = D.N;
  P.K = D.K;
  P.Bits = int(D.Bits);
  P.Block = D.Block;
  P.Blocks = (D.K + D.Block - 1) / D.Block;
  P.Blob = D.Block * D.Bits / 8;
  P.ZpRowBytes = (P.Blocks * D.Bits + 7) / 8;
  // The shape rule checked every count; what it could not (symbolic A)
  // is checked here.
  if (A.Dims.empty() || A.Dims.back() != D.K ||
      uint64_t(Y.numElements()) != uint64_t(D.M) * uint64_t(D.N))
    return C.badInput("A's last dim is not K = " + llvm::Twine(D.K));
  if (uint64_t(D.N) * uint64_t(P.Blocks) * uint64_t(P.Blob) !=
          B.numElements() ||
      uint64_t(D.N * P.Blocks) != Scales.numElements() ||
      B.Type != ElementType::UInt8)
    return C.badInput("B or scales do not have the sizes K, N, bits and "
                      "block_size give");
  if (Zp) {
    P.ZpPacked = Zp->Type == ElementType::UInt8;
    if (!P.ZpPacked && Zp->Type != ElementType::Float)
      return C.unsupported("zero_points of type " + elementTypeName(Zp->Type));
    if (Zp->numElements() !=
        uint64_t(D.N) * uint64_t(P.ZpPacked ? P.ZpRowBytes : P.Blocks))
      return C.badInput("zero_points do not have the size K, N, bits and "
                        "block_size give");
    P.Zp = Zp->Data;
  }
  if (Bias && Bias->numElements() != uint64_t(D.N))
    return C.badInput("the bias does not have N values");
  P.A = A.data<const float>();
  P.B = B.data<const uint8_t>();
  P.Scales = Scales.data<const float>();
  P.Bias = Bias ? Bias->data<const float>() : nullptr;
  P.Y = Y.data<float>();
  return llvm::Error::success();
}

namespace {

llvm::Error runMatMulNBits(const KernelContext &C) {
  lowbit::NBitsArgs P;
  if (llvm::Error E = nbitsArgs(C, P))
    return E;
  cudaStream_t S = context().Compute;
  if (P.M <= GemvRows)
    return launched(C, lowbit::nbitsGemv(P, S), "MatMulNBits GEMV kernel");
  const NBitsDims D = dimsOf(C.N, C.Inputs[0]);
  const uint64_t Tile = tileBytes(D);
  if (C.WorkspaceBytes < Tile + blasWorkspaceBytes())
    return C.badInput("the plan gave too little workspace");
  if (P.M > INT32_MAX || P.K > INT32_MAX || P.N > INT32_MAX)
    return C.unsupported("a product dimension above 2^31");
  if (llvm::Error E = useBlasWorkspace(
          C, static_cast<char *>(C.Workspace) + Tile, C.WorkspaceBytes - Tile))
    return E;
  float *W = static_cast<float *>(C.Workspace);
  const float One = 1.0f, Zero = 0.0f;
  for (int64_t N0 = 0; N0 < P.N; N0 += TileRows) {
    const int64_t Rows = std::min(TileRows, P.N - N0);
    if (llvm::Error E = launched(C, lowbit::nbitsDequantize(P, N0, Rows, W, S),
                                 "MatMulNBits dequantization kernel"))
      return E;
    // Row-major Y[:, N0 : N0 + Rows] (row stride N) = A W_tile^T: in
    // column-major terms Y^T = W_tile A^T, with W_tile read as the
    // column-major [K, Rows] it is, transposed.
    if (cublasStatus_t St =
            cublasSgemm(context().Blas, CUBLAS_OP_T, CUBLAS_OP_N, int(Rows),
                        int(P.M), int(P.K), &One, W, int(P.K), P.A, int(P.K),
                        &Zero, P.Y + N0, int(P.N)))
      return blasFailure(C, St, "cublasSgemm");
  }
  if (P.Bias)
    return launched(C, lowbit::addRowBias(P.Y, P.Bias, P.M, P.N, S),
                    "MatMulNBits bias kernel");
  return llvm::Error::success();
}

} // namespace

llvm::Error cuda::gbqArgs(const KernelContext &C, lowbit::GBQArgs &A,
                          int &ScaleType) {
  const TensorRef &Data = C.Inputs[0], &Idx = C.Inputs[1],
                  &Scales = C.Inputs[2], &Y = C.Outputs[0];
  const TensorRef *Zp = cpu::hasInput(C, 3) ? &C.Inputs[3] : nullptr;
  const int64_t Bits = C.N.getInt("bits", 4),
                Block = C.N.getInt("block_size", 128);
  if (Data.Type != ElementType::UInt8 || Data.Dims.size() < 2 ||
      (Bits != 2 && Bits != 4 && Bits != 8) || Block <= 0 ||
      (Zp && Zp->Type != ElementType::UInt8))
    return C.unsupported("data, bits or block_size this kernel does not read");
  if (Idx.Type != ElementType::Int32 && Idx.Type != ElementType::Int64)
    return C.unsupported("indices of type " + elementTypeName(Idx.Type));
  switch (Scales.Type) {
  case ElementType::Float:
    ScaleType = 0;
    break;
  case ElementType::Float16:
    ScaleType = 1;
    break;
  case ElementType::BFloat16:
    ScaleType = 2;
    break;
  default:
    return C.unsupported("scales of type " + elementTypeName(Scales.Type));
  }
  if (Y.Type != Scales.Type)
    return C.badInput("the output's type is not the scales'");
  A = lowbit::GBQArgs();
  A.V = Data.Dims[0];
  A.P = Data.Dims.back();
  if (A.V <= 0 || A.P <= 0)
    return C.badInput("data has an empty axis");
  A.Bits = int(Bits);
  A.Block = Block;
  A.Rows = int64_t(Data.numElements()) / (A.V * A.P);
  A.Width = A.P * (8 / Bits);
  A.Blocks = (A.Width + Block - 1) / Block;
  A.ZpRow = (A.Blocks * Bits + 7) / 8;
  A.NIdx = int64_t(Idx.numElements());
  if (int64_t(Scales.numElements()) != A.V * A.Rows * A.Blocks ||
      (Zp && int64_t(Zp->numElements()) != A.V * A.Rows * A.ZpRow) ||
      int64_t(Y.numElements()) != A.NIdx * A.Rows * A.Width)
    return C.badInput("scales, zero_points or the output do not have the "
                      "sizes data and block_size give");
  A.Data = Data.data<const uint8_t>();
  A.Idx = Idx.Data;
  A.Idx64 = Idx.Type == ElementType::Int64;
  A.Scales = Scales.Data;
  A.Zp = Zp ? Zp->data<const uint8_t>() : nullptr;
  A.Y = Y.Data;
  return llvm::Error::success();
}

namespace {

llvm::Error runGatherBlockQuantized(const KernelContext &C) {
  lowbit::GBQArgs A;
  int ScaleType = 0;
  if (llvm::Error E = gbqArgs(C, A, ScaleType))
    return E;
  return launched(C,
                  lowbit::gatherBlockQuantized(A, ScaleType, context().BadIndex,
                                               context().Compute),
                  "GatherBlockQuantized kernel");
}

} // namespace

void cuda::registerLowBitKernels(CUDAKernelTable &T) {
  addKernel(T, "MatMulNBits",
            {runMatMulNBits, nbitsWorkspaceBytes, {ElementType::Float}});
  addKernel(T, "GatherBlockQuantized",
            {runGatherBlockQuantized, nullptr, {ElementType::UInt8}});
}
