//===- ConvertFunction.cpp - model-local functions inlined ----------------===//
//
// A model may define functions (ModelProto.functions, IR version 8 on):
// exporters write a module as one (torch.onnx.export's
// export_modules_as_functions, onnxscript-authored models). A node whose
// domain and op type name such a function is a call: its body is converted
// in place, in a scope of its own (as an If branch is, ConvertIf.cpp), with
// the function's inputs bound to the call's and its outputs written straight
// to the call's, so inlining adds no copy. Attributes a body node takes by
// reference (ref_attr_name) get the call's value. A body reads only its
// inputs and its own values (a function is closed), may call other
// functions but not itself, and uses the model's default-domain opset.
//
//===----------------------------------------------------------------------===//
#include "Converter.h"
#include "llvm/ADT/ScopeExit.h"
#include <set>

using namespace oomplan;

void Converter::recordFunctions(const onnx::ModelProto &M) {
  for (const onnx::FunctionProto &F : M.functions()) {
    std::string Domain = F.domain() == "ai.onnx" ? "" : F.domain();
    Functions.insert({{Domain, F.name()}, &F});
  }
}

const onnx::FunctionProto *Converter::findFunction(const std::string &Domain,
                                                   const std::string &Op) {
  auto It = Functions.find({Domain, Op});
  return It == Functions.end() ? nullptr : It->second;
}

// Every name a body node reads is an input of the function or an output of
// an earlier body node; names read by subgraphs of If, Loop and Scan nodes
// are left to their own conversion.
static std::string firstUndefined(const onnx::FunctionProto &F) {
  std::set<std::string> Defined(F.input().begin(), F.input().end());
  for (const onnx::NodeProto &N : F.node()) {
    for (const std::string &In : N.input())
      if (!In.empty() && !Defined.count(In))
        return In;
    Defined.insert(N.output().begin(), N.output().end());
  }
  for (const std::string &Out : F.output())
    if (!Defined.count(Out))
      return Out;
  return "";
}

