//===- CUDA.h - the CUDA backend ---------------------------------*- C++
//-*-===//
//
// In builds with CUDA (OOMPLAN_ENABLE_CUDA, library oomplanRuntimeCUDA).
// A program adds it with runtime::addBackend("cuda", openCUDABackend), and
// its rehearsal on the CPU with addBackend("cuda-on-cpu",
// openCUDAOnCPUBackend).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_CUDA_H
#define OOMPLAN_RUNTIME_CUDA_H

#include "oomplan/Runtime/Backend.h"

namespace oomplan {
namespace runtime {
namespace cuda {

/// Opens device 0 once per process (CUDA_VISIBLE_DEVICES picks another):
/// the context, a compute and a copy stream, cuBLAS and cuDNN handles, and
/// measures what they take. Returns the CUDA kernel table and device.
/// Errors (I/O): no CUDA driver or device, in CUDA's own words; a library
/// that fails to start.
llvm::Expected<Backend> openCUDABackend();

/// The CUDA kernel table alone, without opening a device: for checking
/// that a plan's every step has a CUDA kernel (Executor::create with the
/// host device validates kernels without running them). Its workspace
/// queries give their no-device answers (cuDNN's: 0).
const KernelTable &cudaKernelTable();

/// cuda-on-cpu: a CUDA run rehearsed without a GPU (CUDAOnCPU.cpp): the CPU
/// kernels of the op and input types the CUDA table has, on host memory the
/// executor treats as a device's (stagedHostDevice), so every step CUDA
/// lacks runs as a host step, as on a GPU. Never fails.
llvm::Expected<Backend> openCUDAOnCPUBackend();

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
