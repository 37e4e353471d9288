//===- BatchCoupling.cpp - ops that mix samples across the batch ----------===//
//
// An axis carries the batch when its dim differs between the whole batch's
// bindings and one micro-batch's: that is exactly what splitting changes,
// whatever reshapes moved the batch to (seq-first models keep it at axis 1,
// attention merges it with the heads). Reshapes and elementwise ops never
// mix samples; the ops below combine elements along an axis, and mix when
// that axis carries the batch.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/BatchCoupling.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

using namespace oomplan;

namespace {

class Coupling {
public:
  Coupling(const Graph &G, const ShapeInfo &S,
           llvm::ArrayRef<std::optional<int64_t>> Whole,
           llvm::ArrayRef<std::optional<int64_t>> Pass)
      : G(G), S(S), Whole(Whole), Pass(Pass) {}

  std::optional<std::string> check(NodeId Id);

private:
  /// Axes of value V whose dim carries the batch.
  llvm::SmallVector<bool, 6> batchAxes(ValueId V) const;
  bool carries(ValueId V, int64_t Axis) const;
  /// Axes attribute, or constant input I, normalized to [0, Rank); an empty
  /// list when neither is given.
  std::optional<std::vector<int64_t>> axes(const Node &N, size_t I,
                                           size_t Rank) const;
  std::string why(NodeId Id, int64_t Axis, llvm::StringRef What) const;

