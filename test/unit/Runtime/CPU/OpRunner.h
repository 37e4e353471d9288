//===- OpRunner.h - call one CPU kernel, with its workspace -----*- C++ -*-===//
//
// Builds the one-node graph a KernelContext needs, binds test-owned vectors
// as TensorRefs, asks the kernel's WorkspaceFn for its scratch size and
// hands it that many bytes (as the plan would), then calls the kernel. A
// test states inputs, attributes and the expected output, nothing else.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TEST_UNIT_RUNTIMEKERNELS2_OPRUNNER_H
#define OOMPLAN_TEST_UNIT_RUNTIMEKERNELS2_OPRUNNER_H

#include "CPUKernels.h"
#include "oomplan/IR/Graph.h"
#include "oomplan/Runtime/Kernel.h"
#include "gtest/gtest.h"
#include <algorithm>
#include <memory>
#include <vector>

namespace oomplan {
namespace test {

template <typename T>
runtime::TensorRef tensor(std::vector<T> &Data, ElementType Ty,
                          std::vector<int64_t> Dims) {
  runtime::TensorRef R;
  R.Data = Data.empty() ? nullptr : Data.data();
  R.Type = Ty;
  R.Dims.assign(Dims.begin(), Dims.end());
  return R;
}
inline runtime::TensorRef f32(std::vector<float> &D, std::vector<int64_t> Dm) {
  return tensor(D, ElementType::Float, std::move(Dm));
}
inline runtime::TensorRef i64(std::vector<int64_t> &D,
                              std::vector<int64_t> Dm) {
  return tensor(D, ElementType::Int64, std::move(Dm));
}

class OpRunner {
public:
  explicit OpRunner(llvm::StringRef OpType, int64_t Opset = 17,
                    unsigned Threads = 2)
      : Pool(Threads) {
    G.Opsets.push_back({"", Opset});
    G.Nodes.emplace_back();
    G.Nodes[0].OpType = OpType.str();
    G.Nodes[0].Name = "n";
  }
  OpRunner &i(llvm::StringRef Name, int64_t V) {
    return add(Name, AttrKind::Int, [&](Attribute &A) { A.I = V; });
  }
  OpRunner &f(llvm::StringRef Name, double V) {
    return add(Name, AttrKind::Float, [&](Attribute &A) { A.F = V; });
  }
  OpRunner &s(llvm::StringRef Name, llvm::StringRef V) {
    return add(Name, AttrKind::String, [&](Attribute &A) { A.S = V.str(); });
  }
  OpRunner &ints(llvm::StringRef Name, std::vector<int64_t> V) {
    return add(Name, AttrKind::Ints, [&](Attribute &A) { A.Ints = V; });
  }
  OpRunner &floats(llvm::StringRef Name, std::vector<double> V) {
    return add(Name, AttrKind::Floats, [&](Attribute &A) { A.Floats = V; });
  }
  OpRunner &tensorAttr(llvm::StringRef Name, TensorData D) {
    return add(Name, AttrKind::Tensor, [&](Attribute &A) {
      A.T = std::make_shared<TensorData>(std::move(D));
    });
  }

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
    WorkspaceBytes = K->Workspace ? K->Workspace(G.Nodes[0], Ins, Outs) : 0;
    if (Roomy >= 2 && K->RoomierWorkspace)
      WorkspaceBytes =
          std::max(WorkspaceBytes, K->RoomierWorkspace(G.Nodes[0], Ins, Outs));
    else if (Roomy >= 1 && K->RoomyWorkspace)
      WorkspaceBytes =
          std::max(WorkspaceBytes, K->RoomyWorkspace(G.Nodes[0], Ins, Outs));
    Scratch.assign(WorkspaceBytes / 8 + 1, 0);
    runtime::KernelContext C{G,
                             G.Nodes[0],
                             Ins,
                             Outs,
                             WorkspaceBytes ? Scratch.data() : nullptr,
                             WorkspaceBytes,
                             Pool};
    return K->Run(C);
  }

  Graph G;
  runtime::ThreadPool Pool;
  uint64_t WorkspaceBytes = 0;
  /// Give the kernel its roomy workspace (1: Kernel::RoomyWorkspace) or
  /// its roomier one (2: Kernel::RoomierWorkspace, else the roomy one)
  /// where it has one, as a plan with room does.
  unsigned Roomy = 0;

private:
  template <typename F>
  OpRunner &add(llvm::StringRef Name, AttrKind Kind, F &&Set) {
    Attribute A;
    A.Name = Name.str();
    A.Kind = Kind;
    Set(A);
    G.Nodes[0].Attrs.push_back(std::move(A));
    return *this;
  }
  std::vector<uint64_t> Scratch;
};

/// Expects the run to succeed.
#define RUN_OK(R, ...)                                                         \
  do {                                                                         \
    llvm::Error RunErr_ = (R).run(__VA_ARGS__);                                \
    ASSERT_FALSE(bool(RunErr_)) << llvm::toString(std::move(RunErr_));         \
  } while (0)

inline void expectNear(const std::vector<float> &Got,
                       const std::vector<float> &Want, float Tol = 1e-5f) {
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Got.size(); ++I)
    EXPECT_NEAR(Got[I], Want[I], Tol) << "at " << I;
}

} // namespace test
} // namespace oomplan

#endif
