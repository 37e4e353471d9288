//===- TypeCheck.cpp - operand types against the ONNX schemas -------------===//
//
// For each default-domain node with a schema at the model's opset (an op
// version past ONNX 1.12's, NewerOpsets.h, is skipped): each
// input's element type must be in its formal parameter's allowed set, and
// inputs bound to one type parameter ("T") must agree (TypeCheck.h says
// which of these a run refuses). Only inputs are
// checked, each against the type its producer was inferred to give, so a
// message points at the node that reads the wrong type (the first place a
// runtime would refuse it).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Frontend/TypeCheck.h"
#include "NewerOpsets.h"
#include "onnx/defs/data_type_utils.h"
#include "onnx/defs/schema.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <map>

using namespace oomplan;

// Types this ONNX's schemas predate (float8 and 4-bit types, opset 19 and
// later; the newer op versions that allow them are not checked) are
// allowed by none of its schemas, and its type tables cannot name them.
static bool knownToSchemas(ElementType T) {
  return onnx::TensorProto_DataType_IsValid(static_cast<int>(T)) &&
         T != ElementType::Undefined;
}

static std::string typeName(ElementType T);

static onnx::DataType onnxType(ElementType T) {
  onnx::TypeProto P;
  P.mutable_tensor_type()->set_elem_type(static_cast<int32_t>(T));
  return onnx::Utils::DataTypeUtils::ToType(P);
}

static std::string typeName(ElementType T) {
  if (!knownToSchemas(T))
    return "tensor(" + elementTypeName(T).str() + ")";
  return *onnxType(T);
}

// "tensor(double), tensor(float)": the allowed types, sorted (the schema
// keeps them in a hash set).
static std::string allowed(const onnx::OpSchema::FormalParameter &P) {
  std::vector<std::string> Names;
  for (onnx::DataType T : P.GetTypes())
    Names.push_back(*T);
  std::sort(Names.begin(), Names.end());
  std::string Out;
  for (const std::string &N : Names)
    Out += (Out.empty() ? "" : ", ") + N;
  return Out;
}

std::vector<OperandTypeIssue>
oomplan::checkOperandTypes(const Graph &G,
                           llvm::ArrayRef<ElementType> ValueTypes) {
  std::vector<OperandTypeIssue> Out;
  std::map<std::string, int64_t> Opset;
  for (const OpsetImport &O : G.Opsets)
    Opset[O.Domain == "ai.onnx" ? "" : O.Domain] = O.Version;
  if (G.Opsets.empty())
    Opset[""] = 1;
  try {
    for (NodeId Id = 0; Id < G.Nodes.size(); ++Id) {
      const Node &N = G.Nodes[Id];
      auto It = Opset.find(N.Domain);
      if (It == Opset.end())
        continue;
      // A version newer than ONNX 1.12's schemas allows types they lack
      // (NewerOpsets.h): not checked.
      if (N.Domain.empty() && newerOpVersion(N.OpType, It->second))
        continue;
      const onnx::OpSchema *S = onnx::OpSchemaRegistry::Schema(
          N.OpType, static_cast<int>(It->second), N.Domain);
      if (!S || S->inputs().empty())
        continue;
      const auto &Formal = S->inputs();
      std::map<std::string, std::pair<ElementType, size_t>> Bound;
      for (size_t I = 0; I < N.Inputs.size(); ++I) {
        ValueId V = N.Inputs[I];
        if (V == NoId || V >= ValueTypes.size() ||
            ValueTypes[V] == ElementType::Undefined)
          continue;
        ElementType T = ValueTypes[V];
        const auto &P = Formal[std::min(I, Formal.size() - 1)];
        std::string Where = G.describeNode(Id) + ": input " +
                            std::to_string(I) + " ('" + G.Values[V].Name +
                            "') is " + typeName(T);
        if (!knownToSchemas(T) || !P.GetTypes().count(onnxType(T))) {
          ValueId First = N.Inputs.empty() ? NoId : N.Inputs[0];
          bool AsFirst = I > 0 && First != NoId && First < ValueTypes.size() &&
                         ValueTypes[First] == T &&
                         P.GetTypeStr() == Formal[0].GetTypeStr();
          Out.push_back({Where + ", which " + N.OpType + "-" +
                             std::to_string(S->since_version()) +
                             " does not allow (" + P.GetTypeStr() + ": " +
                             allowed(P) +
                             "); ONNX's checker and runtimes refuse such a "
                             "model",
                         I > 0 && !AsFirst});
          continue;
        }
        // A variadic parameter marked heterogeneous (Loop's carried
        // values, SequenceConstruct's...) may mix types.
        bool Variadic =
            P.GetOption() == onnx::OpSchema::FormalParameterOption::Variadic;
        if (Variadic && !P.GetIsHomogeneous())
          continue;
        auto [Prev, New] = Bound.insert({P.GetTypeStr(), {T, I}});
        if (!New && Prev->second.first != T)
          Out.push_back({Where + ", but input " +
                             std::to_string(Prev->second.second) + " is " +
                             typeName(Prev->second.first) + " and " + N.OpType +
                             " needs both of one type " + P.GetTypeStr() +
                             "; ONNX's checker and runtimes refuse such a "
                             "model",
                         true});
      }
    }
  } catch (const std::exception &E) {
    // The schemas' own tables: nothing a model can make throw, but the
    // library must not; the check is then skipped.
    Out.push_back(
        {std::string("operand types not checked: ") + E.what(), false});
  }
  return Out;
}
