//===- Backend.cpp - the kernel tables the runtime can run ----------------===//
//
// One name per backend; only the CPU backend exists in this build.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/Backend.h"
#include "CPU/CPUKernels.h"
#include "oomplan/Support/Error.h"

using namespace oomplan;
using namespace oomplan::runtime;

llvm::Expected<const KernelTable *>
runtime::backendKernels(llvm::StringRef Name) {
  if (Name == "cpu")
    return &cpu::cpuKernels();
  return makeUnsupportedError("backend '" + Name +
                              "' is not available in this build (backends: "
                              "cpu)");
}
