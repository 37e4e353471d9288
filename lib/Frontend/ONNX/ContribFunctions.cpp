//===- ContribFunctions.cpp - ONNX Runtime's fused ops as standard ops ----===//
//
// ONNX Runtime's transformer optimizer and model builder replace chains of
// standard ops with contrib ops of their own (ContribOps.h) that compute the
// same: a residual add and LayerNorm become SkipLayerNormalization, the erf
// or tanh chain of a GELU becomes Gelu or FastGelu, BERT's embeddings and
// their LayerNorm EmbedLayerNormalization. Each is imported here as
// that chain again, a body of standard ops inlined as a model-local function
// is (convertCall), so that every later pass sees ops it knows: an optimized
// model plans as the model before the optimizer did, and fusion (--fuse)
// makes of the chain what it makes of the exporter's.
//
// The bodies are written for the model's default-domain opset, which for
// these tools' models runs from 11 (old BERT exports) to 21 (the GenAI
// builder): ReduceMean's axes as attribute or input, LayerNormalization
// only from 17, CastLike only from 15. Constants are float32, cast to the
// input's type when it is another (float16 models).
//
//===----------------------------------------------------------------------===//
#include "Converter.h"
#include "FunctionBody.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::fn;

namespace {

/// Y = 0.5 * X * (1 + erf(X / sqrt(2))), in X's type T.
void appendErfGelu(FunctionBody &B, const std::string &X, ElementType T,
                   const std::string &Y) {
  B.scalar("Sqrt2", float(M_SQRT2), T);
  B.scalar("One", 1.0f, T);
  B.scalar("Half", 0.5f, T);
  B.op("Div", {X, "Sqrt2"}, "XOverSqrt2");
  B.op("Erf", {"XOverSqrt2"}, "ErfX");
  B.op("Add", {"ErfX", "One"}, "OnePlusErf");
  B.op("Mul", {X, "OnePlusErf"}, "XTimes");
  B.op("Mul", {"XTimes", "Half"}, Y);
}

/// Y = 0.5 * X * (1 + tanh(sqrt(2 / pi) * (X + 0.044715 * X^3))), ONNX
/// Runtime's FastGelu (and Gelu's approximate="tanh").
void appendTanhGelu(FunctionBody &B, const std::string &X, ElementType T,
                    const std::string &Y) {
  B.scalar("Coeff", 0.044715f, T);
  B.scalar("SqrtTwoOverPi", float(std::sqrt(2.0 / M_PI)), T);
  B.scalar("One", 1.0f, T);
  B.scalar("Half", 0.5f, T);
  B.op("Mul", {X, X}, "XSquared");
  B.op("Mul", {"XSquared", X}, "XCubed");
  B.op("Mul", {"XCubed", "Coeff"}, "CoeffXCubed");
  B.op("Add", {X, "CoeffXCubed"}, "Inner");
  B.op("Mul", {"Inner", "SqrtTwoOverPi"}, "Scaled");
  B.op("Tanh", {"Scaled"}, "TanhX");
  B.op("Add", {"TanhX", "One"}, "OnePlusTanh");
  B.op("Mul", {X, "OnePlusTanh"}, "XTimes");
  B.op("Mul", {"XTimes", "Half"}, Y);
}

/// The type a contrib op of T computes in: float for the half types.
ElementType workType(ElementType T) {
  return T == ElementType::Float16 || T == ElementType::BFloat16
             ? ElementType::Float
             : T;
}

/// X (of type From) as type To, named Out (default X + "W"): X itself when
/// the types are the same and no name is asked for, else a Cast.
std::string castTo(FunctionBody &B, const std::string &X, ElementType From,
                   ElementType To, std::string Out = "") {
  if (From == To && Out.empty())
    return X;
  if (Out.empty())
    Out = X + "W";
  if (From == To)
    return B.op("Identity", {X}, Out);
  FunctionBody::setInt(B.add("Cast", {X}, {Out}), "to", int64_t(To));
  return Out;
}

} // namespace

