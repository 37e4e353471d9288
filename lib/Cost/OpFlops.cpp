//===- OpFlops.cpp - floating-point operations of one node ----------------===//
//
// FLOPs of one forward run of a node from its concrete dims. Products count
// a multiply and an add (2 per multiply-accumulate); everything else counts
// a small number of operations per output (or input, for reductions)
// element. Data movement ops (Transpose, Gather, Concat, ...) count 0: the
// roofline's bytes term prices them.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Cost/CostModel.h"
#include "llvm/ADT/StringSwitch.h"

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
  return llvm::StringSwitch<bool>(OpType)
      .Cases("MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum", true)
      .Cases("MatMulInteger", "QLinearMatMul", "QLinearConv", true)
      .Default(false);
}

// Operations per output element of non-product ops.
static double perElement(llvm::StringRef Op) {
  return llvm::StringSwitch<double>(Op)
      .Cases("Softmax", "LogSoftmax", 5)
      .Cases("LayerNormalization", "GroupNormalization",
             "InstanceNormalization", 8)
      .Case("BatchNormalization", 4)
      .Cases("Erf", "Tanh", "Exp", "Log", "Sigmoid", 4)
      .Cases("Gelu", "Softplus", "Mish", "Pow", "Sqrt", 4)
      .Cases("Transpose", "Reshape", "Gather", "Concat", "Slice", 0)
      .Cases("Expand", "Tile", "Shape", "Constant", "Identity", 0)
      .Cases("Squeeze", "Unsqueeze", "Flatten", "Split", "Cast", 0)
      .Default(1);
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
  return 2 * elements(Dims, Out) * PerOut;
}

double oomplan::nodeFlops(const Graph &G, const ConcreteDims &Dims, NodeId Id) {
  const Node &N = G.Nodes[Id];
  llvm::StringRef Op = N.OpType;
  ValueId Out = N.Outputs.empty() ? NoId : N.Outputs[0];
  if (Op == "MatMul" || Op == "Gemm" || Op == "MatMulInteger")
    return matmulFlops(G, Dims, N);
  if (Op == "Conv" || Op == "ConvTranspose")
    return convFlops(Dims, N);
  if (Op.startswith("Reduce") || Op == "GlobalAveragePool" ||
      Op == "GlobalMaxPool" || Op == "ArgMax" || Op == "ArgMin")
    return elements(Dims, N.input(0));
  if (Op == "MaxPool" || Op == "AveragePool") {
    double K = 1;
    if (auto KS = N.getInts("kernel_shape"))
      for (int64_t D : *KS)
        K *= static_cast<double>(D);
    return elements(Dims, Out) * K;
  }
  return elements(Dims, Out) * perElement(Op);
}
