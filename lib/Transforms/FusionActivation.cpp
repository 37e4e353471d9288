//===- FusionActivation.cpp - naming an activation by evaluating it -------===//
//
// Exporters spell GELU a dozen ways (x * 0.5 * (1 + erf(x / sqrt 2)) with the
// factors in any order, Div by 1.4142 or Mul by 0.7071, the tanh form with
// Pow or x*x*x), SiLU as x * Sigmoid(x), and so on. Rather than one pattern
// per spelling, the region of elementwise nodes that reads only X and scalar
// constants is grown from X, and each candidate last node's sub-region is
// evaluated on sample points and compared with the activations the fused
// kernel implements. A region that computes something else does not match.
//
//===----------------------------------------------------------------------===//
#include "FusionMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include <cmath>
#include <limits>
#include <map>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::fusion;

StringRef fusion::activationName(Activation A) {
  switch (A) {
  case Activation::None:
    return "";
  case Activation::Relu:
    return "Relu";
  case Activation::Sigmoid:
    return "Sigmoid";
  case Activation::Tanh:
    return "Tanh";
  case Activation::SiLU:
    return "SiLU";
  case Activation::Gelu:
    return "Gelu";
  case Activation::GeluTanh:
    return "GeluTanh";
  case Activation::HardSwish:
    return "HardSwish";
  }
  return "";
}

namespace {
// The ops a region may hold: elementwise, one output, defined on all reals
// at the sample points.
bool regionOp(StringRef Op) {
  return StringSwitch<bool>(Op)
      .Cases("Add", "Sub", "Mul", "Div", "Pow", "Erf", "Tanh", true)
      .Cases("Sigmoid", "Relu", "Sqrt", "Exp", "Neg", "Reciprocal", true)
      .Cases("Clip", "HardSwish", true)
      .Default(false);
}

// Bounded so that a long elementwise chain costs little; GELU's tanh form,
// the longest spelling, has 8 nodes.
constexpr size_t MaxRegion = 12;

double reference(Activation A, double X) {
  switch (A) {
  case Activation::Relu:
    return X > 0 ? X : 0;
  case Activation::Sigmoid:
    return 1 / (1 + std::exp(-X));
  case Activation::Tanh:
    return std::tanh(X);
  case Activation::SiLU:
    return X / (1 + std::exp(-X));
  case Activation::Gelu:
    return 0.5 * X * (1 + std::erf(X / std::sqrt(2.0)));
  case Activation::GeluTanh:
    return 0.5 * X *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (X + 0.044715 * X * X * X)));
  case Activation::HardSwish:
    return X * std::min(std::max(X + 3, 0.0), 6.0) / 6;
  case Activation::None:
    break;
  }
  return X;
}

std::optional<double> applyOp(const Node &Nd, ArrayRef<double> In) {
  StringRef Op = Nd.OpType;
  double A = In[0], B = In.size() > 1 ? In[1] : 0;
  if (Op == "Clip") {
    // Inputs 1 and 2 (opset 11; an absent one is no bound, and reads as
    // NaN here), or the min/max attributes before.
    const double Inf = std::numeric_limits<double>::infinity();
    double Lo = Nd.getFloat("min", -Inf), Hi = Nd.getFloat("max", Inf);
    if (In.size() > 1 && !std::isnan(In[1]))
      Lo = In[1];
    if (In.size() > 2 && !std::isnan(In[2]))
      Hi = In[2];
    return std::min(std::max(A, Lo), Hi);
  }
  if (Op == "Add")
    return A + B;
  if (Op == "Sub")
    return A - B;
  if (Op == "Mul")
    return A * B;
  if (Op == "Div")
    return B == 0 ? std::optional<double>() : A / B;
  if (Op == "Pow")
    return std::pow(A, B);
  if (Op == "Erf")
    return std::erf(A);
  if (Op == "Tanh")
    return std::tanh(A);
  if (Op == "Sigmoid")
    return 1 / (1 + std::exp(-A));
  if (Op == "Relu")
    return A > 0 ? A : 0;
  if (Op == "Sqrt")
    return A < 0 ? std::optional<double>() : std::sqrt(A);
  if (Op == "Exp")
    return std::exp(A);
  if (Op == "Neg")
    return -A;
  if (Op == "Reciprocal")
    return A == 0 ? std::optional<double>() : 1 / A;
  if (Op == "HardSwish")
    return A * std::min(std::max(A + 3, 0.0), 6.0) / 6;
  return std::nullopt;
}

struct Region {
  const MatchContext &C;
  ValueId X;
  std::vector<NodeId> Nodes;        // in graph (topological) order
  std::map<ValueId, NodeId> Inside; // value -> its region producer

  bool regionValue(ValueId V) const { return V == X || Inside.count(V); }

  // A node whose inputs are X, region values or scalar constants.
  bool qualifies(NodeId N) const {
    const Node &Nd = C.G.Nodes[N];
    const size_t MaxInputs = Nd.OpType == "Clip" ? 3 : 2;
    if (C.claimed(N) || !regionOp(Nd.OpType) || Nd.Outputs.size() != 1 ||
        Nd.Inputs.empty() || Nd.Inputs.size() > MaxInputs)
      return false;
    bool Reads = false;
    for (ValueId In : Nd.Inputs) {
      if (In == NoId && Nd.OpType == "Clip")
        continue; // an absent bound
      if (In != NoId && regionValue(In))
        Reads = true;
      else if (!C.scalarConstant(In))
        return false;
    }
    return Reads && C.sameDims(Nd.Outputs[0], X);
  }

