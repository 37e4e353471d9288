//===- FusionConvDepthwise.cpp - 1x1 Conv, act, depthwise 3x3, act -------===//
//
// A pointwise convolution (1x1, stride 1, no padding, one group), an
// optional Relu or constant Clip, the depthwise 3x3 convolution that is its
// only reader (group = channels, stride 1 or 2, padding 0 or 1), an
// optional Relu or Clip: MobileNet's and PP-OCR's expansion and the
// depthwise conv after it, one OomplanConvDepthwise. The expanded tensor is
// the block's largest (MobileNetV2's first, 96 x 112 x 112 floats an
// image) and is written once and read once; the fused kernel makes it a
// band of rows at a time in a buffer that stays in L2, so it never exists
// and the plan's peak drops with it. The kernel's buffers are sized by the
// input's width, so the width must be a known constant of at most
// ConvDepthwiseMaxWidth; patterns that reach anything else stay two
// OomplanConvs.
//
//===----------------------------------------------------------------------===//
#include "FusionMatch.h"
#include "oomplan/IR/FusedOps.h"
#include <algorithm>
#include <limits>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::fusion;

namespace {

/// The constant dims of V, or an empty vector.
std::vector<int64_t> constantDims(const MatchContext &C, ValueId V) {
  const ValueShape *S = C.shape(V);
  std::vector<int64_t> Out;
  if (!S)
    return Out;
  for (const SymExpr &D : S->Dims) {
    std::optional<int64_t> K = D.getConstant();
    if (!K)
      return {};
    Out.push_back(*K);
  }
  return Out;
}

/// True when the ints attribute Name is absent or every element is V.
bool allOr(const Node &N, StringRef Name, int64_t V) {
  std::optional<std::vector<int64_t>> A = N.getInts(Name);
  return !A || llvm::all_of(*A, [&](int64_t X) { return X == V; });
}

/// A Relu or constant Clip that is V's only reader: the activation's name,
/// bounds and output; else Name empty and Out V.
struct Act {
  std::string Name;
  double Lo = -std::numeric_limits<double>::infinity();
  double Hi = std::numeric_limits<double>::infinity();
  ValueId Out = NoId;
  NodeId Node = NoId;
};
Act activationAfter(const MatchContext &C, ValueId V) {
  Act A;
  A.Out = V;
  if (NodeId R = soleUser(C, V, "Relu"); R != NoId) {
    A.Name = "Relu";
    A.Node = R;
  } else if (NodeId Cl = soleUser(C, V, "Clip"); Cl != NoId) {
    auto B = clipBounds(C, C.G.Nodes[Cl]);
    if (!B)
      return A;
    A.Name = "Clip";
    std::tie(A.Lo, A.Hi) = *B;
    A.Node = Cl;
  }
  if (A.Node != NoId)
    A.Out = C.G.Nodes[A.Node].Outputs[0];
  return A;
}

void matchAt(MatchContext &C, NodeId P) {
  const Graph &G = C.G;
  const Node &Pw = G.Nodes[P];
  if (Pw.Outputs.size() != 1 || Pw.Inputs.size() < 2 ||
      !C.isFloat32(Pw.input(0)) || !C.isFloat32(Pw.Outputs[0]))
    return;
  // Pointwise: W1 [M, C, 1, 1], one group, unit strides, no padding.
  std::vector<int64_t> W1 = constantDims(C, Pw.input(1));
  const ValueShape *XS = C.shape(Pw.input(0));
  if (W1.size() != 4 || W1[2] != 1 || W1[3] != 1 || !XS ||
      XS->Dims.size() != 4 || Pw.getInt("group", 1) != 1 ||
      !allOr(Pw, "strides", 1) || !allOr(Pw, "pads", 0) ||
      !allOr(Pw, "dilations", 1) ||
      Pw.getString("auto_pad", "NOTSET") != "NOTSET")
    return;
  std::optional<int64_t> Width = XS->Dims[3].getConstant();
  if (!Width || *Width < 1 || *Width > fused::ConvDepthwiseMaxWidth)
    return;
  Act A1 = activationAfter(C, Pw.Outputs[0]);
  NodeId D = soleUser(C, A1.Out, "Conv");
  if (D == NoId)
    return;
  const Node &Dw = G.Nodes[D];
  const int64_t M = W1[0];
  std::vector<int64_t> W2 = constantDims(C, Dw.input(1));
  const std::vector<int64_t> S =
      Dw.getInts("strides").value_or(std::vector<int64_t>{1, 1});
  std::optional<std::vector<int64_t>> Pads = Dw.getInts("pads");
  if (Dw.input(0) != A1.Out || Dw.Outputs.size() != 1 ||
      !C.isFloat32(Dw.Outputs[0]) || W2 != std::vector<int64_t>{M, 1, 3, 3} ||
      Dw.getInt("group", 1) != M || !allOr(Dw, "dilations", 1) ||
      Dw.getString("auto_pad", "NOTSET") != "NOTSET" || S.size() != 2 ||
      S[0] != S[1] || (S[0] != 1 && S[0] != 2))
    return;
  if (Pads && (Pads->size() != 4 ||
               llvm::any_of(*Pads, [](int64_t P) { return P < 0 || P > 1; })))
    return;
  // At stride 1 on maps narrower than 32 the two kernels unfused measured
  // faster (the depthwise one sums whole small planes at once, the
  // pointwise one shares its packed weights among the images), and the
  // expanded tensor is small; at stride 2, and on wider maps, the fused
  // kernel measured faster (MobileNetV2 at batch 8: 112 and 56 wide 20-30%).
  if (S[0] == 1 && *Width < 32)
    return;
  for (const Node *N : {&Pw, &Dw}) // biases: one value per channel
    if (N->input(2) != NoId &&
        constantDims(C, N->input(2)) != std::vector<int64_t>{M})
      return;
  Act A2 = activationAfter(C, Dw.Outputs[0]);
  Rewrite R;
  R.Removed = {P, D};
  for (NodeId N : {A1.Node, A2.Node})
    if (N != NoId)
      R.Removed.push_back(N);
  R.Sink = *std::max_element(R.Removed.begin(), R.Removed.end());
  R.Fused.Name = Dw.Name;
  R.Fused.OpType = fused::ConvDepthwiseOp.str();
  auto Name = [&](ValueId V) {
    return V == NoId ? std::string() : G.Values[V].Name;
  };
  R.Fused.Inputs = {Name(Pw.input(0)), Name(Pw.input(1)), Name(Pw.input(2)),
                    Name(Dw.input(1)), Name(Dw.input(2))};
  while (R.Fused.Inputs.back().empty())
    R.Fused.Inputs.pop_back();
  R.Fused.Outputs = {Name(A2.Out)};
  R.Fused.Attrs = Dw.Attrs;
  auto AddAct = [&](const Act &A, StringRef Prefix) {
    R.Fused.Attrs.push_back(stringAttr((Prefix + "activation").str(), A.Name));
    if (A.Name == "Clip") {
      R.Fused.Attrs.push_back(
          floatAttr((Prefix + "activation_min").str(), A.Lo));
      R.Fused.Attrs.push_back(
          floatAttr((Prefix + "activation_max").str(), A.Hi));
    }
  };
  AddAct(A2, "");
  AddAct(A1, "pointwise_");
  if (C.commit(std::move(R)))
    ++C.Stats.ConvDepthwise;
}

} // namespace

void fusion::matchConvDepthwise(MatchContext &C) {
  for (NodeId N = 0; N < C.G.Nodes.size(); ++N)
    if (C.G.Nodes[N].OpType == "Conv" && !C.claimed(N))
      matchAt(C, N);
}
