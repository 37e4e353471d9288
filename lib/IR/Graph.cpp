//===- Graph.cpp - the oomplan graph IR -----------------------------------===//
//
// Lookups and descriptions over an immutable Graph.
//
//===----------------------------------------------------------------------===//
#include "oomplan/IR/Graph.h"
#include "llvm/Support/raw_ostream.h"

using namespace oomplan;

uint64_t TensorData::numElements() const {
  uint64_t N = 1;
  for (int64_t D : Dims)
    N *= static_cast<uint64_t>(D);
  return N;
}

const Attribute *Node::attr(llvm::StringRef AttrName) const {
  for (const Attribute &A : Attrs)
    if (A.Name == AttrName)
      return &A;
  return nullptr;
}

int64_t Node::getInt(llvm::StringRef AttrName, int64_t Default) const {
  const Attribute *A = attr(AttrName);
  return A && A->Kind == AttrKind::Int ? A->I : Default;
}

double Node::getFloat(llvm::StringRef AttrName, double Default) const {
  const Attribute *A = attr(AttrName);
  return A && A->Kind == AttrKind::Float ? A->F : Default;
}

std::string Node::getString(llvm::StringRef AttrName,
                            llvm::StringRef Default) const {
  const Attribute *A = attr(AttrName);
  return A && A->Kind == AttrKind::String ? A->S : Default.str();
}

std::optional<std::vector<int64_t>>
Node::getInts(llvm::StringRef AttrName) const {
  const Attribute *A = attr(AttrName);
  if (!A || A->Kind != AttrKind::Ints)
    return std::nullopt;
  return A->Ints;
}

ValueId Graph::findValue(llvm::StringRef ValueName) const {
  auto It = ValueByName.find(ValueName);
  return It == ValueByName.end() ? NoId : It->second;
}

SymbolId Graph::findSymbol(llvm::StringRef SymbolName) const {
  auto It = SymbolByName.find(SymbolName);
  return It == SymbolByName.end() ? NoId : It->second;
}

int64_t Graph::defaultOpset() const {
  for (const OpsetImport &O : Opsets)
    if (O.Domain.empty() || O.Domain == "ai.onnx")
      return O.Version;
  return 0;
}

std::string Graph::describeNode(NodeId Id) const {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  const Node &N = Nodes[Id];
  if (N.Name.empty())
    OS << "node #" << Id;
  else
    OS << "node '" << N.Name << "'";
  OS << " (" << N.OpType << ")";
  return OS.str();
}

std::vector<ValueId> Node::reads() const {
  std::vector<ValueId> R = Inputs;
  for (const Guard &G : Guards)
    R.push_back(G.Cond);
  return R;
}
