//===- ShapeInference.cpp - the shape inference driver --------------------===//
//
// Seeds graph inputs and weights from their declared shapes and stored
// contents, then runs each node's rule in schedule order. A node whose op has
// no rule may still use the file's declared shapes when they are complete and
// static (with a warning); anything less is an error, never a guess.
//
//===----------------------------------------------------------------------===//
#include "ConstantFold.h"
#include "ShapeRules/ShapeRules.h"
#include "oomplan/Support/Error.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::shapes;

SymExpr oomplan::numElements(llvm::ArrayRef<SymExpr> Dims) {
  SymExpr N = SymExpr::constant(1);
  for (const SymExpr &D : Dims)
    N = N * D;
  return N;
}

SymExpr oomplan::tensorBytes(ElementType Type, llvm::ArrayRef<SymExpr> Dims) {
  unsigned Bits = elementBits(Type);
  SymExpr N = numElements(Dims);
  if (Bits % 8 == 0)
    return N * SymExpr::constant(Bits / 8);
  return SymExpr::ceilDiv(N * SymExpr::constant(Bits), SymExpr::constant(8));
}

size_t oomplan::numShapeRules() { return shapeRuleTable().size(); }

bool oomplan::hasShapeRule(llvm::StringRef OpType) {
  return shapeRuleTable().count(OpType);
}

namespace {

/// Integer contents of a stored tensor, when it is small and integer-like.
std::optional<std::vector<SymExpr>> intContents(const TensorData &D) {
  if (!isIntegerLike(D.Type) ||
      D.numElements() > uint64_t(MaxTrackedElements) ||
      D.Ints.size() != D.numElements())
    return std::nullopt;
  return toExprs(D.Ints);
}

/// Attributes or constant inputs out of range (a kernel larger than the
/// padded input, negative pads, sizes or repeats) give a dim that is negative
/// for every binding: an error here, before it can cancel out in a byte count.
llvm::Error checkDims(const RuleContext &Ctx, const std::string &Name,
                      llvm::ArrayRef<SymExpr> Dims) {
  for (size_t A = 0; A < Dims.size(); ++A) {
    std::optional<int64_t> Hi = Dims[A].upperBound();
    if (Hi && *Hi < 0)
      return Ctx.error("output '" + Name + "' would have a negative dim " +
                       Dims[A].str(Ctx.graph().Symbols) + " (axis " +
                       llvm::Twine(A) +
                       "); an attribute or input is out of range");
  }
  return llvm::Error::success();
}

class Driver {
public:
  /// DataDependentSymbols: the exactness run (RuleContext::dataDependent);
  /// Shadow: its result, for the main run.
  Driver(const Graph &G, bool DataDependentSymbols, const ShapeInfo *Shadow)
      : G(G), DataDependentSymbols(DataDependentSymbols), Shadow(Shadow) {}
  llvm::Expected<ShapeInfo> run();
  /// Seeds the values from FirstValue on and infers the nodes from
  /// FirstNode on, continuing from S and ConstData (empty for a whole run).
  llvm::Error runFrom(ValueId FirstValue, NodeId FirstNode);

  ShapeInfo S;
  std::vector<std::shared_ptr<const TensorData>> ConstData;

private:
  void seedValue(ValueId Id);
  llvm::Error inferNode(NodeId Id);
  bool neverRuns(const Node &N) const;
  llvm::Error useDeclaredShapes(NodeId Id);
  void recordConstant(NodeId Id);

