//===- Recurrent.cpp - rules for RNN, GRU and LSTM ------------------------===//
//
// The three recurrent ops share one layout: X is [seq, batch, input]
// (layout 1: [batch, seq, input]), W is [num_directions, gates*hidden,
// input]. Outputs Y, Y_h (and LSTM's Y_c) follow the same layout switch.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"

using namespace oomplan;
using namespace oomplan::shapes;

namespace {

llvm::Error recurrent(RuleContext &Ctx) {
  llvm::ArrayRef<SymExpr> X = Ctx.inDims(0), W = Ctx.inDims(1);
  if (X.size() != 3 || W.size() != 3)
    return Ctx.error("X and W must be 3-D");
  llvm::StringRef Op = Ctx.node().OpType;
  int64_t Gates = Op == "LSTM" ? 4 : Op == "GRU" ? 3 : 1;
  SymExpr Hidden;
  if (Ctx.node().attr("hidden_size"))
    Hidden = SymExpr::constant(Ctx.node().getInt("hidden_size", 0));
  else
    Hidden = SymExpr::floorDiv(W[1], SymExpr::constant(Gates));
  bool BatchFirst = Ctx.node().getInt("layout", 0) != 0;
  const SymExpr &Seq = BatchFirst ? X[1] : X[0];
  const SymExpr &Batch = BatchFirst ? X[0] : X[1];
  std::string Dir = Ctx.node().getString("direction", "forward");
  SymExpr NumDir = SymExpr::constant(Dir == "bidirectional" ? 2 : 1);
  ElementType T = Ctx.inType(0);
  if (BatchFirst) {
    Ctx.setOutput(0, T, {Batch, Seq, NumDir, Hidden});
    Ctx.setOutput(1, T, {Batch, NumDir, Hidden});
    Ctx.setOutput(2, T, {Batch, NumDir, Hidden});
  } else {
    Ctx.setOutput(0, T, {Seq, NumDir, Batch, Hidden});
    Ctx.setOutput(1, T, {NumDir, Batch, Hidden});
    Ctx.setOutput(2, T, {NumDir, Batch, Hidden});
  }
  return llvm::Error::success();
}

} // namespace

void shapes::addRecurrentRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::Recurrent, recurrent);
}
