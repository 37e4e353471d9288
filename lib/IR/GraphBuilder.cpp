//===- GraphBuilder.cpp - building and checking a Graph -------------------===//
//
// Name resolution, single-definition and cycle checks, and the topological
// order. Kahn's algorithm with a min-heap on the file position keeps the
// file's order whenever it is already valid, so the default schedule is the
// exporter's order, which users recognise.
//
//===----------------------------------------------------------------------===//
#include "oomplan/IR/GraphBuilder.h"
#include "oomplan/Support/Error.h"
#include <functional>
#include <queue>

using namespace oomplan;

GraphBuilder::GraphBuilder(std::string SourcePath)
    : G(std::make_unique<Graph>()) {
  G->SourcePath = std::move(SourcePath);
}

llvm::Error GraphBuilder::error(const llvm::Twine &Msg) const {
  return makeInputError(G->SourcePath + ": " + Msg);
}

SymbolId GraphBuilder::getOrAddSymbol(llvm::StringRef Name) {
  auto [It, Inserted] = G->SymbolByName.try_emplace(
      Name, static_cast<SymbolId>(G->Symbols.size()));
  if (Inserted)
    G->Symbols.push_back(Name.str());
  return It->second;
}

static Value makeValue(ValueDesc &&D, ValueKind Kind) {
  Value V;
  V.Name = std::move(D.Name);
  V.Kind = Kind;
  V.Type = D.Type;
  V.HasDeclaredShape = D.HasShape;
  V.Shape = std::move(D.Shape);
  return V;
}

llvm::Error GraphBuilder::addInput(ValueDesc Desc) {
  if (Desc.Name.empty())
    return error("a graph input has an empty name");
  if (G->ValueByName.count(Desc.Name))
    return error("graph input '" + Desc.Name + "' is declared twice");
  ValueId Id = static_cast<ValueId>(G->Values.size());
  G->ValueByName[Desc.Name] = Id;
  G->Values.push_back(makeValue(std::move(Desc), ValueKind::GraphInput));
  G->Inputs.push_back(Id);
  return llvm::Error::success();
}

llvm::Error GraphBuilder::addWeight(ValueDesc Desc,
                                    std::shared_ptr<const TensorData> Data,
                                    std::string ExternalLocation) {
  if (Desc.Name.empty())
    return error("an initializer has an empty name");
  auto It = G->ValueByName.find(Desc.Name);
  ValueId Id;
  if (It != G->ValueByName.end()) {
    Value &Old = G->Values[It->second];
    if (Old.Kind == ValueKind::Weight)
      return error("initializer '" + Desc.Name + "' is declared twice");
    // An input that is also an initializer (IR version < 4 style): the
    // initializer is its default and it is a weight for planning.
    Id = It->second;
    llvm::erase_value(G->Inputs, Id);
    Old = makeValue(std::move(Desc), ValueKind::Weight);
  } else {
    Id = static_cast<ValueId>(G->Values.size());
    G->ValueByName[Desc.Name] = Id;
    G->Values.push_back(makeValue(std::move(Desc), ValueKind::Weight));
  }
  G->Values[Id].Data = std::move(Data);
  G->Values[Id].ExternalLocation = std::move(ExternalLocation);
  G->Weights.push_back(Id);
  return llvm::Error::success();
}

void GraphBuilder::addNode(NodeDesc Desc) {
  PendingNodes.push_back(std::move(Desc));
}
void GraphBuilder::addValueInfo(ValueDesc Desc) {
  ValueInfos.push_back(std::move(Desc));
}
void GraphBuilder::addOutput(ValueDesc Desc) {
  PendingOutputs.push_back(std::move(Desc));
}

void GraphBuilder::setModelInfo(std::string Name, int64_t IrVersion,
                                std::string Producer,
                                std::vector<OpsetImport> Opsets) {
  G->Name = std::move(Name);
  G->IrVersion = IrVersion;
  G->ProducerName = std::move(Producer);
  G->Opsets = std::move(Opsets);
}

static std::string describePending(const NodeDesc &N, size_t Index) {
  std::string Where = N.Name.empty() ? "node #" + std::to_string(Index)
                                     : "node '" + N.Name + "'";
  return Where + " (" + N.OpType + ")";
}

