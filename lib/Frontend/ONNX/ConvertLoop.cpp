//===- ConvertLoop.cpp - Loop unrolled into the flat graph ----------------===//
//
// oomplan's graph is flat (If is flattened into guarded nodes), and a plan
// gives every tensor one place: a body run N times has N sets of tensors,
// possibly of N shapes (a carried value that grows by a Concat each time).
// So a Loop whose iteration count is known when importing is unrolled: the
// body's nodes once per iteration, each iteration a name scope of its own
// (ConvertIf.cpp's), reading the iteration number as a Constant, the
// condition as true, and the previous iteration's carried values. The
// Loop's outputs are Identity nodes of the last carried values and, for
// each scan output, a Concat of the iterations' values, each unsqueezed.
//
// "Known when importing" (ConvertKnown.cpp): the trip count M and the
// condition input are constants, and after each iteration the body's
// condition output is too (a constant, the condition passed through, or
// integer arithmetic on the iteration number, as a while loop with a
// constant bound has). A loop that runs while a data-dependent condition
// holds, or a count that depends on the data or a dynamic dim, is refused
// by name; so is one that would take the model's Loops past
// MaxUnrolledNodes nodes.
//
//===----------------------------------------------------------------------===//
#include "Converter.h"
#include "llvm/ADT/ScopeExit.h"

using namespace oomplan;

std::string Converter::nodeName(const onnx::NodeProto &N, size_t Index) const {
  if (!N.name().empty())
    return N.name() + NameSuffix;
  if (!Scopes.empty())
    return branchNodeName(Index);
  return N.op_type() + "#" + std::to_string(Index);
}

// True when G or a graph nested in it reads Name (or returns it): the
// iteration number gets a Constant per iteration only then.
static bool readsName(const onnx::GraphProto &G, const std::string &Name) {
  for (const onnx::ValueInfoProto &VI : G.output())
    if (VI.name() == Name)
      return true;
  for (const onnx::NodeProto &N : G.node()) {
    for (const std::string &In : N.input())
      if (In == Name)
        return true;
    for (const onnx::AttributeProto &A : N.attribute()) {
      if (A.has_g() && readsName(A.g(), Name))
        return true;
      for (const onnx::GraphProto &Sub : A.graphs())
        if (readsName(Sub, Name))
          return true;
    }
  }
  return false;
}

llvm::Error Converter::convertIteration(
    const onnx::GraphProto &Body, const std::string &Label,
    const std::string &Where, uint64_t K,
    llvm::function_ref<void(llvm::StringMap<std::string> &)> Bind,
    std::vector<std::string> &Outs) {
  // Nested Loops count their own iterations too.
  uint64_t BodySize = std::max(1, Body.node_size());
  if (UnrolledNodes + BodySize > MaxUnrolledNodes)
    return unsupported(Where +
                       ": unsupported: unrolling it would add more "
                       "than " +
                       llvm::Twine(MaxUnrolledNodes) +
                       " nodes (all Loops of the model together)");
  UnrolledNodes += BodySize;
  std::string SavedWhere = ScopeWhere, SavedName = ScopeName,
              SavedSuffix = NameSuffix;
  std::string Iter = std::to_string(K);
  ScopeWhere = " in iteration " + Iter + " of the body of " + Where;
  ScopeName = Label + "/iter" + Iter;
  NameSuffix += "@" + Iter;
  Scopes.emplace_back();
  auto Restore = llvm::make_scope_exit([&] {
    ScopeWhere = SavedWhere;
    ScopeName = SavedName;
    NameSuffix = SavedSuffix;
    Scopes.pop_back();
  });
  if (llvm::Error E = convertWeights(Body))
    return E;
  Bind(Scopes.back());
  for (const onnx::NodeProto &BN : Body.node())
    for (const std::string &Out : BN.output())
      if (!Out.empty())
        define(Out);
  for (int I = 0; I < Body.node_size(); ++I)
    if (llvm::Error E = convertNode(Body.node(I), I))
      return E;
  for (const onnx::ValueInfoProto &VI : Body.output()) {
    if (VI.name().empty() || !visible(VI.name()))
      return err(Where + ": its body returns '" + VI.name() +
                 "', which neither it nor the graphs around it define");
    Outs.push_back(resolve(VI.name()));
  }
  return llvm::Error::success();
}

std::string Converter::stackAlong(const std::vector<std::string> &Values,
                                  int64_t Axis, const std::string &Base,
                                  const std::string &Out) {
  NodeDesc D;
  D.Name = Base;
  D.OpType = "Concat";
  for (size_t I = 0; I < Values.size(); ++I)
    D.Inputs.push_back(addAxesOp("Unsqueeze", Values[I], Axis,
                                 Base + "/Unsqueeze@" + std::to_string(I)));
  D.Attrs.push_back(intAttr("axis", Axis));
  D.Outputs.push_back(Out);
  addNode(std::move(D));
  return Out;
}

