//===- CudaLibraries.h - what PyTorch's CUDA libraries allocate -*- C++ -*-===//
//
// A training step on PyTorch's CUDA path allocates more through the caching
// allocator than its tensors: cuBLAS's workspace, once per thread that runs
// a product (the forward's, and autograd's backward thread), kept for the
// life of the process; and cuDNN's convolution workspaces, per convolution,
// freed when the kernel returns. They are not tensors of the plan (our own
// executor places its workspaces as plan buffers); they are allocations the
// caching allocator simulation runs beside the plan's, at the steps that
// make them. docs/training.md ("What PyTorch's CUDA libraries allocate")
// gives each rule and the measurement behind it.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_CUDALIBRARIES_H
#define OOMPLAN_REPORT_CUDALIBRARIES_H

#include "oomplan/Plan/Plan.h"
#include <string>
#include <vector>

namespace oomplan {
namespace report {

/// One allocation a library makes during step Step of the schedule.
struct LibraryAllocation {
  uint64_t Step = 0;
  uint64_t Bytes = 0;
  /// Kept from its first step on (cuBLAS's workspace); else freed when the
  /// step's kernel returns (cuDNN's).
  bool Kept = false;
  std::string What; ///< "cuBLAS workspace (forward thread)".
};

struct CudaLibraryConfig {
  /// cuBLAS's workspace per (handle, stream): PyTorch's default is 32 MiB
  /// on compute capability 9 and later (CUBLAS_WORKSPACE_CONFIG ":4096:8"),
  /// 8 MiB + 128 KiB before (":4096:2:16:8"); cuBLASLt shares it.
  uint64_t CublasWorkspaceBytes = 32ull << 20;
  /// A convolution's backward (cudnn.benchmark off) takes a workspace of
  /// its unfolded input, at most this (calibrated, docs/training.md); 0
  /// models none.
  uint64_t ConvWorkspaceCapBytes = 64ull << 20;
  /// Per graph node: a convolution's unfolded input (im2col: batch x
  /// input channels x kernel window x output positions, in its type);
  /// 0 for other nodes and where dims are unknown.
  std::vector<uint64_t> ConvUnfoldedBytes;
  /// Per graph node: a convolution whose input takes no gradient (a graph
  /// input: the stem on the image). Its backward computes the weight's
  /// gradient alone, on a workspace of its whole unfolded input (no cap).
  std::vector<bool> ConvWeightGradOnly;
};

/// The library allocations of one step of P's schedule, in step order.
std::vector<LibraryAllocation>
pytorchCudaLibraryAllocations(const Plan &P, const CudaLibraryConfig &C);

} // namespace report
} // namespace oomplan

#endif