  const Graph &G;
  bool DataDependentSymbols;
  const ShapeInfo *Shadow;
};

void Driver::seedValue(ValueId Id) {
  const Value &V = G.Values[Id];
  ValueShape &Out = S.Values[Id];
  if (!V.HasDeclaredShape)
    return; // Known stays false; a consumer reports it.
  Out.Type = V.Type;
  Out.Known = true;
  for (size_t A = 0; A < V.Shape.size(); ++A) {
    const DeclaredDim &D = V.Shape[A];
    switch (D.K) {
    case DeclaredDim::Kind::Static:
      Out.Dims.push_back(SymExpr::constant(D.Size));
      break;
    case DeclaredDim::Kind::Symbol:
      Out.Dims.push_back(SymExpr::symbol(D.Symbol));
      break;
    case DeclaredDim::Kind::Unknown:
      S.SymbolNames.push_back("unk_" + V.Name + "_" + std::to_string(A));
      Out.Dims.push_back(SymExpr::symbol(SymbolId(S.SymbolNames.size() - 1)));
      break;
    }
  }
  Out.Bytes = tensorBytes(Out.Type, Out.Dims);
  if (V.Data) {
    ConstData[Id] = V.Data;
    Out.IntValues = intContents(*V.Data);
  }
}

/// Constant nodes: keep their contents for rules that need float constants.
void Driver::recordConstant(NodeId Id) {
  const Node &N = G.Nodes[Id];
  if (N.OpType != "Constant" || N.Outputs.empty() || N.Outputs[0] == NoId)
    return;
  if (const Attribute *A = N.attr("value"); A && A->T)
    ConstData[N.Outputs[0]] = A->T;
}

llvm::Error Driver::useDeclaredShapes(NodeId Id) {
  const Node &N = G.Nodes[Id];
  for (ValueId Out : N.Outputs) {
    if (Out == NoId)
      continue;
    const Value &V = G.Values[Out];
    bool Static = V.HasDeclaredShape && V.Type != ElementType::Undefined;
    for (const DeclaredDim &D : V.Shape)
      Static &= D.K == DeclaredDim::Kind::Static;
    if (!Static)
      return makeUnsupportedError(
          G.SourcePath + ": " + G.describeNode(Id) +
          ": no shape rule for op '" + N.OpType +
          (N.Domain.empty() ? "" : "' in domain '" + N.Domain) +
          "' and output '" + V.Name +
          "' has no complete static declared shape");
  }
  for (ValueId Out : N.Outputs)
    if (Out != NoId)
      seedValue(Out);
  S.Warnings.push_back(G.describeNode(Id) + ": no shape rule for op '" +
                       N.OpType + "'; using the declared output shapes");
  return llvm::Error::success();
}

/// True when a guard of N is a condition the analysis knows to be the other
/// way: N is in the branch of an If that is not taken.
bool Driver::neverRuns(const Node &N) const {
  for (const Guard &Gd : N.Guards) {
    const ValueShape *Sh = Shadow ? &Shadow->Values[Gd.Cond] : nullptr;
    if (std::optional<bool> C =
            knownCondition(S.Values[Gd.Cond], DataDependentSymbols, Sh);
        C && *C != Gd.WhenTrue)
      return true;
  }
  return false;
}

llvm::Error Driver::inferNode(NodeId Id) {
  const Node &N = G.Nodes[Id];
  // A branch not taken is not analysed (it may be invalid for these shapes,
  // as a Squeeze of an axis that is not 1 is in the branch a dim test rules
  // out): its outputs are empty, zero bytes, and only its own branch and the
  // OomplanIf that ignores them read them.
  if (neverRuns(N)) {
    for (ValueId Out : N.Outputs) {
      if (Out == NoId)
        continue;
      ValueShape &V = S.Values[Out];
      V.Known = true;
      V.Type = G.Values[Out].Type != ElementType::Undefined
                   ? G.Values[Out].Type
                   : ElementType::Float;
      V.Dims = {SymExpr::constant(0)};
      V.Bytes = SymExpr::constant(0);
    }
    S.NeverRuns[Id] = true;
    return llvm::Error::success();
  }
  for (size_t I = 0; I < N.Inputs.size(); ++I) {
    ValueId In = N.Inputs[I];
    if (In != NoId && !S.Values[In].Known)
      return makeInputError(G.SourcePath + ": " + G.describeNode(Id) +
                            ": input '" + G.Values[In].Name +
                            "' has no known shape");
  }
  const RuleTable &Rules = shapeRuleTable();
  bool DefaultDomain = N.Domain.empty() || N.Domain == "ai.onnx";
  auto It = DefaultDomain ? Rules.find(N.OpType) : Rules.end();
  if (It == Rules.end())
    return useDeclaredShapes(Id);
  RuleContext Ctx(G, Id, S, ConstData, DataDependentSymbols, Shadow);
  if (llvm::Error E = It->second(Ctx))
    return E;
  // Sizes computed from an upper bound are upper bounds themselves. An
  // OomplanIf's condition picks a branch but sizes nothing: its rule
  // decides from the branches' results alone.
  bool FromBound = false;
  if (N.OpType != IfSelectOp)
    for (ValueId In : N.Inputs)
      FromBound |= In != NoId && S.Values[In].UpperBound;
  for (ValueId Out : N.Outputs) {
    if (Out == NoId)
      continue;
    ValueShape &V = S.Values[Out];
    V.UpperBound |= FromBound;
    if (!V.Known)
      return Ctx.error("the shape rule left output '" + G.Values[Out].Name +
                       "' unset");
    if (llvm::Error E = checkDims(Ctx, G.Values[Out].Name, V.Dims))
      return E;
    // A rule that cannot tell the type (rare) defers to the declaration.
    if (V.Type == ElementType::Undefined &&
        G.Values[Out].Type != ElementType::Undefined) {
      V.Type = G.Values[Out].Type;
      V.Bytes = tensorBytes(V.Type, V.Dims);
    }
  }
  recordConstant(Id);
  // Training exports keep constant subgraphs unfolded (Resize's scales as a
  // Concat of Constants): their contents, for the rules that need them.
  if (!N.Outputs.empty() && N.Outputs[0] != NoId && !ConstData[N.Outputs[0]]) {
    ConstData[N.Outputs[0]] = foldConstant(G, Id, S, ConstData);
    // Integers folded through float arithmetic (a resize's output size,
    // Floor(320 * scale) cast to int64) become tracked contents, which the
    // rules reading sizes, pads and shapes take.
    ValueShape &V = S.Values[N.Outputs[0]];
    if (const TensorData *D = ConstData[N.Outputs[0]].get();
        D && !V.IntValues && !V.UpperBound && isIntegerLike(V.Type))
      V.IntValues = intContents(*D);
  }
  return llvm::Error::success();
}

llvm::Error Driver::runFrom(ValueId FirstValue, NodeId FirstNode) {
  S.Values.resize(G.Values.size());
  S.NeverRuns.resize(G.Nodes.size(), false);
  ConstData.resize(G.Values.size());
  if (FirstValue == 0)
    S.SymbolNames = G.Symbols;
  for (ValueId Id = FirstValue; Id < G.Values.size(); ++Id)
    if (G.Values[Id].Kind != ValueKind::NodeOutput)
      seedValue(Id);
  for (NodeId Id = FirstNode; Id < G.Nodes.size(); ++Id)
    if (llvm::Error E = inferNode(Id))
      return E;
  return llvm::Error::success();
}

llvm::Expected<ShapeInfo> Driver::run() {
  if (llvm::Error E = runFrom(0, 0))
    return std::move(E);
  return std::move(S);
}

/// Graphs whose analysis needs the exactness run first (inferShapes).
bool needsExactnessRun(const Graph &G) {
  return llvm::any_of(G.Nodes, [](const Node &N) {
    const ops::OpInfo *Op = ops::lookupOp(N.OpType);
    bool DataDependent =
        Op && (Op->Shape == ops::ShapeRuleId::NonZero ||
               Op->Shape == ops::ShapeRuleId::Compress ||
               Op->Shape == ops::ShapeRuleId::Unique ||
               Op->Shape == ops::ShapeRuleId::TopK ||
               Op->Shape == ops::ShapeRuleId::NonMaxSuppression);
    return !N.Guards.empty() || DataDependent;
  });
}

} // namespace

