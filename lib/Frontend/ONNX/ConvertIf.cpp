//===- ConvertIf.cpp - If flattened into guarded nodes --------------------===//
//
// oomplan's graph is flat: an If becomes the nodes of both branches, each
// guarded by the If's condition (then_branch when it is true, else_branch
// when false; a nested If adds its own), followed by an OomplanIf node that
// reads the condition and both branches' results and writes the If's
// outputs. The planner then places both branches' tensors (an upper bound:
// one branch runs), shape inference marks a branch whose condition it knows
// as never running, and a run skips the steps of the branch not taken.
//
// A branch reads outer values by name and may reuse names a sibling branch
// or the top level defines later, so each branch is a scope: a value it
// defines gets its own name, with a ".N" suffix when the name is taken. A
// branch sees its own values and those of the graphs around it, never a
// sibling branch's; the top level sees none of the branches'.
//
//===----------------------------------------------------------------------===//
#include "Converter.h"
#include "llvm/ADT/ScopeExit.h"

using namespace oomplan;

void Converter::reserveTopLevelNames(const onnx::GraphProto &GP) {
  for (const onnx::ValueInfoProto &VI : GP.input())
    TopLevel.insert(VI.name());
  for (const onnx::TensorProto &T : GP.initializer())
    TopLevel.insert(T.name());
  for (const onnx::SparseTensorProto &S : GP.sparse_initializer())
    TopLevel.insert(S.values().name());
  for (const onnx::NodeProto &N : GP.node())
    for (const std::string &Out : N.output())
      TopLevel.insert(Out);
  for (const auto &Name : TopLevel)
    Taken.insert(Name.getKey());
}

bool Converter::visible(const std::string &Local) const {
  for (const llvm::StringMap<std::string> &Scope : Scopes)
    if (Scope.count(Local))
      return true;
  return TopLevel.count(Local) != 0;
}

llvm::Error Converter::checkVisible(const std::string &Local,
                                    const std::string &Where) {
  if (visible(Local))
    return llvm::Error::success();
  if (!Scopes.empty())
    return err(Where + ": input '" + Local +
               "' is not defined by the branch or the graphs around it");
  // At the top level an undefined name is GraphBuilder's to report; one
  // that only a branch defines would silently read a branch's value.
  if (Taken.count(Local))
    return err(Where + ": input '" + Local +
               "' is defined only inside an If branch, which the graph "
               "around it cannot read");
  return llvm::Error::success();
}

std::string Converter::resolve(const std::string &Local) const {
  for (auto It = Scopes.rbegin(); It != Scopes.rend(); ++It) {
    auto Found = It->find(Local);
    if (Found != It->end())
      return Found->second;
  }
  return Local;
}

std::string Converter::define(const std::string &Local) {
  if (Scopes.empty())
    return Local;
  // A second definition in the same branch keeps the first's name, so that
  // GraphBuilder reports it as the model's error.
  auto Found = Scopes.back().find(Local);
  if (Found != Scopes.back().end())
    return Found->second;
  std::string Name = freshName(Local);
  Scopes.back()[Local] = Name;
  return Name;
}

std::string Converter::branchNodeName(size_t Index) const {
  return ScopeName + "/#" + std::to_string(Index);
}

