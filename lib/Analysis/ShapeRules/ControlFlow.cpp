//===- ControlFlow.cpp - the shapes of a flattened If ---------------------===//
//
// OomplanIf(cond, then_1..then_k, else_1..else_k) ends an If that the
// frontend flattened (IR/Graph.h). When the analysis knows the condition
// (shape arithmetic: "is this dim 1?", also of a tensor whose other dims
// are data-dependent: RuleContext::knownCondition), each output is the taken
// branch's result, contents included, and the driver has already marked the
// other branch's nodes as never running. Otherwise the condition is data (is
// any box left?), either branch may run, and each output is planned for the
// larger of the two: equal dims stay, different ones give max(a, b) and an
// upper bound that the run narrows. Different ranks or element types cannot
// be planned as one buffer of one shape, and are refused.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"

using namespace oomplan;
using namespace oomplan::shapes;

static std::optional<bool> constantCondition(const ValueShape &V,
                                             bool IgnoreBound) {
  if (!V.Known || (V.UpperBound && !IgnoreBound) || !V.IntValues ||
      V.IntValues->size() != 1)
    return std::nullopt;
  std::optional<int64_t> C = V.IntValues->front().getConstant();
  if (!C)
    return std::nullopt;
  return *C != 0;
}

std::optional<bool> shapes::knownCondition(const ValueShape &V,
                                           bool IgnoreBound,
                                           const ValueShape *Shadow) {
  if (std::optional<bool> C = constantCondition(V, IgnoreBound))
    return C;
  if (Shadow)
    return constantCondition(*Shadow, /*IgnoreBound=*/true);
  return std::nullopt;
}

std::optional<bool> RuleContext::knownCondition(size_t I) const {
  ValueId V = node().input(I);
  if (V == NoId)
    return std::nullopt;
  const ValueShape *Sh =
      Shadow && V < Shadow->Values.size() ? &Shadow->Values[V] : nullptr;
  return shapes::knownCondition(S.Values[V], DataDependentSymbols, Sh);
}

namespace {

llvm::Error ifSelect(RuleContext &Ctx) {
  size_t K = Ctx.numOutputs();
  if (Ctx.numInputs() != 1 + 2 * K)
    return Ctx.error("has " + llvm::Twine(Ctx.numInputs()) + " inputs for " +
                     llvm::Twine(K) +
                     " outputs; it takes the condition and both branches' "
                     "results (1 + 2 x outputs)");
  if (!Ctx.hasInput(0))
    return Ctx.error("has no condition");
  if (Ctx.inType(0) != ElementType::Bool)
    return Ctx.error("its condition is " + elementTypeName(Ctx.inType(0)) +
                     "; If needs a bool");
  std::optional<int64_t> N = constantNumElements(Ctx.inDims(0));
  if (N && *N != 1)
    return Ctx.error("its condition has " + llvm::Twine(*N) +
                     " elements; If needs a single bool");
  std::optional<bool> Taken = Ctx.knownCondition(0);
  if (!Taken && !Ctx.exactnessRun())
    Ctx.warn("the If's condition is known only at run time; both branches "
             "are planned");
  for (size_t I = 0; I < K; ++I) {
    size_t Then = 1 + I, Else = 1 + K + I;
    if (!Ctx.hasInput(Then) || !Ctx.hasInput(Else))
      return Ctx.error("output " + llvm::Twine(I) +
                       " has no result in one of the branches");
    if (Taken) {
      Ctx.setOutputLike(I, *Taken ? Then : Else, /*KeepValues=*/true);
      continue;
    }
    const ValueShape &A = Ctx.in(Then), &B = Ctx.in(Else);
    if (A.Type != B.Type && A.Type != ElementType::Undefined &&
        B.Type != ElementType::Undefined)
      return Ctx.error("output " + llvm::Twine(I) + " is " +
                       elementTypeName(A.Type) + " in then_branch and " +
                       elementTypeName(B.Type) + " in else_branch");
    if (A.Dims.size() != B.Dims.size())
      return Ctx.unsupported(
          "unsupported: output " + llvm::Twine(I) + " has rank " +
          llvm::Twine(A.Dims.size()) + " in then_branch and " +
          llvm::Twine(B.Dims.size()) +
          " in else_branch, and the condition is only known at run time; "
          "oomplan plans an If whose branches agree on ranks");
    std::vector<SymExpr> Dims;
    bool Same = true;
    for (size_t D = 0; D < A.Dims.size(); ++D) {
      Same &= A.Dims[D] == B.Dims[D];
      // The larger, which the run narrows to the taken branch's (the
      // kernel reports it: a size of its own in the exactness run).
      Dims.push_back(
          A.Dims[D] == B.Dims[D]
              ? A.Dims[D]
              : Ctx.dataDependent(SymExpr::max(A.Dims[D], B.Dims[D]), "if"));
    }
    ElementType Type = A.Type != ElementType::Undefined ? A.Type : B.Type;
    Ctx.setOutput(I, Type, std::move(Dims),
                  A.UpperBound || B.UpperBound || !Same);
    if (Same && A.IntValues && B.IntValues && *A.IntValues == *B.IntValues)
      Ctx.setOutputValues(I, *A.IntValues);
  }
  return llvm::Error::success();
}

} // namespace

void shapes::addControlFlowRules(RuleFunctions &F) {
  F.add(ops::ShapeRuleId::IfSelect, ifSelect);
}