llvm::Expected<ShapeInfo> oomplan::inferShapes(const Graph &G) {
  // Sizes known only at run time are upper bounds, one flag per value, so
  // a value computed from a bounded tensor is not known exactly even where
  // it does not depend on the bound ("is dim 1 of this [boxes, 1] tensor
  // 1?", which decides an If in torchvision's RoI pooling). A first run
  // with each such size a symbol of its own tells: what stays a constant
  // there is exact, and its dims are the formulas the runtime evaluates
  // once the kernels report those sizes (ShapeInfo::Exact). Graphs without
  // a data-dependent op or an If skip it; a first run that fails is
  // ignored.
  bool Needed = needsExactnessRun(G);
  std::shared_ptr<ShapeInfo> Exactness;
  if (Needed) {
    Driver D(G, /*DataDependentSymbols=*/true, nullptr);
    llvm::Expected<ShapeInfo> S = D.run();
    if (S)
      Exactness = std::make_shared<ShapeInfo>(std::move(*S));
    else
      llvm::consumeError(S.takeError());
  }
  Driver D(G, /*DataDependentSymbols=*/false, Exactness.get());
  llvm::Expected<ShapeInfo> S = D.run();
  if (S)
    S->Exact = std::move(Exactness);
  return S;
}

// The state of the last run: its results, and what the graph it described
// looked like, to tell whether the next graph extends it.
struct IncrementalShapeInference::State {
  ShapeInfo S;
  std::vector<std::shared_ptr<const TensorData>> ConstData;
  /// False when S may not be continued (none yet, a failed run, a graph
  /// that needed the exactness run): the next call starts over.
  bool Resumable = false;
  size_t NumValues = 0, NumSymbols = 0;
  std::vector<std::string> NodeOps;
  std::vector<std::vector<ValueId>> NodeValues;

