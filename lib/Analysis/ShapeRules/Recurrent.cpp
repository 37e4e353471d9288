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
  std::string Dir = Ctx.node().getString("direction", "forward");
  if (Dir != "forward" && Dir != "reverse" && Dir != "bidirectional")
    return Ctx.error("direction must be forward, reverse or bidirectional, "
                     "not '" +
                     Dir + "'");
  int64_t Dirs = Dir == "bidirectional" ? 2 : 1;
  SymExpr Hidden;
  if (Ctx.node().attr("hidden_size")) {
    int64_t H = Ctx.node().getInt("hidden_size", 0);
    if (H <= 0)
      return Ctx.error("hidden_size must be positive, got " +
                       std::to_string(H));
    Hidden = SymExpr::constant(H);
  } else {
    Hidden = SymExpr::floorDiv(W[1], SymExpr::constant(Gates));
  }
  // Only 0 and 1 mean anything; the kernels read 1 as batch-major and
  // anything else as sequence-major, so another value sized the outputs
  // one way and ran them the other (a GRU with layout 96 wrote past Y).
  const int64_t Layout = Ctx.node().getInt("layout", 0);
  if (Layout != 0 && Layout != 1)
    return Ctx.error("layout must be 0 (sequence first) or 1 (batch first), "
                     "got " +
                     std::to_string(Layout));
  bool BatchFirst = Layout == 1;
  const SymExpr &Seq = BatchFirst ? X[1] : X[0];
  const SymExpr &Batch = BatchFirst ? X[0] : X[1];
  // A weight that contradicts the attributes would size every state wrong
  // (a hidden_size of 2^40 on a [1, 32, 4] W planned 84 TiB): W is
  // [directions, gates x hidden, input], R [directions, gates x hidden,
  // hidden]; checked wherever the dims are numbers.
  auto Check = [&](const SymExpr &Got, const SymExpr &Want, const char *What,
                   size_t Axis) -> llvm::Error {
    std::optional<int64_t> G = Got.getConstant(), E = Want.getConstant();
    if (G && E && *G != *E)
      return Ctx.error(std::string(What) + " dim " + std::to_string(Axis) +
                       " is " + std::to_string(*G) + ", " + Op.str() +
                       " (direction " + Dir + ", " + std::to_string(Gates) +
                       " gates, input and hidden sizes from X and the "
                       "attributes) needs " +
                       std::to_string(*E));
    return llvm::Error::success();
  };
  SymExpr GateRows = SymExpr::constant(Gates) * Hidden;
  if (llvm::Error E = Check(W[0], SymExpr::constant(Dirs), "W", 0))
    return E;
  if (llvm::Error E = Check(W[1], GateRows, "W", 1))
    return E;
  if (llvm::Error E = Check(W[2], X[2], "W", 2))
    return E;
  if (Ctx.hasInput(2)) {
    llvm::ArrayRef<SymExpr> R = Ctx.inDims(2);
    if (R.size() != 3)
      return Ctx.error("R must be 3-D");
    if (llvm::Error E = Check(R[0], SymExpr::constant(Dirs), "R", 0))
      return E;
    if (llvm::Error E = Check(R[1], GateRows, "R", 1))
      return E;
    if (llvm::Error E = Check(R[2], Hidden, "R", 2))
      return E;
  }
  SymExpr NumDir = SymExpr::constant(Dirs);
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
