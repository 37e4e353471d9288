//===- SavedTensorRules.cpp - training's reading of the op table ----------===//
//
// The rows themselves are the saved-tensor column of the op table
// (lib/IR/OpTable.cpp; docs/training.md prints them in prose). Here only the
// two decisions that are not rows: an op whose record says Unknown, or that
// has no record, keeps all its inputs (the transform warns), because keeping
// too much wastes budget while keeping too little is an out-of-memory the
// user was told would not happen.
//
//===----------------------------------------------------------------------===//
#include "SavedTensorRules.h"
#include "oomplan/Support/CheckedMath.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::training;

namespace {
const SavedRule Fallback = {ops::GradClass::Rule, AllInputs, AllInputs, 0, 0,
                            AuxKind::None,        0};

bool decided(const ops::OpInfo &Op) {
  return Op.Grad.Class == ops::GradClass::Rule ||
         Op.Grad.Class == ops::GradClass::NotDifferentiable;
}
} // namespace

const SavedRule *training::findSavedRule(llvm::StringRef OpType) {
  const ops::OpInfo *Op = ops::lookupOp(OpType);
  return Op && decided(*Op) ? &Op->Grad : nullptr;
}

const SavedRule &training::fallbackSavedRule() { return Fallback; }

unsigned training::numSavedRules() {
  unsigned N = 0;
  for (const ops::OpInfo &Op : ops::allOps())
    N += decided(Op);
  return N;
}

// Measured (torch 1.13, 2 threads, conv2d backward alone): for kernels of
// 16x16 and 32x32 oneDNN's weight-gradient path allocates, next to the
// weight's reorder, one buffer of min(batch, threads) x (4 x the weight +
// one input sample): 76,701,952 bytes for ViT-B/32's 768x3x32x32 patch
// embedding at batch 2 (weight 9,437,184 bytes), half of it at batch 1, the
// same at batch 4 as at 2; kernels of 14x14 and smaller make only the
// reorders. Counted as 8 x the weight + the input, the figure for two
// threads, never less than it at one.
uint64_t training::largeKernelConvScratch(const Node &N,
                                          const ShapeInfo &Shapes,
                                          uint64_t InBytes, uint64_t WBytes) {
  if (N.OpType != "Conv" || N.input(1) == NoId)
    return 0;
  std::optional<std::vector<int64_t>> K = N.getInts("kernel_shape");
  if (!K) {
    const ValueShape &W = Shapes.Values[N.input(1)];
    K.emplace();
    for (size_t A = 2; A < W.Dims.size(); ++A)
      K->push_back(W.Dims[A].getConstant().value_or(0));
  }
  int64_t Area = 1;
  for (int64_t D : *K)
    Area = D > 0 && Area <= (int64_t(1) << 40) ? Area * D : 0;
  // Measured too: a depthwise conv with a 7x7 (or larger) kernel on an
  // input in channels-last layout, which is what ConvNeXt's LayerNorm over
  // permuted channels leaves, allocates 256 x the weight in its backward
  // (19,267,584 bytes for 384 channels, whatever the batch and size); on a
  // contiguous input it makes only the reorders. The layout is not in the
  // graph, so it is counted for every such conv.
  const ValueShape &W = Shapes.Values[N.input(1)];
  bool Depthwise = N.getInt("group", 1) > 1 && W.Dims.size() > 1 &&
                   W.Dims[1].getConstant() == 1;
  if (Depthwise && Area >= 49)
    return saturatingMul(256, WBytes);
  if (K->empty() || Area < 256)
    return 0;
  return saturatingAdd(saturatingAdd(WBytes, saturatingMul(8, WBytes)),
                       InBytes);
}

static std::optional<int64_t> constDim(const ShapeInfo &Shapes, ValueId V,
                                       size_t Axis) {
  if (V == NoId || V >= Shapes.Values.size())
    return std::nullopt;
  const ValueShape &S = Shapes.Values[V];
  if (!S.Known || Axis >= S.Dims.size())
    return std::nullopt;
  std::optional<int64_t> D = S.Dims[Axis].getConstant();
  return D && *D > 0 ? D : std::nullopt;
}