  const Graph &G;
  const ShapeInfo &S;
  llvm::ArrayRef<std::optional<int64_t>> Whole, Pass;
};

llvm::SmallVector<bool, 6> Coupling::batchAxes(ValueId V) const {
  llvm::SmallVector<bool, 6> Out;
  if (V == NoId || !S.Values[V].Known)
    return Out;
  for (const SymExpr &D : S.Values[V].Dims) {
    auto A = D.evaluate(Whole, S.SymbolNames);
    auto B = D.evaluate(Pass, S.SymbolNames);
    bool Differs = A && B && *A != *B;
    if (!A)
      llvm::consumeError(A.takeError());
    if (!B)
      llvm::consumeError(B.takeError());
    Out.push_back(Differs);
  }
  return Out;
}

bool Coupling::carries(ValueId V, int64_t Axis) const {
  llvm::SmallVector<bool, 6> B = batchAxes(V);
  return Axis >= 0 && size_t(Axis) < B.size() && B[Axis];
}

std::optional<std::vector<int64_t>> Coupling::axes(const Node &N, size_t I,
                                                   size_t Rank) const {
  std::vector<int64_t> Raw;
  if (std::optional<std::vector<int64_t>> A = N.getInts("axes")) {
    Raw = *A;
  } else if (N.input(I) != NoId) {
    const ValueShape &V = S.Values[N.input(I)];
    if (!V.IntValues)
      return std::nullopt; // axes from data: cannot tell
    for (const SymExpr &E : *V.IntValues) {
      std::optional<int64_t> C = E.getConstant();
      if (!C)
        return std::nullopt;
      Raw.push_back(*C);
    }
  }
  for (int64_t &A : Raw)
    if (A < 0)
      A += int64_t(Rank);
  return Raw;
}

std::string Coupling::why(NodeId Id, int64_t Axis, llvm::StringRef What) const {
  return G.describeNode(Id) + " " + What.str() + " along axis " +
         std::to_string(Axis) + ", which carries the batch";
}

std::optional<std::string> Coupling::check(NodeId Id) {
  const Node &N = G.Nodes[Id];
  if (!N.Domain.empty() && N.Domain != "ai.onnx")
    return std::nullopt;
  if (N.Inputs.empty() || N.input(0) == NoId || !S.Values[N.input(0)].Known)
    return std::nullopt;
  llvm::StringRef Op = N.OpType;
  ValueId X = N.input(0);
  size_t Rank = S.Values[X].Dims.size();
  // Input 0's batch axes, evaluated once for the checks below.
  llvm::SmallVector<bool, 6> XAxes = batchAxes(X);
  auto CarriedX = [&](int64_t A) {
    return A >= 0 && size_t(A) < XAxes.size() && XAxes[A];
  };
  auto AnyCarried = [&](llvm::ArrayRef<int64_t> Axes,
                        llvm::StringRef What) -> std::optional<std::string> {
    for (int64_t A : Axes)
      if (CarriedX(A))
        return why(Id, A, What);
    return std::nullopt;
  };
  auto All = [&] {
    std::vector<int64_t> Axes;
    for (size_t A = 0; A < Rank; ++A)
      Axes.push_back(int64_t(A));
    return Axes;
  };
  auto From = [&](int64_t First) {
    std::vector<int64_t> Axes;
    for (int64_t A = First < 0 ? First + int64_t(Rank) : First;
         A < int64_t(Rank); ++A)
      Axes.push_back(A);
    return Axes;
  };
  auto One = [&](int64_t A) {
    return std::vector<int64_t>{A < 0 ? A + int64_t(Rank) : A};
  };

  if (Op.startswith("Reduce")) {
    // Opset 13 (ReduceSum) and 18 (the rest) take the axes as input 1; none
    // means all, unless noop_with_empty_axes.
    std::optional<std::vector<int64_t>> A = axes(N, 1, Rank);
    if (!A)
      return std::nullopt;
    if (A->empty() && N.getInt("noop_with_empty_axes", 0) == 0)
      *A = All();
    return AnyCarried(*A, "reduces");
  }
  if (Op == "ArgMax" || Op == "ArgMin")
    return AnyCarried(One(N.getInt("axis", 0)), "reduces");
  if (Op == "Softmax" || Op == "LogSoftmax" || Op == "Hardmax") {
    // Before opset 13 the input is flattened from axis on.
    bool Old = G.defaultOpset() < 13;
    int64_t A = N.getInt("axis", Old ? 1 : -1);
    return AnyCarried(Old ? From(A) : One(A), "normalizes");
  }
  if (Op == "LayerNormalization")
    return AnyCarried(From(N.getInt("axis", -1)), "normalizes");
  if (Op == "MeanVarianceNormalization") {
    std::optional<std::vector<int64_t>> A = axes(N, 1, Rank);
    return AnyCarried(A && !A->empty() ? *A : std::vector<int64_t>{0, 2, 3},
                      "normalizes");
  }
  if (Op == "LpNormalization")
    return AnyCarried(One(N.getInt("axis", -1)), "normalizes");
  if (Op == "BatchNormalization" &&
      (N.getInt("training_mode", 0) != 0 ||
       (G.defaultOpset() < 7 && N.getInt("is_test", 0) == 0)))
    return AnyCarried(One(0), "takes batch statistics");
  if (Op == "MatMul" && Rank >= 1)
    return AnyCarried(One(-1), "contracts");
  if (Op == "Gemm")
    return AnyCarried(One(N.getInt("transA", 0) ? 0 : 1), "contracts");
  if (Op == "TopK" || Op == "CumSum" || Op == "Gather" ||
      Op == "GatherElements" || Op == "Compress" || Op == "ReverseSequence") {
    int64_t Default = Op == "TopK" ? -1 : 0;
    if (Op == "CumSum") {
      std::optional<std::vector<int64_t>> A = axes(N, 1, Rank);
      if (!A || A->size() != 1)
        return std::nullopt;
      return AnyCarried(*A, "accumulates");
    }
    if (Op == "Compress" && !N.attr("axis"))
      return AnyCarried(All(), "selects");
    if (Op == "ReverseSequence")
      return AnyCarried(One(N.getInt("time_axis", 0)), "reverses");
    return AnyCarried(One(N.getInt("axis", Default)), "selects");
  }
  if (Op == "Tile" && N.input(1) != NoId && S.Values[N.input(1)].IntValues) {
    // Repeating along the batch interleaves the passes' copies differently.
    const std::vector<SymExpr> &R = *S.Values[N.input(1)].IntValues;
    for (size_t A = 0; A < R.size(); ++A)
      if (R[A].getConstant() != 1 && CarriedX(int64_t(A)))
        return why(Id, int64_t(A), "repeats");
    return std::nullopt;
  }
  if (Op == "NonZero" || Op == "Unique" || Op == "NonMaxSuppression")
    return AnyCarried(All(), "selects");
  if (Op == "Slice") {
    // A slice that keeps every sample is no selection (exporters write
    // x[:, 0] as a Slice on every axis).
    ValueId Y = N.Outputs.empty() ? NoId : N.Outputs[0];
    if (Y == NoId || !S.Values[Y].Known)
      return std::nullopt;
    const std::vector<SymExpr> &In = S.Values[X].Dims, &Out = S.Values[Y].Dims;
    for (size_t A = 0; A < In.size() && A < Out.size(); ++A)
      if (CarriedX(int64_t(A)) && In[A] != Out[A])
        return why(Id, int64_t(A), "selects");
    return std::nullopt;
  }
  if (Op == "Concat" && N.Inputs.size() > 1) {
    int64_t A = N.getInt("axis", 0);
    ValueId Y = N.Outputs.empty() ? NoId : N.Outputs[0];
    size_t OutRank = Y == NoId ? 0 : S.Values[Y].Dims.size();
    if (A < 0)
      A += int64_t(OutRank);
    if (Y != NoId && carries(Y, A))
      return why(Id, A, "concatenates");
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string>
oomplan::batchCouplingNode(const Graph &G, const ShapeInfo &Shapes,
                           llvm::ArrayRef<std::optional<int64_t>> Whole,
                           llvm::ArrayRef<std::optional<int64_t>> Pass) {
  Coupling C(G, Shapes, Whole, Pass);
  for (NodeId Id = 0; Id < G.Nodes.size(); ++Id)
    if (!neverRuns(Shapes, Id))
      if (std::optional<std::string> W = C.check(Id))
        return W;
  return std::nullopt;
}
