//===- StandardFunctions.cpp - ONNX's function ops imported as their body -===//
//
// ONNX defines Attention (23 to 25), RMSNormalization (23), RotaryEmbedding
// (23) and Swish (24) as functions: their meaning is a body of primitive ops
// (onnx/defs/nn/defs.cc, the context-dependent function body builders). They
// are imported as that body, inlined as a model-local function is
// (convertCall), so that every later pass (shapes, liveness, training,
// fusion, both runtimes) sees the primitive ops it already knows. An
// opset-23 export then plans as the opset-18 export of the same model,
// which writes the same computation as primitive ops, does: the scores of an
// attention are a tensor of the plan unless fusion (--fuse) makes them tiles.
//
// The bodies follow ONNX's, with what the attributes and the importer's
// knowledge settle decided here rather than at run time: the 3-D or 4-D
// form, the head counts of grouped-query attention, the scale when the head
// size is known, and no bias, mask guard or cast where ONNX's would add
// zeros, select nothing or cast to the same type (each then gives the same
// numbers). Where ONNX's body decides by an input's type or rank (the mask's
// bool or additive form; RotaryEmbedding's 3-D or 4-D input), the shape pass
// over the graph so far answers (typeOf, dimsOf), and a node it cannot
// answer for is refused with the reason.
//
//===----------------------------------------------------------------------===//
#include "Converter.h"
#include "FunctionBody.h"
#include <cmath>
#include <functional>
#include <limits>

using namespace oomplan;

using namespace oomplan::fn;

llvm::Error Converter::convertStandardFunction(const onnx::NodeProto &N,
                                               size_t Index,
                                               const std::string &Where) {
  int64_t Opset = defaultOpset();
  llvm::Expected<FunctionBody> Body =
      N.op_type() == "Attention"          ? attentionBody(N, Opset, Where)
      : N.op_type() == "RMSNormalization" ? rmsNormBody(N, Opset, Where)
      : N.op_type() == "RotaryEmbedding"  ? rotaryBody(N, Opset, Where)
      : N.op_type() == "Swish"
          ? llvm::Expected<FunctionBody>(swishBody(N, Opset))
          : llvm::Expected<FunctionBody>(
                err(Where + ": no function body for " + N.op_type()));
  if (!Body)
    return Body.takeError();
  return convertCall(N, Body->proto(), Index, Where);
}

