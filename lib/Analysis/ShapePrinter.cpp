//===- ShapePrinter.cpp - the --emit=shapes listing -----------------------===//
//
// One line per value, in a stable order (graph inputs, weights, node outputs
// in schedule order), so lit tests can FileCheck the analysis:
//
//   value /Add_output_0: float[batch, seq, 768] bytes=3072*batch*seq = 6291456
//
// "= N" appears when every symbol of the formula is bound. Shape tensors also
// print their tracked contents: values=[batch, seq, 12, 64].
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/ShapeInference.h"

using namespace oomplan;

static void printExprList(llvm::raw_ostream &OS, llvm::ArrayRef<SymExpr> L,
                          llvm::ArrayRef<std::string> Names) {
  OS << '[';
  for (size_t I = 0; I < L.size(); ++I) {
    if (I)
      OS << ", ";
    L[I].print(OS, Names);
  }
  OS << ']';
}

static llvm::StringRef kindWord(const Value &V) {
  if (V.Kind == ValueKind::GraphInput)
    return "input";
  if (V.Kind == ValueKind::Weight)
    return "weight";
  return V.IsGraphOutput ? "output" : "value";
}

static void printValue(llvm::raw_ostream &OS, const Value &V,
                       const ValueShape &VS, const ShapeInfo &S,
                       llvm::ArrayRef<std::optional<int64_t>> Bindings) {
  OS << kindWord(V) << ' ' << V.Name << ": ";
  if (!VS.Known) {
    OS << "unknown\n";
    return;
  }
  OS << elementTypeName(VS.Type);
  printExprList(OS, VS.Dims, S.SymbolNames);
  OS << " bytes=";
  VS.Bytes.print(OS, S.SymbolNames);
  llvm::SmallVector<SymbolId, 4> Syms;
  VS.Bytes.collectSymbols(Syms);
  bool AllBound = true;
  for (SymbolId Id : Syms)
    AllBound &= Id < Bindings.size() && Bindings[Id].has_value();
  if (!Syms.empty() && AllBound) {
    llvm::Expected<int64_t> N = VS.Bytes.evaluate(Bindings, S.SymbolNames);
    if (N)
      OS << " = " << *N;
    else
      OS << " = <" << llvm::toString(N.takeError()) << ">";
  }
  if (VS.UpperBound)
    OS << " (upper bound)";
  if (V.Kind == ValueKind::NodeOutput && neverRuns(S, V.Producer))
    OS << " (branch not taken)";
  if (VS.IntValues && V.Kind != ValueKind::Weight) {
    OS << " values=";
    printExprList(OS, *VS.IntValues, S.SymbolNames);
  }
  OS << '\n';
}

void oomplan::printShapes(llvm::raw_ostream &OS, const Graph &G,
                          const ShapeInfo &S,
                          llvm::ArrayRef<std::optional<int64_t>> Bindings) {
  OS << "symbols:";
  for (size_t I = 0; I < S.SymbolNames.size(); ++I) {
    OS << ' ' << S.SymbolNames[I];
    if (I < Bindings.size() && Bindings[I])
      OS << '=' << *Bindings[I];
  }
  OS << '\n';
  for (ValueId Id : G.Inputs)
    printValue(OS, G.Values[Id], S.Values[Id], S, Bindings);
  for (ValueId Id : G.Weights)
    printValue(OS, G.Values[Id], S.Values[Id], S, Bindings);
  for (const Node &N : G.Nodes)
    for (ValueId Id : N.Outputs)
      if (Id != NoId)
        printValue(OS, G.Values[Id], S.Values[Id], S, Bindings);
  for (const std::string &W : S.Warnings)
    OS << "warning: " << W << '\n';
}
