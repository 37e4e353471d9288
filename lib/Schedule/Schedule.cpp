//===- Schedule.cpp - the default schedule of a graph ---------------------===//
//
// Step I runs node I of the graph (already in a topological order). Constant
// nodes keep a step, so step numbers equal node numbers in every listing, but
// their outputs are resident constants rather than activations.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/Schedule.h"
#include "oomplan/IR/OpTable.h"

using namespace oomplan;

llvm::StringRef oomplan::tensorKindName(TensorKind K) {
  switch (K) {
  case TensorKind::Weight:
    return "weight";
  case TensorKind::Constant:
    return "constant";
  case TensorKind::GraphInput:
    return "input";
  case TensorKind::GraphOutput:
    return "output";
  case TensorKind::Activation:
    return "activation";
  case TensorKind::Gradient:
    return "gradient";
  case TensorKind::OptimizerState:
    return "optimizer-state";
  }
  return "?";
}

// Dropout is a view only in inference: with a training_mode input that is a
// constant true (training-mode exports) it computes a new tensor and a mask.
static bool dropoutIsTraining(const Graph &G, const Node &N) {
  if (N.getInt("is_test", 1) == 0) // opset < 7
    return true;
  ValueId Mode = N.input(2);
  if (Mode == NoId)
    return false;
  const Value &V = G.Values[Mode];
  std::shared_ptr<const TensorData> D = V.Data;
  if (!D && V.Kind == ValueKind::NodeOutput &&
      G.Nodes[V.Producer].OpType == "Constant")
    if (const Attribute *A = G.Nodes[V.Producer].attr("value"))
      D = A->T;
  // Unknown at planning time: assume training, the larger of the two.
  return !D || D->Ints.empty() || D->Ints[0] != 0;
}

// Both read the op table's aliasing column (IR/OpTable.h).
bool oomplan::isViewOp(const Graph &G, const Node &N) {
  const ops::OpInfo *Op = ops::lookupOp(N.OpType);
  if (!Op)
    return false;
  switch (Op->Alias) {
  case ops::AliasClass::View:
    return true;
  case ops::AliasClass::ViewInInference: // Dropout's inputs say which
    return !dropoutIsTraining(G, N);
  default:
    return false;
  }
}

bool oomplan::isElementwiseOp(llvm::StringRef OpType) {
  const ops::OpInfo *Op = ops::lookupOp(OpType);
  return Op && Op->Alias == ops::AliasClass::InPlace;
}

Schedule oomplan::makeDefaultSchedule(const Graph &G,
                                      llvm::ArrayRef<uint64_t> ValueBytes) {
  Schedule S;
  S.Tensors.resize(G.Values.size());
  for (ValueId Id = 0; Id < G.Values.size(); ++Id) {
    const Value &V = G.Values[Id];
    ScheduleTensor &T = S.Tensors[Id];
    T.Name = V.Name;
    T.Value = Id;
    T.SizeBytes = ValueBytes[Id];
    T.IsGraphOutput = V.IsGraphOutput;
    if (V.Kind == ValueKind::Weight)
      T.Kind = TensorKind::Weight;
    else if (V.Kind == ValueKind::GraphInput)
      T.Kind = TensorKind::GraphInput;
    else if (G.Nodes[V.Producer].OpType == "Constant")
      T.Kind = TensorKind::Constant;
    else if (V.IsGraphOutput)
      T.Kind = TensorKind::GraphOutput;
    else
      T.Kind = TensorKind::Activation;
  }
  S.Steps.reserve(G.Nodes.size());
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    const Node &Nd = G.Nodes[N];
    Step St;
    St.Node = N;
    St.Op = Nd.OpType;
    for (ValueId In : Nd.Inputs)
      if (In != NoId)
        St.Reads.push_back(In);
    // A guarded node reads its conditions after its inputs (executors decide
    // from them whether it runs): liveness keeps them until it does, and a
    // reorder keeps it after them.
    for (const Guard &Gd : Nd.Guards)
      St.Reads.push_back(Gd.Cond);
    for (ValueId Out : Nd.Outputs)
      if (Out != NoId)
        St.Writes.push_back(Out);
    if (!St.Reads.empty() && !St.Writes.empty() && Nd.input(0) != NoId &&
        Nd.Outputs[0] != NoId && isViewOp(G, Nd))
      St.ViewOf = 0;
    // Liveness reuses a dying read's buffer only at equal size, and the
    // verifier allows the permission only then: a broadcast whose output is
    // larger than every input (Or of [3,1,5,6] and [1,4,1,6]) has none.
    St.MayWriteInPlace =
        isElementwiseOp(Nd.OpType) && St.ViewOf < 0 && !St.Writes.empty() &&
        llvm::any_of(St.Reads, [&](TensorId R) {
          return S.Tensors[R].SizeBytes == S.Tensors[St.Writes[0]].SizeBytes;
        });
    // An op that may overwrite one named input only (OpInfo::InPlaceInput):
    // its index among the reads, which leave omitted inputs out.
    const ops::OpInfo *Op = ops::lookupOp(Nd.OpType);
    if (St.MayWriteInPlace && Op && Op->InPlaceInput >= 0) {
      ValueId Named = Nd.input(Op->InPlaceInput);
      auto It = llvm::find(St.Reads, Named);
      if (Named == NoId ||
          S.Tensors[Named].SizeBytes != S.Tensors[St.Writes[0]].SizeBytes)
        St.MayWriteInPlace = false;
      else
        St.InPlaceRead = static_cast<int>(It - St.Reads.begin());
    }
    S.Steps.push_back(std::move(St));
  }
  return S;
}
