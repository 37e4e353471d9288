//===- NodeCall.h - one node run by the CPU kernel, for thread tests -*- C++
//-*-===//
//
// The thread-math tests (ThreadMathTest.cpp, LowBitThreadTest.cpp) run a
// CUDA kernel's threads on the host against the CPU kernel of the same
// node: NodeCall builds the node, runs the CPU kernel into its outputs'
// bytes, and keeps the context whose refs the CUDA argument builders read
// (host pointers).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TEST_UNIT_RUNTIMECUDA_NODECALL_H
#define OOMPLAN_TEST_UNIT_RUNTIMECUDA_NODECALL_H

#include "oomplan/IR/Graph.h"
#include "oomplan/IR/OpTable.h"
#include "oomplan/Runtime/Backend.h"
#include "oomplan/Runtime/Kernel.h"
#include "gtest/gtest.h"
#include <cstring>
#include <memory>
#include <random>
#include <vector>

namespace oomplan {
namespace runtime {
namespace unit {

// Attributes of a node built here.
inline Attribute intAttr(const char *Name, int64_t V) {
  Attribute A;
  A.Name = Name;
  A.Kind = AttrKind::Int;
  A.I = V;
  return A;
}
inline Attribute intsAttr(const char *Name, std::vector<int64_t> V) {
  Attribute A;
  A.Name = Name;
  A.Kind = AttrKind::Ints;
  A.Ints = std::move(V);
  return A;
}
inline Attribute floatAttr(const char *Name, double V) {
  Attribute A;
  A.Name = Name;
  A.Kind = AttrKind::Float;
  A.F = V;
  return A;
}
inline Attribute stringAttr(const char *Name, const char *V) {
  Attribute A;
  A.Name = Name;
  A.Kind = AttrKind::String;
  A.S = V;
  return A;
}

// A node's operand: type, dims, bytes (empty: omitted).
struct Operand {
  ElementType Type = ElementType::Undefined;
  std::vector<int64_t> Dims;
  std::vector<char> Bytes;
};
template <typename T>
Operand operandOf(ElementType Type, std::vector<int64_t> Dims,
                  std::vector<T> Values) {
  Operand Q{Type, std::move(Dims), {}};
  Q.Bytes.resize(Values.size() * sizeof(T));
  if (!Values.empty())
    std::memcpy(Q.Bytes.data(), Values.data(), Q.Bytes.size());
  return Q;
}
template <typename T>
std::vector<T> randomOf(std::mt19937 &Rng, size_t N, int Lo, int Hi) {
  std::uniform_int_distribution<int> U(Lo, Hi);
  std::vector<T> V(N);
  for (T &X : V)
    X = T(U(Rng));
  return V;
}

// One node run by the CPU kernel: Want[I] holds output I's bytes, C the
// context (host pointers) the CUDA kernel's argument builder reads.
struct NodeCall {
  Graph G;
  std::vector<TensorRef> In, Out;
  std::vector<std::vector<char>> Wants;
  std::vector<char> &Want; ///< Output 0's bytes.
  std::vector<double> Workspace;
  ThreadPool Pool{1};
  std::unique_ptr<KernelContext> C;
  NodeCall(const char *Op, std::vector<Operand> &Ins, ElementType YType,
           const std::vector<int64_t> &YDims, std::vector<Attribute> Attrs)
      : NodeCall(Op, Ins, {{YType, YDims, {}}}, std::move(Attrs)) {}
  // Outs: each output's type and dims (bytes unused).
  NodeCall(const char *Op, std::vector<Operand> &Ins,
           const std::vector<Operand> &Outs, std::vector<Attribute> Attrs)
      : Wants(Outs.size()), Want(Wants[0]) {
    G.Opsets.push_back({"", 13});
    G.Nodes.emplace_back();
    G.Nodes[0].OpType = Op;
    G.Nodes[0].Attrs = std::move(Attrs);
    In.resize(Ins.size());
    for (size_t I = 0; I < Ins.size(); ++I) {
      In[I].Type = Ins[I].Type;
      In[I].Dims.assign(Ins[I].Dims.begin(), Ins[I].Dims.end());
      In[I].Data = Ins[I].Bytes.empty() ? nullptr : Ins[I].Bytes.data();
    }
    Out.resize(Outs.size());
    for (size_t I = 0; I < Outs.size(); ++I) {
      Out[I].Type = Outs[I].Type;
      Out[I].Dims.assign(Outs[I].Dims.begin(), Outs[I].Dims.end());
      Wants[I].assign((Out[I].numElements() * elementBits(Out[I].Type) + 7) / 8,
                      char(0x33));
      Out[I].Data = Wants[I].data();
    }
  }
  // Runs the CPU kernel into Wants; false (with the error printed) if it
  // fails.
  bool runCPU() {
    auto CPU = backendKernels("cpu");
    if (!CPU)
      return false;
    const Kernel &K =
        *(*CPU)->get(ops::opCode(*ops::lookupOp(G.Nodes[0].OpType)));
    Workspace.assign(
        (K.Workspace ? K.Workspace(G.Nodes[0], In, Out) : 0) / 8 + 1, 0.0);
    C = std::make_unique<KernelContext>(KernelContext{
        G, G.Nodes[0], In, Out, Workspace.data(), Workspace.size() * 8, Pool});
    llvm::Error E = K.Run(*C);
    if (!E)
      return true;
    ADD_FAILURE() << llvm::toString(std::move(E));
    return false;
  }
};

} // namespace unit
} // namespace runtime
} // namespace oomplan

#endif
