//===- CUDAContext.h - the process's CUDA state -----------------*- C++ -*-===//
//
// One per process, made by openCUDABackend(): the device, the compute and
// copy streams, the cuBLAS and cuDNN handles, and two small buffers made
// with them (a device flag kernels raise on a bad index, pinned host
// scratch for reading small integer inputs such as Slice's starts). Kernel
// functions reach it through context(); the planner's workspace queries
// (cuDNN's algorithm choice) do too, so that plan and run agree.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_CUDACONTEXT_H
#define OOMPLAN_LIB_RUNTIME_CUDA_CUDACONTEXT_H

#include "oomplan/Runtime/CUDAWorkspaces.h"
#include "oomplan/Runtime/Device.h"
#include "oomplan/Runtime/Kernel.h"
#include "llvm/ADT/SmallVector.h"
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <mutex>

namespace oomplan {
namespace runtime {
namespace cuda {

struct Context {
  int DeviceId = 0;
  cudaStream_t Compute = nullptr, Copy = nullptr;
  cublasHandle_t Blas = nullptr;
  cudnnHandle_t Dnn = nullptr;
  int *BadIndex = nullptr; ///< Device flag (Launch.h's gather).
  /// Device memory for a count a kernel hands back (NonZero's), in the
  /// flag's allocation.
  int64_t *DeviceCount = nullptr;
  int64_t *HostScratch = nullptr; ///< Pinned, ScratchInts elements.
  static constexpr unsigned ScratchInts = 64;
  int ComputeMajor = 0; ///< Compute capability (9 on H100/H200).
  DeviceOverhead Overhead;
  std::vector<cudaEvent_t> Events;
  /// Fork and join of the copy stream into a graph capture.
  cudaEvent_t Fork = nullptr, Join = nullptr;
  std::vector<cudaEvent_t> Timers; ///< Device::createTimers's (timing).
  /// Between beginRecording and endRecording: a timer is marked as an
  /// external event record node, which each replay records (timed).
  bool Capturing = false;
  std::vector<cudaGraphExec_t> Graphs; ///< Device::replay's recordings.
  std::mutex Lock;                     ///< Events and the algorithm cache.
};

/// The context; only valid after openCUDABackend() succeeded.
Context &context();

/// Whether openCUDABackend() succeeded (the workspace queries run without
/// a device in tests, and then return their no-device answers).
bool haveContext();

/// The cuBLAS workspace each MatMul and Gemm step gets in the plan
/// (blasWorkspaceFor the device; cublasSetWorkspace is given exactly it).
uint64_t blasWorkspaceBytes();

/// An error for a failed CUDA runtime call (Code is a cudaError_t).
llvm::Error cudaFailure(int Code, const llvm::Twine &What);
/// The same for a kernel call: names the node and op.
llvm::Error kernelFailure(const KernelContext &C, int Code,
                          const llvm::Twine &What);
llvm::Error blasFailure(const KernelContext &C, cublasStatus_t S,
                        const llvm::Twine &What);
llvm::Error dnnFailure(const KernelContext &C, cudnnStatus_t S,
                       const llvm::Twine &What);

/// Input I's integer values on the host: from the graph when it is a small
/// constant (no device access), else copied back from the device, which
/// waits for the compute stream (Slice, Pad and Tile read their
/// parameters so). At most Context::ScratchInts values.
llvm::Error hostInts(const KernelContext &C, unsigned I,
                     llvm::SmallVectorImpl<int64_t> &Out);
/// Input I's values as doubles, likewise (float, double, int32 or int64;
/// Resize's scales and roi).
llvm::Error hostDoubles(const KernelContext &C, unsigned I,
                        llvm::SmallVectorImpl<double> &Out);
/// Input I's first value as a double, likewise (Clip's bounds).
llvm::Expected<double> hostScalar(const KernelContext &C, unsigned I);

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
