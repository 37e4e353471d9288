//===- FunctionBody.cpp - a FunctionProto written node by node ------------===//
#include "FunctionBody.h"

using namespace oomplan;

FunctionBody::FunctionBody(const std::string &Op, int64_t Opset,
                           const std::vector<std::string> &Inputs,
                           const std::vector<std::string> &Outputs)
    : Opset(Opset) {
  F.set_name(Op);
  onnx::OperatorSetIdProto *O = F.add_opset_import();
  O->set_domain("");
  O->set_version(Opset);
  for (const std::string &In : Inputs)
    F.add_input(In);
  for (const std::string &Out : Outputs)
    F.add_output(Out);
}

onnx::NodeProto &FunctionBody::add(const char *Op,
                                   std::initializer_list<std::string> Ins,
                                   std::initializer_list<std::string> Outs) {
  onnx::NodeProto *N = F.add_node();
  N->set_op_type(Op);
  for (const std::string &In : Ins)
    N->add_input(In);
  for (const std::string &Out : Outs)
    N->add_output(Out);
  // Named after its first output: the flat graph's node is then
  // "<call>/<op>/<output>", which says what it computes.
  N->set_name(*Outs.begin());
  return *N;
}

std::string FunctionBody::op(const char *Op,
                             std::initializer_list<std::string> Ins,
                             const std::string &Out) {
  add(Op, Ins, {Out});
  return Out;
}

onnx::TensorProto &FunctionBody::constant(const std::string &Out) {
  onnx::AttributeProto *A = add("Constant", {}, {Out}).add_attribute();
  A->set_name("value");
  A->set_type(onnx::AttributeProto::TENSOR);
  return *A->mutable_t();
}

std::string FunctionBody::ints(const std::string &Out,
                               std::vector<int64_t> Values, bool Scalar) {
  onnx::TensorProto &T = constant(Out);
  T.set_data_type(onnx::TensorProto::INT64);
  if (!Scalar)
    T.add_dims(int64_t(Values.size()));
  for (int64_t V : Values)
    T.add_int64_data(V);
  return Out;
}

std::string FunctionBody::floats(const std::string &Out, float Value) {
  onnx::TensorProto &T = constant(Out);
  T.set_data_type(onnx::TensorProto::FLOAT);
  T.add_dims(1);
  T.add_float_data(Value);
  return Out;
}

std::string FunctionBody::scalar(const std::string &Out, float Value,
                                 ElementType T) {
  if (T == ElementType::Float)
    return floats(Out, Value);
  floats(Out + "F", Value);
  setInt(add("Cast", {Out + "F"}, {Out}), "to", int64_t(T));
  return Out;
}

std::string FunctionBody::reduceMean(const std::string &X,
                                     std::vector<int64_t> Axes,
                                     const std::string &Out) {
  if (Opset >= 18) {
    std::string AxesName = ints(Out + "Axes", std::move(Axes));
    return op("ReduceMean", {X, AxesName}, Out);
  }
  setInts(add("ReduceMean", {X}, {Out}), "axes", std::move(Axes));
  return Out;
}

std::string FunctionBody::unsqueeze(const std::string &X,
                                    std::vector<int64_t> Axes,
                                    const std::string &Out) {
  if (Opset >= 13)
    return op("Unsqueeze", {X, ints(Out + "Axes", std::move(Axes))}, Out);
  setInts(add("Unsqueeze", {X}, {Out}), "axes", std::move(Axes));
  return Out;
}

std::string FunctionBody::slice(const std::string &X, int64_t Start,
                                int64_t End, int64_t Axis,
                                const std::string &Out) {
  return op("Slice",
            {X, ints(Out + "Starts", {Start}), ints(Out + "Ends", {End}),
             ints(Out + "Axes", {Axis})},
            Out);
}

std::string FunctionBody::dim(const std::string &X, int64_t Axis,
                              const std::string &Out) {
  op("Shape", {X}, Out + "Shape");
  ints(Out + "Index", {Axis});
  setInt(add("Gather", {Out + "Shape", Out + "Index"}, {Out}), "axis", 0);
  return Out;
}

std::string FunctionBody::range(const std::string &N, const std::string &Out) {
  ints(Out + "Zero", {0}, /*Scalar=*/true);
  ints(Out + "One", {1}, /*Scalar=*/true);
  ints(Out + "ScalarShape", {});
  op("Reshape", {N, Out + "ScalarShape"}, Out + "Limit");
  return op("Range", {Out + "Zero", Out + "Limit", Out + "One"}, Out);
}

void FunctionBody::setInt(onnx::NodeProto &N, const char *Name, int64_t V) {
  onnx::AttributeProto *A = N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(V);
}

void FunctionBody::setInts(onnx::NodeProto &N, const char *Name,
                           std::vector<int64_t> V) {
  onnx::AttributeProto *A = N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::INTS);
  for (int64_t X : V)
    A->add_ints(X);
}

void FunctionBody::setFloat(onnx::NodeProto &N, const char *Name, float V) {
  onnx::AttributeProto *A = N.add_attribute();
  A->set_name(Name);
  A->set_type(onnx::AttributeProto::FLOAT);
  A->set_f(V);
}
