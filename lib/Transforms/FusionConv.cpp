//===- FusionConv.cpp - Conv + residual Add + Relu/Clip -> OomplanConv ----===//
//
// Conv(X, W[, B]), then an Add of a residual of exactly the output's shape,
// then Relu, Clip with constant bounds (ReLU6) or an activation named by
// evaluation (FusionActivation.cpp: HardSwish, SiLU, GELU...): ResNet's
// bottleneck end, MobileNet's and PP-OCR's blocks. The residual is input 3 of
// the fused node, the one input its output may overwrite (the op table's
// InPlaceInput): when the residual dies at the fused step, liveness gives
// output and residual one buffer and the kernel accumulates into it (GEMM beta
// = 1), so the conv's own output, a tensor as large as the residual, never
// exists. This is what ONNX Runtime's Conv+Add fusion does on the CPU.
//
//===----------------------------------------------------------------------===//
#include "FusionMatch.h"
#include "oomplan/IR/FusedOps.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <cmath>
#include <limits>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::fusion;

// The one reader of V when it is an unclaimed node of type Op reading V once.
NodeId fusion::soleUser(const MatchContext &C, ValueId V, StringRef Op) {
  const Value &Val = C.G.Values[V];
  if (Val.Users.size() != 1 || !C.onlyUsedBy(V, Val.Users[0]))
    return NoId;
  NodeId U = Val.Users[0];
  return !C.claimed(U) && C.G.Nodes[U].OpType == Op ? U : NoId;
}

// Clip's bounds: inputs 1 and 2 from opset 11, attributes before.
std::optional<std::pair<double, double>>
fusion::clipBounds(const MatchContext &C, const Node &Cl) {
  double Inf = std::numeric_limits<double>::infinity();
  if (C.G.defaultOpset() < 11)
    return std::make_pair(Cl.getFloat("min", -Inf), Cl.getFloat("max", Inf));
  double Lo = -Inf, Hi = Inf;
  if (Cl.input(1) != NoId) {
    std::optional<double> V = C.scalarConstant(Cl.input(1));
    if (!V)
      return std::nullopt;
    Lo = *V;
  }
  if (Cl.input(2) != NoId) {
    std::optional<double> V = C.scalarConstant(Cl.input(2));
    if (!V)
      return std::nullopt;
    Hi = *V;
  }
  return std::make_pair(Lo, Hi);
}

