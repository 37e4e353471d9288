//===- LowBitKernels.cpp - MatMulNBits and GatherBlockQuantized on CUDA ---===//
//
// The int4 LLM ops of ONNX Runtime's quantizer and GenAI model builder,
// which ran as host steps (a wait for the device and a copy of the packed
// weight each, every layer of every token). The checks are the CPU
// kernels' own (cpu::nbitsGeometry, cpu::gbqGeometry); the arithmetic is
// theirs to the bit (Kernels/LowBitMath.h).
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

uint64_t nbitsWorkspaceBytes(const Node &Nd, llvm::ArrayRef<TensorRef> In,
                             llvm::ArrayRef<TensorRef>) {
  const int64_t K = Nd.getInt("K", 0), N = Nd.getInt("N", 0);
  if (In.empty() || K <= 0 || N <= 0)
    return 0;
  return nbitsWorkspace(In[0].numElements() / uint64_t(K), uint64_t(N),
                        uint64_t(K), blasWorkspaceBytes());
}

} // namespace

llvm::Error cuda::nbitsArgs(const KernelContext &C, lowbit::NBitsArgs &P) {
  cpu::NBitsGeometry G;
  if (llvm::Error E = cpu::nbitsGeometry(C, G))
    return E;
  const TensorRef &B = C.Inputs[1], &Scales = C.Inputs[2];
  const TensorRef *Zp = cpu::hasInput(C, 3) ? &C.Inputs[3] : nullptr;
  const TensorRef *Bias = cpu::hasInput(C, 5) ? &C.Inputs[5] : nullptr;
  // What the kernel reads beyond the CPU's: float scales and bias (half
  // ones arrive widened), a uint8 B, zero points packed or float.
  if (Scales.Type != ElementType::Float ||
      (Bias && Bias->Type != ElementType::Float) ||
      B.Type != ElementType::UInt8 ||
      (Zp && !G.ZpPacked && Zp->Type != ElementType::Float))
    return C.unsupported("scales, bias, B or zero_points of a type the "
                         "kernel does not read");
  if (cpu::hasInput(C, 4))
    return C.unsupported("g_idx");
  P = lowbit::NBitsArgs();
  P.M = G.M;
  P.N = G.N;
  P.K = G.K;
  P.Bits = int(G.Bits);
  P.Block = G.Block;
  P.Blocks = G.Blocks;
  P.Blob = G.Blob;
  P.ZpRowBytes = G.ZpRowBytes;
  P.ZpPacked = G.ZpPacked;
  P.Zp = Zp ? Zp->Data : nullptr;
  P.A = C.Inputs[0].data<const float>();
  P.B = B.data<const uint8_t>();
  P.Scales = Scales.data<const float>();
  P.Bias = Bias ? Bias->data<const float>() : nullptr;
  P.Y = C.Outputs[0].data<float>();
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
  const uint64_t Tile =
      nbitsWorkspace(uint64_t(P.M), uint64_t(P.N), uint64_t(P.K), 0);
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
  cpu::GBQGeometry G;
  if (llvm::Error E = cpu::gbqGeometry(C, G))
    return E;
  const TensorRef &Data = C.Inputs[0], &Idx = C.Inputs[1],
                  &Scales = C.Inputs[2], &Y = C.Outputs[0];
  const TensorRef *Zp = cpu::hasInput(C, 3) ? &C.Inputs[3] : nullptr;
  // What the kernel reads beyond the CPU's: packed zero points, int32 or
  // int64 indices, scales and Y of one float type.
  if (Zp && Zp->Type != ElementType::UInt8)
    return C.unsupported("zero_points of type " + elementTypeName(Zp->Type));
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
  A.V = G.V;
  A.P = G.P;
  A.Bits = int(G.Bits);
  A.Block = G.Block;
  A.Rows = G.Rows;
  A.Width = G.Width;
  A.Blocks = G.Blocks;
  A.ZpRow = G.ZpRow;
  A.NIdx = int64_t(Idx.numElements());
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
