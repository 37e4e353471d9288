//===- GraphPrinter.h - the IR as stable text -------------------*- C++ -*-===//
//
// --emit=graph: one line per input, weight, node and output, in schedule
// order, so that lit tests and diffs read well. The format is stable.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_IR_GRAPHPRINTER_H
#define OOMPLAN_IR_GRAPHPRINTER_H

#include "oomplan/IR/Graph.h"
#include "llvm/Support/raw_ostream.h"

namespace oomplan {

/// Prints "float[batch,3,224,224]" for V's declared type and shape.
void printDeclaredType(llvm::raw_ostream &OS, const Graph &G, const Value &V);

/// Prints the whole graph.
void printGraph(llvm::raw_ostream &OS, const Graph &G);

} // namespace oomplan

#endif
