//===- Backend.cpp - the backends the runtime can run ---------------------===//
//
// The CPU backend always; others (CUDA) as their programs add them.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/Backend.h"
#include "CPU/CPUKernels.h"
#include "oomplan/Support/Error.h"
#include <vector>

using namespace oomplan;
using namespace oomplan::runtime;

namespace {
std::vector<std::pair<std::string, BackendOpener>> &added() {
  static std::vector<std::pair<std::string, BackendOpener>> List;
  return List;
}
} // namespace

void runtime::addBackend(llvm::StringRef Name, BackendOpener Open) {
  for (auto &[N, O] : added())
    if (N == Name) {
      O = Open;
      return;
    }
  added().emplace_back(Name.str(), Open);
}

std::string runtime::backendNames() {
  std::string S = "cpu";
  for (auto &[N, O] : added())
    S += ", " + N;
  return S;
}

llvm::Expected<Backend> runtime::openBackend(llvm::StringRef Name) {
  if (Name == "cpu")
    return Backend{&cpu::cpuKernels(), &hostDevice()};
  for (auto &[N, Open] : added())
    if (N == Name)
      return Open();
  return makeUnsupportedError(
      "backend '" + Name +
      "' is not available in this build (backends: " + backendNames() + ")");
}

llvm::Expected<const KernelTable *>
runtime::backendKernels(llvm::StringRef Name) {
  auto B = openBackend(Name);
  if (!B)
    return B.takeError();
  return B->Kernels;
}