// Measured with saved_tensors_hooks on torch 1.13 (nn.LSTM, nn.GRU, nn.RNN
// of 1 and 2 layers, uni- and bidirectional): per direction and time step,
// an LSTM keeps its gates (4H, the sigmoid/tanh results) and cx, tanh(cy)
// and hx (3H); a GRU its hidden gates (3H) and four H-sized tensors; a
// tanh RNN its hidden state (H): 7, 7 and 1 times N x H per step, N x T
// steps in all, exactly up to a boundary step. The input projection
// (linear_ih over the whole sequence) keeps X; on a batch_first input X is
// a transposed view there and each direction keeps its own contiguous copy,
// of which the graph's Transpose output is one.
RecurrentSaved training::recurrentSaved(const Node &N, const ShapeInfo &Shapes,
                                        uint64_t XElems, uint64_t XBytes,
                                        llvm::StringRef XProducer,
                                        const SymExpr *XElemsFormula) {
  RecurrentSaved R;
  unsigned PerStep = N.OpType == "RNN" ? 1 : 7;
  int64_t Dirs = N.getString("direction", "forward") == "bidirectional" ? 2 : 1;
  Dirs = constDim(Shapes, N.input(1), 0).value_or(Dirs);
  unsigned Gates = N.OpType == "LSTM" ? 4 : N.OpType == "GRU" ? 3 : 1;
  // T x N: X is [T, N, I] (or [N, T, I]); I is W's last dim. Unknown I
  // counts every element of X as a step (too many, never too few).
  int64_t I = constDim(Shapes, N.input(1), 2).value_or(1);
  // H: the attribute, else R's last dim, W's gate rows, Y's last dim; with
  // none of them, X's input size (and a warning: it may be too small).
  int64_t H = N.getInt("hidden_size", 0);
  if (H <= 0)
    H = constDim(Shapes, N.input(2), 2).value_or(0);
  if (H <= 0)
    H = constDim(Shapes, N.input(1), 1).value_or(0) / Gates;
  if (H <= 0 && !N.Outputs.empty() && N.Outputs[0] != NoId)
    H = constDim(Shapes, N.Outputs[0], 3).value_or(0);
  if (H <= 0) {
    R.HiddenKnown = false;
    H = constDim(Shapes, N.input(0), 2).value_or(1);
  }
  uint64_t Steps = XElems / uint64_t(I);
  uint64_t ElemBytes = XElems ? (XBytes + XElems - 1) / XElems : 4;
  R.StateBytes = saturatingMul(
      saturatingMul(saturatingMul(PerStep, uint64_t(Dirs)), Steps),
      saturatingMul(uint64_t(H), ElemBytes));
  R.Directions = unsigned(Dirs);
  R.StepOutputBytes =
      saturatingMul(Steps, saturatingMul(uint64_t(H), ElemBytes));
  R.GateBytes =
      saturatingMul(saturatingMul(saturatingMul(Gates, uint64_t(Dirs)), Steps),
                    saturatingMul(uint64_t(H), ElemBytes));
  if (XProducer == "Transpose" && Dirs > 1)
    R.InputCopyBytes = saturatingMul(uint64_t(Dirs - 1), XBytes);
  // The same products over X's elements as a formula: the time steps and
  // the batch are symbols, H, I, the directions and the element size are
  // not.
  SymExpr StepsF = XElemsFormula
                       ? SymExpr::floorDiv(*XElemsFormula, SymExpr::constant(I))
                       : SymExpr::constant(static_cast<int64_t>(Steps));
  auto Times = [&](uint64_t K) {
    return StepsF * SymExpr::constant(static_cast<int64_t>(K));
  };
  R.StateFormula = Times(PerStep * uint64_t(Dirs) * uint64_t(H) * ElemBytes);
  R.StepOutputFormula = Times(uint64_t(H) * ElemBytes);
  R.GateFormula = Times(Gates * uint64_t(Dirs) * uint64_t(H) * ElemBytes);
  R.InputCopyFormula =
      R.InputCopyBytes
          ? (XElemsFormula
                 ? *XElemsFormula * SymExpr::constant(static_cast<int64_t>(
                                        (Dirs - 1) * ElemBytes))
                 : SymExpr::constant(static_cast<int64_t>(R.InputCopyBytes)))
          : SymExpr::constant(0);
  return R;
}

