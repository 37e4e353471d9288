//===- CUDAWorkspaces.h - the CUDA backend's library workspaces -*- C++ -*-===//
//
// The CUDA backend plans each cuDNN convolution's and cuBLAS product's
// scratch as a buffer of its step (Kernel::Workspace). With a GPU it asks
// the libraries for the size; without one (`oomplan --backend=cuda`, the
// planner on a machine with no GPU) the plan holds the most the backend
// ever asks: each step's workspace is at least the run's, so the peak of
// live bytes in a given order is too. CUDA-free: the
// planner and the backend read the same limits here.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_CUDAWORKSPACES_H
#define OOMPLAN_RUNTIME_CUDAWORKSPACES_H

#include "oomplan/IR/FusedOps.h"
#include "oomplan/Support/CheckedMath.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>

namespace oomplan {
namespace runtime {
namespace cuda {

/// The most workspace a convolution may plan: cuDNN algorithms that need
/// more are skipped. Large enough for cuDNN's fast algorithms on
/// ResNet-sized layers, small next to the activations of a batch.
constexpr uint64_t ConvWorkspaceLimit = uint64_t(64) << 20;

/// The cuBLAS workspace of each MatMul and Gemm step on a device of compute
/// capability Major: NVIDIA's recommendation, 32 MiB on Hopper (9) and
/// later, 4 MiB before. cuBLAS gets exactly this buffer and allocates none.
constexpr uint64_t blasWorkspaceFor(int Major) {
  return (Major >= 9 ? uint64_t(32) : uint64_t(4)) << 20;
}

/// Without a device: the most scratch the CUDA kernel of OpType plans
/// (0: none, or a formula of its shapes, as OomplanAttention's, which the
/// planner counts itself). Every CUDA kernel with a workspace has a bound
/// here (RuntimeCUDATests checks it against the kernel table).
inline uint64_t workspaceBound(llvm::StringRef OpType) {
  if (OpType == "Conv" || OpType == "ConvTranspose" || OpType == fused::ConvOp)
    return ConvWorkspaceLimit;
  if (OpType == "MatMul" || OpType == "Gemm" || OpType == fused::MatMulOp)
    return blasWorkspaceFor(9);
  return 0;
}

/// RNN, GRU and LSTM: their CUDA workspace is a formula of their shapes
/// (recurrentWorkspace), which workspaceBound cannot give.
inline bool isRecurrent(llvm::StringRef OpType) {
  return OpType == "RNN" || OpType == "GRU" || OpType == "LSTM";
}

/// The CUDA recurrent kernel's workspace for B batch rows of H hidden
/// units: the gates (B x gates*H), the hidden and cell states and two
/// temporaries (B x H each) in floats, as the CPU kernel's, rounded up to
/// 256 bytes, then Blas bytes for cuBLAS (blasWorkspaceFor the device; the
/// planner without one passes Hopper's, the most). Saturates.
inline uint64_t recurrentWorkspace(llvm::StringRef OpType, uint64_t B,
                                   uint64_t H, uint64_t Blas) {
  const uint64_t Gates = OpType == "GRU" ? 3 : OpType == "LSTM" ? 4 : 1;
  uint64_t States = saturatingMul(saturatingMul(B, H), (Gates + 4) * 4);
  uint64_t Aligned = 0;
  if (!checkedAlignUp(States, 256, Aligned))
    return UINT64_MAX;
  return saturatingAdd(Aligned, Blas);
}

/// MatMulNBits (ONNX Runtime's int4 product): up to NBitsGemvRows rows of A
/// (a decode step) its CUDA kernel needs no workspace; above, one tile of
/// NBitsTileRows rows of W (fewer when N is) dequantized to float, rounded
/// up to 256 bytes, then Blas bytes for cuBLAS. A formula of A's rows, K
/// and N, which workspaceBound cannot give; `oomplan --backend=cuda`
/// evaluates it at the bindings. Saturates.
constexpr uint64_t NBitsGemvRows = 8, NBitsTileRows = 1024;
inline uint64_t nbitsWorkspace(uint64_t M, uint64_t N, uint64_t K,
                               uint64_t Blas) {
  if (M <= NBitsGemvRows)
    return 0;
  uint64_t Tile =
      saturatingMul(saturatingMul(N < NBitsTileRows ? N : NBitsTileRows, K), 4);
  uint64_t Aligned = 0;
  if (!checkedAlignUp(Tile, 256, Aligned))
    return UINT64_MAX;
  return saturatingAdd(Aligned, Blas);
}

/// Without a device: whether the CUDA kernel of OpType runs a float16 or
/// bfloat16 step on float copies of its half operands (HalfInFloat.h), so
/// that `oomplan --backend=cuda` counts the copies. The others take halves
/// natively (the elementwise ops, MatMul, the ops that move bytes) or have
/// no CUDA kernel. RuntimeCUDATests checks the list against the table.
inline bool halfInFloat(llvm::StringRef OpType) {
  static const llvm::StringRef Ops[] = {
      "ArgMax", "ArgMin", "AveragePool", "BatchNormalization", "Conv",
      "ConvTranspose", "CumSum", "Einsum", "Gemm", "GlobalAveragePool",
      "GlobalMaxPool", "GridSample", "InstanceNormalization",
      "LayerNormalization", "LogSoftmax", "MaxPool", "OneHot", "ReduceL1",
      "ReduceL2", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
      "ReduceProd", "ReduceSum", "ReduceSumSquare", "Resize", "RoiAlign",
      "Softmax", "TopK", "Upsample", "RNN", "GRU", "LSTM", "QuantizeLinear",
      "LRN", "LpPool", "GlobalLpPool", "ReduceLogSum", "Hardmax",
      "LpNormalization", "MeanVarianceNormalization", "DynamicQuantizeLinear",
      "MatMulNBits", "GroupNormalization", "AffineGrid", "Col2Im", "DeformConv",
      "DFT", "STFT",
      // The fused ops: fusion takes float32 only, so never a half step.
      fused::AttentionOp, fused::ConvOp, fused::MatMulOp};
  for (llvm::StringRef Op : Ops)
    if (OpType == Op)
      return true;
  return false;
}

/// Without a device: whether the CPU has a kernel for OpType and CUDA none,
/// so that oomplan-run --backend=cuda runs its steps on the host with the
/// CPU kernel (host steps, Executor.h), and `oomplan --backend=cuda` can
/// say so. Steps of other ops can still be host steps (an input type the
/// CUDA kernel lacks, a node it refuses, a data-dependent size it does not
/// report): `oomplan-run --backend=cuda-on-cpu` lists them all.
/// RuntimeCUDATests checks the list against both tables.
inline bool hostStepOp(llvm::StringRef OpType) {
  static const llvm::StringRef Ops[] = {
      "BlackmanWindow", "Det", "HammingWindow", "HannWindow", "MelWeightMatrix",
      "NegativeLogLikelihoodLoss", "NonMaxSuppression",
      "SoftmaxCrossEntropyLoss", "TfIdfVectorizer", "Unique",
      // Never in a CUDA plan (DriverBackend.cpp and the runtime's fusion
      // leave the pair unfused there), but a CPU kernel only.
      fused::ConvDepthwiseOp};
  for (llvm::StringRef Op : Ops)
    if (OpType == Op)
      return true;
  return false;
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
