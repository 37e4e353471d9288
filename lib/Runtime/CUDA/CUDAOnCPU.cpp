//===- CUDAOnCPU.cpp - a CUDA run rehearsed with the CPU's kernels --------===//
//
// The cuda-on-cpu backend: the CPU kernels of exactly the op types, and
// input types, the CUDA table has, on host memory behind the interface of a
// device the host cannot touch (stagedHostDevice). A run then takes every
// path a CUDA run takes but the device kernels: staged weights, mirrored
// inputs and outputs, shape values computed on the host, and host steps
// for what CUDA lacks (HostSteps.cpp), with the same host steps as on a
// GPU. So a machine without one can check that a model runs on CUDA, which
// of its steps would run on the host, and that the outputs still match,
// and CI runs the device path of the executor on real graphs.
//
// What it is not: the CUDA run's memory. Workspaces are the CPU kernels'
// (im2col), not cuDNN's and cuBLAS's: `oomplan --backend=cuda` plans those
// (docs/cuda.md).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/CUDA.h"

using namespace oomplan;
using namespace oomplan::runtime;

namespace {
// The CPU kernel of an op CUDA has, for the input types both handle, with
// CUDA's refusals (Kernel::Refuses): a type or a node CUDA cannot run goes
// to a host step as on CUDA. A half type CUDA widens (its kernel lists
// float but not the half type) stays off the list, so the CPU kernel
// widens it the same way.
std::optional<Kernel> asCUDA(const Kernel &CPU, const Kernel &CUDA) {
  Kernel K = CPU;
  K.Refuses = CUDA.Refuses; // what cuDNN cannot express goes to the host
  // A size CUDA's kernel reads back runs on the "device" here too (the CPU
  // kernel reports it from host memory); the others go to host steps.
  K.ReportsSizes = CUDA.ReportsSizes;
  if (CUDA.Types.empty())
    return K;
  if (CPU.Types.empty()) {
    K.Types = CUDA.Types;
    return K;
  }
  K.Types.clear();
  for (ElementType T : CUDA.Types)
    if (llvm::is_contained(CPU.Types, T))
      K.Types.push_back(T);
  if (K.Types.empty())
    return std::nullopt;
  return K;
}

const KernelTable &cudaOnCPUKernels() {
  static const KernelTable T = [] {
    KernelTable T;
    auto CPU = backendKernels("cpu");
    if (!CPU) { // the CPU backend is built in: never
      llvm::consumeError(CPU.takeError());
      return T;
    }
    const KernelTable &CUDA = cuda::cudaKernelTable();
    for (const ops::OpInfo &Op : ops::allOps()) {
      ops::OpCode C = ops::opCode(Op);
      if (CUDA.get(C) && (*CPU)->get(C))
        if (std::optional<Kernel> K = asCUDA(*(*CPU)->get(C), *CUDA.get(C)))
          T.set(C, *K);
    }
    return T;
  }();
  return T;
}
} // namespace

llvm::Expected<Backend> cuda::openCUDAOnCPUBackend() {
  Backend B;
  B.Kernels = &cudaOnCPUKernels();
  B.Dev = &stagedHostDevice();
  return B;
}
