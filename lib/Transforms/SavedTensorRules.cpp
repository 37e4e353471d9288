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