llvm::Error Converter::convertCall(const onnx::NodeProto &N,
                                   const onnx::FunctionProto &F, size_t Index,
                                   const std::string &Where) {
  std::string Fn = "function '" +
                   (F.domain().empty() ? std::string() : F.domain() + ".") +
                   F.name() + "'";
  for (const CallFrame &C : Calls)
    if (C.F == &F)
      return err(Where + ": " + Fn + " calls itself, which ONNX forbids");
  if (Calls.size() >= MaxCallDepth)
    return unsupported(Where + ": unsupported: functions nested deeper than " +
                       llvm::Twine(MaxCallDepth));
  if (N.input_size() > F.input_size() || N.output_size() > F.output_size())
    return err(Where + ": has " + llvm::Twine(N.input_size()) + " inputs and " +
               llvm::Twine(N.output_size()) + " outputs; " + Fn + " takes " +
               llvm::Twine(F.input_size()) + " and produces " +
               llvm::Twine(F.output_size()));
  std::string Undefined = firstUndefined(F);
  if (!Undefined.empty())
    return err(Where + ": " + Fn + " reads or returns '" + Undefined +
               "', which is neither its input nor made by its nodes");
  // The body's ops are read at the opsets the function imports: the model's
  // default one, and any other domain the model does not import itself.
  std::vector<std::string> AddedDomains;
  auto DropAdded = llvm::make_scope_exit([&] {
    for (const std::string &D : AddedDomains)
      OpsetByDomain.erase(D);
  });
  for (const onnx::OperatorSetIdProto &O : F.opset_import()) {
    std::string D = O.domain() == "ai.onnx" ? "" : O.domain();
    auto It = OpsetByDomain.find(D);
    if (It == OpsetByDomain.end()) {
      if (D.empty())
        return unsupported(Where + ": unsupported: " + Fn +
                           " imports the default domain, which the model "
                           "does not");
      OpsetByDomain[D] = O.version();
      AddedDomains.push_back(D);
    } else if (It->second != O.version()) {
      return unsupported(Where + ": unsupported: " + Fn + " imports opset " +
                         llvm::Twine(O.version()) + " of domain '" +
                         (D.empty() ? "ai.onnx" : D) + "', the model " +
                         llvm::Twine(It->second));
    }
  }
  uint64_t BodySize = std::max(1, F.node_size());
  if (UnrolledNodes + BodySize > MaxUnrolledNodes)
    return unsupported(Where +
                       ": unsupported: inlining it would add more "
                       "than " +
                       llvm::Twine(MaxUnrolledNodes) +
                       " nodes (all Loops and functions of the model "
                       "together)");
  UnrolledNodes += BodySize;
  // The call's inputs as the caller's scope names them, and its outputs
  // defined there.
  std::vector<std::string> Ins, Outs;
  for (int I = 0; I < N.input_size(); ++I) {
    std::string Flat;
    if (N.input(I).empty()) { // an omitted optional input
      Ins.push_back(Flat);
      continue;
    }
    if (llvm::Error E = readInput(N, I, Where, Flat))
      return E;
    Ins.push_back(Flat);
  }
  for (const std::string &Out : N.output())
    Outs.push_back(Out.empty() ? Out : define(Out));
  // The call's attributes (convertNode has resolved those it takes by
  // reference from a function around it).
  CallFrame Frame{&F, {}};
  for (const onnx::AttributeProto &A : N.attribute())
    Frame.Attrs[A.name()] = &A;
  std::string Label = N.name().empty() ? nodeName(N, Index) : N.name();
  std::string SavedWhere = ScopeWhere, SavedName = ScopeName,
              SavedSuffix = NameSuffix;
  ScopeWhere = " in " + Fn + " called by " + Where;
  ScopeName = Label + "/" + F.name();
  NameSuffix += "@" + Label;
  Scopes.emplace_back();
  Calls.push_back(std::move(Frame));
  auto Restore = llvm::make_scope_exit([&] {
    ScopeWhere = SavedWhere;
    ScopeName = SavedName;
    NameSuffix = SavedSuffix;
    Scopes.pop_back();
    Calls.pop_back();
  });
  llvm::StringMap<std::string> &Scope = Scopes.back();
  std::set<std::string> Inputs(F.input().begin(), F.input().end());
  for (int I = 0; I < F.input_size(); ++I)
    Scope[F.input(I)] = size_t(I) < Ins.size() ? Ins[I] : std::string();
  // An output a body node makes is written to the call's output directly;
  // one that is an input passes through an Identity below.
  for (int I = 0; I < F.output_size(); ++I)
    if (!Inputs.count(F.output(I)))
      Scope[F.output(I)] = size_t(I) < Outs.size() && !Outs[I].empty()
                               ? Outs[I]
                               : freshName(F.output(I));
  for (const onnx::NodeProto &BN : F.node())
    for (const std::string &Out : BN.output())
      if (!Out.empty())
        define(Out);
  for (int I = 0; I < F.node_size(); ++I)
    if (llvm::Error E = convertNode(F.node(I), I))
      return E;
  for (int I = 0; I < F.output_size() && size_t(I) < Outs.size(); ++I)
    if (Inputs.count(F.output(I)) && !Outs[I].empty())
      addIdentity(ScopeName + "/output" + std::to_string(I),
                  resolve(F.output(I)), Outs[I]);
  return llvm::Error::success();
}

llvm::Expected<const onnx::AttributeProto *>
Converter::referencedAttr(const onnx::AttributeProto &A,
                          const std::string &Where) {
  if (Calls.empty())
    return err(Where + ": attribute '" + A.name() + "' refers to '" +
               A.ref_attr_name() + "', but the node is not in a function");
  const CallFrame &C = Calls.back();
  auto It = C.Attrs.find(A.ref_attr_name());
  if (It != C.Attrs.end())
    return It->second;
  // Not given by the call: absent, unless the function has a default for
  // it (ONNX 1.13's attribute_proto, which ONNX 1.12 cannot read; such an
  // attribute is then missing from the names it declares).
  for (const std::string &Declared : C.F->attribute())
    if (Declared == A.ref_attr_name())
      return nullptr;
  return unsupported(Where + ": unsupported: attribute '" + A.name() +
                     "' refers to the function's '" + A.ref_attr_name() +
                     "', which the call does not give and the function "
                     "does not declare (a default, ONNX 1.13's "
                     "attribute_proto, is not read)");
}

llvm::Expected<onnx::NodeProto>
Converter::resolveAttributeRefs(const onnx::NodeProto &N,
                                const std::string &Where) {
  onnx::NodeProto Out = N;
  Out.clear_attribute();
  for (const onnx::AttributeProto &A : N.attribute()) {
    if (A.ref_attr_name().empty()) {
      *Out.add_attribute() = A;
      continue;
    }
    auto R = referencedAttr(A, Where);
    if (!R)
      return R.takeError();
    if (!*R)
      continue;
    onnx::AttributeProto *Copy = Out.add_attribute();
    *Copy = **R;
    Copy->set_name(A.name());
  }
  return Out;
}