llvm::Expected<FunctionBody>
Converter::attentionBody(const onnx::NodeProto &N, int64_t Opset,
                         const std::string &Where) {
  const bool HasMask = has(N, 3), HasPast = has(N, 4), HasNonpad = has(N, 6);
  if (HasPast != has(N, 5))
    return err(Where + ": past_key and past_value must be given together");
  if (HasNonpad && HasPast)
    return err(Where + ": nonpad_kv_seqlen cannot be used with past_key and "
                       "past_value");
  const int64_t QHeads = intAttrOf(N, "q_num_heads", 0),
                KVHeads = intAttrOf(N, "kv_num_heads", 0);
  // Opset 25: a sliding window (-1: that side unbounded).
  int64_t LeftWin = -1, RightWin = -1;
  if (Opset >= 25) {
    LeftWin = intAttrOf(N, "left_window_size", -1);
    RightWin = intAttrOf(N, "right_window_size", -1);
    if (LeftWin < -1 || RightWin < -1)
      return err(Where + ": left_window_size and right_window_size must be "
                         "-1 (unbounded) or at least 0");
  }
  const bool Window = LeftWin >= 0 || RightWin >= 0;
  const int64_t Mode = intAttrOf(N, "qk_matmul_output_mode", 0);
  if (Mode < 0 || Mode > 3)
    return err(Where + ": qk_matmul_output_mode " + llvm::Twine(Mode) +
               " is not 0, 1, 2 or 3");
  const onnx::AttributeProto *Precision = attrOf(N, "softmax_precision");
  if (Precision && !isFloatType(Precision->i()))
    return err(Where + ": softmax_precision " + llvm::Twine(Precision->i()) +
               " is not a floating-point type");

  // 3-D ([B, S, H * D]) or 4-D ([B, H, S, D]) inputs: by Q's and K's rank,
  // as the spec describes them and ONNX Runtime reads them; where the rank
  // is not known, by the head-count attributes, as ONNX's body decides.
  std::string QFlat = resolve(N.input(0)), KFlat = resolve(N.input(1));
  std::vector<int64_t> QDims = dimsOf(QFlat), KDims = dimsOf(KFlat);
  if (!QDims.empty() && !KDims.empty() && QDims.size() != KDims.size())
    return err(Where + ": Q is " + llvm::Twine(QDims.size()) + "-D and K " +
               llvm::Twine(KDims.size()) + "-D");
  const size_t Rank = !QDims.empty()              ? QDims.size()
                      : !KDims.empty()            ? KDims.size()
                      : QHeads > 0 && KVHeads > 0 ? 3
                                                  : 4;
  if (Rank != 3 && Rank != 4)
    return err(Where + ": Q and K must be 3-D or 4-D; they are " +
               llvm::Twine(Rank) + "-D");
  const bool ThreeD = Rank == 3;
  if (ThreeD && (QHeads <= 0 || KVHeads <= 0))
    return err(Where + ": 3-D Q and K need q_num_heads and kv_num_heads");
  // Heads of Q and of K/V: grouped-query attention repeats each K/V head
  // Hq / Hkv times.
  int64_t Hq = QHeads, Hkv = KVHeads;
  if (!ThreeD) {
    Hq = QDims.empty() ? -1 : QDims[1];
    Hkv = KDims.empty() ? -1 : KDims[1];
  }
  if (Hq <= 0 || Hkv <= 0)
    return unsupported(Where +
                       ": unsupported: the head counts (dim 1 of Q "
                       "and K) are not known when importing" +
                       prefixFailure());
  if (Hq % Hkv != 0)
    return err(Where + ": " + llvm::Twine(Hq) + " query heads are not a " +
               "multiple of " + llvm::Twine(Hkv) + " key/value heads");
  // The head size, when known, settles the default scale here.
  int64_t HeadSize = -1;
  if (ThreeD && !QDims.empty() && QDims[2] > 0 && QDims[2] % Hq == 0)
    HeadSize = QDims[2] / Hq;
  else if (!ThreeD && !QDims.empty())
    HeadSize = QDims[3];
  ElementType QType = typeOf(QFlat);
  ElementType MaskType = ElementType::Undefined;
  if (HasMask) {
    MaskType = typeOf(resolve(N.input(3)));
    if (MaskType == ElementType::Undefined)
      return unsupported(Where +
                         ": unsupported: the element type of "
                         "attn_mask (bool or additive) is not known "
                         "when importing" +
                         prefixFailure());
  }

  FunctionBody B(
      "Attention", Opset,
      formals({"Q", "K", "V", "attn_mask", "past_key", "past_value",
               "nonpad_kv_seqlen"},
              N.input_size(), [&](int I) { return has(N, I); }),
      formals({"Y", "present_key", "present_value", "qk_matmul_output"},
              N.output_size(), [&](int I) { return hasOut(N, I); }));
  // [B, S, H * D] to [B, H, S, D].
  std::string Q = "Q", K = "K", V = "V";
  if (ThreeD) {
    B.ints("QShape4", {0, 0, Hq, -1});
    B.ints("KVShape4", {0, 0, Hkv, -1});
    B.op("Reshape", {"Q", "QShape4"}, "Q4");
    B.op("Reshape", {"K", "KVShape4"}, "K4");
    B.op("Reshape", {"V", "KVShape4"}, "V4");
    FunctionBody::setInts(B.add("Transpose", {"Q4"}, {"QHeads"}), "perm",
                          {0, 2, 1, 3});
    FunctionBody::setInts(B.add("Transpose", {"K4"}, {"KHeads"}), "perm",
                          {0, 2, 1, 3});
    FunctionBody::setInts(B.add("Transpose", {"V4"}, {"VHeads"}), "perm",
                          {0, 2, 1, 3});
    Q = "QHeads", K = "KHeads", V = "VHeads";
  }
  // The cache: past then new along the sequence.
  std::string PresentK = hasOut(N, 1) ? "present_key" : "PresentKey";
  std::string PresentV = hasOut(N, 2) ? "present_value" : "PresentValue";
  if (HasPast) {
    FunctionBody::setInt(B.add("Concat", {"past_key", K}, {PresentK}), "axis",
                         2);
    FunctionBody::setInt(B.add("Concat", {"past_value", V}, {PresentV}), "axis",
                         2);
    K = PresentK, V = PresentV;
  } else {
    if (hasOut(N, 1))
      B.op("Identity", {K}, "present_key");
    if (hasOut(N, 2))
      B.op("Identity", {V}, "present_value");
  }
  // Grouped-query attention. ONNX's body repeats each K/V head Hq / Hkv
  // times (Expand, as repeat_interleave), a copy of K and V per group member
  // that no GQA kernel makes. Query head h reads K/V head h / r, so Q as
  // [B, Hkv, r, Sq, D] against K and V as [B, Hkv, 1, ., .] gives the same
  // products by MatMul's broadcasting, with nothing repeated. That needs a
  // bias whose head axis is 1 (or absent): a mask per query head keeps the
  // repeat.
  const int64_t Rep = Hq / Hkv;
  std::vector<int64_t> MaskDims;
  if (HasMask)
    MaskDims = dimsOf(resolve(N.input(3)));
  const bool MaskHeadsOne =
      !HasMask || (!MaskDims.empty() && (MaskDims.size() <= 2 ||
                                         MaskDims[MaskDims.size() - 3] == 1));
  const bool Grouped = Rep > 1 && MaskHeadsOne;
  if (Rep > 1 && !Grouped) {
    B.ints("Two1D", {2});
    B.ints("Repeat", {1, 1, Hq / Hkv, 1, 1});
    B.ints("HeadScale", {1, Hq / Hkv, 1, 1});
    for (std::string *X : {&K, &V}) {
      std::string P = *X == K ? "K" : "V";
      B.op("Unsqueeze", {*X, "Two1D"}, P + "Unsqueezed");
      B.op("Expand", {P + "Unsqueezed", "Repeat"}, P + "Expanded");
      B.op("Shape", {*X}, P + "CacheShape");
      B.op("Mul", {P + "CacheShape", "HeadScale"}, P + "GroupedShape");
      *X = B.op("Reshape", {P + "Expanded", P + "GroupedShape"}, P + "Grouped");
    }
  }
  // Q and K^T each scaled by sqrt(scale), in float32, then cast to Q's
  // type: scale defaults to 1/sqrt(head size).
  if (const onnx::AttributeProto *S = attrOf(N, "scale")) {
    B.floats("ScaleSqrtF", std::sqrt(S->f()));
  } else if (HeadSize > 0) {
    float Inv = 1.0f / std::sqrt(float(HeadSize));
    B.floats("ScaleSqrtF", std::sqrt(Inv));
  } else {
    onnx::NodeProto &Sh = B.add("Shape", {Q}, {"HeadSize"});
    FunctionBody::setInt(Sh, "start", 3);
    FunctionBody::setInt(Sh, "end", 4);
    FunctionBody::setInt(B.add("Cast", {"HeadSize"}, {"HeadSizeF"}), "to",
                         int64_t(ElementType::Float));
    B.op("Sqrt", {"HeadSizeF"}, "SqrtHeadSize");
    B.floats("OneF", 1.0f);
    B.op("Div", {"OneF", "SqrtHeadSize"}, "DefaultScale");
    B.op("Sqrt", {"DefaultScale"}, "ScaleSqrtF");
  }
  B.op("CastLike", {"ScaleSqrtF", "Q"}, "ScaleSqrt");
  FunctionBody::setInts(B.add("Transpose", {K}, {"KT"}), "perm", {0, 1, 3, 2});
  std::string QS = B.op("Mul", {Q, "ScaleSqrt"}, "QScaled");
  std::string KS = B.op("Mul", {"KT", "ScaleSqrt"}, "KTScaled");
  // Out = the shape [X's dim 0] + MidDims + X's dims from Tail on.
  auto ShapeWith = [&](const std::string &X, const char *Mid,
                       std::vector<int64_t> MidDims, int64_t Tail,
                       const std::string &Out) {
    onnx::NodeProto &Bs = B.add("Shape", {X}, {Out + "Batch"});
    FunctionBody::setInt(Bs, "end", 1);
    onnx::NodeProto &Ts = B.add("Shape", {X}, {Out + "Tail"});
    FunctionBody::setInt(Ts, "start", Tail);
    B.ints(Mid, std::move(MidDims));
    FunctionBody::setInt(
        B.add("Concat", {Out + "Batch", Mid, Out + "Tail"}, {Out}), "axis", 0);
    return Out;
  };
  if (Grouped) {
    ShapeWith(QS, "GroupHeads", {Hkv, Rep}, 2, "QGroupShape");
    QS = B.op("Reshape", {QS, "QGroupShape"}, "QGrouped");
    B.ints("GroupAxis", {2});
    KS = B.op("Unsqueeze", {KS, "GroupAxis"}, "KTGrouped");
    V = B.op("Unsqueeze", {V, "GroupAxis"}, "VGrouped");
  }
  // The scores [B, Hq, Sq, T] ([B, Hkv, r, Sq, T] grouped) as 4-D.
  auto As4D = [&](const std::string &X, const std::string &Out) {
    if (!Grouped)
      return X;
    ShapeWith(X, "QHeadCount", {Hq}, 3, Out + "Shape");
    return B.op("Reshape", {X, Out + "Shape"}, Out);
  };
  std::string Scores = B.op("MatMul", {QS, KS}, "QK");
  const std::string QK = Scores;
  if (float Cap = floatAttrOf(N, "softcap", 0); Cap != 0) {
    B.floats("SoftcapF", Cap);
    B.op("CastLike", {"SoftcapF", "Q"}, "Softcap");
    B.op("Div", {Scores, "Softcap"}, "QKOverCap");
    B.op("Tanh", {"QKOverCap"}, "QKTanh");
    Scores = B.op("Mul", {"QKTanh", "Softcap"}, "QKSoftcapped");
  }
  const std::string Capped = Scores;

  // The additive bias: the mask's (bool: 0 or -inf in float32; else its
  // values) and the padding's, summed in that type, then cast to Q's. The
  // causal frontier and the window are a bool mask (Masked, below).
  std::string Bias;
  ElementType BiasType = ElementType::Float;
  const bool Causal = intAttrOf(N, "is_causal", 0) != 0;
  if (HasMask || Causal || HasNonpad || Window) {
    B.floats("NegInf", -std::numeric_limits<float>::infinity());
    B.floats("ZeroF", 0.0f);
  }
  if (Causal || HasNonpad || Window)
    B.ints("One1D", {1});
  if (HasMask) {
    if (MaskType == ElementType::Bool) {
      Bias = B.op("Where", {"attn_mask", "ZeroF", "NegInf"}, "MaskBias");
    } else if (isFloatingPoint(MaskType)) {
      Bias = "attn_mask";
      BiasType = MaskType;
    } else {
      // An integer mask is added as Q's type (ONNX: its values cast to T1);
      // the other terms' -inf must not be cast to an integer.
      Bias = B.op("CastLike", {"attn_mask", "Q"}, "MaskAsQ");
      BiasType = QType;
    }
    // Opset 24 on: a mask shorter than the keys is padded with -inf.
    if (Opset >= 24) {
      onnx::NodeProto &Sh = B.add("Shape", {Bias}, {"MaskKeys"});
      FunctionBody::setInt(Sh, "start", -1);
      onnx::NodeProto &Tk = B.add("Shape", {K}, {"TotalKeys"});
      FunctionBody::setInt(Tk, "start", 2);
      FunctionBody::setInt(Tk, "end", 3);
      B.op("Sub", {"TotalKeys", "MaskKeys"}, "MaskShortBy");
      B.ints("Zero1D", {0});
      FunctionBody::setInt(
          B.add("Concat", {"Zero1D", "MaskShortBy"}, {"MaskPads"}), "axis", 0);
      B.op("CastLike", {"NegInf", Bias}, "MaskPadValue");
      B.ints("LastAxis", {-1});
      Bias = B.op("Pad", {Bias, "MaskPads", "MaskPadValue", "LastAxis"},
                  "MaskPadded");
    }
  }
  std::string Masked; // keys a query may not see, by the frontier or window
  if (Causal || Window) {
    // Query i sits at p = i + offset: the past length, or per batch
    // nonpad_kv_seqlen - Sq for an external cache (no past).
    onnx::NodeProto &Sq = B.add("Shape", {Q}, {"QLen"});
    FunctionBody::setInt(Sq, "start", 2);
    FunctionBody::setInt(Sq, "end", 3);
    onnx::NodeProto &Tk = B.add("Shape", {K}, {"KLen"});
    FunctionBody::setInt(Tk, "start", 2);
    FunctionBody::setInt(Tk, "end", 3);
    B.ints("Zero0D", {0}, /*Scalar=*/true);
    B.ints("One0D", {1}, /*Scalar=*/true);
    B.op("Squeeze", {"QLen"}, "QLen0D");
    B.op("Squeeze", {"KLen"}, "KLen0D");
    B.op("Range", {"Zero0D", "QLen0D", "One0D"}, "Rows");
    B.op("Range", {"Zero0D", "KLen0D", "One0D"}, "Cols");
    std::string Pos = B.op("Unsqueeze", {"Rows", "One1D"}, "Rows2D");
    std::string Offset;
    if (HasPast) {
      onnx::NodeProto &P = B.add("Shape", {"past_key"}, {"PastLen"});
      FunctionBody::setInt(P, "start", 2);
      FunctionBody::setInt(P, "end", 3);
      Offset = "PastLen";
    } else if (HasNonpad) {
      B.op("Sub", {"nonpad_kv_seqlen", "QLen"}, "OffsetPerBatch"); // [B]
      B.ints("Axes123", {1, 2, 3});
      Offset = B.op("Unsqueeze", {"OffsetPerBatch", "Axes123"}, "Offset4D");
    }
    if (!Offset.empty())
      Pos = B.op("Add", {Pos, Offset}, "RowsShifted");
    // The frontier and the window are bool masks, applied to the scores by
    // Where(masked, -inf, s) after the bias: the same sums as ONNX's -inf
    // bias terms, but one byte per query and key instead of a float bias
    // and a bool, and a mask the fused attention takes as it is.
    if (Causal) // key j iff j <= p
      Masked = B.op("Less", {Pos, "Cols"}, "Future");
    if (Window) { // key j iff p - left <= j <= p + right
      B.op("Sub", {Pos, "Cols"}, "Behind"); // p - j
      std::string Out;
      if (LeftWin >= 0) {
        B.ints("LeftWindow", {LeftWin}, /*Scalar=*/true);
        Out = B.op("Greater", {"Behind", "LeftWindow"}, "LeftOut");
      }
      if (RightWin >= 0) {
        B.ints("RightWindow", {RightWin}, /*Scalar=*/true);
        B.op("Neg", {"Behind"}, "Ahead");
        std::string R = B.op("Greater", {"Ahead", "RightWindow"}, "RightOut");
        Out = Out.empty() ? R : B.op("Or", {Out, R}, "OutsideWindow");
      }
      Masked = Masked.empty() ? Out : B.op("Or", {Masked, Out}, "Outside");
    }
  }
  if (HasNonpad) {
    // Keys at or past nonpad_kv_seqlen[b] take no part: [B, 1, 1, T].
    onnx::NodeProto &Tk = B.add("Shape", {"K"}, {"KInLen"});
    FunctionBody::setInt(Tk, "start", -2);
    FunctionBody::setInt(Tk, "end", -1);
    B.ints("Zero0DPad", {0}, /*Scalar=*/true);
    B.ints("One0DPad", {1}, /*Scalar=*/true);
    B.op("Squeeze", {"KInLen"}, "KInLen0D");
    B.op("Range", {"Zero0DPad", "KInLen0D", "One0DPad"}, "KeyIndex");
    B.op("Unsqueeze", {"nonpad_kv_seqlen", "One1D"}, "NonpadCol"); // [B, 1]
    B.op("Less", {"KeyIndex", "NonpadCol"}, "KeyValid");
    B.op("Where", {"KeyValid", "ZeroF", "NegInf"}, "PadBias2D");
    B.ints("Axes12", {1, 2});
    std::string Pad = B.op("Unsqueeze", {"PadBias2D", "Axes12"}, "PadBias");
    if (!Bias.empty() && BiasType != ElementType::Float)
      Pad = B.op("CastLike", {Pad, Bias}, "PadBiasCast");
    Bias = Bias.empty() ? Pad : B.op("Add", {Bias, Pad}, "BiasPadded");
  }
  // Grouped, a 4-D bias or mask [b, 1, Sq, T] (its head axis is 1) gets the
  // group axis: [b, 1, 1, Sq, T]; lower ranks align as they are. (The mask
  // is [Sq, T], or [B, 1, Sq, T] with nonpad_kv_seqlen's offsets; the
  // padding term is [B, 1, 1, T].)
  auto GroupAxis = [&](const std::string &X, size_t Rank,
                       const std::string &Out) {
    if (!Grouped || Rank != 4)
      return X;
    B.ints(Out + "Axis", {1});
    return B.op("Unsqueeze", {X, Out + "Axis"}, Out);
  };
  std::string BiasT;
  if (!Bias.empty()) {
    BiasT = Bias;
    if (QType == ElementType::Undefined || QType != BiasType)
      BiasT = B.op("CastLike", {Bias, "Q"}, "BiasT");
    BiasT =
        GroupAxis(BiasT, std::max<size_t>(MaskDims.size(), HasNonpad ? 4 : 0),
                  "BiasGrouped");
    Scores = B.op("Add", {Scores, BiasT}, "QKBiased");
  }
  if (!Masked.empty()) {
    Masked = GroupAxis(Masked, HasNonpad ? 4 : 2, "MaskedGrouped");
    std::string Fill = "NegInf";
    if (QType != ElementType::Float)
      Fill = B.op("CastLike", {"NegInf", Scores}, "NegInfScores");
    Scores = B.op("Where", {Masked, Fill, Scores}, "QKMasked");
  }
  const std::string Biased = Scores;

  // Softmax over the keys, in softmax_precision when it differs.
  std::string Probs;
  const bool CastSoftmax = Precision && (QType == ElementType::Undefined ||
                                         int64_t(QType) != Precision->i());
  if (CastSoftmax) {
    FunctionBody::setInt(B.add("Cast", {Scores}, {"ScoresP"}), "to",
                         Precision->i());
    FunctionBody::setInt(B.add("Softmax", {"ScoresP"}, {"ProbsP"}), "axis", -1);
    Probs = B.op("CastLike", {"ProbsP", "Q"}, "Probs");
  } else {
    FunctionBody::setInt(B.add("Softmax", {Scores}, {"Probs"}), "axis", -1);
    Probs = "Probs";
  }
  // A query row whose bias is -inf everywhere gives zeros, not NaN. Only a
  // mask, the padding or a window can mask a whole row: the causal frontier
  // alone always leaves key 0. ONNX's body zeroes such rows of the
  // probabilities; here the same rows of the values' product are zeroed
  // instead (their NaN probabilities make NaN rows there, and Where
  // selects, never multiplies), so that the Softmax-MatMul chain stays
  // whole for fusion. Only when the probabilities are an output (mode 3)
  // are they zeroed themselves.
  std::string RowMasked;
  if (HasMask || HasNonpad || Window) {
    // The row's bias with the masked keys at -inf: a transient the size of
    // the bias and mask together, only where both are present.
    std::string Row = BiasT;
    if (!Masked.empty()) {
      std::string Fill = "NegInf", Else = Row.empty() ? "ZeroF" : Row;
      if (!Row.empty())
        Fill = B.op("CastLike", {"NegInf", Row}, "NegInfBias");
      Row = B.op("Where", {Masked, Fill, Else}, "RowBias");
    }
    B.ints("KeyAxis", {-1});
    B.op("ReduceMax", {Row, "KeyAxis"}, "BiasRowMax");
    B.op("CastLike", {"NegInf", Row}, "NegInfT");
    RowMasked = B.op("Equal", {"BiasRowMax", "NegInfT"}, "RowMasked");
  }
  const bool ProbsOut = hasOut(N, 3) && Mode == 3;
  if (!RowMasked.empty() && ProbsOut) {
    B.op("CastLike", {"ZeroF", Probs}, "ZeroP");
    Probs = B.op("Where", {RowMasked, "ZeroP", Probs}, "ProbsSafe");
  }
  if (hasOut(N, 3)) {
    const std::string &Qk = Mode == 0   ? QK
                            : Mode == 1 ? Capped
                            : Mode == 2 ? Biased
                                        : Probs;
    B.op("Identity", {As4D(Qk, "QK4D")}, "qk_matmul_output");
  }
  // The values' product [B, Hq, Sq, Dv], written to Y by the last op.
  const bool GuardY = !RowMasked.empty() && !ProbsOut;
  std::string Y = B.op("MatMul", {Probs, V},
                       ThreeD || GuardY || Grouped ? "YProduct" : "Y");
  if (GuardY) {
    B.op("CastLike", {"ZeroF", Y}, "ZeroY");
    Y = B.op("Where", {RowMasked, "ZeroY", Y},
             ThreeD || Grouped ? "YSafe" : "Y");
  }
  if (Grouped)
    Y = As4D(Y, ThreeD ? "YHeads" : "Y");
  if (ThreeD) {
    FunctionBody::setInts(B.add("Transpose", {Y}, {"YSeq"}), "perm",
                          {0, 2, 1, 3});
    B.ints("YShape", {0, 0, -1});
    B.op("Reshape", {"YSeq", "YShape"}, "Y");
  }
  return B;
}