llvm::Error Converter::convertContribOp(const onnx::NodeProto &N, size_t Index,
                                        const std::string &Where) {
  int64_t Opset = defaultOpset();
  const std::string &Op = N.op_type();
  auto BodyOf = [&]() -> llvm::Expected<FunctionBody> {
    if (Op == "SkipLayerNormalization" ||
        Op == "SkipSimplifiedLayerNormalization")
      return skipNormBody(N, Opset, Where);
    if (Op == "SimplifiedLayerNormalization")
      return rmsNormBody(N, Opset, Where); // and its inv_std_var output
    if (Op == "FusedMatMul")
      return fusedMatMulBody(N, Opset, Where);
    if (Op == "Attention")
      return contribAttentionBody(N, Opset, Where);
    if (Op == "RotaryEmbedding")
      return contribRotaryBody(N, Opset, Where);
    if (Op == "MultiHeadAttention")
      return multiHeadAttentionBody(N, Opset, Where);
    if (Op == "EmbedLayerNormalization")
      return embedLayerNormBody(N, Opset, Where);
    if (Op == "BiasAdd") {
      FunctionBody B("BiasAdd", Opset, {"X", "bias", "skip"}, {"Y"});
      B.op("Add", {"X", "bias"}, "XBias");
      B.op("Add", {"XBias", "skip"}, "Y");
      return B;
    }
    return geluBody(N, Opset, Where); // Gelu, BiasGelu, FastGelu, QuickGelu
  };
  llvm::Expected<FunctionBody> Body = BodyOf();
  if (!Body)
    return Body.takeError();
  return convertCall(N, Body->proto(), Index, Where);
}

llvm::Expected<FunctionBody> Converter::geluBody(const onnx::NodeProto &N,
                                                 int64_t Opset,
                                                 const std::string &Where) {
  const std::string &Op = N.op_type();
  ElementType T = typeOf(resolve(N.input(0)));
  if (!isFloatingPoint(T))
    return unsupported(Where + ": unsupported: " + Op +
                       " of an input whose float type is not known when "
                       "importing" +
                       prefixFailure());
  const bool Bias = has(N, 1);
  FunctionBody B(
      Op, Opset,
      formals({"X", "bias"}, N.input_size(), [&](int I) { return has(N, I); }),
      {"Y"});
  // A half input is computed in float and rounded once, as ONNX Runtime's
  // kernels do (in half, each of the chain's steps would round).
  const ElementType W = workType(T);
  std::string X = castTo(B, "X", T, W);
  if (Bias)
    X = B.op("Add", {X, castTo(B, "bias", T, W)}, "XBias");
  const std::string Y = W == T ? "Y" : "YW";
  if (Op == "FastGelu") {
    appendTanhGelu(B, X, W, Y);
  } else if (Op == "QuickGelu") {
    B.scalar("Alpha", floatAttrOf(N, "alpha", 1.702f), W);
    B.op("Mul", {X, "Alpha"}, "AlphaX");
    B.op("Sigmoid", {"AlphaX"}, "SigmoidAlphaX");
    B.op("Mul", {X, "SigmoidAlphaX"}, Y);
  } else { // Gelu, BiasGelu (inputs A and B: the bias is B)
    appendErfGelu(B, X, W, Y);
  }
  if (W != T)
    castTo(B, Y, W, T, "Y");
  return B;
}

