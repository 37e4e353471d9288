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
struct Added {
  std::string Name;
  BackendOpener Open;
  BackendTable Table;
};
std::vector<Added> &added() {
  static std::vector<Added> List;
  return List;
}
} // namespace

void runtime::addBackend(llvm::StringRef Name, BackendOpener Open,
                         BackendTable Table) {
  for (Added &A : added())
    if (A.Name == Name) {
      A.Open = Open;
      A.Table = Table;
      return;
    }
  added().push_back({Name.str(), Open, Table});
}

std::string runtime::backendNames() {
  std::string S = "cpu";
  for (const Added &A : added())
    S += ", " + A.Name;
  return S;
}

llvm::Expected<Backend> runtime::openBackend(llvm::StringRef Name) {
  if (Name == "cpu")
    return Backend{&cpu::cpuKernels(), &hostDevice()};
  for (const Added &A : added())
    if (A.Name == Name)
      return A.Open();
  return makeUnsupportedError(
      "backend '" + Name +
      "' is not available in this build (backends: " + backendNames() + ")");
}

llvm::Expected<const KernelTable *>
runtime::backendKernels(llvm::StringRef Name) {
  for (const Added &A : added())
    if (A.Name == Name && A.Table)
      return &A.Table();
  auto B = openBackend(Name);
  if (!B)
    return B.takeError();
  return B->Kernels;
}