// Creates the node outputs and resolves every input name to a value id.
llvm::Error GraphBuilder::resolveNodes(std::vector<std::vector<ValueId>> &Ins) {
  std::vector<size_t> DefinedBy(G->Values.size(), SIZE_MAX);
  for (size_t I = 0; I < PendingNodes.size(); ++I) {
    for (const std::string &Out : PendingNodes[I].Outputs) {
      if (Out.empty())
        continue;
      auto It = G->ValueByName.find(Out);
      if (It != G->ValueByName.end()) {
        size_t Prev = DefinedBy[It->second];
        std::string By = Prev == SIZE_MAX
                             ? std::string("a graph input or initializer")
                             : describePending(PendingNodes[Prev], Prev);
        return error(describePending(PendingNodes[I], I) + ": value '" + Out +
                     "' is already defined by " + By);
      }
      ValueId Id = static_cast<ValueId>(G->Values.size());
      G->ValueByName[Out] = Id;
      Value V;
      V.Name = Out;
      V.Producer = static_cast<NodeId>(I);
      G->Values.push_back(std::move(V));
      DefinedBy.push_back(I);
    }
  }
  Ins.resize(PendingNodes.size());
  for (size_t I = 0; I < PendingNodes.size(); ++I) {
    for (const std::string &In : PendingNodes[I].Inputs) {
      if (In.empty()) {
        Ins[I].push_back(NoId);
        continue;
      }
      ValueId Id = G->findValue(In);
      if (Id == NoId)
        return error(describePending(PendingNodes[I], I) + ": input '" + In +
                     "' is not defined by any node, graph input or "
                     "initializer");
      Ins[I].push_back(Id);
    }
  }
  // Guard conditions resolve like inputs; orderNodes and the users lists
  // read them from GuardIns.
  GuardIns.assign(PendingNodes.size(), {});
  for (size_t I = 0; I < PendingNodes.size(); ++I)
    for (const auto &[Cond, WhenTrue] : PendingNodes[I].Guards) {
      ValueId Id = G->findValue(Cond);
      if (Id == NoId)
        return error(describePending(PendingNodes[I], I) + ": condition '" +
                     Cond +
                     "' is not defined by any node, graph input or "
                     "initializer");
      GuardIns[I].push_back({Id, WhenTrue});
    }
  return llvm::Error::success();
}

