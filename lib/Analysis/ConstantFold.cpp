//===- ConstantFold.cpp - contents of small constant subgraphs ------------===//
//
// Training exports are not constant-folded (do_constant_folding=False), so a
// value that a rule needs as a constant arrives as a small subgraph of
// Constants: a Resize's scales as Concat(Constant [1, 1], Constant [2, 2]),
// possibly through Cast, Unsqueeze or arithmetic. After a node's shape rule
// has run, the driver asks foldConstant for the contents of its output 0
// when every input's contents are known; rules then read them through
// RuleContext::constData like a Constant's. Integer contents the value
// propagation computed (ValueShape::IntValues, all constant) count as known
// too, so scales computed from a static shape fold as well. Only a few small
// ops are folded (at most MaxTrackedElements elements): views, Cast, Concat,
// + - * / min max, Neg Abs Floor Ceil Reciprocal Sqrt, and ReduceMin/Max over
// all axes (torchvision's resize computes its output size from the image
// size this way, in float32). Arithmetic is in double, each result rounded
// to the output type as its kernel would (float32 rounds every step).
//
//===----------------------------------------------------------------------===//
#include "ConstantFold.h"
#include "ShapeRules/ShapeRules.h"
#include <algorithm>
#include <cmath>

using namespace oomplan;
using namespace oomplan::shapes;

namespace {
using DataPtr = std::shared_ptr<const TensorData>;

/// Contents as doubles (ints converted), when all present.
std::optional<std::vector<double>> numbers(const TensorData &D) {
  uint64_t N = D.numElements();
  if (D.Floats.size() == N)
    return D.Floats;
  if (D.Ints.size() == N)
    return std::vector<double>(D.Ints.begin(), D.Ints.end());
  return std::nullopt;
}

/// Output contents of type T and dims Dims from doubles.
DataPtr make(ElementType T, std::vector<int64_t> Dims,
             const std::vector<double> &Vals) {
  auto D = std::make_shared<TensorData>();
  D->Type = T;
  D->Dims = std::move(Dims);
  if (isFloatingPoint(T)) {
    D->Floats = Vals;
  } else {
    for (double V : Vals) {
      if (!std::isfinite(V) || std::abs(V) > 9.0e18)
        return nullptr;
      D->Ints.push_back(int64_t(V));
    }
  }
  if (D->numElements() != Vals.size())
    return nullptr;
  return D;
}

/// Row-major index into an input of dims In broadcast to Out.
int64_t sourceIndex(int64_t Flat, llvm::ArrayRef<int64_t> Out,
                    llvm::ArrayRef<int64_t> In) {
  int64_t Index = 0, Stride = 1;
  for (size_t K = Out.size(); K-- > 0;) {
    int64_t Coord = Flat % Out[K];
    Flat /= Out[K];
    if (K + In.size() < Out.size())
      continue;
    int64_t D = In[K + In.size() - Out.size()];
    Index += (D == 1 ? 0 : Coord) * Stride;
    Stride *= D;
  }
  return Index;
}

std::optional<double> arith(llvm::StringRef Op, double A, double B,
                            bool Integer) {
  if (Op == "Min")
    return std::min(A, B);
  if (Op == "Max")
    return std::max(A, B);
  if (Op == "Add")
    return A + B;
  if (Op == "Sub")
    return A - B;
  if (Op == "Mul")
    return A * B;
  if (Op == "Div") {
    if (B == 0)
      return std::nullopt;
    return Integer ? std::trunc(A / B) : A / B;
  }
  return std::nullopt;
}

/// One element of a unary op; std::nullopt when not folded.
std::optional<double> unary(llvm::StringRef Op, double X) {
  if (Op == "Neg")
    return -X;
  if (Op == "Abs")
    return std::abs(X);
  if (Op == "Floor")
    return std::floor(X);
  if (Op == "Ceil")
    return std::ceil(X);
  if (Op == "Reciprocal" && X != 0)
    return 1 / X;
  if (Op == "Sqrt" && X >= 0)
    return std::sqrt(X);
  return std::nullopt;
}

/// The value a kernel of type T would hold: float32 arithmetic rounds
/// every result (the scale of torchvision's resize is 320 * (1 / 320) in
/// float32, and a floor of it must see the same rounding ORT does); types
/// this folder cannot round exactly are not folded.
std::optional<double> roundTo(ElementType T, double X) {
  if (T == ElementType::Float)
    return double(float(X));
  if (T == ElementType::Double || !isFloatingPoint(T))
    return X;
  return std::nullopt;
}

struct Folder {
  const Graph &G;
  const Node &N;
  const ShapeInfo &S;
  std::vector<DataPtr> In; // per input; null when unknown

  ElementType outType() const { return S.Values[N.Outputs[0]].Type; }
  std::optional<std::vector<int64_t>> outDims() const {
    return constantDims(S.Values[N.Outputs[0]].Dims);
  }

  // Same contents, new dims (Identity, Cast, Reshape, Unsqueeze...).
  DataPtr relabel(bool Convert) const {
    std::optional<std::vector<int64_t>> Dims = outDims();
    std::optional<std::vector<double>> V = numbers(*In[0]);
    if (!Dims || !V)
      return nullptr;
    if (Convert && !isFloatingPoint(outType()))
      for (double &X : *V)
        X = std::trunc(X);
    if (Convert)
      for (double &X : *V) {
        std::optional<double> Y = roundTo(outType(), X);
        if (!Y)
          return nullptr;
        X = *Y;
      }
    return make(outType(), std::move(*Dims), *V);
  }

