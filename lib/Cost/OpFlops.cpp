//===- OpFlops.cpp - floating-point operations of one node ----------------===//
//
// FLOPs of one forward run of a node from its concrete dims, as its record's
// cost column in the op table (IR/OpTable.h) says. Products count a multiply
// and an add (2 per multiply-accumulate); everything else counts a small
// number of operations per output (or input, for reductions) element. Data
// movement ops (Transpose, Gather, Concat, ...) count 0: the roofline's bytes
// term prices them. An op without a record counts 1 per output element.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Cost/CostModel.h"
#include "oomplan/IR/FusedOps.h"
#include "oomplan/IR/OpTable.h"
#include <algorithm>

using namespace oomplan;

ConcreteDims
oomplan::evaluateDims(const Graph &G, const ShapeInfo &Shapes,
                      llvm::ArrayRef<std::optional<int64_t>> Bindings) {
  ConcreteDims Out(G.Values.size());
  for (ValueId V = 0; V < G.Values.size() && V < Shapes.Values.size(); ++V) {
    const ValueShape &VS = Shapes.Values[V];
    if (!VS.Known)
      continue;
    std::vector<int64_t> D;
    bool Ok = true;
    for (const SymExpr &E : VS.Dims) {
      auto X = E.evaluate(Bindings, Shapes.SymbolNames);
      if (!X) {
        // Dims that do not evaluate (unbound symbol, overflow) leave the
        // value without dims: its FLOPs are unknown, and planning the sizes
        // reports the same error to the user.
        llvm::consumeError(X.takeError());
        Ok = false;
        break;
      }
      D.push_back(*X);
    }
    if (Ok)
      Out[V] = std::move(D);
  }
  return Out;
}

static double elements(const ConcreteDims &Dims, ValueId V) {
  if (V == NoId || V >= Dims.size())
    return 0;
  double N = 1;
  for (int64_t D : Dims[V])
    N *= static_cast<double>(D);
  return N;
}

bool oomplan::isComputeIntensiveOp(llvm::StringRef OpType) {
  const ops::OpInfo *Op = ops::lookupOp(OpType);
  return Op && Op->Cost.ComputeIntensive;
}

static double matmulFlops(const Graph &G, const ConcreteDims &Dims,
                          const Node &N) {
  ValueId A = N.input(0), Out = N.Outputs.empty() ? NoId : N.Outputs[0];
  if (A == NoId || A >= Dims.size() || Dims[A].empty())
    return 0;
  const std::vector<int64_t> &AD = Dims[A];
  double K = static_cast<double>(AD.back());
  if (N.OpType == "Gemm" && N.getInt("transA", 0) && AD.size() == 2)
    K = static_cast<double>(AD[0]);
  (void)G;
  return 2 * elements(Dims, Out) * K;
}

// Conv: each output element is a dot product over Cin/group * kernel.
static double convFlops(const ConcreteDims &Dims, const Node &N) {
  ValueId W = N.input(1), Out = N.Outputs.empty() ? NoId : N.Outputs[0];
  if (W == NoId || W >= Dims.size() || Dims[W].size() < 2)
    return 0;
  double PerOut = 1;
  for (size_t I = 1; I < Dims[W].size(); ++I)
    PerOut *= static_cast<double>(Dims[W][I]);
  if (N.OpType == "ConvTranspose") // W is [Cin, Cout/group, k...]
    return 2 * elements(Dims, N.input(0)) * PerOut;
  if (N.OpType == fused::ConvDepthwiseOp) {
    // W is the pointwise [M, C, 1, 1] over every input position, then the
    // depthwise W2 [M, 1, k...] over the output.
    ValueId W2 = N.input(3);
    if (W2 == NoId || W2 >= Dims.size() || Dims[W2].size() < 2)
      return 0;
    double Window = 1;
    for (size_t I = 2; I < Dims[W2].size(); ++I)
      Window *= static_cast<double>(Dims[W2][I]);
    return 2 * elements(Dims, N.input(0)) * static_cast<double>(Dims[W][0]) +
           2 * elements(Dims, Out) * Window;
  }
  return 2 * elements(Dims, Out) * PerOut;
}

// Attention's query rows times, per row, the keys it attends to times
// (2 * head size + 2 * value width + 5: the two dot products and the
// softmax). OomplanAttention: Q [..., Sq, D], V [..., Sk, Dv], every key.
// GroupQueryAttention: output [B, S, Hq * D], present_key [B, Hkv, T, D];
// row s of S new tokens after a past of T - S attends to T - S + s + 1
// keys, T - S + (S + 1) / 2 on average, at most local_window_size.
static double attentionFlops(const ConcreteDims &Dims, const Node &N) {
  ValueId Q = N.input(0), Out = N.Outputs.empty() ? NoId : N.Outputs[0];
  auto DimsOf = [&](ValueId V) -> const std::vector<int64_t> * {
    return V != NoId && V < Dims.size() && !Dims[V].empty() ? &Dims[V]
                                                            : nullptr;
  };
  if (N.OpType == "GroupQueryAttention") {
    const std::vector<int64_t> *Cache =
        DimsOf(N.Outputs.size() > 1 ? N.Outputs[1] : NoId);
    if (!Cache || Cache->size() != 4 || !DimsOf(Out) ||
        DimsOf(Out)->size() != 3)
      return elements(Dims, Out);
    const double D = double((*Cache)[3]), T = double((*Cache)[2]);
    const double S = double((*DimsOf(Out))[1]);
    const double Rows = D > 0 ? elements(Dims, Out) / D : 0;
    double Keys = std::max(1.0, T - S + (S + 1) / 2);
    const int64_t Window = N.getInt("local_window_size", -1);
    if (Window > 0)
      Keys = std::min(Keys, double(Window));
    return Rows * Keys * (4 * D + 5);
  }
  const std::vector<int64_t> *QD = DimsOf(Q), *VD = DimsOf(N.input(2)),
                             *OD = DimsOf(Out);
  if (!QD || !VD || !OD || VD->size() < 2)
    return elements(Dims, Out);
  const double D = double(QD->back()), Dv = double(OD->back());
  const double Sk = double((*VD)[VD->size() - 2]);
  const double Rows = Dv > 0 ? elements(Dims, Out) / Dv : 0;
  return Rows * Sk * (2 * D + 2 * Dv + 5);
}

double oomplan::nodeFlops(const Graph &G, const ConcreteDims &Dims, NodeId Id) {
  const Node &N = G.Nodes[Id];
  ValueId Out = N.Outputs.empty() ? NoId : N.Outputs[0];
  const ops::OpInfo *Op = ops::lookupOp(N.OpType);
  if (!Op)
    return elements(Dims, Out);
  double PerElement = Op->Cost.PerElement;
  switch (Op->Cost.Flops) {
  case ops::FlopsClass::MatMul:
    return matmulFlops(G, Dims, N);
  case ops::FlopsClass::Conv:
    return convFlops(Dims, N);
  case ops::FlopsClass::PerInputElement:
    return elements(Dims, N.input(0)) * PerElement;
  case ops::FlopsClass::PoolWindow: {
    double K = 1;
    if (auto KS = N.getInts("kernel_shape"))
      for (int64_t D : *KS)
        K *= static_cast<double>(D);
    return elements(Dims, Out) * K;
  }
  case ops::FlopsClass::Attention:
    return attentionFlops(Dims, N);
  case ops::FlopsClass::PerOutputElement:
  case ops::FlopsClass::Undecided: // rejected by the op-table unit test
    break;
  }
  return elements(Dims, Out) * PerElement;
}
