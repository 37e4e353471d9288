//===- FunctionBody.h - a FunctionProto written node by node ----*- C++ -*-===//
//
// The standard ops that ONNX defines as functions (Attention, RMSNormalization,
// RotaryEmbedding, Swish: StandardFunctions.cpp) are imported as their body,
// which is built here as an onnx::FunctionProto and inlined as a model-local
// function is (ConvertFunction.cpp). Building nodes in code, not through
// ONNX's text parser, keeps constants such as -inf exact and needs no
// escaping.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_FRONTEND_ONNX_FUNCTIONBODY_H
#define OOMPLAN_LIB_FRONTEND_ONNX_FUNCTIONBODY_H

#include "onnx/onnx_pb.h"
#include <cstdint>
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

  static void setInt(onnx::NodeProto &N, const char *Name, int64_t V);
  static void setInts(onnx::NodeProto &N, const char *Name,
                      std::vector<int64_t> V);
  static void setFloat(onnx::NodeProto &N, const char *Name, float V);

  const onnx::FunctionProto &proto() const { return F; }

private:
  /// Adds Out = Constant(value); returns the value's tensor to fill.
  onnx::TensorProto &constant(const std::string &Out);

  onnx::FunctionProto F;
};

} // namespace oomplan

#endif