  DataPtr concat() const {
    std::optional<std::vector<int64_t>> Dims = outDims();
    if (!Dims || Dims->size() != 1) // shape-like vectors only
      return nullptr;
    std::vector<double> R;
    for (const DataPtr &D : In) {
      std::optional<std::vector<double>> V = D ? numbers(*D) : std::nullopt;
      if (!V)
        return nullptr;
      R.insert(R.end(), V->begin(), V->end());
    }
    return make(outType(), std::move(*Dims), R);
  }

  DataPtr binary() const {
    std::optional<std::vector<int64_t>> Dims = outDims();
    std::optional<std::vector<double>> A = numbers(*In[0]), B = numbers(*In[1]);
    if (!Dims || !A || !B)
      return nullptr;
    int64_t Count = 1;
    for (int64_t D : *Dims)
      Count *= D;
    std::vector<double> R;
    bool Integer = !isFloatingPoint(outType());
    for (int64_t F = 0; F < Count; ++F) {
      std::optional<double> X =
          arith(N.OpType, (*A)[sourceIndex(F, *Dims, In[0]->Dims)],
                (*B)[sourceIndex(F, *Dims, In[1]->Dims)], Integer);
      if (X)
        X = roundTo(outType(), *X);
      if (!X)
        return nullptr;
      R.push_back(*X);
    }
    return make(outType(), std::move(*Dims), R);
  }

  DataPtr elementwise() const {
    std::optional<std::vector<int64_t>> Dims = outDims();
    std::optional<std::vector<double>> V = numbers(*In[0]);
    if (!Dims || !V)
      return nullptr;
    for (double &X : *V) {
      std::optional<double> Y = unary(N.OpType, X);
      if (Y)
        Y = roundTo(outType(), *Y);
      if (!Y)
        return nullptr;
      X = *Y;
    }
    return make(outType(), std::move(*Dims), *V);
  }

  // ReduceMin/ReduceMax over every axis (no axes given), to a scalar or a
  // tensor of ones: torchvision's min and max of the image size.
  DataPtr reduceAll() const {
    std::optional<std::vector<int64_t>> Dims = outDims();
    std::optional<std::vector<double>> V = numbers(*In[0]);
    if (!Dims || !V || V->empty() || N.attr("axes") || N.Inputs.size() > 1)
      return nullptr;
    double R = N.OpType == "ReduceMin"
                   ? *std::min_element(V->begin(), V->end())
                   : *std::max_element(V->begin(), V->end());
    return make(outType(), std::move(*Dims), {R});
  }
};

/// Contents of V: stored, or computed by value propagation (all constant).
DataPtr contentsOf(ValueId V, const ShapeInfo &S,
                   llvm::ArrayRef<DataPtr> ConstData) {
  if (ConstData[V])
    return ConstData[V];
  const ValueShape &VS = S.Values[V];
  std::optional<std::vector<int64_t>> Dims = constantDims(VS.Dims);
  if (!VS.Known || !VS.IntValues || !Dims)
    return nullptr;
  std::vector<double> Vals;
  for (const SymExpr &E : *VS.IntValues) {
    std::optional<int64_t> C = E.getConstant();
    if (!C)
      return nullptr;
    Vals.push_back(double(*C));
  }
  return make(VS.Type, std::move(*Dims), Vals);
}
} // namespace

DataPtr shapes::foldConstant(const Graph &G, NodeId Id, const ShapeInfo &S,
                             llvm::ArrayRef<DataPtr> ConstData) {
  const Node &N = G.Nodes[Id];
  if (N.Outputs.empty() || N.Outputs[0] == NoId || N.Inputs.empty())
    return nullptr;
  const ValueShape &Out = S.Values[N.Outputs[0]];
  std::optional<int64_t> Count = constantNumElements(Out.Dims);
  if (!Out.Known || !Count || *Count > MaxTrackedElements)
    return nullptr;
  llvm::StringRef Op = N.OpType;
  bool View = Op == "Identity" || Op == "Reshape" || Op == "Unsqueeze" ||
              Op == "Squeeze" || Op == "Flatten";
  bool Binary = Op == "Add" || Op == "Sub" || Op == "Mul" || Op == "Div" ||
                ((Op == "Min" || Op == "Max") && N.Inputs.size() == 2);
  bool Unary = Op == "Neg" || Op == "Abs" || Op == "Floor" || Op == "Ceil" ||
               Op == "Reciprocal" || Op == "Sqrt";
  bool Reduce = Op == "ReduceMin" || Op == "ReduceMax";
  if (!View && !Binary && !Unary && !Reduce && Op != "Cast" && Op != "Concat")
    return nullptr;
  Folder F{G, N, S, {}};
  // Views, Cast, unary ops and reductions need only their data input; the
  // others need all.
  size_t Needed = View || Unary || Reduce || Op == "Cast" ? 1 : N.Inputs.size();
  for (size_t I = 0; I < Needed; ++I) {
    ValueId V = N.Inputs[I];
    DataPtr D = V == NoId ? nullptr : contentsOf(V, S, ConstData);
    if (!D)
      return nullptr;
    F.In.push_back(std::move(D));
  }
  if (View || Op == "Cast")
    return F.relabel(Op == "Cast");
  if (Unary)
    return F.elementwise();
  if (Reduce)
    return F.reduceAll();
  if (Op == "Concat")
    return F.concat();
  return N.Inputs.size() == 2 ? F.binary() : nullptr;
}
