//===- OpTable.cpp - the one table of operator facts ----------------------===//
//
// THE place that knows about ONNX op types: one record per op, in families
// that mirror lib/Analysis/ShapeRules/. A record reads
//
//   {name, shape rule, aliasing, saved tensors for training, cost}
//
// Saved tensors: grad(DiffInputs, SaveAlways, SaveIfPartnerGrad,
// SaveOutputs, Aux, GradViewInputs[, ScratchOfInput, ScratchOfOutput]), each
// naming PyTorch 1.13's autograd formula it follows, because the training
// estimate is checked against PyTorch's measured peaks: a row that keeps too
// little is an out-of-memory the user was told would not happen, one that
// keeps too much wastes their budget. UnknownGrad means nobody has written
// the rule yet (training warns and keeps every input); NotDifferentiable
// means no gradient flows back (shapes, indices, masks, rounding).
//
// Cost: perOutput(N) / perInput(N) operations per element; MatMulFlops,
// ConvFlops and PoolWindowFlops use the dims; generator(N) is never
// recomputed by rematerialization; product(N) marks a
// compute-intensive op whose FLOPs are not modelled beyond N per output
// element; data movement counts 0 FLOPs (the roofline's bytes price it).
//
// docs/architecture.md shows how to add an op.
//
//===----------------------------------------------------------------------===//
#include "oomplan/IR/OpTable.h"
#include "llvm/ADT/StringMap.h"

using namespace oomplan;
using namespace oomplan::ops;