// Measured (torch 1.13, 2 threads, conv3d backward alone, 3x3x3 and 3x1x1
// kernels, 32 to 512 channels): on an input of depth 1 or 2 under a kernel
// of depth 3, oneDNN's fast path is not taken and the weight gradient
// allocates an im2col buffer of a sample (Cin/group x kernel x output
// positions) and, from batch 2 up, 8 x the weight (4 per thread at two
// threads; 4 x at one): 60,162,304 bytes for 256 channels at [2, 256, 2, 8,
// 8] (8 x 7,077,888 + one 3,538,944 im2col), 228,262,144 for 512 at [2, 512,
// 1, 4, 4] (8 x 28,311,552 + two of 884,736), against one weight-sized
// reorder at depth 3 or more. A 5x3x3 kernel on
// depth 4 stays on the fast path, so depth < kernel depth over-counts some
// shapes; never the other way.
uint64_t
training::shallowConv3DScratch(const Node &N, const ShapeInfo &Shapes,
                               llvm::ArrayRef<std::optional<int64_t>> Bindings,
                               uint64_t WBytes, uint64_t OutBytes,
                               unsigned OutElemBytes) {
  if (N.OpType != "Conv" || N.input(0) == NoId || N.input(1) == NoId ||
      N.Outputs.empty() || N.Outputs[0] == NoId)
    return 0;
  const ValueShape &X = Shapes.Values[N.input(0)];
  const ValueShape &W = Shapes.Values[N.input(1)];
  if (!X.Known || X.Dims.size() != 5 || W.Dims.size() != 5)
    return 0;
  auto At = [&](const SymExpr &E) -> std::optional<int64_t> {
    auto V = E.evaluate(Bindings, Shapes.SymbolNames);
    if (!V) {
      llvm::consumeError(V.takeError());
      return std::nullopt;
    }
    return *V;
  };
  std::optional<int64_t> KD = constDim(Shapes, N.input(1), 2);
  if (auto K = N.getInts("kernel_shape"); K && K->size() == 3)
    KD = (*K)[0];
  std::optional<int64_t> Depth = At(X.Dims[2]);
  if (!KD || (Depth && *Depth >= *KD))
    return 0;
  std::optional<int64_t> Batch = At(X.Dims[0]);
  std::optional<int64_t> Cout = constDim(Shapes, N.input(1), 0);
  // im2col of one sample: (WBytes / Cout) per output position of a channel,
  // PerSample / (Cout x element size) positions. Unknown output channels
  // count as 1, the largest im2col can be.
  uint64_t E = std::max(1u, OutElemBytes);
  uint64_t C = Cout ? uint64_t(*Cout) : 1;
  uint64_t PerSample =
      Batch && *Batch > 0 ? OutBytes / uint64_t(*Batch) : OutBytes;
  uint64_t Positions = (PerSample / C + E - 1) / E;
  uint64_t Col = saturatingMul(WBytes / C, Positions);
  // From batch 2 up each of the two threads may hold its own im2col (seen
  // at [2, 512, 1, 4, 4]: 8 x the weight + two buffers; one elsewhere).
  bool Many = !Batch || *Batch >= 2;
  return Many ? saturatingAdd(saturatingMul(2, Col), saturatingMul(8, WBytes))
              : Col;
}
