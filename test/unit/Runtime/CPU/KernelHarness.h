//===- KernelHarness.h - call one CPU kernel from a test --------*- C++ -*-===//
//
// Builds the one-node graph a KernelContext needs, binds test-owned vectors
// as TensorRefs and calls the kernel the CPU table holds for the op, so a
// test states inputs, attributes and the expected output and nothing else.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TEST_UNIT_RUNTIMEKERNELS_KERNELHARNESS_H
#define OOMPLAN_TEST_UNIT_RUNTIMEKERNELS_KERNELHARNESS_H

#include "CPUKernels.h"
#include "oomplan/IR/Graph.h"
#include "oomplan/Runtime/Kernel.h"
#include "gtest/gtest.h"
#include <vector>

namespace oomplan {
namespace test {

template <typename T>
runtime::TensorRef ref(std::vector<T> &Data, ElementType Ty,
                       std::vector<int64_t> Dims) {
  runtime::TensorRef R;
  R.Data = Data.data();
  R.Type = Ty;
  R.Dims.assign(Dims.begin(), Dims.end());
  return R;
}

/// One node of OpType at an opset, with attributes added by the setters.
class KernelHarness {
public:
  explicit KernelHarness(llvm::StringRef OpType, int64_t Opset = 17,
                         unsigned Threads = 2)
      : Pool(Threads) {
    G.Opsets.push_back({"", Opset});
    G.Nodes.emplace_back();
    G.Nodes[0].OpType = OpType.str();
    G.Nodes[0].Name = "n";
  }
  KernelHarness &setInt(llvm::StringRef Name, int64_t V) {
    Attribute A;
    A.Name = Name.str();
    A.Kind = AttrKind::Int;
    A.I = V;
    G.Nodes[0].Attrs.push_back(A);
    return *this;
  }
  KernelHarness &setFloat(llvm::StringRef Name, double V) {
    Attribute A;
    A.Name = Name.str();
    A.Kind = AttrKind::Float;
    A.F = V;
    G.Nodes[0].Attrs.push_back(A);
    return *this;
  }
  KernelHarness &setString(llvm::StringRef Name, llvm::StringRef V) {
    Attribute A;
    A.Name = Name.str();
    A.Kind = AttrKind::String;
    A.S = V.str();
    G.Nodes[0].Attrs.push_back(A);
    return *this;
  }
  KernelHarness &setInts(llvm::StringRef Name, std::vector<int64_t> V) {
    Attribute A;
    A.Name = Name.str();
    A.Kind = AttrKind::Ints;
    A.Ints = std::move(V);
    G.Nodes[0].Attrs.push_back(A);
    return *this;
  }

  /// Runs the op's CPU kernel; an error if it has none or it fails.
  llvm::Error run(std::vector<runtime::TensorRef> Ins,
                  std::vector<runtime::TensorRef> Outs) {
    const ops::OpInfo *Info = ops::lookupOp(G.Nodes[0].OpType);
    if (!Info)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no record");
    const auto &K = runtime::cpu::cpuKernels().get(ops::opCode(*Info));
    if (!K)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "no CPU kernel");
    runtime::KernelContext C{G, G.Nodes[0], Ins, Outs, nullptr, 0, Pool};
    C.Workspace = Workspace.empty() ? nullptr : Workspace.data();
    C.WorkspaceBytes = Workspace.size();
    if (DataDependent) {
      // Data-dependent outputs: the planned bound on entry, as the runtime.
      ActualDims.assign(Outs.size(), {});
      for (size_t I = 0; I < Outs.size(); ++I)
        ActualDims[I] = Outs[I].Dims;
      C.ActualDims = ActualDims.data();
    }
    return K->Run(C);
  }

  Graph G;
  runtime::ThreadPool Pool;
  /// Scratch handed to the kernel as its planned workspace.
  std::vector<char> Workspace;
  /// Set to pass ActualDims; the kernel's produced dims land there.
  bool DataDependent = false;
  std::vector<llvm::SmallVector<int64_t, 6>> ActualDims;
};

} // namespace test
} // namespace oomplan

#endif