namespace {
using Shape = ShapeRuleId;
using Alias = AliasClass;
constexpr uint32_t In0 = bit(0), In1 = bit(1), In01 = bit(0) | bit(1);
constexpr uint32_t In012 = bit(0) | bit(1) | bit(2), Out0 = bit(0);
constexpr AuxKind NoAux = AuxKind::None, AuxDropoutMask = AuxKind::DropoutMask;
constexpr AuxKind AuxBatchNormStats = AuxKind::BatchNormStats;
constexpr AuxKind AuxNormStats = AuxKind::NormStats;
constexpr AuxKind AuxPoolIndices = AuxKind::PoolIndices;
constexpr AuxKind AuxRecurrentStates = AuxKind::RecurrentStates;

constexpr GradRule grad(uint32_t DiffInputs, uint32_t SaveAlways,
                        uint32_t SaveIfPartnerGrad, uint32_t SaveOutputs,
                        AuxKind Aux, uint32_t GradViewInputs,
                        uint8_t ScratchOfInput = 0, uint8_t ScratchOfOutput = 0,
                        uint8_t ScratchOfInput1 = 0) {
  return {GradClass::Rule,   DiffInputs,     SaveAlways,
          SaveIfPartnerGrad, SaveOutputs,    Aux,
          GradViewInputs,    ScratchOfInput, ScratchOfOutput,
          ScratchOfInput1};
}
constexpr GradRule UnknownGrad = {GradClass::Unknown};
constexpr GradRule NotDifferentiable = {GradClass::NotDifferentiable};

constexpr OpCost perOutput(uint8_t N) {
  return {FlopsClass::PerOutputElement, N, false, BytesClass::ReadsAndWrites};
}
constexpr OpCost perInput(uint8_t N) {
  return {FlopsClass::PerInputElement, N, false, BytesClass::ReadsAndWrites};
}
constexpr OpCost product(uint8_t N) {
  return {FlopsClass::PerOutputElement, N, true, BytesClass::ReadsAndWrites};
}
constexpr OpCost MatMulFlops = {FlopsClass::MatMul, 0, true,
                                BytesClass::ReadsAndWrites};
constexpr OpCost ConvFlops = {FlopsClass::Conv, 0, true,
                              BytesClass::ReadsAndWrites};
constexpr OpCost AttentionFlops = {FlopsClass::Attention, 0, true,
                                   BytesClass::ReadsAndWrites};
constexpr OpCost PoolWindowFlops = {FlopsClass::PoolWindow, 0, false,
                                    BytesClass::ReadsAndWrites};
/// Folded at import: no FLOPs, no bytes moved at run time.
constexpr OpCost Resident = {FlopsClass::PerOutputElement, 0, false,
                             BytesClass::None, /*NeverRecompute=*/true};
/// A random generator: N operations per output element, never recomputed.
constexpr OpCost generator(uint8_t N) {
  return {FlopsClass::PerOutputElement, N, false, BytesClass::ReadsAndWrites,
          /*NeverRecompute=*/true};
}

const OpInfo Ops[] = {
    // One input, output shaped like it (Elementwise.cpp): activations, math,
    // casts, Dropout.
    // abs: sgn(self) * grad.
    {"Abs", Shape::NegOrAbs, Alias::InPlace, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    // acos, asin, atan and the inverse hyperbolics: grad times a function of
    // self, which they keep.
    {"Acos", Shape::SameAsInput, Alias::None, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    {"Acosh", Shape::SameAsInput, Alias::None, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    {"Asin", Shape::SameAsInput, Alias::None, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    {"Asinh", Shape::SameAsInput, Alias::None, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    {"Atan", Shape::SameAsInput, Alias::None, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    {"Atanh", Shape::SameAsInput, Alias::None, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    // _to_copy: grad cast back, nothing kept.
    {"Cast", Shape::Cast, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(0)},
    // as Cast: nothing.
    {"CastLike", Shape::CastLike, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(1)},
    {"Ceil", Shape::SameAsInput, Alias::InPlace, NotDifferentiable,
     perOutput(1)},
    // celu is elu(x, alpha, 1, 1/alpha): keeps self.
    {"Celu", Shape::SameAsInput, Alias::InPlace, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    // hardtanh / hardtanh_ (ReLU6): the backward reads the *input*; the
    // in-place form therefore clones its input before overwriting it, so
    // an input-sized tensor is kept either way.
    {"Clip", Shape::SameAsInput, Alias::InPlace, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    {"Cos", Shape::SameAsInput, Alias::InPlace, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    // grad * self.sinh().
    {"Cosh", Shape::SameAsInput, Alias::None, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    // cumsum_backward(grad, dim): nothing.
    {"CumSum", Shape::SameAsInput, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(1)},
    // native_dropout / CPU dropout: input * noise keeps the noise only.
    {"Dropout", Shape::Dropout, Alias::ViewInInference,
     grad(In0, 0, 0, 0, AuxDropoutMask, 0), perOutput(1)},
    {"Elu", Shape::SameAsInput, Alias::InPlace, grad(In0, 0, 0, Out0, NoAux, 0),
     perOutput(1)},
    {"Erf", Shape::SameAsInput, Alias::InPlace, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(4)},
    {"Exp", Shape::SameAsInput, Alias::InPlace, grad(In0, 0, 0, Out0, NoAux, 0),
     perOutput(4)},
    {"Floor", Shape::SameAsInput, Alias::InPlace, NotDifferentiable,
     perOutput(1)},
    {"HardSigmoid", Shape::SameAsInput, Alias::InPlace,
     grad(In0, In0, 0, 0, NoAux, 0), perOutput(1)},
    {"HardSwish", Shape::SameAsInput, Alias::InPlace,
     grad(In0, In0, 0, 0, NoAux, 0), perOutput(1)},
    {"Hardmax", Shape::SameAsInput, Alias::None, NotDifferentiable,
     perOutput(1)},
    {"Identity", Shape::Identity, Alias::View, grad(In0, 0, 0, 0, NoAux, In0),
     perOutput(0)},
    {"IsInf", Shape::BoolOfInput, Alias::None, NotDifferentiable, perOutput(1)},
    {"IsNaN", Shape::BoolOfInput, Alias::None, NotDifferentiable, perOutput(1)},
    {"LRN", Shape::SameAsInput, Alias::None, UnknownGrad, perOutput(1)},
    {"LeakyRelu", Shape::SameAsInput, Alias::InPlace,
     grad(In0, In0, 0, 0, NoAux, 0), perOutput(1)},
    {"Log", Shape::SameAsInput, Alias::InPlace, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(4)},
    {"LogSoftmax", Shape::SameAsInput, Alias::None,
     grad(In0, 0, 0, Out0, NoAux, 0), perOutput(5)},
    {"MeanVarianceNormalization", Shape::SameAsInput, Alias::None, UnknownGrad,
     perOutput(1)},
    // gelu_backward(grad, self) keeps the input (opset 20).
    {"Gelu", Shape::SameAsInput, Alias::InPlace, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(4)},
    {"Mish", Shape::SameAsInput, Alias::InPlace, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(4)},
    {"Neg", Shape::NegOrAbs, Alias::InPlace, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(1)},
    {"Not", Shape::BoolOfInput, Alias::InPlace, NotDifferentiable,
     perOutput(1)},
    {"BitwiseNot", Shape::SameAsInput, Alias::InPlace, NotDifferentiable,
     perOutput(1)},
    {"Reciprocal", Shape::SameAsInput, Alias::InPlace,
     grad(In0, 0, 0, Out0, NoAux, 0), perOutput(1)},
    // relu / relu_ / threshold_backward(grad, result).
    {"Relu", Shape::SameAsInput, Alias::InPlace,
     grad(In0, 0, 0, Out0, NoAux, 0), perOutput(1)},
    // flip of each sequence: the gradient is flipped back by the lengths.
    {"ReverseSequence", Shape::SameAsInput, Alias::None,
     grad(In0, In1, 0, 0, NoAux, 0), perOutput(1)},
    // round: zeros_like(grad), nothing flows.
    {"Round", Shape::SameAsInput, Alias::InPlace, NotDifferentiable,
     perOutput(1)},
    // selu is elu(x, alpha, scale): elu_backward(.., is_result=false, self).
    {"Selu", Shape::SameAsInput, Alias::InPlace, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    // softshrink/hardshrink_backward keep self.
    {"Shrink", Shape::SameAsInput, Alias::None, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    {"Sigmoid", Shape::SameAsInput, Alias::InPlace,
     grad(In0, 0, 0, Out0, NoAux, 0), perOutput(4)},
    {"Sign", Shape::SameAsInput, Alias::InPlace, NotDifferentiable,
     perOutput(1)},
    {"Sin", Shape::SameAsInput, Alias::InPlace, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    // grad * self.cosh().
    {"Sinh", Shape::SameAsInput, Alias::None, grad(In0, In0, 0, 0, NoAux, 0),
     perOutput(1)},
    // _softmax_backward_data(grad, output).
    {"Softmax", Shape::SameAsInput, Alias::None,
     grad(In0, 0, 0, Out0, NoAux, 0), perOutput(5)},
    {"Softplus", Shape::SameAsInput, Alias::InPlace,
     grad(In0, In0, 0, 0, NoAux, 0), perOutput(4)},
    {"Softsign", Shape::SameAsInput, Alias::None, UnknownGrad, perOutput(1)},
    {"Sqrt", Shape::SameAsInput, Alias::InPlace,
     grad(In0, 0, 0, Out0, NoAux, 0), perOutput(4)},
    // grad * (1 + result^2): keeps the result.
    {"Tan", Shape::SameAsInput, Alias::None, grad(In0, 0, 0, Out0, NoAux, 0),
     perOutput(1)},
    {"Tanh", Shape::SameAsInput, Alias::InPlace,
     grad(In0, 0, 0, Out0, NoAux, 0), perOutput(4)},
    // threshold_backward(grad, self, threshold).
    {"ThresholdedRelu", Shape::SameAsInput, Alias::InPlace,
     grad(In0, In0, 0, 0, NoAux, 0), perOutput(1)},
    // triu/tril: grad.triu(k): nothing.
    {"Trilu", Shape::SameAsInput, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(1)},

    // Numpy-broadcast binary and variadic ops (Broadcast.cpp).
    // add: grad passes through unchanged to both operands.
    {"Add", Shape::Broadcast, Alias::InPlace, grad(In01, 0, 0, 0, NoAux, In01),
     perOutput(1)},
    {"And", Shape::Broadcast, Alias::InPlace, NotDifferentiable, perOutput(1)},
    {"BitShift", Shape::Broadcast, Alias::None, NotDifferentiable,
     perOutput(1)},
    {"BitwiseAnd", Shape::Broadcast, Alias::None, NotDifferentiable,
     perOutput(1)},
    {"BitwiseOr", Shape::Broadcast, Alias::None, NotDifferentiable,
     perOutput(1)},
    {"BitwiseXor", Shape::Broadcast, Alias::None, NotDifferentiable,
     perOutput(1)},
    // div: self / other: dA needs other, dB needs self and other.
    {"Div", Shape::Broadcast, Alias::InPlace, grad(In01, In1, In0, 0, NoAux, 0),
     perOutput(1)},
    {"Equal", Shape::Broadcast, Alias::None, NotDifferentiable, perOutput(1)},
    {"Greater", Shape::Broadcast, Alias::None, NotDifferentiable, perOutput(1)},
    {"GreaterOrEqual", Shape::Broadcast, Alias::None, NotDifferentiable,
     perOutput(1)},
    {"Less", Shape::Broadcast, Alias::None, NotDifferentiable, perOutput(1)},
    {"LessOrEqual", Shape::Broadcast, Alias::None, NotDifferentiable,
     perOutput(1)},
    {"Max", Shape::Broadcast, Alias::InPlace,
     grad(In01, In01, 0, Out0, NoAux, 0), perOutput(1)},
    // (a + b + ...) / n: nothing kept.
    {"Mean", Shape::Broadcast, Alias::None, grad(AllInputs, 0, 0, 0, NoAux, 0),
     perOutput(1)},
    {"Min", Shape::Broadcast, Alias::InPlace,
     grad(In01, In01, 0, Out0, NoAux, 0), perOutput(1)},
    // fmod/remainder: other's gradient is -grad * (self / other rounded):
    // both kept.
    {"Mod", Shape::Broadcast, Alias::None, grad(In01, In01, 0, 0, NoAux, 0),
     perOutput(1)},
    // mul: each operand kept for the other's gradient (x * 2 keeps nothing).
    {"Mul", Shape::Broadcast, Alias::InPlace, grad(In01, 0, In01, 0, NoAux, 0),
     perOutput(1)},
    {"Or", Shape::Broadcast, Alias::InPlace, NotDifferentiable, perOutput(1)},
    {"PRelu", Shape::PRelu, Alias::InPlace, grad(In01, In01, 0, 0, NoAux, 0),
     perOutput(1)},
    {"Pow", Shape::Broadcast, Alias::InPlace, grad(In01, In01, 0, 0, NoAux, 0),
     perOutput(4)},
    // sub: grad to self unchanged, negated to other.
    {"Sub", Shape::Broadcast, Alias::InPlace, grad(In01, 0, 0, 0, NoAux, In0),
     perOutput(1)},
    // an Add chain: each input's gradient is the incoming one.
    {"Sum", Shape::Broadcast, Alias::None,
     grad(AllInputs, 0, 0, 0, NoAux, AllInputs), perOutput(1)},
    // where: the condition.
    {"Where", Shape::Where, Alias::InPlace,
     grad(bit(1) | bit(2), In0, 0, 0, NoAux, 0), perOutput(1)},
    {"Xor", Shape::Broadcast, Alias::InPlace, NotDifferentiable, perOutput(1)},

    // Normalization layers (Normalization.cpp).
    // native_batch_norm (training): input, weight, save_mean, save_invstd.
    {"BatchNormalization", Shape::BatchNorm, Alias::None,
     grad(In012, In0, 0, 0, AuxBatchNormStats, 0, 1, 0), perOutput(4)},
    {"GroupNormalization", Shape::SameAsInput, Alias::None,
     grad(In012, In0, 0, 0, AuxNormStats, 0), perOutput(8)},
    {"InstanceNormalization", Shape::InstanceNorm, Alias::None,
     grad(In012, In0, 0, 0, AuxNormStats, 0), perOutput(8)},
    // native_layer_norm: input, weight, bias, mean, rstd.
    {"LayerNormalization", Shape::LayerNorm, Alias::None,
     grad(In012, In0, 0, 0, AuxNormStats, 0), perOutput(8)},
    {"LpNormalization", Shape::SameAsInput, Alias::None, UnknownGrad,
     perOutput(1)},

    // Shape computations, constants and generators (ShapeOps.cpp).
    {"Bernoulli", Shape::LikeWithDtype, Alias::None, NotDifferentiable,
     generator(1)},
    {"Constant", Shape::Constant, Alias::None, NotDifferentiable, Resident},
    {"ConstantOfShape", Shape::ConstantOfShape, Alias::None, NotDifferentiable,
     perOutput(1)},
    {"EyeLike", Shape::EyeLike, Alias::None, NotDifferentiable, perOutput(1)},
    {"Multinomial", Shape::Multinomial, Alias::None, NotDifferentiable,
     generator(1)},
    {"RandomNormal", Shape::RandomWithShape, Alias::None, NotDifferentiable,
     generator(1)},
    {"RandomNormalLike", Shape::LikeWithDtype, Alias::None, NotDifferentiable,
     generator(1)},
    {"RandomUniform", Shape::RandomWithShape, Alias::None, NotDifferentiable,
     generator(1)},
    {"RandomUniformLike", Shape::LikeWithDtype, Alias::None, NotDifferentiable,
     generator(1)},
    {"Range", Shape::Range, Alias::None, NotDifferentiable, perOutput(1)},
    {"Shape", Shape::Shape, Alias::None, NotDifferentiable, perOutput(0)},
    {"Size", Shape::Size, Alias::None, NotDifferentiable, perOutput(1)},

    // Layout changes (Reshape.cpp).
    // pixel_shuffle: pixel_unshuffle(grad): nothing.
    {"DepthToSpace", Shape::DepthSpace, Alias::None,
     grad(In0, 0, 0, 0, NoAux, 0), perOutput(1)},
    // expand: grad summed back to the input's shape.
    {"Expand", Shape::Expand, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(0)},
    {"Flatten", Shape::Flatten, Alias::View, grad(In0, 0, 0, 0, NoAux, In0),
     perOutput(0)},
    {"Reshape", Shape::Reshape, Alias::View, grad(In0, 0, 0, 0, NoAux, In0),
     perOutput(0)},
    // pixel_unshuffle: pixel_shuffle(grad): nothing.
    {"SpaceToDepth", Shape::DepthSpace, Alias::None,
     grad(In0, 0, 0, 0, NoAux, 0), perOutput(1)},
    {"Squeeze", Shape::Squeeze, Alias::View, grad(In0, 0, 0, 0, NoAux, In0),
     perOutput(0)},
    // permute: a view in PyTorch; its gradient is laid out anew here
    // because the ONNX consumer sees a contiguous tensor.
    {"Transpose", Shape::Transpose, Alias::ParamView,
     grad(In0, 0, 0, 0, NoAux, 0), perOutput(0)},
    {"Unsqueeze", Shape::Unsqueeze, Alias::View, grad(In0, 0, 0, 0, NoAux, In0),
     perOutput(0)},

    // Indexing, slicing and joining (Indexing.cpp).
    // cat: grads are narrow() views of the incoming gradient.
    {"Concat", Shape::Concat, Alias::None, grad(AllInputs, 0, 0, 0, NoAux, 0),
     perOutput(0)},
    // embedding / index_select keep the indices.
    {"Gather", Shape::Gather, Alias::None, grad(In0, In1, 0, 0, NoAux, 0),
     perOutput(0)},
    // ONNX Runtime's (com.microsoft): rows of blocked 2/4/8-bit weights
    // (an int4 embedding), dequantized. The weights are frozen.
    {"GatherBlockQuantized", Shape::GatherBlockQuantized, Alias::None,
     NotDifferentiable, perOutput(0)},
    {"GatherElements", Shape::GatherElements, Alias::None,
     grad(In0, In1, 0, 0, NoAux, 0), perOutput(1)},
    // index.Tensor: index_backward keeps the indices.
    {"GatherND", Shape::GatherND, Alias::None, grad(In0, In1, 0, 0, NoAux, 0),
     perOutput(1)},
    {"OneHot", Shape::OneHot, Alias::None, NotDifferentiable, perOutput(1)},
    {"Pad", Shape::Pad, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(1)},
    // Opset 18: crops or zero-pads each named axis about its centre.
    {"CenterCropPad", Shape::CenterCropPad, Alias::None,
     grad(In0, 0, 0, 0, NoAux, 0), perOutput(1)},
    // scatter.src, as ScatterElements: the index.
    {"Scatter", Shape::LikeData, Alias::None,
     grad(bit(0) | bit(2), In1, 0, 0, NoAux, 0), perOutput(1)},
    // scatter.src: grad.scatter / grad.gather(dim, index): the index.
    {"ScatterElements", Shape::LikeData, Alias::None,
     grad(bit(0) | bit(2), In1, 0, 0, NoAux, 0), perOutput(1)},
    // index_put: grad.index_put / grad.index(indices): the indices.
    {"ScatterND", Shape::LikeData, Alias::None,
     grad(bit(0) | bit(2), In1, 0, 0, NoAux, 0), perOutput(1)},
    // Opset 24: a KV cache written at write_indices, in place by design
    // (past_cache's bytes become present_cache's when past dies here). As
    // index_put: the gradient gathers and zeroes by the indices it keeps.
    {"TensorScatter", Shape::LikeData, Alias::InPlace,
     grad(In01, bit(2), 0, 0, NoAux, 0), perOutput(0), /*InPlaceInput=*/0},
    // slice: grad scattered into zeros of the input's size.
    {"Slice", Shape::Slice, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(0)},
    {"Split", Shape::Split, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(0)},
    {"Tile", Shape::Tile, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(0)},

    // Products (MatMul.cpp).
    {"Det", Shape::Det, Alias::None, UnknownGrad, perOutput(1)},
    {"Einsum", Shape::Einsum, Alias::None,
     grad(AllInputs, AllInputs, 0, 0, NoAux, 0), product(1)},
    // addmm: mat1 for dW, mat2 for dX; the bias keeps nothing.
    {"Gemm", Shape::Gemm, Alias::None, grad(In012, 0, In01, 0, NoAux, 0),
     MatMulFlops},
    // bmm / mm / matmul: each operand kept for the other's gradient.
    {"MatMul", Shape::MatMul, Alias::None, grad(In01, 0, In01, 0, NoAux, 0),
     MatMulFlops},
    {"MatMulInteger", Shape::MatMul, Alias::None, UnknownGrad, MatMulFlops},
    // ONNX Runtime's (com.microsoft): A times blocked 2/4/8-bit weights.
    // The weights are frozen (QLoRA); A's gradient reads them, so B, the
    // scales and zero points are kept (weights: resident anyway).
    {"MatMulNBits", Shape::MatMulNBits, Alias::None,
     grad(In0, bit(1) | bit(2) | bit(3), 0, 0, NoAux, 0), MatMulFlops},
    {"QLinearMatMul", Shape::MatMul, Alias::None, UnknownGrad, product(1)},

    // Convolution, pooling and resampling (ConvPool.cpp).
    // avg_pool2d / adaptive_avg_pool2d keep self.
    {"AveragePool", Shape::Pool, Alias::None, grad(In0, In0, 0, 0, NoAux, 0),
     PoolWindowFlops},
    // convolution: input for dW, weight for dX; the backward reorders the
    // input and the incoming gradient (oneDNN).
    // Backward temporaries on the CPU (oneDNN, measured): reorders of the
    // input and incoming gradient, then of the weight, kept while dW is
    // written (the peak of a 1x1 conv with a large weight, e.g. a
    // classifier conv or ShuffleNet's conv5).
    {"Conv", Shape::Conv, Alias::None,
     grad(In012, 0, In01, 0, NoAux, 0, 1, 1, 1), ConvFlops},
    {"ConvInteger", Shape::Conv, Alias::None, UnknownGrad, perOutput(1)},
    // Opset 18 (torch's fold): sums blocks of columns into an image.
    {"Col2Im", Shape::Col2Im, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perInput(1)},
    // Opset 19 (torchvision's deform_conv2d): a Conv whose taps are moved
    // by the offset input; the output is a Conv's.
    {"DeformConv", Shape::Conv, Alias::None, UnknownGrad, ConvFlops},
    {"ConvTranspose", Shape::ConvTranspose, Alias::None,
     grad(In012, 0, In01, 0, NoAux, 0, 1, 1), ConvFlops},
    {"GlobalAveragePool", Shape::GlobalPool, Alias::None,
     grad(In0, In0, 0, 0, NoAux, 0), perInput(1)},
    {"GlobalLpPool", Shape::GlobalPool, Alias::None, UnknownGrad, perOutput(1)},
    {"GlobalMaxPool", Shape::GlobalPool, Alias::None,
     grad(In0, In0, 0, 0, AuxPoolIndices, 0), perInput(1)},
    {"LpPool", Shape::Pool, Alias::None, UnknownGrad, perOutput(1)},
    // max_pool2d_with_indices: self and int64 indices of the output's size.
    {"MaxPool", Shape::Pool, Alias::None,
     grad(In0, In0, 0, 0, AuxPoolIndices, 0), PoolWindowFlops},
    {"MaxRoiPool", Shape::RoiPool, Alias::None, UnknownGrad, perOutput(1)},
    {"MaxUnpool", Shape::MaxUnpool, Alias::None, UnknownGrad, perOutput(1)},
    {"QLinearConv", Shape::Conv, Alias::None, UnknownGrad, product(1)},
    {"Resize", Shape::Resize, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(1)},
    {"RoiAlign", Shape::RoiPool, Alias::None, UnknownGrad, perOutput(1)},
    // as Resize: upsample_*_backward needs only sizes.
    {"Upsample", Shape::Resize, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(1)},

    // Reductions (Reduce.cpp).
    {"ArgMax", Shape::Reduce, Alias::None, NotDifferentiable, perInput(1)},
    {"ArgMin", Shape::Reduce, Alias::None, NotDifferentiable, perInput(1)},
    {"ReduceL1", Shape::Reduce, Alias::None, UnknownGrad, perInput(1)},
    {"ReduceL2", Shape::Reduce, Alias::None, UnknownGrad, perInput(1)},
    {"ReduceLogSum", Shape::Reduce, Alias::None, UnknownGrad, perInput(1)},
    // logsumexp_backward(grad, self, result).
    {"ReduceLogSumExp", Shape::Reduce, Alias::None,
     grad(In0, In0, 0, Out0, NoAux, 0), perInput(1)},
    {"ReduceMax", Shape::Reduce, Alias::None, grad(In0, In0, 0, Out0, NoAux, 0),
     perInput(1)},
    // mean.dim keeps its input in 1.13 (MeanBackward1._saved_self, for
    // self.sym_numel(); measured: RMSNorm's x^2 stays alive); sum keeps
    // nothing.
    {"ReduceMean", Shape::Reduce, Alias::None, grad(In0, In0, 0, 0, NoAux, 0),
     perInput(1)},
    // amin: result == self selects the gradient: both.
    {"ReduceMin", Shape::Reduce, Alias::None, grad(In0, In0, 0, Out0, NoAux, 0),
     perInput(1)},
    // prod_backward(grad, self, result).
    {"ReduceProd", Shape::Reduce, Alias::None,
     grad(In0, In0, 0, Out0, NoAux, 0), perInput(1)},
    {"ReduceSum", Shape::Reduce, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perInput(1)},
    // 2 * self * grad: keeps self.
    {"ReduceSumSquare", Shape::Reduce, Alias::None,
     grad(In0, In0, 0, 0, NoAux, 0), perInput(1)},

    // Recurrent layers (Recurrent.cpp). PyTorch 1.13's CPU _VF.lstm/gru/
    // rnn_tanh: the input projection keeps X (and W), every step's
    // linear_hh keeps the hidden state (and R), the cell's gates and states
    // are the RecurrentStates aux. Inputs X, W, R, B, initial_h (5) and, for
    // LSTM, initial_c (6) and the peepholes P (7) get gradients;
    // sequence_lens (4) is an index.
    {"GRU", Shape::Recurrent, Alias::None,
     grad(In012 | bit(3) | bit(5), In012 | bit(5), 0, 0, AuxRecurrentStates, 0),
     perOutput(1)},
    {"LSTM", Shape::Recurrent, Alias::None,
     grad(In012 | bit(3) | bit(5) | bit(6) | bit(7),
          In012 | bit(5) | bit(6) | bit(7), 0, 0, AuxRecurrentStates, 0),
     perOutput(1)},
    {"RNN", Shape::Recurrent, Alias::None,
     grad(In012 | bit(3) | bit(5), In012 | bit(5), 0, 0, AuxRecurrentStates, 0),
     perOutput(1)},

    // Output sizes that depend on the data (DataDependent.cpp).
    {"Compress", Shape::Compress, Alias::None, UnknownGrad, perOutput(1)},
    {"NonMaxSuppression", Shape::NonMaxSuppression, Alias::None,
     NotDifferentiable, perOutput(1)},
    {"NonZero", Shape::NonZero, Alias::None, NotDifferentiable, perOutput(1)},
    // topk: value_selecting_reduction_backward keeps the indices.
    {"TopK", Shape::TopK, Alias::None, grad(In0, 0, 0, bit(1), NoAux, 0),
     perOutput(1)},
    {"Unique", Shape::Unique, Alias::None, NotDifferentiable, perOutput(1)},

    // Quantization, losses, signal processing (Misc.cpp).
    {"BlackmanWindow", Shape::Window, Alias::None, UnknownGrad, perOutput(1)},
    {"DFT", Shape::DFT, Alias::None, UnknownGrad, perOutput(1)},
    {"DequantizeLinear", Shape::Dequantize, Alias::None, UnknownGrad,
     perOutput(1)},
    {"DynamicQuantizeLinear", Shape::DynamicQuantize, Alias::None, UnknownGrad,
     perOutput(1)},
    // grid_sampler_2d_backward keeps input and grid.
    // Opset 20 (torch's affine_grid): a sampling grid from a batch of
    // affine matrices; its backward needs none of them.
    {"AffineGrid", Shape::AffineGrid, Alias::None, grad(In0, 0, 0, 0, NoAux, 0),
     perOutput(3)},
    {"GridSample", Shape::GridSample, Alias::None,
     grad(In01, In01, 0, 0, NoAux, 0), perOutput(1)},
    {"HammingWindow", Shape::Window, Alias::None, UnknownGrad, perOutput(1)},
    {"HannWindow", Shape::Window, Alias::None, UnknownGrad, perOutput(1)},
    {"MelWeightMatrix", Shape::MelWeightMatrix, Alias::None, UnknownGrad,
     perOutput(1)},
    // nll_loss_backward(grad, self, target, weight, ...): all three kept.
    {"NegativeLogLikelihoodLoss", Shape::Loss, Alias::None,
     grad(In0, In012, 0, 0, NoAux, 0), perOutput(1)},
    {"QuantizeLinear", Shape::Quantize, Alias::None, UnknownGrad, perOutput(1)},
    {"STFT", Shape::STFT, Alias::None, UnknownGrad, perOutput(1)},
    // cross_entropy = log_softmax (keeps its scores-sized result) + nll_loss
    // (keeps the labels and weights): counted as the scores, labels and
    // weights, the same bytes.
    {"SoftmaxCrossEntropyLoss", Shape::Loss, Alias::None,
     grad(In0, In012, 0, 0, NoAux, 0), perOutput(1)},

    // Ops without a shape rule: the declared shapes are used.
    // n-gram counts: the output width comes from attributes (the largest
    // ngram_indexes entry), which no rule reads yet; a CPU kernel exists.
    {"TfIdfVectorizer", Shape::Declared, Alias::None, NotDifferentiable,
     perInput(1)},

    // The end of a flattened If (IR/Graph.h, IfSelectOp): a copy of the
    // taken branch's results. Its backward routes the gradient to that
    // branch's results unchanged and keeps nothing.
    {"OomplanIf", Shape::IfSelect, Alias::None,
     grad(AllInputs & ~In0, 0, 0, 0, NoAux, AllInputs & ~In0), perOutput(0)},

    // oomplan's fused ops (IR/FusedOps.h; lib/Transforms/Fusion*.cpp). The
    // attention's cost is counted as a product over its output (its FLOPs
    // depend on Sk, which no class reads); the conv's in-place input is its
    // residual. Only the attention has a gradient rule, for the report's
    // "fused attention" estimate of training: flash attention's backward
    // (PyTorch 2.0's scaled_dot_product_attention) keeps Q, K, V, the output
    // and one log-sum-exp per query row (output 1, present in training only)
    // and recomputes the scores tile by tile.
    // ONNX Runtime's (com.microsoft): causal attention of grouped query
    // heads with its KV cache, rotary embedding optional. An inference op.
    {"GroupQueryAttention", Shape::GroupQueryAttention, Alias::None,
     UnknownGrad, AttentionFlops},
    {"OomplanAttention", Shape::FusedAttention, Alias::None,
     grad(In012, In012, 0, bit(0) | bit(1), NoAux, 0), AttentionFlops},
    {"OomplanConv", Shape::Conv, Alias::InPlace, UnknownGrad, ConvFlops,
     /*InPlaceInput=*/3},
    {"OomplanMatMul", Shape::FusedMatMul, Alias::None, UnknownGrad,
     MatMulFlops},
    {"OomplanConvDepthwise", Shape::ConvDepthwise, Alias::None, UnknownGrad,
     ConvFlops},
};
} // namespace

llvm::ArrayRef<OpInfo> ops::allOps() { return Ops; }

const OpInfo *ops::lookupOp(llvm::StringRef OpType) {
  // Built once, on first use (thread-safe static initialization).
  static const llvm::StringMap<OpCode> Index = [] {
    llvm::StringMap<OpCode> M;
    for (OpCode C = 0; C < std::size(Ops); ++C)
      M.try_emplace(Ops[C].Name, C);
    return M;
  }();
  auto It = Index.find(OpType);
  return It == Index.end() ? nullptr : &Ops[It->second];
}

OpCode ops::opCode(const OpInfo &Op) {
  return static_cast<OpCode>(&Op - std::begin(Ops));
}

std::vector<llvm::StringRef> ops::undecidedColumns(const OpInfo &Op) {
  std::vector<llvm::StringRef> Out;
  if (Op.Shape == ShapeRuleId::Undecided)
    Out.push_back("shape");
  if (Op.Alias == AliasClass::Undecided)
    Out.push_back("alias");
  if (Op.Grad.Class == GradClass::Undecided)
    Out.push_back("grad");
  if (Op.Cost.Flops == FlopsClass::Undecided)
    Out.push_back("flops");
  if (Op.Cost.Bytes == BytesClass::Undecided)
    Out.push_back("bytes");
  return Out;
}
