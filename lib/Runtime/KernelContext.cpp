//===- KernelContext.cpp - kernel errors that name the node -----*- C++ -*-===//
//
// Every kernel error names the node and its op, so a failed run points at
// the model, not at the kernel's source.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/Kernel.h"
#include "oomplan/Support/Error.h"
#include "llvm/Support/ErrorHandling.h"

namespace oomplan {
namespace runtime {

static NodeId nodeIdOf(const Graph &G, const Node &N) {
  return NodeId(&N - G.Nodes.data());
}

llvm::Error KernelContext::unsupported(const llvm::Twine &Msg) const {
  return makeUnsupportedError(G.describeNode(nodeIdOf(G, N)) + ": " + Msg);
}

llvm::Error KernelContext::badInput(const llvm::Twine &Msg) const {
  return makeInputError(G.describeNode(nodeIdOf(G, N)) + ": " + Msg);
}

void setKernel(ops::KernelTable<Kernel> &T, llvm::StringRef OpType, Kernel K,
               llvm::StringRef Backend) {
  const ops::OpInfo *Info = ops::lookupOp(OpType);
  if (!Info)
    llvm::report_fatal_error(Backend + " kernel for '" + OpType +
                             "', which has no operator-table record");
  T.set(ops::opCode(*Info), std::move(K));
}

} // namespace runtime
} // namespace oomplan