  /// True when G's first nodes and values are the ones S describes.
  bool extendedBy(const Graph &G) const {
    if (!Resumable || G.Nodes.size() < NodeOps.size() ||
        G.Values.size() < NumValues || G.Symbols.size() != NumSymbols)
      return false;
    for (size_t I = 0; I < NodeOps.size(); ++I) {
      const Node &N = G.Nodes[I];
      const std::vector<ValueId> &V = NodeValues[I];
      if (N.OpType != NodeOps[I] ||
          N.Inputs.size() + N.Outputs.size() != V.size() ||
          !std::equal(N.Inputs.begin(), N.Inputs.end(), V.begin()) ||
          !std::equal(N.Outputs.begin(), N.Outputs.end(),
                      V.begin() + N.Inputs.size()) ||
          !N.Guards.empty())
        return false;
    }
    return true;
  }
  void record(const Graph &G) {
    for (size_t I = NodeOps.size(); I < G.Nodes.size(); ++I) {
      const Node &N = G.Nodes[I];
      NodeOps.push_back(N.OpType);
      std::vector<ValueId> V(N.Inputs.begin(), N.Inputs.end());
      V.insert(V.end(), N.Outputs.begin(), N.Outputs.end());
      NodeValues.push_back(std::move(V));
    }
    NumValues = G.Values.size();
    NumSymbols = G.Symbols.size();
  }
  void reset() { *this = State(); }
};

IncrementalShapeInference::IncrementalShapeInference()
    : St(std::make_unique<State>()) {}
IncrementalShapeInference::~IncrementalShapeInference() = default;

llvm::Expected<const ShapeInfo *>
IncrementalShapeInference::infer(const Graph &G) {
  LastNodes = G.Nodes.size();
  if (needsExactnessRun(G)) {
    LastNodes *= 2;
    St->reset();
    auto S = inferShapes(G);
    if (!S)
      return S.takeError();
    St->S = std::move(*S);
    return &St->S;
  }
  ValueId FirstValue = 0;
  NodeId FirstNode = 0;
  Driver D(G, /*DataDependentSymbols=*/false, nullptr);
  if (St->extendedBy(G)) {
    FirstValue = ValueId(St->NumValues);
    FirstNode = NodeId(St->NodeOps.size());
    LastNodes -= FirstNode;
    D.S = std::move(St->S);
    D.ConstData = std::move(St->ConstData);
  } else {
    St->reset();
  }
  if (llvm::Error E = D.runFrom(FirstValue, FirstNode)) {
    St->reset();
    return std::move(E);
  }
  St->S = std::move(D.S);
  St->ConstData = std::move(D.ConstData);
  St->Resumable = true;
  St->record(G);
  return &St->S;
}