// Topological order, preferring file order; a leftover node is on a cycle or
// downstream of one, so walk back through unscheduled producers to name a
// node that really is on the cycle.
llvm::Error
GraphBuilder::orderNodes(const std::vector<std::vector<ValueId>> &Ins) {
  size_t N = PendingNodes.size();
  std::vector<unsigned> Missing(N, 0);
  std::vector<std::vector<size_t>> Consumers(N);
  // A guarded node depends on its conditions as on its inputs.
  auto Deps = [&](size_t I) {
    std::vector<ValueId> D = Ins[I];
    for (const Guard &Gd : GuardIns[I])
      D.push_back(Gd.Cond);
    return D;
  };
  for (size_t I = 0; I < N; ++I)
    for (ValueId V : Deps(I))
      if (V != NoId && G->Values[V].Kind == ValueKind::NodeOutput) {
        ++Missing[I];
        Consumers[G->Values[V].Producer].push_back(I);
      }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> Ready;
  for (size_t I = 0; I < N; ++I)
    if (Missing[I] == 0)
      Ready.push(I);
  std::vector<size_t> Order;
  Order.reserve(N);
  while (!Ready.empty()) {
    size_t I = Ready.top();
    Ready.pop();
    Order.push_back(I);
    for (size_t C : Consumers[I])
      if (--Missing[C] == 0)
        Ready.push(C);
  }
  if (Order.size() != N) {
    size_t Cur = 0;
    while (Missing[Cur] == 0)
      ++Cur;
    std::vector<bool> Seen(N, false);
    while (!Seen[Cur]) {
      Seen[Cur] = true;
      for (ValueId V : Deps(Cur))
        if (V != NoId && G->Values[V].Kind == ValueKind::NodeOutput &&
            Missing[G->Values[V].Producer] != 0) {
          Cur = G->Values[V].Producer;
          break;
        }
    }
    return error(describePending(PendingNodes[Cur], Cur) +
                 ": the graph has a cycle through this node");
  }
  std::vector<NodeId> NewIndex(N);
  for (size_t Pos = 0; Pos < N; ++Pos)
    NewIndex[Order[Pos]] = static_cast<NodeId>(Pos);
  G->Nodes.resize(N);
  for (size_t Pos = 0; Pos < N; ++Pos) {
    size_t Old = Order[Pos];
    NodeDesc &D = PendingNodes[Old];
    Node &Nd = G->Nodes[Pos];
    Nd.Name = std::move(D.Name);
    Nd.OpType = std::move(D.OpType);
    Nd.Domain = std::move(D.Domain);
    Nd.Attrs = std::move(D.Attrs);
    Nd.Inputs = Ins[Old];
    Nd.Guards = GuardIns[Old];
    Nd.SourceNode = std::move(D.SourceNode);
    for (const std::string &Out : D.Outputs)
      Nd.Outputs.push_back(Out.empty() ? NoId : G->findValue(Out));
  }
  for (Value &V : G->Values)
    if (V.Kind == ValueKind::NodeOutput)
      V.Producer = NewIndex[V.Producer];
  for (NodeId Id = 0; Id < N; ++Id)
    for (ValueId V : G->Nodes[Id].reads())
      if (V != NoId &&
          (G->Values[V].Users.empty() || G->Values[V].Users.back() != Id))
        G->Values[V].Users.push_back(Id);
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Graph>> GraphBuilder::snapshot() const {
  GraphBuilder Copy(G->SourcePath);
  *Copy.G = *G;
  Copy.PendingNodes = PendingNodes;
  Copy.ValueInfos = ValueInfos;
  return Copy.finish();
}

bool GraphBuilder::appendToPrefix() {
  Graph &P = *Prefix;
  for (size_t I = PrefixNodes; I < PendingNodes.size(); ++I) {
    const NodeDesc &D = PendingNodes[I];
    Node Nd;
    for (const std::string &In : D.Inputs) {
      ValueId Id = In.empty() ? NoId : P.findValue(In);
      if (!In.empty() && Id == NoId)
        return false;
      Nd.Inputs.push_back(Id);
    }
    for (const auto &[Cond, WhenTrue] : D.Guards) {
      ValueId Id = P.findValue(Cond);
      if (Id == NoId)
        return false;
      Nd.Guards.push_back({Id, WhenTrue});
    }
    const NodeId Self = static_cast<NodeId>(P.Nodes.size());
    for (const std::string &Out : D.Outputs) {
      if (Out.empty()) {
        Nd.Outputs.push_back(NoId);
        continue;
      }
      if (P.findValue(Out) != NoId)
        return false;
      ValueId Id = static_cast<ValueId>(P.Values.size());
      P.ValueByName[Out] = Id;
      Value V;
      V.Name = Out;
      V.Producer = Self;
      P.Values.push_back(std::move(V));
      Nd.Outputs.push_back(Id);
    }
    Nd.Name = D.Name;
    Nd.OpType = D.OpType;
    Nd.Domain = D.Domain;
    Nd.Attrs = D.Attrs;
    Nd.SourceNode = D.SourceNode;
    for (ValueId V : Nd.reads())
      if (V != NoId &&
          (P.Values[V].Users.empty() || P.Values[V].Users.back() != Self))
        P.Values[V].Users.push_back(Self);
    P.Nodes.push_back(std::move(Nd));
  }
  PrefixNodes = PendingNodes.size();
  return true;
}

llvm::Expected<const Graph *> GraphBuilder::prefix() {
  bool Extended = Prefix && PrefixBaseValues == G->Values.size() &&
                  PrefixSymbols == G->Symbols.size() && ValueInfos.empty() &&
                  PendingOutputs.empty() && appendToPrefix();
  if (!Extended) {
    auto S = snapshot();
    if (!S) {
      Prefix.reset();
      return S.takeError();
    }
    Prefix = std::move(*S);
    PrefixNodes = PendingNodes.size();
    PrefixBaseValues = G->Values.size();
    PrefixSymbols = G->Symbols.size();
  }
  return Prefix.get();
}

llvm::Expected<std::unique_ptr<Graph>> GraphBuilder::finish() {
  std::vector<std::vector<ValueId>> Ins;
  if (llvm::Error E = resolveNodes(Ins))
    return E;
  if (llvm::Error E = orderNodes(Ins))
    return E;
  // Declared types and shapes: value_info first, graph outputs override.
  auto Apply = [&](ValueDesc &D) {
    Value &V = G->Values[G->findValue(D.Name)];
    if (D.Type != ElementType::Undefined)
      V.Type = D.Type;
    if (D.HasShape) {
      V.HasDeclaredShape = true;
      V.Shape = D.Shape;
    }
  };
  // value_info only describes computed values: an initializer's own dims and
  // a graph input's declaration are authoritative (a conflicting value_info
  // would make kept contents disagree with the dims).
  for (ValueDesc &D : ValueInfos) {
    ValueId Id = G->findValue(D.Name);
    if (Id != NoId && G->Values[Id].Kind == ValueKind::NodeOutput)
      Apply(D);
  }
  for (ValueDesc &D : PendingOutputs) {
    ValueId Id = G->findValue(D.Name);
    if (Id == NoId)
      return error("graph output '" + D.Name +
                   "' is not defined by any node, graph input or initializer");
    if (G->Values[Id].IsGraphOutput)
      return error("graph output '" + D.Name + "' is listed twice");
    G->Values[Id].IsGraphOutput = true;
    G->Outputs.push_back(Id);
    if (G->Values[Id].Kind == ValueKind::NodeOutput)
      Apply(D);
  }
  return std::move(G);
}
