//===- CPUKernels.cpp - the CPU backend's kernel table ----------*- C++ -*-===//
//
// Builds the table from every family once; a missing record is a bug in a
// family file, so it aborts with the op's name rather than returning an
// error that no user could act on.
//
//===----------------------------------------------------------------------===//
#include "CPUKernels.h"
#include "llvm/Support/ErrorHandling.h"

namespace oomplan {
namespace runtime {
namespace cpu {

void addKernel(CPUKernelTable &T, llvm::StringRef OpType, Kernel K) {
  setKernel(T, OpType, std::move(K), "CPU");
}

const CPUKernelTable &cpuKernels() {
  static const CPUKernelTable Table = [] {
    CPUKernelTable T;
    registerUnaryKernels(T);
    registerBinaryKernels(T);
    registerReduceKernels(T);
    registerCastKernels(T);
    registerMatMulKernels(T);
    registerConvKernels(T);
    registerPoolKernels(T);
    registerNormKernels(T);
    registerShapeKernels(T);
    registerIndexingKernels(T);
    registerRecurrentKernels(T);
    registerFusedKernels(T);
    return T;
  }();
  return Table;
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
