//===- SavedTensorRules.cpp - the saved-tensor table ----------------------===//
//
// THE table of what each op keeps for its backward step (docs/training.md
// prints it in prose). Each row names PyTorch 1.13's autograd formula it
// follows, because the training estimate is checked against PyTorch's
// measured peaks: a row that keeps too little is an out-of-memory the user
// was told would not happen, one that keeps too much wastes their budget.
//
// Ops that compute shapes, indices or masks (Shape, Equal, Range, ...) have
// DiffInputs = 0: nothing flows back through them. Ops absent from the table
// use fallbackSavedRule() and the transform warns.
//
//===----------------------------------------------------------------------===//
#include "SavedTensorRules.h"
#include "llvm/ADT/STLExtras.h"

using namespace oomplan;
using namespace oomplan::training;

namespace {
constexpr uint32_t In0 = bit(0), In1 = bit(1), In01 = bit(0) | bit(1);
constexpr uint32_t In012 = bit(0) | bit(1) | bit(2), Out0 = bit(0);
constexpr AuxKind NoAux = AuxKind::None;

// Op, DiffInputs, SaveAlways, SaveIfPartnerGrad, SaveOutputs, Aux,
// GradViewInputs[, ScratchOfInput, ScratchOfOutput]. Sorted by op name.
const SavedRule Rules[] = {
    // abs: sgn(self) * grad.
    {"Abs", In0, In0, 0, 0, NoAux, 0},
    // add: grad passes through unchanged to both operands.
    {"Add", In01, 0, 0, 0, NoAux, In01},
    // avg_pool2d / adaptive_avg_pool2d keep self.
    {"AveragePool", In0, In0, 0, 0, NoAux, 0},
    // native_batch_norm (training): input, weight, save_mean, save_invstd.
    {"BatchNormalization", In012, In0, 0, 0, AuxKind::BatchNormStats, 0, 1, 0},
    // _to_copy: grad cast back, nothing kept.
    {"Cast", In0, 0, 0, 0, NoAux, 0},
    {"Ceil", 0, 0, 0, 0, NoAux, 0},
    // hardtanh / hardtanh_ (ReLU6): the backward reads the *input*; the
    // in-place form therefore clones its input before overwriting it, so
    // an input-sized tensor is kept either way.
    {"Clip", In0, In0, 0, 0, NoAux, 0},
    // cat: grads are narrow() views of the incoming gradient.
    {"Concat", AllInputs, 0, 0, 0, NoAux, 0},
    {"Constant", 0, 0, 0, 0, NoAux, 0},
    {"ConstantOfShape", 0, 0, 0, 0, NoAux, 0},
    // convolution: input for dW, weight for dX; the backward reorders the
    // input and the incoming gradient (oneDNN).
    {"Conv", In012, 0, In01, 0, NoAux, 0, 1, 1},
    {"ConvTranspose", In012, 0, In01, 0, NoAux, 0, 1, 1},
    {"Cos", In0, In0, 0, 0, NoAux, 0},
    // div: self / other: dA needs other, dB needs self and other.
    {"Div", In01, In1, In0, 0, NoAux, 0},
    // native_dropout / CPU dropout: input * noise keeps the noise only.
    {"Dropout", In0, 0, 0, 0, AuxKind::DropoutMask, 0},
    {"Einsum", AllInputs, AllInputs, 0, 0, NoAux, 0},
    {"Elu", In0, 0, 0, Out0, NoAux, 0},
    {"Equal", 0, 0, 0, 0, NoAux, 0},
    {"Erf", In0, In0, 0, 0, NoAux, 0},
    {"Exp", In0, 0, 0, Out0, NoAux, 0},
    // expand: grad summed back to the input's shape.
    {"Expand", In0, 0, 0, 0, NoAux, 0},
    {"Flatten", In0, 0, 0, 0, NoAux, In0},
    {"Floor", 0, 0, 0, 0, NoAux, 0},
    // embedding / index_select keep the indices.
    {"Gather", In0, In1, 0, 0, NoAux, 0},
    {"GatherElements", In0, In1, 0, 0, NoAux, 0},
    {"Gelu", In0, In0, 0, 0, NoAux, 0},
    // addmm: mat1 for dW, mat2 for dX; the bias keeps nothing.
    {"Gemm", In012, 0, In01, 0, NoAux, 0},
    {"GlobalAveragePool", In0, In0, 0, 0, NoAux, 0},
    {"GlobalMaxPool", In0, In0, 0, 0, AuxKind::PoolIndices, 0},
    {"Greater", 0, 0, 0, 0, NoAux, 0},
    {"GreaterOrEqual", 0, 0, 0, 0, NoAux, 0},
    {"GroupNormalization", In012, In0, 0, 0, AuxKind::NormStats, 0},
    {"HardSigmoid", In0, In0, 0, 0, NoAux, 0},
    {"HardSwish", In0, In0, 0, 0, NoAux, 0},
    {"Identity", In0, 0, 0, 0, NoAux, In0},
    {"InstanceNormalization", In012, In0, 0, 0, AuxKind::NormStats, 0},
    // native_layer_norm: input, weight, bias, mean, rstd.
    {"LayerNormalization", In012, In0, 0, 0, AuxKind::NormStats, 0},
    {"LeakyRelu", In0, In0, 0, 0, NoAux, 0},
    {"Less", 0, 0, 0, 0, NoAux, 0},
    {"LessOrEqual", 0, 0, 0, 0, NoAux, 0},
    {"Log", In0, In0, 0, 0, NoAux, 0},
    {"LogSoftmax", In0, 0, 0, Out0, NoAux, 0},
    // bmm / mm / matmul: each operand kept for the other's gradient.
    {"MatMul", In01, 0, In01, 0, NoAux, 0},
    {"Max", In01, In01, 0, Out0, NoAux, 0},
    // max_pool2d_with_indices: self and int64 indices of the output's size.
    {"MaxPool", In0, In0, 0, 0, AuxKind::PoolIndices, 0},
    {"Min", In01, In01, 0, Out0, NoAux, 0},
    {"Mish", In0, In0, 0, 0, NoAux, 0},
    // mul: each operand kept for the other's gradient (x * 2 keeps nothing).
    {"Mul", In01, 0, In01, 0, NoAux, 0},
    {"Neg", In0, 0, 0, 0, NoAux, 0},
    {"Not", 0, 0, 0, 0, NoAux, 0},
    {"PRelu", In01, In01, 0, 0, NoAux, 0},
    {"Pad", In0, 0, 0, 0, NoAux, 0},
    {"Pow", In01, In01, 0, 0, NoAux, 0},
    {"Range", 0, 0, 0, 0, NoAux, 0},
    {"Reciprocal", In0, 0, 0, Out0, NoAux, 0},
    {"ReduceMax", In0, In0, 0, Out0, NoAux, 0},
    // mean / sum: grad expanded back, nothing kept.
    {"ReduceMean", In0, 0, 0, 0, NoAux, 0},
    {"ReduceSum", In0, 0, 0, 0, NoAux, 0},
    // relu / relu_ / threshold_backward(grad, result).
    {"Relu", In0, 0, 0, Out0, NoAux, 0},
    {"Reshape", In0, 0, 0, 0, NoAux, In0},
    {"Resize", In0, 0, 0, 0, NoAux, 0},
    {"Shape", 0, 0, 0, 0, NoAux, 0},
    {"Sigmoid", In0, 0, 0, Out0, NoAux, 0},
    {"Sign", 0, 0, 0, 0, NoAux, 0},
    {"Sin", In0, In0, 0, 0, NoAux, 0},
    {"Size", 0, 0, 0, 0, NoAux, 0},
    // slice: grad scattered into zeros of the input's size.
    {"Slice", In0, 0, 0, 0, NoAux, 0},
    // _softmax_backward_data(grad, output).
    {"Softmax", In0, 0, 0, Out0, NoAux, 0},
    {"Softplus", In0, In0, 0, 0, NoAux, 0},
    {"Split", In0, 0, 0, 0, NoAux, 0},
    {"Sqrt", In0, 0, 0, Out0, NoAux, 0},
    {"Squeeze", In0, 0, 0, 0, NoAux, In0},
    // sub: grad to self unchanged, negated to other.
    {"Sub", In01, 0, 0, 0, NoAux, In0},
    {"Tanh", In0, 0, 0, Out0, NoAux, 0},
    {"Tile", In0, 0, 0, 0, NoAux, 0},
    // permute: a view in PyTorch; its gradient is laid out anew here
    // because the ONNX consumer sees a contiguous tensor.
    {"Transpose", In0, 0, 0, 0, NoAux, 0},
    {"Unsqueeze", In0, 0, 0, 0, NoAux, In0},
    // where: the condition.
    {"Where", bit(1) | bit(2), In0, 0, 0, NoAux, 0},
};

const SavedRule Fallback = {"*", AllInputs, AllInputs, 0, 0, NoAux, 0};
} // namespace

const SavedRule *training::findSavedRule(llvm::StringRef OpType) {
  auto It = llvm::partition_point(Rules, [&](const SavedRule &R) {
    return llvm::StringRef(R.Op) < OpType;
  });
  if (It != std::end(Rules) && OpType == It->Op)
    return It;
  return nullptr;
}

const SavedRule &training::fallbackSavedRule() { return Fallback; }

unsigned training::numSavedRules() { return std::size(Rules); }
