//===- GraphPrinter.cpp - the IR as stable text ---------------------------===//
//
// Format, one item per line:
//   input input_ids: int64[batch,seq]
//   weight fc.weight: float[1000,2048] external=model.bin
//   node 3 Conv 'conv1': x, w -> y {kernel_shape=[7,7], strides=[2,2]}
//   output logits: float[batch,1000]
// Attribute lists print in file order; tensors as their type and dims.
//
//===----------------------------------------------------------------------===//
#include "oomplan/IR/GraphPrinter.h"
#include "llvm/Support/Format.h"

using namespace oomplan;

void oomplan::printDeclaredType(llvm::raw_ostream &OS, const Graph &G,
                                const Value &V) {
  OS << (V.Type == ElementType::Undefined ? "?" : elementTypeName(V.Type));
  if (!V.HasDeclaredShape) {
    OS << "[?]";
    return;
  }
  OS << '[';
  for (size_t I = 0; I < V.Shape.size(); ++I) {
    if (I)
      OS << ',';
    const DeclaredDim &D = V.Shape[I];
    if (D.K == DeclaredDim::Kind::Static)
      OS << D.Size;
    else if (D.K == DeclaredDim::Kind::Symbol)
      OS << G.Symbols[D.Symbol];
    else
      OS << '?';
  }
  OS << ']';
}

template <typename T>
static void printList(llvm::raw_ostream &OS, const std::vector<T> &L) {
  OS << '[';
  for (size_t I = 0; I < L.size(); ++I)
    OS << (I ? "," : "") << L[I];
  OS << ']';
}

static void printTensorData(llvm::raw_ostream &OS, const TensorData &T) {
  OS << elementTypeName(T.Type);
  printList(OS, T.Dims);
  if (!T.Ints.empty() && T.Ints.size() <= 16) {
    OS << " = ";
    printList(OS, T.Ints);
  } else if (!T.Floats.empty() && T.Floats.size() <= 16) {
    OS << " = [";
    for (size_t I = 0; I < T.Floats.size(); ++I)
      OS << (I ? "," : "") << llvm::format("%g", T.Floats[I]);
    OS << ']';
  }
}

static void printAttr(llvm::raw_ostream &OS, const Attribute &A) {
  OS << A.Name << '=';
  switch (A.Kind) {
  case AttrKind::Int:
    OS << A.I;
    break;
  case AttrKind::Float:
    OS << llvm::format("%g", A.F);
    break;
  case AttrKind::String:
    OS << '"' << A.S << '"';
    break;
  case AttrKind::Ints:
    printList(OS, A.Ints);
    break;
  case AttrKind::Floats:
    OS << '[';
    for (size_t I = 0; I < A.Floats.size(); ++I)
      OS << (I ? "," : "") << llvm::format("%g", A.Floats[I]);
    OS << ']';
    break;
  case AttrKind::Strings:
    OS << '[';
    for (size_t I = 0; I < A.Strings.size(); ++I)
      OS << (I ? "," : "") << '"' << A.Strings[I] << '"';
    OS << ']';
    break;
  case AttrKind::Tensor:
    printTensorData(OS, *A.T);
    break;
  default:
    OS << "<unsupported>";
    break;
  }
}

void oomplan::printGraph(llvm::raw_ostream &OS, const Graph &G) {
  OS << "graph '" << G.Name << "' ir_version=" << G.IrVersion;
  for (const OpsetImport &O : G.Opsets)
    OS << " opset(" << (O.Domain.empty() ? "ai.onnx" : O.Domain)
       << ")=" << O.Version;
  OS << '\n';
  OS << "symbols:";
  for (const std::string &S : G.Symbols)
    OS << ' ' << S;
  OS << '\n';
  for (ValueId Id : G.Inputs) {
    OS << "input " << G.Values[Id].Name << ": ";
    printDeclaredType(OS, G, G.Values[Id]);
    OS << '\n';
  }
  for (ValueId Id : G.Weights) {
    const Value &V = G.Values[Id];
    OS << "weight " << V.Name << ": ";
    if (V.Data)
      printTensorData(OS, *V.Data);
    else
      printDeclaredType(OS, G, V);
    if (!V.ExternalLocation.empty())
      OS << " external=" << V.ExternalLocation;
    OS << '\n';
  }
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    const Node &Nd = G.Nodes[N];
    OS << "node " << N << ' ';
    if (!Nd.Domain.empty())
      OS << Nd.Domain << '.';
    OS << Nd.OpType;
    if (!Nd.Name.empty())
      OS << " '" << Nd.Name << "'";
    OS << ':';
    for (size_t I = 0; I < Nd.Inputs.size(); ++I)
      OS << (I ? ", " : " ")
         << (Nd.Inputs[I] == NoId ? "<none>" : G.Values[Nd.Inputs[I]].Name);
    OS << " ->";
    for (size_t I = 0; I < Nd.Outputs.size(); ++I)
      OS << (I ? ", " : " ")
         << (Nd.Outputs[I] == NoId ? "<none>" : G.Values[Nd.Outputs[I]].Name);
    if (!Nd.Attrs.empty()) {
      OS << " {";
      for (size_t I = 0; I < Nd.Attrs.size(); ++I) {
        OS << (I ? ", " : "");
        printAttr(OS, Nd.Attrs[I]);
      }
      OS << '}';
    }
    OS << '\n';
  }
  for (ValueId Id : G.Outputs) {
    OS << "output " << G.Values[Id].Name << ": ";
    printDeclaredType(OS, G, G.Values[Id]);
    OS << '\n';
  }
}