llvm::Expected<std::vector<int64_t>>
Converter::normAxes(const onnx::NodeProto &N, const std::string &XFlat,
                    const std::string &Where) {
  const int64_t Axis = intAttrOf(N, "axis", -1);
  // The axes normalized: [axis, rank). A negative axis counts from the
  // end, so needs no rank (but more axes than any tensor has are an error,
  // not a list of 2^62 axes).
  std::vector<int64_t> Axes;
  std::vector<int64_t> Dims = dimsOf(XFlat);
  const int64_t Rank = Dims.empty() ? -1 : int64_t(Dims.size());
  constexpr int64_t MaxAxes = 64;
  if ((Rank >= 0 && (Axis >= Rank || Axis < -Rank)) ||
      (Rank < 0 && Axis < -MaxAxes))
    return err(Where + ": axis " + llvm::Twine(Axis) +
               " is out of range for X of rank " +
               (Rank >= 0 ? llvm::Twine(Rank) : llvm::Twine("unknown")));
  if (Axis >= 0 && Rank < 0)
    return unsupported(Where + ": unsupported: axis " + llvm::Twine(Axis) +
                       " with X's rank not known when importing" +
                       prefixFailure());
  for (int64_t A = Axis; A < (Axis < 0 ? 0 : Rank); ++A)
    Axes.push_back(A);
  return Axes;
}