llvm::Error
Converter::convertBranch(const onnx::GraphProto &Branch, llvm::StringRef Attr,
                         const std::string &Where, const std::string &IfLabel,
                         size_t NumOutputs, std::vector<std::string> &Outs) {
  if (Branch.input_size() != 0)
    return err(Where + ": its " + Attr + " declares " +
               llvm::Twine(Branch.input_size()) +
               " inputs; an If branch takes none");
  if (size_t(Branch.output_size()) != NumOutputs)
    return err(Where + ": has " + llvm::Twine(NumOutputs) +
               " outputs but its " + Attr + " returns " +
               llvm::Twine(Branch.output_size()));
  std::string SavedWhere = ScopeWhere, SavedName = ScopeName;
  ScopeWhere = " in " + Attr.str() + " of " + Where;
  ScopeName = IfLabel + "/" + Attr.str();
  Scopes.emplace_back();
  auto Restore = llvm::make_scope_exit([&] {
    ScopeWhere = SavedWhere;
    ScopeName = SavedName;
    Scopes.pop_back();
  });
  if (llvm::Error E = convertWeights(Branch))
    return E;
  // Every value the branch defines gets its name first, so that a read
  // resolves to the branch's own value whatever the node order.
  for (const onnx::NodeProto &N : Branch.node())
    for (const std::string &Out : N.output())
      if (!Out.empty())
        define(Out);
  for (int I = 0; I < Branch.node_size(); ++I)
    if (llvm::Error E = convertNode(Branch.node(I), I))
      return E;
  // Declared types and shapes of the values this branch defines (a branch
  // output that is an outer value keeps the outer declaration).
  auto Declare = [&](const onnx::ValueInfoProto &VI,
                     bool RequireTensor) -> llvm::Error {
    auto D = convertValueInfo(VI, RequireTensor);
    if (!D)
      return D.takeError();
    auto Own = Scopes.back().find(VI.name());
    if (Own == Scopes.back().end())
      return llvm::Error::success();
    D->Name = Own->second;
    B.addValueInfo(std::move(*D));
    return llvm::Error::success();
  };
  for (const onnx::ValueInfoProto &VI : Branch.value_info())
    if (llvm::Error E = Declare(VI, /*RequireTensor=*/false))
      return E;
  for (const onnx::ValueInfoProto &VI : Branch.output()) {
    if (VI.name().empty())
      return err(Where + ": its " + Attr + " has an output with no name");
    if (llvm::Error E = Declare(VI, /*RequireTensor=*/true))
      return E;
    if (!visible(VI.name()))
      return err(Where + ": its " + Attr + " returns '" + VI.name() +
                 "', which neither it nor the graphs around it define");
    Outs.push_back(resolve(VI.name()));
  }
  return llvm::Error::success();
}

llvm::Error Converter::convertIf(const onnx::NodeProto &N, size_t Index,
                                 const std::string &Where) {
  // Its name, or one saying where it is: the OomplanIf and the branches'
  // unnamed nodes are named after it.
  std::string Label = !N.name().empty() ? N.name() + NameSuffix
                      : ScopeName.empty()
                          ? "If#" + std::to_string(Index)
                          : ScopeName + "/If#" + std::to_string(Index);
  const onnx::GraphProto *Then = nullptr, *Else = nullptr;
  for (const onnx::AttributeProto &A : N.attribute()) {
    if (A.type() != onnx::AttributeProto::GRAPH)
      return err(Where + ": attribute '" + A.name() +
                 "' is not a graph; If takes only then_branch and "
                 "else_branch");
    if (A.name() == "then_branch")
      Then = &A.g();
    else if (A.name() == "else_branch")
      Else = &A.g();
  }
  if (!Then || !Else)
    return err(Where + ": needs both graph attributes then_branch and "
                       "else_branch");
  // checkArity: exactly one input, the condition, and it is not empty.
  if (llvm::Error E = checkVisible(N.input(0), Where))
    return E;
  std::string Cond = resolve(N.input(0));
  std::vector<std::string> ThenOuts, ElseOuts;
  for (bool ThenSide : {true, false}) {
    Guards.push_back({Cond, ThenSide});
    llvm::Error E = convertBranch(
        ThenSide ? *Then : *Else, ThenSide ? "then_branch" : "else_branch",
        Where, Label, N.output_size(), ThenSide ? ThenOuts : ElseOuts);
    Guards.pop_back();
    if (E)
      return E;
  }
  for (const std::vector<std::string> *Outs : {&ThenOuts, &ElseOuts})
    for (const std::string &Out : *Outs)
      if (Sequences.count(Out))
        return unsupported(Where +
                           ": unsupported: a branch returns the "
                           "sequence '" +
                           Out + "'; oomplan selects tensors only");
  CurrentNode = Where;
  NodeDesc D;
  D.Name = Label;
  D.OpType = IfSelectOp.str();
  D.Inputs.push_back(Cond);
  D.Inputs.insert(D.Inputs.end(), ThenOuts.begin(), ThenOuts.end());
  D.Inputs.insert(D.Inputs.end(), ElseOuts.begin(), ElseOuts.end());
  for (const std::string &Out : N.output())
    D.Outputs.push_back(Out.empty() ? Out : define(Out));
  D.Guards = Guards;
  B.addNode(std::move(D));
  return llvm::Error::success();
}