llvm::Expected<FunctionBody> Converter::skipNormBody(const onnx::NodeProto &N,
                                                     int64_t Opset,
                                                     const std::string &Where) {
  // SkipLayerNormalization: input, skip, gamma, beta, bias; outputs
  // output, mean, inv_std_var, input_skip_bias_sum. The simplified form
  // has no beta (its bias is input 3) and no mean.
  const bool Simplified = N.op_type() == "SkipSimplifiedLayerNormalization";
  const int BiasIn = Simplified ? 3 : 4;
  if (Simplified && hasOut(N, 1))
    return err(Where + ": SkipSimplifiedLayerNormalization has no mean "
                       "output (output 1 must be empty)");
  std::string InFlat = resolve(N.input(0));
  ElementType T = typeOf(InFlat);
  if (!isFloatingPoint(T))
    return unsupported(Where +
                       ": unsupported: the input's float type is "
                       "not known when importing" +
                       prefixFailure());
  const float Eps = floatAttrOf(N, "epsilon", 1e-12f);
  std::vector<std::string> Ins =
      Simplified
          ? std::vector<std::string>{"input", "skip", "gamma", "bias"}
          : std::vector<std::string>{"input", "skip", "gamma", "beta", "bias"};
  FunctionBody B(
      N.op_type(), Opset,
      formals(Ins, N.input_size(), [&](int I) { return has(N, I); }),
      formals({"output", "mean", "inv_std_var", "input_skip_bias_sum"},
              N.output_size(), [&](int I) { return hasOut(N, I); }));
  // Computed in float for half inputs, as ONNX Runtime's kernels do: the
  // sum too, which is normalized before it is rounded (the sum output is
  // rounded once, on its own).
  const ElementType W = workType(T);
  std::string Sum = B.op(
      "Add", {castTo(B, "input", T, W), castTo(B, "skip", T, W)}, "InputSkip");
  if (has(N, BiasIn))
    Sum = B.op("Add", {Sum, castTo(B, "bias", T, W)}, "InputSkipBias");
  if (hasOut(N, 3))
    castTo(B, Sum, W, T, "input_skip_bias_sum");
  const std::string InvStd = hasOut(N, 2) ? "inv_std_var" : "";
  const std::string Gamma = castTo(B, "gamma", T, W);
  const std::string Out = W == T ? "output" : "OutputW";
  auto Finish = [&]() -> FunctionBody {
    if (W != T)
      castTo(B, Out, W, T, "output");
    return B;
  };
  if (Simplified) {
    appendRmsNorm(B, Sum, Gamma, {-1}, Eps, int64_t(ElementType::Float), W, Out,
                  InvStd);
    return Finish();
  }
  const bool Beta = has(N, 3);
  const std::string BetaW = Beta ? castTo(B, "beta", T, W) : "";
  const std::string Mean = hasOut(N, 1) ? "mean" : "";
  if (Opset >= 17) {
    onnx::NodeProto &LN =
        Beta ? B.add("LayerNormalization", {Sum, Gamma, BetaW},
                     {Out, Mean, InvStd})
             : B.add("LayerNormalization", {Sum, Gamma}, {Out, Mean, InvStd});
    FunctionBody::setInt(LN, "axis", -1);
    FunctionBody::setFloat(LN, "epsilon", Eps);
    return Finish();
  }
  // Before opset 17 (no LayerNormalization): its steps as standard ops.
  B.scalar("Epsilon", Eps, W);
  const std::string MeanName = Mean.empty() ? "Mean" : Mean;
  B.reduceMean(Sum, {-1}, MeanName);
  B.op("Sub", {Sum, MeanName}, "Centered");
  B.op("Mul", {"Centered", "Centered"}, "CenteredSquared");
  B.reduceMean("CenteredSquared", {-1}, "Variance");
  B.op("Add", {"Variance", "Epsilon"}, "VarianceEps");
  B.op("Sqrt", {"VarianceEps"}, "StdDev");
  const std::string Inv = InvStd.empty() ? "InvStdDev" : InvStd;
  B.op("Reciprocal", {"StdDev"}, Inv);
  B.op("Mul", {"Centered", Inv}, "Normalized");
  if (Beta) {
    B.op("Mul", {"Normalized", Gamma}, "Scaled");
    B.op("Add", {"Scaled", BetaW}, Out);
  } else {
    B.op("Mul", {"Normalized", Gamma}, Out);
  }
  return Finish();
}

llvm::Expected<FunctionBody>
Converter::fusedMatMulBody(const onnx::NodeProto &N, int64_t Opset,
                           const std::string &Where) {
  if (intAttrOf(N, "transBatchA", 0) || intAttrOf(N, "transBatchB", 0))
    return unsupported(Where + ": unsupported: FusedMatMul with transBatchA "
                               "or transBatchB");
  const bool TransA = intAttrOf(N, "transA", 0) != 0,
             TransB = intAttrOf(N, "transB", 0) != 0;
  const float Alpha = floatAttrOf(N, "alpha", 1.0f);
  FunctionBody B("FusedMatMul", Opset, {"A", "B"}, {"Y"});
  // op(X): X with its last two axes swapped, which needs X's rank.
  auto Operand = [&](const char *Name, int I,
                     bool Trans) -> llvm::Expected<std::string> {
    if (!Trans)
      return std::string(Name);
    std::vector<int64_t> Dims = dimsOf(resolve(N.input(I)));
    if (Dims.size() < 2)
      return unsupported(Where + ": unsupported: trans" + Name +
                         " of an operand whose rank (2 or more) is not known "
                         "when importing" +
                         prefixFailure());
    std::vector<int64_t> Perm;
    for (size_t D = 0; D + 2 < Dims.size(); ++D)
      Perm.push_back(int64_t(D));
    Perm.push_back(int64_t(Dims.size()) - 1);
    Perm.push_back(int64_t(Dims.size()) - 2);
    std::string Out = std::string(Name) + "T";
    FunctionBody::setInts(B.add("Transpose", {Name}, {Out}), "perm", Perm);
    return Out;
  };
  llvm::Expected<std::string> A = Operand("A", 0, TransA);
  if (!A)
    return A.takeError();
  llvm::Expected<std::string> Bm = Operand("B", 1, TransB);
  if (!Bm)
    return Bm.takeError();
  if (Alpha == 1.0f) {
    B.op("MatMul", {*A, *Bm}, "Y");
    return B;
  }
  B.op("MatMul", {*A, *Bm}, "Product");
  ElementType T = typeOf(resolve(N.input(0)));
  if (!isFloatingPoint(T))
    return unsupported(Where +
                       ": unsupported: alpha with an operand whose "
                       "float type is not known when importing" +
                       prefixFailure());
  B.scalar("Alpha", Alpha, T);
  B.op("Mul", {"Product", "Alpha"}, "Y");
  return B;
}