namespace {
// An inference BatchNormalization of the conv's output: one output, per
// channel float32 parameters of M elements.
bool batchNormOf(const MatchContext &C, const Node &Bn, int64_t M) {
  if (Bn.Outputs.size() != 1 || Bn.Inputs.size() != 5 ||
      Bn.getInt("training_mode", 0) != 0)
    return false;
  for (unsigned I = 1; I < 5; ++I) {
    const ValueShape *S = C.shape(Bn.input(I));
    if (!S || S->Type != ElementType::Float || S->Dims.size() != 1 ||
        S->Dims[0].getConstant() != std::optional<int64_t>(M))
      return false;
  }
  return true;
}

// y * A + B: the constant scalar Mul, Add, Sub and Div after the conv
// (PP-OCRv4's learnable affine blocks), composed.
struct ScalarAffine {
  double A = 1, B = 0;
  bool Any = false;
};

// Absorbs the next node when it is one of those; returns its output.
ValueId absorbScalar(MatchContext &C, ValueId Y, ScalarAffine &Aff,
                     std::vector<NodeId> &Nodes) {
  for (StringRef Op : {"Mul", "Add", "Sub", "Div"}) {
    NodeId U = soleUser(C, Y, Op);
    if (U == NoId)
      continue;
    const Node &Un = C.G.Nodes[U];
    if (Un.Inputs.size() != 2 || !C.sameDims(Un.Outputs[0], Y))
      return NoId;
    const bool First = Un.input(0) == Y;
    std::optional<double> K = C.scalarConstant(Un.input(First ? 1 : 0));
    if (!K || Un.input(0) == Un.input(1))
      return NoId;
    if (Op == "Mul") {
      Aff.A *= *K;
      Aff.B *= *K;
    } else if (Op == "Add") {
      Aff.B += *K;
    } else if (Op == "Sub" && First) {
      Aff.B -= *K;
    } else if (Op == "Div" && First && *K != 0) {
      Aff.A /= *K;
      Aff.B /= *K;
    } else {
      return NoId; // c - y, c / y: not affine in y
    }
    Aff.Any = true;
    Nodes.push_back(U);
    return Un.Outputs[0];
  }
  return NoId;
}

void matchAt(MatchContext &C, NodeId N) {
  const Graph &G = C.G;
  const Node &Cv = G.Nodes[N];
  if (Cv.Outputs.size() != 1 || !C.isFloat32(Cv.Outputs[0]) ||
      !C.isFloat32(Cv.input(0)) || Cv.Inputs.size() < 2)
    return;
  std::vector<NodeId> Nodes = {N};
  ValueId Y = Cv.Outputs[0], Residual = NoId;
  // The per-channel affine (fused::ConvAffineFeature): a BatchNormalization,
  // then constant scalar arithmetic. It comes before the residual in the
  // pattern, and the kernel adds a residual by accumulating the conv into
  // it, so a conv that absorbs an affine takes no residual.
  NodeId Bn = NoId;
  ScalarAffine Aff;
  const ValueShape *WS = C.shape(Cv.input(1));
  if (C.supported(fused::ConvAffineFeature) && WS && !WS->Dims.empty() &&
      WS->Dims[0].getConstant()) {
    if (NodeId B = soleUser(C, Y, "BatchNormalization");
        B != NoId && batchNormOf(C, G.Nodes[B], *WS->Dims[0].getConstant())) {
      Bn = B;
      Nodes.push_back(B);
      Y = G.Nodes[B].Outputs[0];
    }
    for (int K = 0; K < 4; ++K) {
      ValueId Next = absorbScalar(C, Y, Aff, Nodes);
      if (Next == NoId)
        break;
      Y = Next;
    }
  }
  NodeId ResAdd = Bn == NoId && !Aff.Any ? soleUser(C, Y, "Add") : NoId;
  if (NodeId A = ResAdd; A != NoId) {
    const Node &An = G.Nodes[A];
    ValueId R = An.input(0) == Y ? An.input(1) : An.input(0);
    if (R != Y && C.isFloat32(R) && C.sameDims(R, Y) &&
        C.sameDims(An.Outputs[0], Y)) {
      Nodes.push_back(A);
      Residual = R;
      Y = An.Outputs[0];
    }
  }
  std::string Act;
  double Lo = -std::numeric_limits<double>::infinity();
  double Hi = std::numeric_limits<double>::infinity();
  if (NodeId Rl = soleUser(C, Y, "Relu"); Rl != NoId) {
    Nodes.push_back(Rl);
    Act = "Relu";
    Y = G.Nodes[Rl].Outputs[0];
  } else if (NodeId Cl = soleUser(C, Y, "Clip"); Cl != NoId) {
    if (auto B = clipBounds(C, G.Nodes[Cl])) {
      Nodes.push_back(Cl);
      Act = "Clip";
      std::tie(Lo, Hi) = *B;
      Y = G.Nodes[Cl].Outputs[0];
    }
  }
  if (Act.empty()) {
    // Any other activation the fused kernels implement, named by
    // evaluating the elementwise region after the conv (HardSwish as
    // x * Clip(x + 3, 0, 6) / 6, SiLU, GELU...).
    if (std::optional<ActivationMatch> M = matchActivation(C, Y)) {
      llvm::append_range(Nodes, M->Nodes);
      Act = activationName(M->Act).str();
      Y = G.Nodes[M->Sink].Outputs[0];
    }
  }
  if (Nodes.size() == 1)
    return;
  Rewrite R;
  R.Removed = Nodes;
  R.Sink = *std::max_element(Nodes.begin(), Nodes.end());
  R.Fused.Name = Cv.Name;
  R.Fused.OpType = fused::ConvOp.str();
  auto Name = [&](ValueId V) {
    return V == NoId ? std::string() : G.Values[V].Name;
  };
  R.Fused.Inputs = {Name(Cv.input(0)), Name(Cv.input(1)), Name(Cv.input(2)),
                    Name(Residual)};
  if (Bn != NoId)
    for (unsigned I = 1; I < 5; ++I)
      R.Fused.Inputs.push_back(Name(G.Nodes[Bn].input(I)));
  while (!R.Fused.Inputs.empty() && R.Fused.Inputs.back().empty())
    R.Fused.Inputs.pop_back();
  R.Fused.Outputs = {Name(Y)};
  R.Fused.Attrs = Cv.Attrs;
  R.Fused.Attrs.push_back(stringAttr("activation", Act));
  if (Bn != NoId)
    R.Fused.Attrs.push_back(
        floatAttr("epsilon", G.Nodes[Bn].getFloat("epsilon", 1e-5)));
  if (Aff.Any) {
    R.Fused.Attrs.push_back(floatAttr("post_scale", Aff.A));
    R.Fused.Attrs.push_back(floatAttr("post_shift", Aff.B));
  }
  if (Act == "Clip") {
    R.Fused.Attrs.push_back(floatAttr("activation_min", Lo));
    R.Fused.Attrs.push_back(floatAttr("activation_max", Hi));
  }
  if (C.commit(std::move(R))) {
    ++C.Stats.Conv;
    if (Residual != NoId)
      ++C.Stats.ConvResidual;
  }
}
} // namespace

void fusion::matchConv(MatchContext &C) {
  for (NodeId N = 0; N < C.G.Nodes.size(); ++N)
    if (C.G.Nodes[N].OpType == "Conv" && !C.claimed(N))
      matchAt(C, N);
}
