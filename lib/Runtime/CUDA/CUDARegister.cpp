//===- CUDARegister.cpp - the CUDA backends, added when linked ------------===//
//
// A static initializer in an object library of its own: a program that
// links oomplanRuntimeCUDARegister can open "cuda" and "cuda-on-cpu" by name
// (openBackend, api::execute), and liboomplan, which does not link it, needs
// no CUDA library. "cuda" lists its kernels without opening the device.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/CUDA.h"

using namespace oomplan::runtime;

static const bool Registered = [] {
  addBackend("cuda", cuda::openCUDABackend, cuda::cudaKernelTable);
  addBackend("cuda-on-cpu", cuda::openCUDAOnCPUBackend);
  return true;
}();
