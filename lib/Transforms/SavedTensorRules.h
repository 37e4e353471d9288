//===- SavedTensorRules.h - what each op keeps for backward -----*- C++ -*-===//
//
// Internal to lib/Transforms: training's reading of the op table's saved-
// tensor column (ops::GradRule in IR/OpTable.h, where the rows live with the
// rest of each op's facts). A rule says which inputs can receive a gradient,
// which inputs and outputs the op keeps for its backward step, which small
// auxiliary tensors it keeps that the forward graph does not hold, and
// whether the gradient of an input is a view of the incoming gradient. The
// rows follow PyTorch 1.13's derivatives.yaml, including its conditional
// saving: an operand of a product is kept only when the *other* operand
// needs a gradient (x * 2 keeps nothing; x @ W keeps x for dW).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_TRANSFORMS_SAVEDTENSORRULES_H
#define OOMPLAN_LIB_TRANSFORMS_SAVEDTENSORRULES_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/IR/OpTable.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>

namespace oomplan {
namespace training {

using ops::AllInputs;
using ops::AuxKind;
using ops::bit;
using SavedRule = ops::GradRule;

/// The rule for OpType (default domain): its record's GradRule when the
/// record decides one (Rule, or NotDifferentiable: DiffInputs = 0); null when
/// the op has no record or its record says GradClass::Unknown.
const SavedRule *findSavedRule(llvm::StringRef OpType);

/// The rule used for ops without one: every input differentiable and kept.
const SavedRule &fallbackSavedRule();

/// Number of ops with a decided rule (for docs and tests).
unsigned numSavedRules();

/// Backward temporaries of a Conv with a large kernel (16x16 and up: the
/// patch embeddings of ViT and the like; depthwise 7x7 and up: ConvNeXt)
/// on PyTorch 1.13's CPU kernels, beyond the table's reorders; 0 for any
/// other node. InBytes and WBytes
/// are the bytes of the input and the weight.
uint64_t largeKernelConvScratch(const Node &N, const ShapeInfo &Shapes,
                                uint64_t InBytes, uint64_t WBytes);

/// What a recurrent node (GRU, LSTM, RNN) keeps beyond its inputs on
/// PyTorch 1.13's CPU kernels, which run the recurrence cell by cell.
struct RecurrentSaved {
  /// Every time step's gates and states, for every direction.
  uint64_t StateBytes = 0;
  /// Per-direction contiguous copies of a transposed X (batch_first).
  uint64_t InputCopyBytes = 0;
  /// The gradient of every step's gates (4 for LSTM, 3 for GRU, 1 for RNN
  /// times N x H per step and direction), which the input projection reads.
  uint64_t GateBytes = 0;
  unsigned Directions = 1;
  /// One direction's step outputs, T x N x H.
  uint64_t StepOutputBytes = 0;
  /// False when no attribute or constant dim gave the hidden size; X's
  /// input size stood in for it.
  bool HiddenKnown = true;
  /// The byte counts above as formulas of the symbols (the time steps
  /// follow X's dims), so a report at other bindings stays right.
  SymExpr StateFormula, InputCopyFormula, GateFormula, StepOutputFormula;
};
/// XElems and XBytes: elements and bytes of input 0; XProducer: the op type
/// that writes it. XElemsFormula: XElems as a formula of the symbols (null:
/// the number, and every formula is a constant).
RecurrentSaved recurrentSaved(const Node &N, const ShapeInfo &Shapes,
                              uint64_t XElems, uint64_t XBytes,
                              llvm::StringRef XProducer,
                              const SymExpr *XElemsFormula = nullptr);

/// Conv3d's backward on PyTorch 1.13's CPU kernels when the input is
/// shallower than the kernel (depth below kernel depth): beyond the
/// table's reorders it allocates an im2col buffer of one sample and, when
/// the batch has two samples or more, 4 x the weight per thread. 0 for
/// any other node. Bindings evaluate the depth and the batch; a dim that
/// cannot be evaluated counts as the costly case. OutElemBytes: the size of
/// an output element as held (2 under mixed precision).
uint64_t shallowConv3DScratch(const Node &N, const ShapeInfo &Shapes,
                              llvm::ArrayRef<std::optional<int64_t>> Bindings,
                              uint64_t WBytes, uint64_t OutBytes,
                              unsigned OutElemBytes);

} // namespace training
} // namespace oomplan

#endif