llvm::Expected<int64_t> Converter::stashType(const onnx::NodeProto &N,
                                             const std::string &Where) {
  const int64_t Stash = intAttrOf(N, "stash_type", int64_t(ElementType::Float));
  if (!isFloatType(Stash))
    return err(Where + ": stash_type " + llvm::Twine(Stash) +
               " is not a floating-point type");
  return Stash;
}

void oomplan::appendRmsNorm(FunctionBody &B, const std::string &X,
                            const std::string &Scale,
                            const std::vector<int64_t> &Axes, float Epsilon,
                            int64_t Stash, ElementType XType,
                            const std::string &Y, const std::string &InvRms) {
  const bool SameType = int64_t(XType) == Stash;
  B.floats("EpsilonF", Epsilon);
  std::string XU = X, Eps = "EpsilonF";
  if (!SameType) {
    FunctionBody::setInt(B.add("Cast", {X}, {"XU"}), "to", Stash);
    XU = "XU";
  }
  if (Stash != int64_t(ElementType::Float)) {
    FunctionBody::setInt(B.add("Cast", {"EpsilonF"}, {"Epsilon"}), "to", Stash);
    Eps = "Epsilon";
  }
  B.op("Mul", {XU, XU}, "XSquared");
  B.reduceMean("XSquared", Axes, "MeanSquare");
  B.op("Add", {"MeanSquare", Eps}, "MeanSquareEps");
  B.op("Sqrt", {"MeanSquareEps"}, "RMS");
  std::string Normalized = B.op("Div", {XU, "RMS"}, "Normalized");
  if (!SameType) {
    // Back to X's type: CastLike from opset 15; before it, Cast to the type
    // the caller knew (it refuses an opset-14 X of unknown type).
    if (B.opset() >= 15)
      Normalized = B.op("CastLike", {Normalized, X}, "NormalizedT");
    else
      FunctionBody::setInt(B.add("Cast", {Normalized}, {"NormalizedT"}), "to",
                           int64_t(XType));
    Normalized = "NormalizedT";
  }
  B.op("Mul", {Normalized, Scale}, Y);
  if (!InvRms.empty())
    B.op("Reciprocal", {"RMS"}, InvRms);
}