llvm::Expected<FunctionBody>
Converter::embedLayerNormBody(const onnx::NodeProto &N, int64_t Opset,
                              const std::string &Where) {
  // input_ids, segment_ids, word_, position_, segment_embedding, gamma,
  // beta, mask, position_ids; outputs output, mask_index, embedding_sum.
  for (int I : {0, 2, 3, 5, 6})
    if (!has(N, I))
      return err(Where + ": input " + llvm::Twine(I) + " is required");
  if (has(N, 1) != has(N, 4))
    return err(Where + ": segment_ids and segment_embedding must be given "
                       "together");
  if (hasOut(N, 1) && !has(N, 7))
    return unsupported(Where + ": unsupported: mask_index without a mask");
  ElementType T = typeOf(resolve(N.input(2)));
  if (!isFloatingPoint(T))
    return unsupported(Where +
                       ": unsupported: the embeddings' float type is "
                       "not known when importing" +
                       prefixFailure());
  FunctionBody B("EmbedLayerNormalization", Opset,
                 formals({"input_ids", "segment_ids", "word_embedding",
                          "position_embedding", "segment_embedding", "gamma",
                          "beta", "mask", "position_ids"},
                         N.input_size(), [&](int I) { return has(N, I); }),
                 formals({"output", "mask_index", "embedding_sum"},
                         N.output_size(), [&](int I) { return hasOut(N, I); }));
  FunctionBody::setInt(
      B.add("Gather", {"word_embedding", "input_ids"}, {"Words"}), "axis", 0);
  // Positions: position_ids, else 0 to S - 1 for every row.
  std::string Pos = "position_ids";
  if (!has(N, 8)) {
    B.dim("input_ids", 1, "SeqLen");
    Pos = B.range("SeqLen", "Positions");
  }
  FunctionBody::setInt(
      B.add("Gather", {"position_embedding", Pos}, {"PositionRows"}), "axis",
      0);
  std::string Sum = B.op("Add", {"Words", "PositionRows"}, "WordsPositions");
  if (has(N, 1)) {
    FunctionBody::setInt(
        B.add("Gather", {"segment_embedding", "segment_ids"}, {"Segments"}),
        "axis", 0);
    Sum = B.op("Add", {Sum, "Segments"}, "Embedded");
  }
  if (hasOut(N, 2))
    B.op("Identity", {Sum}, "embedding_sum");
  const float Eps = floatAttrOf(N, "epsilon", 1e-12f);
  if (Opset >= 17) {
    onnx::NodeProto &LN =
        B.add("LayerNormalization", {Sum, "gamma", "beta"}, {"output"});
    FunctionBody::setInt(LN, "axis", -1);
    FunctionBody::setFloat(LN, "epsilon", Eps);
  } else {
    B.reduceMean(Sum, {-1}, "Mean");
    B.op("Sub", {Sum, "Mean"}, "Centered");
    B.op("Mul", {"Centered", "Centered"}, "Squared");
    B.reduceMean("Squared", {-1}, "Variance");
    B.scalar("Epsilon", Eps, T);
    B.op("Add", {"Variance", "Epsilon"}, "VarianceEps");
    B.op("Sqrt", {"VarianceEps"}, "StdDev");
    B.op("Div", {"Centered", "StdDev"}, "Normalized");
    B.op("Mul", {"Normalized", "gamma"}, "Scaled");
    B.op("Add", {"Scaled", "beta"}, "output");
  }
  if (hasOut(N, 1)) {
    // The number of unmasked tokens of each row, as int32.
    FunctionBody::setInt(B.add("Cast", {"mask"}, {"Mask64"}), "to",
                         int64_t(ElementType::Int64));
    if (Opset >= 13) {
      B.ints("MaskAxes", {1});
      FunctionBody::setInt(
          B.add("ReduceSum", {"Mask64", "MaskAxes"}, {"MaskSum"}), "keepdims",
          0);
    } else {
      onnx::NodeProto &R = B.add("ReduceSum", {"Mask64"}, {"MaskSum"});
      FunctionBody::setInts(R, "axes", {1});
      FunctionBody::setInt(R, "keepdims", 0);
    }
    FunctionBody::setInt(B.add("Cast", {"MaskSum"}, {"mask_index"}), "to",
                         int64_t(ElementType::Int32));
  }
  return B;
}
