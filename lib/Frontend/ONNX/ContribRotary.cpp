//===- ContribRotary.cpp - ONNX Runtime's RotaryEmbedding as standard ops -===//
//
// com.microsoft's RotaryEmbedding (the transformer optimizer writes it
// beside MultiHeadAttention for Llama- and Phi-style models) as a body of
// standard ops, like ONNX's RotaryEmbedding-23 (StandardFunctions.cpp) but
// written for the opsets these models have (11 on: Unsqueeze's axes as an
// attribute before 13, no Split with num_outputs) and with ONNX Runtime's
// reading of the inputs (rotary_embedding_helper.h): inputs in the order
// input, position_ids, cos_cache, sin_cache; position_ids one offset (the
// positions offset + s) or [B, S]; the head size the cache's width times 2
// unless rotary_embedding_dim is set (then hidden / num_heads); the first
// rotary_embedding_dim (else all) dims of each head turn.
//
//===----------------------------------------------------------------------===//
#include "Converter.h"
#include "FunctionBody.h"

using namespace oomplan;
using namespace oomplan::fn;

llvm::Expected<FunctionBody>
Converter::contribRotaryBody(const onnx::NodeProto &N, int64_t Opset,
                             const std::string &Where) {
  if (intAttrOf(N, "is_packed_batching", 0) ||
      floatAttrOf(N, "scale", 1.0f) != 1.0f)
    return unsupported(Where + ": unsupported: is_packed_batching or a "
                               "scale other than 1");
  const int64_t Interleaved = intAttrOf(N, "interleaved", 0);
  int64_t Heads = intAttrOf(N, "num_heads", 0);
  const int64_t RotAttr = intAttrOf(N, "rotary_embedding_dim", 0);
  std::vector<int64_t> X = dimsOf(resolve(N.input(0)));
  std::vector<int64_t> Cos = dimsOf(resolve(N.input(2)));
  std::vector<int64_t> Pos = dimsOf(resolve(N.input(1)));
  if ((X.size() != 3 && X.size() != 4) || Cos.size() != 2 || Cos[1] <= 0 ||
      (X.size() == 3 && X[2] <= 0) ||
      (X.size() == 4 && (X[1] <= 0 || X[3] <= 0)))
    return unsupported(Where +
                       ": unsupported: the input (3-D or 4-D), its "
                       "hidden size or the caches' width is not "
                       "known when importing" +
                       prefixFailure());
  if (RotAttr > 0 && Heads <= 0)
    return err(Where + ": rotary_embedding_dim needs num_heads");
  const bool ThreeD = X.size() == 3;
  const int64_t Hidden = ThreeD ? X[2] : X[1] * X[3];
  const int64_t Head = RotAttr == 0 ? 2 * Cos[1] : Hidden / Heads;
  if (Head <= 0 || Hidden % Head != 0)
    return err(Where + ": hidden size " + llvm::Twine(Hidden) +
               " is not a multiple of the head size " + llvm::Twine(Head));
  if (Heads <= 0)
    Heads = Hidden / Head;
  const int64_t Rot = RotAttr > 0 ? RotAttr : Head, Half = Rot / 2;
  if (Rot > Head || Rot % 2 != 0 || Half > Cos[1])
    return err(Where + ": rotary_embedding_dim " + llvm::Twine(Rot) +
               " is not even, at most the head size " + llvm::Twine(Head) +
               " and at most twice the caches' width " + llvm::Twine(Cos[1]));
  FunctionBody B("RotaryEmbedding", Opset,
                 {"input", "position_ids", "cos_cache", "sin_cache"}, {"Y"});
  // To [B, S, N, H].
  if (ThreeD) {
    B.ints("Shape4", {0, 0, Heads, Head});
    B.op("Reshape", {"input", "Shape4"}, "XIn");
  } else {
    FunctionBody::setInts(B.add("Transpose", {"input"}, {"XIn"}), "perm",
                          {0, 2, 1, 3});
  }
  // The positions: [B, S] as given, or offset + [0, S) as [1, S].
  std::string P = "position_ids";
  if (Pos.size() < 2) {
    B.op("Shape", {"XIn"}, "XShape");
    B.ints("SeqAxis", {1});
    FunctionBody::setInt(B.add("Gather", {"XShape", "SeqAxis"}, {"SeqLen"}),
                         "axis", 0);
    B.ints("ScalarShape", {});
    B.op("Reshape", {"SeqLen", "ScalarShape"}, "SeqLen0D");
    B.op("Reshape", {"position_ids", "ScalarShape"}, "Offset");
    B.op("Add", {"Offset", "SeqLen0D"}, "PosEnd");
    B.ints("PosStep", {1}, /*Scalar=*/true);
    B.op("Range", {"Offset", "PosEnd", "PosStep"}, "PosRange");
    P = B.unsqueeze("PosRange", {0}, "Positions");
  }
  for (const char *C : {"cos", "sin"}) {
    std::string Name(C);
    B.op("Gather", {Name + "_cache", P}, Name + "Gathered");
    B.slice(Name + "Gathered", 0, Half, 2, Name + "Sliced");
    B.unsqueeze(Name + "Sliced", {2}, Name + "4D");
  }
  std::string Rotate = "XIn";
  if (Rot < Head) {
    B.slice("XIn", 0, Rot, 3, "XToRotate");
    B.slice("XIn", Rot, Head, 3, "XNoRotate");
    Rotate = "XToRotate";
  }
  if (Interleaved) {
    B.ints("Zero1D", {0});
    B.ints("One1D", {1});
    B.ints("Two1D", {2});
    B.ints("Three1D", {3});
    B.ints("RotEnd", {Rot});
    B.op("Slice", {Rotate, "Zero1D", "RotEnd", "Three1D", "Two1D"}, "X1");
    B.op("Slice", {Rotate, "One1D", "RotEnd", "Three1D", "Two1D"}, "X2");
  } else {
    B.slice(Rotate, 0, Half, 3, "X1");
    B.slice(Rotate, Half, Rot, 3, "X2");
  }
  appendRotation(B, "cos4D", "sin4D", "X1", "X2");
  std::string Rotated = "Rotated";
  if (Interleaved) {
    B.unsqueeze("Real", {4}, "Real5D");
    B.unsqueeze("Imaginary", {4}, "Imaginary5D");
    FunctionBody::setInt(B.add("Concat", {"Real5D", "Imaginary5D"}, {"Paired"}),
                         "axis", 4);
    B.ints("RotShape", {0, 0, 0, Rot});
    B.op("Reshape", {"Paired", "RotShape"}, Rotated);
  } else {
    FunctionBody::setInt(B.add("Concat", {"Real", "Imaginary"}, {Rotated}),
                         "axis", 3);
  }
  if (Rot < Head) {
    FunctionBody::setInt(B.add("Concat", {Rotated, "XNoRotate"}, {"Turned"}),
                         "axis", 3);
    Rotated = "Turned";
  }
  if (ThreeD) {
    B.ints("Shape3", {0, 0, Hidden});
    B.op("Reshape", {Rotated, "Shape3"}, "Y");
  } else {
    FunctionBody::setInts(B.add("Transpose", {Rotated}, {"Y"}), "perm",
                          {0, 2, 1, 3});
  }
  return B;
}
