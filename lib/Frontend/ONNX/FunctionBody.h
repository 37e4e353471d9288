//===- FunctionBody.h - a FunctionProto written node by node ----*- C++ -*-===//
//
// The standard ops that ONNX defines as functions (Attention, RMSNormalization,
// RotaryEmbedding, Swish: StandardFunctions.cpp) and ONNX Runtime's contrib
// ops that are standard ops fused (ContribFunctions.cpp) are imported as a
// body, which is built here as an onnx::FunctionProto and inlined as a
// model-local function is (ConvertFunction.cpp). Building nodes in code, not
// through ONNX's text parser, keeps constants such as -inf exact and needs no
// escaping.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_FRONTEND_ONNX_FUNCTIONBODY_H
#define OOMPLAN_LIB_FRONTEND_ONNX_FUNCTIONBODY_H

#include "onnx/onnx_pb.h"
#include "oomplan/IR/ElementType.h"
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace oomplan {

class FunctionBody {
public:
  /// A function of the default domain at Opset, whose inputs and outputs
  /// are the given formal names ("" where the call omits one).
  FunctionBody(const std::string &Op, int64_t Opset,
               const std::vector<std::string> &Inputs,
               const std::vector<std::string> &Outputs);

  /// Adds Outs = Op(Ins); returns the node for its attributes.
  onnx::NodeProto &add(const char *Op, std::initializer_list<std::string> Ins,
                       std::initializer_list<std::string> Outs);
  /// The same for a one-output node; returns Out.
  std::string op(const char *Op, std::initializer_list<std::string> Ins,
                 const std::string &Out);
  /// Out = a 1-D int64 constant (a 0-D one when Scalar).
  std::string ints(const std::string &Out, std::vector<int64_t> Values,
                   bool Scalar = false);
  /// Out = a one-element 1-D float32 constant.
  std::string floats(const std::string &Out, float Value);
  /// Out = Value as a one-element 1-D constant of float type T (a float32
  /// constant, cast to T when T is another).
  std::string scalar(const std::string &Out, float Value, ElementType T);
  /// Out = ReduceMean(X) over Axes, dims kept: the axes as an input from
  /// opset 18, as an attribute before.
  std::string reduceMean(const std::string &X, std::vector<int64_t> Axes,
                         const std::string &Out);

  /// Out = Unsqueeze(X) at Axes: the axes as an input from opset 13, as an
  /// attribute before.
  std::string unsqueeze(const std::string &X, std::vector<int64_t> Axes,
                        const std::string &Out);
  /// Out = X[..., Start:End, ...] along Axis (Slice's inputs, opset 10 on).
  std::string slice(const std::string &X, int64_t Start, int64_t End,
                    int64_t Axis, const std::string &Out);

  /// Out = dim Axis of X as a 1-D int64 [1].
  std::string dim(const std::string &X, int64_t Axis, const std::string &Out);
  /// Out = Range(0, N) for a 1-D [1] int64 N.
  std::string range(const std::string &N, const std::string &Out);

  /// The default-domain opset the body is written for.
  int64_t opset() const { return Opset; }

  static void setInt(onnx::NodeProto &N, const char *Name, int64_t V);
  static void setInts(onnx::NodeProto &N, const char *Name,
                      std::vector<int64_t> V);
  static void setFloat(onnx::NodeProto &N, const char *Name, float V);

  const onnx::FunctionProto &proto() const { return F; }

private:
  /// Adds Out = Constant(value); returns the value's tensor to fill.
  onnx::TensorProto &constant(const std::string &Out);

  onnx::FunctionProto F;
  int64_t Opset;
};

/// What the body builders read of the node they expand.
namespace fn {

inline const onnx::AttributeProto *attrOf(const onnx::NodeProto &N,
                                          const char *Name) {
  for (const onnx::AttributeProto &A : N.attribute())
    if (A.name() == Name)
      return &A;
  return nullptr;
}

inline int64_t intAttrOf(const onnx::NodeProto &N, const char *Name,
                         int64_t Def) {
  const onnx::AttributeProto *A = attrOf(N, Name);
  return A ? A->i() : Def;
}

inline float floatAttrOf(const onnx::NodeProto &N, const char *Name,
                         float Def) {
  const onnx::AttributeProto *A = attrOf(N, Name);
  return A ? A->f() : Def;
}

inline bool has(const onnx::NodeProto &N, int I) {
  return I < N.input_size() && !N.input(I).empty();
}

inline bool hasOut(const onnx::NodeProto &N, int I) {
  return I < N.output_size() && !N.output(I).empty();
}

/// True when ONNX type number T is a floating-point type.
inline bool isFloatType(int64_t T) {
  ElementType E;
  return elementTypeFromNumber(T, E) && isFloatingPoint(E);
}

/// The formal names of N's inputs (or outputs): Names[I] where N has an
/// I-th, "" where it leaves one out.
inline std::vector<std::string>
formals(const std::vector<std::string> &Names, int Count,
        const std::function<bool(int)> &Present) {
  std::vector<std::string> Out;
  for (int I = 0; I < Count && I < int(Names.size()); ++I)
    Out.push_back(Present(I) ? Names[I] : "");
  return Out;
}

} // namespace fn

/// Appends to B: Y = X / sqrt(mean(X^2 over Axes) + Epsilon) * Scale,
/// computed in type Stash (X cast to it unless XType is Stash), and, when
/// InvRms is not empty, InvRms = the reciprocal of that root (in Stash):
/// ONNX's RMSNormalization and ONNX Runtime's SimplifiedLayerNormalization.
/// Below opset 15 (no CastLike) XType must be known when it is not Stash.
void appendRmsNorm(FunctionBody &B, const std::string &X,
                   const std::string &Scale, const std::vector<int64_t> &Axes,
                   float Epsilon, int64_t Stash, ElementType XType,
                   const std::string &Y, const std::string &InvRms);

/// Appends to B the rotation of the pairs (X1, X2) by the angles whose
/// cosines and sines are Cos and Sin: Real = Cos X1 - Sin X2, Imaginary =
/// Sin X1 + Cos X2 (RotaryEmbedding, ONNX's and ONNX Runtime's).
void appendRotation(FunctionBody &B, const std::string &Cos,
                    const std::string &Sin, const std::string &X1,
                    const std::string &X2);

} // namespace oomplan

#endif