void oomplan::appendRotation(FunctionBody &B, const std::string &Cos,
                             const std::string &Sin, const std::string &X1,
                             const std::string &X2) {
  B.op("Mul", {Cos, X1}, "CosX1");
  B.op("Mul", {Sin, X2}, "SinX2");
  B.op("Sub", {"CosX1", "SinX2"}, "Real");
  B.op("Mul", {Sin, X1}, "SinX1");
  B.op("Mul", {Cos, X2}, "CosX2");
  B.op("Add", {"SinX1", "CosX2"}, "Imaginary");
}

llvm::Expected<FunctionBody> Converter::rmsNormBody(const onnx::NodeProto &N,
                                                    int64_t Opset,
                                                    const std::string &Where) {
  llvm::Expected<int64_t> Stash = stashType(N, Where);
  if (!Stash)
    return Stash.takeError();
  std::string XFlat = resolve(N.input(0));
  llvm::Expected<std::vector<int64_t>> Axes = normAxes(N, XFlat, Where);
  if (!Axes)
    return Axes.takeError();
  ElementType T = typeOf(XFlat);
  if (Opset < 15 && int64_t(T) != *Stash && T == ElementType::Undefined)
    return unsupported(Where +
                       ": unsupported: X's type is not known when "
                       "importing (needed below opset 15)" +
                       prefixFailure());
  FunctionBody B(N.op_type(), Opset, {"X", "scale"},
                 formals({"Y", "inv_std_var"}, N.output_size(),
                         [&](int I) { return hasOut(N, I); }));
  appendRmsNorm(B, "X", "scale", *Axes, floatAttrOf(N, "epsilon", 1e-5f),
                *Stash, T, "Y", hasOut(N, 1) ? "inv_std_var" : "");
  return B;
}

