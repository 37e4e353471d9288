//===- HostShapeSteps.cpp - the shape arithmetic a GPU never runs ---------===//
//
// An exported transformer computes its reshape targets with hundreds of
// tiny steps (Shape, Gather, Unsqueeze, Concat, Cast on a few int64s; bert
// at b8 s128 has 460 of its 1,582 steps so, besides 522 Constants). Their
// values are fixed once the symbols are bound: every input is a small
// constant, a small weight, the dims of a tensor (Shape, Size), or another
// such value. A GPU runtime computes them on the host: ours once before the
// first run (lib/Runtime/HostShapes.cpp, with the same 512-byte limit),
// PyTorch in Python. So they take no time on the device, and the kernel
// floor (DeviceProfile::KernelSeconds) must not be charged for them.
//
// The rule reads only the graph and the bound dims, so it holds for any
// exporter's graph. It runs in node order, which ONNX requires to be
// topological; a node listed before a producer it reads is simply not
// counted as shape arithmetic, which can only make a prediction longer.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Cost/CostModel.h"

using namespace oomplan;

// The executor's limit for a value computed on the host
// (Executor's MaxHostValueBytes).
static constexpr uint64_t MaxHostBytes = 512;

static bool small(const Graph &G, const ConcreteDims &Dims, ValueId V) {
  if (V >= G.Values.size() || V >= Dims.size())
    return false;
  uint64_t Elems = 1;
  for (int64_t D : Dims[V]) {
    if (D < 0 || D > int64_t(MaxHostBytes))
      return false;
    Elems *= uint64_t(D);
    if (Elems > MaxHostBytes)
      return false;
  }
  // A type the file did not declare (inferred later): counted as the
  // widest, 64 bits, which shape values are.
  unsigned Bits = elementBits(G.Values[V].Type);
  return Elems * (Bits ? Bits : 64) <= MaxHostBytes * 8;
}

std::vector<bool> oomplan::hostShapeNodes(const Graph &G,
                                          const ConcreteDims &Dims) {
  std::vector<bool> OnHost(G.Nodes.size(), false);
  std::vector<bool> Known(G.Values.size(), false);
  for (ValueId V : G.Weights)
    if (V < Known.size())
      Known[V] = small(G, Dims, V);
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    const Node &Nd = G.Nodes[N];
    bool DimsOnly = Nd.OpType == "Shape" || Nd.OpType == "Size";
    bool Host = !Nd.Outputs.empty();
    for (ValueId V : Nd.Outputs)
      Host = Host && V != NoId && small(G, Dims, V);
    for (size_t I = 0; Host && I < Nd.Inputs.size(); ++I) {
      ValueId V = Nd.Inputs[I];
      if (V == NoId || (DimsOnly && I == 0))
        continue;
      Host = V < Known.size() && Known[V];
    }
    if (!Host)
      continue;
    OnHost[N] = true;
    for (ValueId V : Nd.Outputs)
      Known[V] = true;
  }
  return OnHost;
}