  void grow() {
    std::vector<ValueId> Work = {X};
    while (!Work.empty() && Nodes.size() < MaxRegion) {
      ValueId V = Work.back();
      Work.pop_back();
      for (NodeId U : C.G.Values[V].Users) {
        if (llvm::is_contained(Nodes, U) || !qualifies(U))
          continue;
        Nodes.push_back(U);
        Inside[C.G.Nodes[U].Outputs[0]] = U;
        Work.push_back(C.G.Nodes[U].Outputs[0]);
        if (Nodes.size() == MaxRegion)
          break;
      }
    }
    llvm::sort(Nodes);
  }

  // The nodes of the region that Sink depends on.
  std::vector<NodeId> ancestors(NodeId Sink) const {
    std::vector<NodeId> Out, Work = {Sink};
    while (!Work.empty()) {
      NodeId N = Work.back();
      Work.pop_back();
      if (llvm::is_contained(Out, N))
        continue;
      Out.push_back(N);
      for (ValueId In : C.G.Nodes[N].Inputs)
        if (In != NoId && Inside.count(In))
          Work.push_back(Inside.at(In));
    }
    llvm::sort(Out);
    return Out;
  }

  // Only Sink's output may leave the sub-region; X must not either.
  bool closed(ArrayRef<NodeId> Sub, NodeId Sink) const {
    if (!C.usedOnlyWithin(X, Sub))
      return false;
    for (NodeId N : Sub)
      if (N != Sink && !C.usedOnlyWithin(C.G.Nodes[N].Outputs[0], Sub))
        return false;
    return true;
  }

  // Per Clip of the region: whether a sample point reached its lower and
  // its upper bound. A bound no sample reaches cannot be told from no
  // bound (Clip(x, 0, 100) is Relu at every sample), so a region whose
  // finite bounds are not all reached is not named.
  using ClipReach = std::map<NodeId, std::pair<bool, bool>>;

  std::optional<double> evaluate(ArrayRef<NodeId> Sub, NodeId Sink, double XV,
                                 ClipReach &Reach) const {
    std::map<ValueId, double> Val = {{X, XV}};
    for (NodeId N : Sub) {
      const Node &Nd = C.G.Nodes[N];
      SmallVector<double, 2> In;
      for (ValueId V : Nd.Inputs) {
        if (V == NoId) { // Clip's absent bound
          In.push_back(std::numeric_limits<double>::quiet_NaN());
          continue;
        }
        auto It = Val.find(V);
        In.push_back(It != Val.end() ? It->second : *C.scalarConstant(V));
      }
      std::optional<double> R = applyOp(Nd, In);
      if (R && Nd.OpType == "Clip") {
        auto &[Lo, Hi] = Reach[N];
        Lo |= *R > In[0];
        Hi |= *R < In[0];
      }
      if (!R || !std::isfinite(*R))
        return std::nullopt;
      Val[Nd.Outputs[0]] = *R;
    }
    return Val[C.G.Nodes[Sink].Outputs[0]];
  }

  bool allBoundsReached(ArrayRef<NodeId> Sub, const ClipReach &Reach) const {
    for (NodeId N : Sub) {
      const Node &Nd = C.G.Nodes[N];
      if (Nd.OpType != "Clip")
        continue;
      auto It = Reach.find(N);
      bool ReachedLo = It != Reach.end() && It->second.first;
      bool ReachedHi = It != Reach.end() && It->second.second;
      const bool HasLo = Nd.input(1) != NoId || Nd.attr("min");
      const bool HasHi = Nd.input(2) != NoId || Nd.attr("max");
      if ((HasLo && !ReachedLo) || (HasHi && !ReachedHi))
        return false;
    }
    return true;
  }

  Activation identify(ArrayRef<NodeId> Sub, NodeId Sink) const {
    static const double Points[] = {-3.1, -1.7, -0.6, -0.05, 0.0,
                                    0.2,  0.9,  2.3,  4.4};
    for (Activation A : {Activation::Relu, Activation::Sigmoid,
                         Activation::Tanh, Activation::SiLU, Activation::Gelu,
                         Activation::GeluTanh, Activation::HardSwish}) {
      bool All = true;
      ClipReach Reach;
      for (double P : Points) {
        std::optional<double> Got = evaluate(Sub, Sink, P, Reach);
        double Want = reference(A, P);
        // float32 constants (1.4142135381698608 for sqrt 2) differ from
        // the exact ones by ~1e-8; the forms differ by 1e-4 or more.
        if (!Got ||
            std::fabs(*Got - Want) > 1e-6 * std::max(1.0, std::fabs(Want))) {
          All = false;
          break;
        }
      }
      if (All && allBoundsReached(Sub, Reach))
        return A;
    }
    return Activation::None;
  }
};
} // namespace

std::optional<ActivationMatch> fusion::matchActivation(const MatchContext &C,
                                                       ValueId X) {
  if (!C.isFloat32(X) || C.G.Values[X].IsGraphOutput)
    return std::nullopt;
  Region R{C, X, {}, {}};
  R.grow();
  // The latest sink first: the largest region that computes a known
  // activation wins (x * sigmoid(x) rather than its Sigmoid alone).
  for (auto It = R.Nodes.rbegin(); It != R.Nodes.rend(); ++It) {
    std::vector<NodeId> Sub = R.ancestors(*It);
    if (!R.closed(Sub, *It))
      continue;
    Activation A = R.identify(Sub, *It);
    if (A != Activation::None)
      return ActivationMatch{A, *It, std::move(Sub)};
  }
  return std::nullopt;
}