llvm::Expected<FunctionBody> Converter::rotaryBody(const onnx::NodeProto &N,
                                                   int64_t Opset,
                                                   const std::string &Where) {
  const int64_t Interleaved = intAttrOf(N, "interleaved", 0);
  const int64_t Dim = intAttrOf(N, "rotary_embedding_dim", 0);
  const int64_t Heads = intAttrOf(N, "num_heads", 0);
  if (Dim < 0 || Dim % 2 != 0)
    return err(Where + ": rotary_embedding_dim " + llvm::Twine(Dim) +
               " is not an even, non-negative number");
  std::vector<int64_t> Dims = dimsOf(resolve(N.input(0)));
  if (Dims.empty())
    return unsupported(Where +
                       ": unsupported: the rank of X (3-D or 4-D) "
                       "is not known when importing" +
                       prefixFailure());
  if (Dims.size() != 3 && Dims.size() != 4)
    return err(Where + ": X is " + llvm::Twine(Dims.size()) +
               "-D; RotaryEmbedding takes 3-D or 4-D");
  const bool ThreeD = Dims.size() == 3;
  if (ThreeD && Heads <= 0)
    return err(Where + ": a 3-D X needs the num_heads attribute");
  FunctionBody B("RotaryEmbedding", Opset,
                 formals({"X", "cos_cache", "sin_cache", "position_ids"},
                         N.input_size(), [&](int I) { return has(N, I); }),
                 {"Y"});
  // To [B, S, H, D].
  if (ThreeD) {
    B.ints("Shape4", {0, 0, Heads, -1});
    B.op("Reshape", {"X", "Shape4"}, "XIn");
  } else {
    FunctionBody::setInts(B.add("Transpose", {"X"}, {"XIn"}), "perm",
                          {0, 2, 1, 3});
  }
  B.ints("Zero1D", {0});
  B.ints("Two1D", {2});
  B.ints("Three1D", {3});
  B.ints("End", {std::numeric_limits<int64_t>::max()});
  std::string Rotate = "XIn", Half;
  if (Dim > 0) {
    // Only the first rotary_embedding_dim of each head turn.
    B.ints("RotaryDim", {Dim});
    B.op("Slice", {"XIn", "Zero1D", "RotaryDim", "Three1D"}, "XToRotate");
    B.op("Slice", {"XIn", "RotaryDim", "End", "Three1D"}, "XNoRotate");
    Rotate = "XToRotate";
    Half = B.ints("RotaryHalf", {Dim / 2});
  } else {
    onnx::NodeProto &Sh = B.add("Shape", {"XIn"}, {"HeadSize"});
    FunctionBody::setInt(Sh, "start", 3);
    FunctionBody::setInt(Sh, "end", 4);
    Half = B.op("Div", {"HeadSize", "Two1D"}, "RotaryHalf");
  }
  // The caches at the positions ([B, S, half]), as [B, S, 1, half].
  for (const char *C : {"cos", "sin"}) {
    std::string Cache = std::string(C) + "_cache", Name(C);
    if (has(N, 3))
      Cache = B.op("Gather", {Cache, "position_ids"}, Name + "Gathered");
    B.op("Slice", {Cache, "Zero1D", Half, "Two1D"}, Name + "Sliced");
    B.op("Unsqueeze", {Name + "Sliced", "Two1D"}, Name + "4D");
  }
  if (Interleaved) {
    B.ints("One1D", {1});
    B.op("Slice", {Rotate, "Zero1D", "End", "Three1D", "Two1D"}, "X1");
    B.op("Slice", {Rotate, "One1D", "End", "Three1D", "Two1D"}, "X2");
  } else {
    onnx::NodeProto &S = B.add("Split", {Rotate}, {"X1", "X2"});
    FunctionBody::setInt(S, "axis", -1);
    FunctionBody::setInt(S, "num_outputs", 2);
  }
  appendRotation(B, "cos4D", "sin4D", "X1", "X2");
  std::string Rotated;
  if (Interleaved) {
    B.ints("NegOne1D", {-1});
    B.op("Unsqueeze", {"Real", "NegOne1D"}, "RealPairs");
    B.op("Unsqueeze", {"Imaginary", "NegOne1D"}, "ImaginaryPairs");
    FunctionBody::setInt(
        B.add("Concat", {"RealPairs", "ImaginaryPairs"}, {"Pairs"}), "axis",
        -1);
    B.op("Shape", {Rotate}, "RotateShape");
    Rotated = B.op("Reshape", {"Pairs", "RotateShape"}, "XRotated");
  } else {
    FunctionBody::setInt(B.add("Concat", {"Real", "Imaginary"}, {"XRotated"}),
                         "axis", -1);
    Rotated = "XRotated";
  }
  if (Dim > 0) {
    FunctionBody::setInt(B.add("Concat", {Rotated, "XNoRotate"}, {"XConcat"}),
                         "axis", -1);
    Rotated = "XConcat";
  }
  if (ThreeD) {
    B.op("Shape", {"X"}, "XShape");
    B.op("Reshape", {Rotated, "XShape"}, "Y");
  } else {
    FunctionBody::setInts(B.add("Transpose", {Rotated}, {"Y"}), "perm",
                          {0, 2, 1, 3});
  }
  return B;
}

FunctionBody Converter::swishBody(const onnx::NodeProto &N, int64_t Opset) {
  FunctionBody B("Swish", Opset, {"X"}, {"Y"});
  const float Alpha = floatAttrOf(N, "alpha", 1.0f);
  std::string In = "X";
  if (Alpha != 1.0f) {
    B.floats("AlphaF", Alpha);
    B.op("CastLike", {"AlphaF", "X"}, "Alpha");
    In = B.op("Mul", {"Alpha", "X"}, "AlphaX");
  }
  B.op("Sigmoid", {In}, "SigmoidX");
  B.op("Mul", {"X", "SigmoidX"}, "Y");
  return B;
}
