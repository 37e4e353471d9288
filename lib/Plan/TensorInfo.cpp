//===- TensorInfo.cpp - what a plan tensor holds, which step runs ---------===//
//
// A tensor's printed type and formula come from the dims of the value it
// describes and the element type its bytes were counted in; both are checked
// against the bytes at the bound symbols before they are printed, so the
// text, the JSON and the report cannot show a formula or a type that does
// not give the size beside it.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Plan/TensorInfo.h"

using namespace oomplan;

ValueId oomplan::describedValue(const Schedule &S, const Graph &G, TensorId T) {
  const ScheduleTensor &ST = S.Tensors[T];
  if (ST.Value != NoId)
    return ST.Value;
  llvm::StringRef Name = ST.Name;
  // "grad(x)", "saved(grad(x))": peel one wrapper at a time.
  while (Name.endswith(")")) {
    size_t Open = Name.find('(');
    if (Open == llvm::StringRef::npos)
      break;
    Name = Name.slice(Open + 1, Name.size() - 1);
    ValueId V = G.findValue(Name);
    if (V != NoId)
      return V;
  }
  return NoId;
}

// F at C's bindings, when it can be evaluated.
static std::optional<int64_t> evaluate(const SymExpr &F, const PlanContext &C) {
  if (F.isConstant())
    return F.getConstant();
  auto V = F.evaluate(C.Bindings, C.Shapes.SymbolNames);
  if (!V) {
    // No value (unbound symbol, overflow) is this function's answer; the
    // planned byte count stands in for it.
    llvm::consumeError(V.takeError());
    return std::nullopt;
  }
  return *V;
}

// Bytes of VS's dims in element type T: the value's own formula when T is
// its type (the form shape inference wrote), else elements x bytes each.
static std::optional<SymExpr> bytesFormula(const ValueShape &VS,
                                           ElementType T) {
  if (T == VS.Type)
    return VS.Bytes;
  unsigned Bits = elementBits(T);
  if (Bits == 0)
    return std::nullopt;
  SymExpr Elements = SymExpr::constant(1);
  for (const SymExpr &D : VS.Dims)
    Elements *= D;
  if (Bits % 8 == 0)
    return Elements * SymExpr::constant(Bits / 8);
  return SymExpr::ceilDiv(Elements * SymExpr::constant(Bits),
                          SymExpr::constant(8));
}

TensorDescription oomplan::describeTensor(const Plan &P, const PlanContext &C,
                                          TensorId T) {
  const ScheduleTensor &ST = P.Sched.Tensors[T];
  TensorDescription Out;
  Out.Formula = SymExpr::constant(static_cast<int64_t>(ST.SizeBytes));
  Out.Value = describedValue(P.Sched, C.G, T);
  ValueId V = Out.Value;
  const ValueShape *VS =
      V != NoId && V < C.Shapes.Values.size() && C.Shapes.Values[V].Known
          ? &C.Shapes.Values[V]
          : nullptr;
  Out.Type = ST.Type;
  if (Out.Type == ElementType::Undefined && VS)
    Out.Type = VS->Type;
  // Without a value's dims that give the bytes, the transform's own formula
  // for a size it computed, kept only where it gives the bytes too.
  auto OwnFormula = [&]() {
    if (!ST.SizeFormula)
      return Out;
    std::optional<int64_t> At = evaluate(*ST.SizeFormula, C);
    if (At && *At >= 0 && static_cast<uint64_t>(*At) == ST.SizeBytes) {
      Out.Formula = *ST.SizeFormula;
      Out.HasFormula = true;
    }
    return Out;
  };
  if (!VS || Out.Type == ElementType::Undefined)
    return OwnFormula();
  std::optional<SymExpr> F = bytesFormula(*VS, Out.Type);
  std::optional<int64_t> At = F ? evaluate(*F, C) : std::nullopt;
  if (!At || *At < 0 || static_cast<uint64_t>(*At) != ST.SizeBytes)
    return OwnFormula(); // not these dims in this type: say nothing false
  Out.Formula = *F;
  Out.HasFormula = true;
  Out.TypeText = elementTypeName(Out.Type).str() + "[";
  for (size_t I = 0; I < VS->Dims.size(); ++I)
    Out.TypeText += (I ? "," : "") + VS->Dims[I].str(C.Shapes.SymbolNames);
  Out.TypeText += "]";
  // A boolean graph value counted in a float type: Dropout's mask as PyTorch
  // on the CPU keeps it (a tensor like the input), not ONNX's bool output.
  if (VS->Type == ElementType::Bool && isFloatingPoint(Out.Type))
    Out.Note = "mask counted in the input's type, as PyTorch on the CPU "
               "keeps it (its CUDA kernel keeps 1 byte per element)";
  return Out;
}

std::string oomplan::describeStep(const Schedule &S, const Graph &G,
                                  uint64_t Step) {
  if (Step >= S.Steps.size())
    return "";
  const oomplan::Step &St = S.Steps[Step];
  std::string Op =
      St.Kind == StepKind::Recompute ? "recompute " + St.Op : St.Op;
  if (St.Node == NoId || St.Node >= G.Nodes.size())
    return "(" + Op + ")";
  const Node &N = G.Nodes[St.Node];
  std::string Name = N.Name.empty() ? "node #" + std::to_string(St.Node)
                                    : "node '" + N.Name + "'";
  return Name + " (" + Op + ")";
}
