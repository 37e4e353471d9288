//===- NewerOpsets.cpp - the ops ONNX changed after opset 17 --------------===//
//
// From ONNX's operator changelog (docs/Changelog.md, versions 18 to 25).
// Rows with arity -1 changed only their allowed types, or added an
// attribute whose absence keeps the old meaning; the rest give the new
// arity. How oomplan reads each change is in docs/shapes.md ("Opsets 18 to
// 22", "Opsets 23 to 25").
//
//===----------------------------------------------------------------------===//
#include "NewerOpsets.h"
#include "llvm/ADT/STLExtras.h"

using namespace oomplan;

namespace {
constexpr int Same = -1; // the arity of ONNX 1.12's schema
const char *const Strings = "string tensors are not supported";
const char *const Optionals = "optional values are not supported";
} // namespace

// Sorted by op, then version.
static const NewerOpVersion Versions[] = {
    {"Acos", 22, Same, Same, Same, Same, nullptr},
    {"Acosh", 22, Same, Same, Same, Same, nullptr},
    {"AffineGrid", 20, 2, 2, 1, 1, nullptr},
    {"Asin", 22, Same, Same, Same, Same, nullptr},
    {"Asinh", 22, Same, Same, Same, Same, nullptr},
    {"Atan", 22, Same, Same, Same, Same, nullptr},
    {"Atanh", 22, Same, Same, Same, Same, nullptr},
    // Function ops: imported as their ONNX function body.
    {"Attention", 23, 3, 6, 1, 4, nullptr, true},
    // nonpad_kv_seqlen (input 6); a short mask padded with -inf.
    {"Attention", 24, 3, 7, 1, 4, nullptr, true},
    // left_window_size, right_window_size: a sliding window.
    {"Attention", 25, 3, 7, 1, 4, nullptr, true},
    // dilations (absent: 1).
    {"AveragePool", 19, Same, Same, Same, Same, nullptr},
    {"AveragePool", 22, Same, Same, Same, Same, nullptr},
    {"Bernoulli", 22, Same, Same, Same, Same, nullptr},
    {"BitwiseAnd", 18, 2, 2, 1, 1, nullptr},
    {"BitwiseNot", 18, 1, 1, 1, 1, nullptr},
    {"BitwiseOr", 18, 2, 2, 1, 1, nullptr},
    {"BitwiseXor", 18, 2, 2, 1, 1, nullptr},
    // saturate (float8 only).
    {"Cast", 19, Same, Same, Same, Same, nullptr},
    {"Cast", 21, Same, Same, Same, Same, nullptr},
    {"Cast", 23, Same, Same, Same, Same, nullptr},
    {"Cast", 24, Same, Same, Same, Same, nullptr},
    {"Cast", 25, Same, Same, Same, Same, nullptr},
    {"CastLike", 19, Same, Same, Same, Same, nullptr},
    {"CastLike", 21, Same, Same, Same, Same, nullptr},
    {"CastLike", 23, Same, Same, Same, Same, nullptr},
    {"CastLike", 24, Same, Same, Same, Same, nullptr},
    {"CastLike", 25, Same, Same, Same, Same, nullptr},
    {"CenterCropPad", 18, 2, 2, 1, 1, nullptr},
    {"Col2Im", 18, 3, 3, 1, 1, nullptr},
    {"Constant", 19, Same, Same, Same, Same, nullptr},
    {"Constant", 21, Same, Same, Same, Same, nullptr},
    {"Constant", 23, Same, Same, Same, Same, nullptr},
    {"Constant", 24, Same, Same, Same, Same, nullptr},
    {"Constant", 25, Same, Same, Same, Same, nullptr},
    {"ConstantOfShape", 20, Same, Same, Same, Same, nullptr},
    {"ConstantOfShape", 21, Same, Same, Same, Same, nullptr},
    {"ConstantOfShape", 23, Same, Same, Same, Same, nullptr},
    {"ConstantOfShape", 24, Same, Same, Same, Same, nullptr},
    {"ConstantOfShape", 25, Same, Same, Same, Same, nullptr},
    {"Conv", 22, Same, Same, Same, Same, nullptr},
    {"ConvTranspose", 22, Same, Same, Same, Same, nullptr},
    {"Cos", 22, Same, Same, Same, Same, nullptr},
    {"Cosh", 22, Same, Same, Same, Same, nullptr},
    // axis moved from an attribute to input 2.
    {"DFT", 20, 1, 3, 1, 1, nullptr},
    {"DeformConv", 19, 3, 5, 1, 1, nullptr},
    {"DeformConv", 22, 3, 5, 1, 1, nullptr},
    // block_size (absent: 0, per tensor or per axis as before).
    {"DequantizeLinear", 19, Same, Same, Same, Same, nullptr},
    {"DequantizeLinear", 21, Same, Same, Same, Same, nullptr},
    // output_dtype (absent: the scale's type).
    {"DequantizeLinear", 23, Same, Same, Same, Same, nullptr},
    {"DequantizeLinear", 24, Same, Same, Same, Same, nullptr},
    {"DequantizeLinear", 25, Same, Same, Same, Same, nullptr},
    {"Det", 22, Same, Same, Same, Same, nullptr},
    {"Dropout", 22, Same, Same, Same, Same, nullptr},
    {"Elu", 22, Same, Same, Same, Same, nullptr},
    {"Equal", 19, Same, Same, Same, Same, nullptr},
    {"EyeLike", 22, Same, Same, Same, Same, nullptr},
    {"Flatten", 21, Same, Same, Same, Same, nullptr},
    {"Flatten", 23, Same, Same, Same, Same, nullptr},
    {"Flatten", 24, Same, Same, Same, Same, nullptr},
    {"Flatten", 25, Same, Same, Same, Same, nullptr},
    {"GRU", 22, Same, Same, Same, Same, nullptr},
    {"Gelu", 20, 1, 1, 1, 1, nullptr},
    {"GlobalAveragePool", 22, Same, Same, Same, Same, nullptr},
    {"GlobalLpPool", 22, Same, Same, Same, Same, nullptr},
    {"GlobalMaxPool", 22, Same, Same, Same, Same, nullptr},
    // Modes renamed (linear, cubic), any rank.
    {"GridSample", 20, Same, Same, Same, Same, nullptr},
    {"GridSample", 22, Same, Same, Same, Same, nullptr},
    // Scale and bias per group (18), per channel (21).
    {"GroupNormalization", 18, 3, 3, 1, 1, nullptr},
    {"GroupNormalization", 21, 3, 3, 1, 1, nullptr},
    {"HardSigmoid", 22, Same, Same, Same, Same, nullptr},
    {"HardSwish", 22, Same, Same, Same, Same, nullptr},
    {"Identity", 19, Same, Same, Same, Same, nullptr},
    {"Identity", 21, Same, Same, Same, Same, nullptr},
    {"Identity", 23, Same, Same, Same, Same, nullptr},
    {"Identity", 24, Same, Same, Same, Same, nullptr},
    {"Identity", 25, Same, Same, Same, Same, nullptr},
    {"If", 19, Same, Same, Same, Same, nullptr},
    {"If", 21, Same, Same, Same, Same, nullptr},
    {"If", 23, Same, Same, Same, Same, nullptr},
    {"If", 24, Same, Same, Same, Same, nullptr},
    {"If", 25, Same, Same, Same, Same, nullptr},
    {"ImageDecoder", 20, 1, 1, 1, 1, "encoded images are not supported"},
    {"InstanceNormalization", 22, Same, Same, Same, Same, nullptr},
    {"IsInf", 20, Same, Same, Same, Same, nullptr},
    {"IsNaN", 20, Same, Same, Same, Same, nullptr},
    {"LSTM", 22, Same, Same, Same, Same, nullptr},
    {"Loop", 19, Same, Same, Same, Same, nullptr},
    {"Loop", 21, Same, Same, Same, Same, nullptr},
    {"Loop", 23, Same, Same, Same, Same, nullptr},
    {"Loop", 24, Same, Same, Same, Same, nullptr},
    {"Loop", 25, Same, Same, Same, Same, nullptr},
    {"LpNormalization", 22, Same, Same, Same, Same, nullptr},
    // ceil_mode and dilations (absent: 0 and 1).
    {"LpPool", 18, Same, Same, Same, Same, nullptr},
    {"LpPool", 22, Same, Same, Same, Same, nullptr},
    {"MaxPool", 22, Same, Same, Same, Same, nullptr},
    {"MaxRoiPool", 22, Same, Same, Same, Same, nullptr},
    {"MaxUnpool", 22, Same, Same, Same, Same, nullptr},
    {"Mish", 18, 1, 1, 1, 1, nullptr},
    {"Mish", 22, 1, 1, 1, 1, nullptr},
    {"Multinomial", 22, Same, Same, Same, Same, nullptr},
    {"NegativeLogLikelihoodLoss", 22, Same, Same, Same, Same, nullptr},
    {"OptionalGetElement", 18, Same, Same, Same, Same, Optionals},
    {"OptionalHasElement", 18, 0, 1, 1, 1, Optionals},
    // axes as input 3 (18), mode wrap (19).
    {"Pad", 18, 2, 4, 1, 1, nullptr},
    {"Pad", 19, 2, 4, 1, 1, nullptr},
    {"Pad", 21, 2, 4, 1, 1, nullptr},
    {"Pad", 23, 2, 4, 1, 1, nullptr},
    {"Pad", 24, 2, 4, 1, 1, nullptr},
    {"Pad", 25, 2, 4, 1, 1, nullptr},
    {"QLinearMatMul", 21, Same, Same, Same, Same, nullptr},
    // saturate (19; float8 only), block_size and output_dtype (21).
    {"QuantizeLinear", 19, Same, Same, Same, Same, nullptr},
    {"QuantizeLinear", 21, Same, Same, Same, Same, nullptr},
    // precision of the division (the output's type is unchanged).
    {"QuantizeLinear", 23, Same, Same, Same, Same, nullptr},
    {"QuantizeLinear", 24, Same, Same, Same, Same, nullptr},
    {"QuantizeLinear", 25, Same, Same, Same, Same, nullptr},
    {"RMSNormalization", 23, 2, 2, 1, 1, nullptr, true},
    {"RNN", 22, Same, Same, Same, Same, nullptr},
    {"RandomNormal", 22, Same, Same, Same, Same, nullptr},
    {"RandomNormalLike", 22, Same, Same, Same, Same, nullptr},
    {"RandomUniform", 22, Same, Same, Same, Same, nullptr},
    {"RandomUniformLike", 22, Same, Same, Same, Same, nullptr},
    // axes as input 1, noop_with_empty_axes (18); bool (20).
    {"ReduceL1", 18, 1, 2, 1, 1, nullptr},
    {"ReduceL2", 18, 1, 2, 1, 1, nullptr},
    {"ReduceLogSum", 18, 1, 2, 1, 1, nullptr},
    {"ReduceLogSumExp", 18, 1, 2, 1, 1, nullptr},
    {"ReduceMax", 18, 1, 2, 1, 1, nullptr},
    {"ReduceMax", 20, 1, 2, 1, 1, nullptr},
    {"ReduceMean", 18, 1, 2, 1, 1, nullptr},
    {"ReduceMin", 18, 1, 2, 1, 1, nullptr},
    {"ReduceMin", 20, 1, 2, 1, 1, nullptr},
    {"ReduceProd", 18, 1, 2, 1, 1, nullptr},
    {"ReduceSumSquare", 18, 1, 2, 1, 1, nullptr},
    {"RegexFullMatch", 20, 1, 1, 1, 1, Strings},
    {"Reshape", 19, Same, Same, Same, Same, nullptr},
    {"Reshape", 21, Same, Same, Same, Same, nullptr},
    {"Reshape", 23, Same, Same, Same, Same, nullptr},
    {"Reshape", 24, Same, Same, Same, Same, nullptr},
    {"Reshape", 25, Same, Same, Same, Same, nullptr},
    // antialias, axes, keep_aspect_ratio_policy (18);
    // half_pixel_symmetric (19).
    {"Resize", 18, Same, Same, Same, Same, nullptr},
    {"Resize", 19, Same, Same, Same, Same, nullptr},
    {"RoiAlign", 22, Same, Same, Same, Same, nullptr},
    {"RotaryEmbedding", 23, 3, 4, 1, 1, nullptr, true},
    {"Round", 22, Same, Same, Same, Same, nullptr},
    {"Scan", 19, Same, Same, Same, Same, nullptr},
    {"Scan", 21, Same, Same, Same, Same, nullptr},
    {"Scan", 23, Same, Same, Same, Same, nullptr},
    {"Scan", 24, Same, Same, Same, Same, nullptr},
    {"Scan", 25, Same, Same, Same, Same, nullptr},
    // reduction max and min.
    {"ScatterElements", 18, Same, Same, Same, Same, nullptr},
    {"ScatterND", 18, Same, Same, Same, Same, nullptr},
    {"Selu", 22, Same, Same, Same, Same, nullptr},
    {"Shape", 19, Same, Same, Same, Same, nullptr},
    {"Shape", 21, Same, Same, Same, Same, nullptr},
    {"Shape", 23, Same, Same, Same, Same, nullptr},
    {"Shape", 24, Same, Same, Same, Same, nullptr},
    {"Shape", 25, Same, Same, Same, Same, nullptr},
    {"Sin", 22, Same, Same, Same, Same, nullptr},
    {"Sinh", 22, Same, Same, Same, Same, nullptr},
    {"Size", 19, Same, Same, Same, Same, nullptr},
    {"Size", 21, Same, Same, Same, Same, nullptr},
    {"Size", 23, Same, Same, Same, Same, nullptr},
    {"Size", 24, Same, Same, Same, Same, nullptr},
    {"Size", 25, Same, Same, Same, Same, nullptr},
    {"Softplus", 22, Same, Same, Same, Same, nullptr},
    {"Softsign", 22, Same, Same, Same, Same, nullptr},
    // num_outputs.
    {"Split", 18, Same, Same, Same, Same, nullptr},
    {"SplitToSequence", 24, Same, Same, Same, Same, nullptr},
    {"Squeeze", 21, Same, Same, Same, Same, nullptr},
    {"Squeeze", 23, Same, Same, Same, Same, nullptr},
    {"Squeeze", 24, Same, Same, Same, Same, nullptr},
    {"Squeeze", 25, Same, Same, Same, Same, nullptr},
    {"StringConcat", 20, 2, 2, 1, 1, Strings},
    {"StringSplit", 20, 1, 1, 2, 2, Strings},
    {"Swish", 24, 1, 1, 1, 1, nullptr, true},
    {"Tan", 22, Same, Same, Same, Same, nullptr},
    // A KV cache written in place at write_indices.
    {"TensorScatter", 24, 2, 3, 1, 1, nullptr},
    {"ThresholdedRelu", 22, Same, Same, Same, Same, nullptr},
    {"TopK", 24, Same, Same, Same, Same, nullptr},
    {"Transpose", 21, Same, Same, Same, Same, nullptr},
    {"Transpose", 23, Same, Same, Same, Same, nullptr},
    {"Transpose", 24, Same, Same, Same, Same, nullptr},
    {"Transpose", 25, Same, Same, Same, Same, nullptr},
    {"Unsqueeze", 21, Same, Same, Same, Same, nullptr},
    {"Unsqueeze", 23, Same, Same, Same, Same, nullptr},
    {"Unsqueeze", 24, Same, Same, Same, Same, nullptr},
    {"Unsqueeze", 25, Same, Same, Same, Same, nullptr},
};

const NewerOpVersion *oomplan::newerOpVersion(llvm::StringRef Op,
                                              int64_t Opset) {
  const NewerOpVersion *Found = nullptr;
  for (const NewerOpVersion &V : Versions)
    if (Op == V.Op && V.Since <= Opset)
      Found = &V;
  return Found;
}

llvm::ArrayRef<NewerOpVersion> oomplan::newerOpVersions() { return Versions; }
