//===- SavedTensorRules.h - what each op keeps for backward -----*- C++ -*-===//
//
// Internal to lib/Transforms. One row per ONNX op says which inputs can
// receive a gradient, which inputs and outputs the op keeps for its backward
// step, which small auxiliary tensors it keeps that the forward graph does not
// hold, and whether the gradient of an input is a view of the incoming
// gradient. The rows follow PyTorch 1.13's derivatives.yaml, including its
// conditional saving: an operand of a product is kept only when the *other*
// operand needs a gradient (x * 2 keeps nothing; x @ W keeps x for dW).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_TRANSFORMS_SAVEDTENSORRULES_H
#define OOMPLAN_LIB_TRANSFORMS_SAVEDTENSORRULES_H

#include "llvm/ADT/StringRef.h"
#include <cstdint>

namespace oomplan {
namespace training {

/// Tensors an op keeps that are not values of the forward graph.
enum class AuxKind : uint8_t {
  None,
  DropoutMask,    ///< Mask of the input's size (see DropoutMaskKind).
  BatchNormStats, ///< save_mean and save_invstd: two fp32 per channel.
  NormStats,      ///< LayerNorm mean and rstd: two fp32 per normalized row.
  PoolIndices,    ///< MaxPool argmax: one int64 per output element.
};

/// Bit I stands for input (or output) I.
constexpr uint32_t bit(unsigned I) { return uint32_t(1) << I; }
constexpr uint32_t AllInputs = ~uint32_t(0);

struct SavedRule {
  const char *Op;
  /// Inputs that can receive a gradient.
  uint32_t DiffInputs;
  /// Inputs kept whenever the node runs a backward step.
  uint32_t SaveAlways;
  /// Inputs 0 and 1 kept only when the other of the two needs a gradient
  /// (products: MatMul, Gemm, Conv, Mul; Div's numerator).
  uint32_t SaveIfPartnerGrad;
  /// Outputs kept (ReLU, Softmax, Sigmoid, Tanh, Exp, Sqrt: the result).
  uint32_t SaveOutputs;
  AuxKind Aux;
  /// Inputs whose gradient is the incoming gradient itself (a view, no
  /// bytes) when it has the same size: views, Add, Sub's left operand.
  uint32_t GradViewInputs;
  /// Temporaries of the backward step, in multiples of the bytes of input 0
  /// and of output 0 (measured on PyTorch 1.13's CPU kernels: oneDNN's
  /// convolution backward reorders its input and the incoming gradient;
  /// batch norm's backward makes one input-sized temporary).
  uint8_t ScratchOfInput = 0;
  uint8_t ScratchOfOutput = 0;
};

/// The row for OpType (default domain), or null when the table has none.
const SavedRule *findSavedRule(llvm::StringRef OpType);

/// The row used for ops without one: every input differentiable and kept.
const SavedRule &fallbackSavedRule();

/// Number of rows (for docs and tests).
unsigned numSavedRules();

} // namespace training
} // namespace oomplan

#endif