llvm::Error Converter::convertLoop(const onnx::NodeProto &N, size_t Index,
                                   const std::string &Where) {
  std::string Label = !N.name().empty() || !Scopes.empty()
                          ? nodeName(N, Index)
                          : "Loop#" + std::to_string(Index);
  const onnx::GraphProto *Body = nullptr;
  for (const onnx::AttributeProto &A : N.attribute())
    if (A.name() == "body" && A.type() == onnx::AttributeProto::GRAPH)
      Body = &A.g();
  if (!Body)
    return err(Where + ": needs the graph attribute 'body'");
  // checkArity: at least M and cond, which may be empty names.
  size_t NumCarried = N.input_size() - 2;
  if (size_t(Body->input_size()) != NumCarried + 2)
    return err(Where + ": its body takes " + llvm::Twine(Body->input_size()) +
               " inputs; with " + llvm::Twine(NumCarried) +
               " carried values it needs " + llvm::Twine(NumCarried + 2) +
               " (the iteration number, the condition, the carried values)");
  if (size_t(Body->output_size()) < NumCarried + 1)
    return err(Where + ": its body returns " +
               llvm::Twine(Body->output_size()) + " values; with " +
               llvm::Twine(NumCarried) + " carried values it needs at least " +
               llvm::Twine(NumCarried + 1));
  size_t NumScan = Body->output_size() - 1 - NumCarried;
  if (size_t(N.output_size()) != NumCarried + NumScan)
    return err(Where + ": has " + llvm::Twine(N.output_size()) +
               " outputs; its body gives " + llvm::Twine(NumCarried) +
               " carried values and " + llvm::Twine(NumScan) + " scan outputs");

  auto Read = [&](int I, std::string &Flat) {
    return readInput(N, I, Where, Flat);
  };

  std::optional<int64_t> Trip;
  bool Cond = true;
  for (int I : {0, 1}) {
    if (N.input(I).empty())
      continue;
    std::string Flat;
    if (llvm::Error E = Read(I, Flat))
      return E;
    std::optional<int64_t> K = knownScalar(Flat);
    if (!K)
      return unsupported(
          Where + ": unsupported: its " +
          (I == 0 ? "trip count" : "condition") + " '" + N.input(I) +
          "' is not a constant when importing (it depends on the input data "
          "or a dynamic dim); oomplan plans a Loop by unrolling it, which "
          "needs to know how often it runs" +
          prefixFailure());
    if (I == 0)
      Trip = std::max<int64_t>(*K, 0);
    else
      Cond = *K != 0;
  }
  // One budget for the whole model: nested Loops multiply.
  uint64_t BodySize = std::max(1, Body->node_size());
  uint64_t Left = MaxUnrolledNodes - UnrolledNodes;
  uint64_t Limit = Trip ? static_cast<uint64_t>(*Trip) : Left / BodySize;
  if (Trip && Limit > Left / BodySize)
    return unsupported(Where + ": unsupported: unrolling its " +
                       llvm::Twine(Limit) + " iterations of " +
                       llvm::Twine(BodySize) + " nodes would add more than " +
                       llvm::Twine(MaxUnrolledNodes) +
                       " nodes (all Loops of the model together)");

  std::vector<std::string> Carried(NumCarried);
  for (size_t J = 0; J < NumCarried; ++J)
    if (llvm::Error E = Read(2 + J, Carried[J]))
      return E;
  std::vector<std::vector<std::string>> Scans(NumScan);
  std::string True;
  bool ReadsIteration =
      !Body->input(0).name().empty() && readsName(*Body, Body->input(0).name());
  uint64_t K = 0;
  for (; Cond && K < Limit; ++K) {
    std::vector<std::string> Outs;
    auto Bind = [&](llvm::StringMap<std::string> &Scope) {
      // The body's inputs name outer values: no node, only the scope's map.
      if (ReadsIteration)
        Scope[Body->input(0).name()] =
            addConstant(ScopeName + "/iteration", ElementType::Int64, {},
                        {static_cast<int64_t>(K)});
      if (!Body->input(1).name().empty()) {
        if (True.empty())
          True = addConstant(Label + "/condition", ElementType::Bool, {}, {1});
        Scope[Body->input(1).name()] = True;
      }
      for (size_t J = 0; J < NumCarried; ++J)
        if (!Body->input(2 + J).name().empty())
          Scope[Body->input(2 + J).name()] = Carried[J];
    };
    if (llvm::Error E = convertIteration(*Body, Label, Where, K, Bind, Outs))
      return E;
    std::optional<int64_t> Next = knownScalar(Outs[0]);
    if (!Next)
      return unsupported(
          Where + ": unsupported: its body's condition output '" +
          Body->output(0).name() +
          "' depends on the data (an exit known only when running); oomplan "
          "plans a Loop by unrolling it, which needs to know how often it "
          "runs");
    Cond = *Next != 0;
    for (size_t J = 0; J < NumCarried; ++J)
      Carried[J] = Outs[1 + J];
    for (size_t J = 0; J < NumScan; ++J) {
      if (Sequences.count(Outs[1 + NumCarried + J]))
        return unsupported(Where + ": unsupported: scan output '" +
                           Body->output(1 + NumCarried + J).name() +
                           "' is a sequence");
      Scans[J].push_back(Outs[1 + NumCarried + J]);
    }
  }
  if (!Trip && Cond)
    return unsupported(
        Where + ": unsupported: it did not end within " + llvm::Twine(Limit) +
        " iterations of unrolling (more than " + llvm::Twine(MaxUnrolledNodes) +
        " nodes, all Loops of the model together)");

  CurrentNode = Where;
  for (size_t J = 0; J < NumCarried; ++J) {
    const std::string &Out = N.output(J);
    if (Out.empty())
      continue;
    defineResult(Out, Carried[J], Label + "/v_final#" + std::to_string(J));
  }
  for (size_t J = 0; J < NumScan; ++J) {
    const std::string &Out = N.output(NumCarried + J);
    if (Out.empty())
      continue;
    if (Scans[J].empty())
      return unsupported(Where +
                         ": unsupported: it runs no iteration, so "
                         "the shape of scan output '" +
                         Out + "' is not known");
    stackAlong(Scans[J], 0, Label + "/scan#" + std::to_string(J), define(Out));
  }
  return llvm::Error::success();
}
