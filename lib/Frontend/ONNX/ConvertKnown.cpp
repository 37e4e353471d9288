//===- ConvertKnown.cpp - integer values known when importing -------------===//
//
// Unrolling a Loop needs its trip count and its conditions, and resolving a
// sequence needs its positions, while the graph is being read: before shape
// inference, which could fold far more. Exporters write these as Constants
// or as small integer arithmetic on the iteration number (a counter
// compared with a bound, an index into a constant list), so the importer
// evaluates exactly that: integer and bool Constants and initializers of
// at most MaxKnownElements elements, and Identity, Cast to an integer type,
// the reshapes, Gather, Add/Sub/Mul, the comparisons and the logical ops
// on them. Anything else is unknown, and what needs it says so.
//
// Shape and Size of a computed value are known when its dims are
// constants, which only the shape pass can say (dimsOf asks it over the
// graph so far). That costs a pass over the graph, so they and the
// evaluable nodes reading them are kept as recipes (Deferred) and
// evaluated only when something asks: a trip count such as torch's
// repeat_interleave Loop, Unsqueeze(Gather(Shape(k), 1)).
//
//===----------------------------------------------------------------------===//
#include "Converter.h"
#include <limits>

using namespace oomplan;

static constexpr size_t MaxKnownElements = 64;

// Integer and bool types whose values fit the int64 the importer keeps.
static bool isIntegral(ElementType T) {
  return isIntegerLike(T) && T != ElementType::UInt64;
}

// The range of an integral type, to refuse a cast that would wrap (then
// the value is unknown rather than wrong).
static bool fits(int64_t V, int32_t OnnxType) {
  switch (OnnxType) {
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::INT64:
    return true;
  case onnx::TensorProto::INT32:
    return V >= std::numeric_limits<int32_t>::min() &&
           V <= std::numeric_limits<int32_t>::max();
  case onnx::TensorProto::UINT32:
    return V >= 0 && V <= std::numeric_limits<uint32_t>::max();
  case onnx::TensorProto::INT16:
    return V >= std::numeric_limits<int16_t>::min() &&
           V <= std::numeric_limits<int16_t>::max();
  case onnx::TensorProto::UINT16:
    return V >= 0 && V <= std::numeric_limits<uint16_t>::max();
  case onnx::TensorProto::INT8:
    return V >= -128 && V <= 127;
  case onnx::TensorProto::UINT8:
    return V >= 0 && V <= 255;
  default:
    return false; // floats and the rest are not tracked
  }
}

const Converter::KnownValue *Converter::known(const std::string &Flat) {
  const KnownValue *K = partial(Flat);
  return K && K->Missing.empty() ? K : nullptr;
}

const Converter::KnownValue *Converter::partial(const std::string &Flat) {
  auto It = Known.find(Flat);
  if (It != Known.end())
    return &It->second;
  // The recipes Flat needs, inputs first, with a stack of our own rather
  // than recursion (a crafted chain of Identities from a Shape may be
  // long). Each is evaluated once, known or not; when one runs, none of
  // its inputs is a recipe any more, so evaluate() does not come back here
  // for one.
  std::vector<std::string> Stack{Flat};
  while (!Stack.empty()) {
    auto D = Deferred.find(Stack.back());
    if (D == Deferred.end()) {
      Stack.pop_back();
      continue;
    }
    bool Ready = true;
    for (const std::string &In : D->second.Inputs)
      if (Deferred.count(In)) {
        Stack.push_back(In);
        Ready = false;
      }
    if (!Ready)
      continue;
    NodeDesc Recipe = std::move(D->second);
    Deferred.erase(D);
    Stack.pop_back();
    evaluate(Recipe);
  }
  It = Known.find(Flat);
  return It == Known.end() ? nullptr : &It->second;
}

std::optional<int64_t> Converter::knownScalar(const std::string &Flat) {
  const KnownValue *K = known(Flat);
  if (!K || K->Values.size() != 1)
    return std::nullopt;
  return K->Values[0];
}

void Converter::noteKnownWeight(const std::string &Name, const TensorData &T) {
  // An input that is also an initializer is a weight for planning
  // (GraphBuilder::addWeight): its default is the value planned.
  if (!isIntegral(T.Type) || T.Dims.size() > 1 ||
      T.Ints.size() != T.numElements() || T.Ints.size() > MaxKnownElements)
    return;
  Known[Name] = {T.Ints, T.Dims.empty(), {}};
}

// Op(A, B) on two one-element values; nullopt on overflow or an op not
// evaluated.
static std::optional<int64_t> binary(llvm::StringRef Op, int64_t A, int64_t B) {
  int64_t R = 0;
  if (Op == "Add")
    return __builtin_add_overflow(A, B, &R) ? std::nullopt
                                            : std::optional<int64_t>(R);
  if (Op == "Sub")
    return __builtin_sub_overflow(A, B, &R) ? std::nullopt
                                            : std::optional<int64_t>(R);
  if (Op == "Mul")
    return __builtin_mul_overflow(A, B, &R) ? std::nullopt
                                            : std::optional<int64_t>(R);
  if (Op == "Less")
    return A < B;
  if (Op == "LessOrEqual")
    return A <= B;
  if (Op == "Greater")
    return A > B;
  if (Op == "GreaterOrEqual")
    return A >= B;
  if (Op == "Equal")
    return A == B;
  if (Op == "And")
    return (A != 0) && (B != 0);
  if (Op == "Or")
    return (A != 0) || (B != 0);
  if (Op == "Xor")
    return (A != 0) != (B != 0);
  return std::nullopt;
}

// The ops evaluate() computes.
static bool isEvaluable(llvm::StringRef Op) {
  static const llvm::StringRef Ops[] = {
      "Identity", "Squeeze", "Unsqueeze",   "Reshape", "Flatten",
      "Cast",     "Not",     "Gather",      "Add",     "Sub",
      "Mul",      "Less",    "LessOrEqual", "Greater", "GreaterOrEqual",
      "Equal",    "And",     "Or",          "Xor",     "Shape",
      "Size"};
  return llvm::is_contained(Ops, Op);
}

void Converter::noteKnown(const NodeDesc &D) {
  if (!D.Domain.empty() || D.Outputs.empty() || D.Outputs[0].empty() ||
      !(D.OpType == "Constant" || isEvaluable(D.OpType)))
    return;
  bool Later = D.OpType == "Shape" || D.OpType == "Size";
  for (const std::string &In : D.Inputs)
    Later |= Deferred.count(In) != 0;
  if (Later)
    Deferred[D.Outputs[0]] = D;
  else
    evaluate(D);
}

// Shape (opset 15's start and end; -1 where a dim is not a constant) or
// Size of X (all dims constants).
static std::optional<std::vector<int64_t>>
shapeOf(llvm::StringRef Op, const std::vector<int64_t> &Dims,
        const Attribute *Start, const Attribute *End) {
  const int64_t R = static_cast<int64_t>(Dims.size());
  if (Op == "Size") {
    int64_t N = 1;
    for (int64_t D : Dims)
      if (D < 0 || __builtin_mul_overflow(N, D, &N))
        return std::nullopt;
    return std::vector<int64_t>{N};
  }
  auto Clamp = [&](const Attribute *A, int64_t Default) {
    int64_t V = A && A->Kind == AttrKind::Int ? A->I : Default;
    V = V < 0 ? V + R : V;
    return std::min(std::max<int64_t>(V, 0), R);
  };
  std::vector<int64_t> K;
  for (int64_t I = Clamp(Start, 0), E = Clamp(End, R); I < E; ++I)
    K.push_back(Dims[size_t(I)]);
  if (K.size() > MaxKnownElements)
    return std::nullopt;
  return K;
}

void Converter::evaluate(const NodeDesc &D) {
  const std::string &Out = D.Outputs[0];
  auto In = [&](size_t I) -> const KnownValue * {
    return I < D.Inputs.size() && !D.Inputs[I].empty() ? partial(D.Inputs[I])
                                                       : nullptr;
  };
  auto Full = [](const KnownValue *K) { return K && K->Missing.empty(); };
  auto Attr = [&](llvm::StringRef AName) -> const Attribute * {
    for (const Attribute &A : D.Attrs)
      if (A.Name == AName)
        return &A;
    return nullptr;
  };
  llvm::StringRef Op = D.OpType;
  if (Op == "Shape" || Op == "Size") {
    if (D.Inputs.empty() || D.Inputs[0].empty())
      return;
    // A scalar's dims are empty, as are unknown ones: only a value of known
    // rank 0 (the oracle cannot say) would be missed, and then its Shape is
    // simply not known.
    std::vector<int64_t> Dims = dimsOf(D.Inputs[0]);
    if (Dims.empty())
      return;
    auto K = shapeOf(Op, Dims, Attr("start"), Attr("end"));
    if (!K)
      return;
    KnownValue V{std::move(*K), Op == "Size", {}};
    if (llvm::is_contained(V.Values, -1)) {
      for (int64_t X : V.Values)
        V.Missing.push_back(X < 0);
      if (!llvm::is_contained(V.Missing, false))
        return; // nothing known
    }
    Known[Out] = std::move(V);
    return;
  }
  if (Op == "Constant") {
    if (const Attribute *A = Attr("value")) {
      if (A->Kind == AttrKind::Tensor && A->T) {
        const TensorData &T = *A->T;
        if (isIntegral(T.Type) && T.Dims.size() <= 1 &&
            T.Ints.size() == T.numElements() &&
            T.Ints.size() <= MaxKnownElements)
          Known[Out] = {T.Ints, T.Dims.empty(), {}};
      }
    } else if (const Attribute *A = Attr("value_int")) {
      Known[Out] = {{A->I}, true, {}};
    } else if (const Attribute *A = Attr("value_ints")) {
      if (A->Ints.size() <= MaxKnownElements)
        Known[Out] = {A->Ints, false, {}};
    }
    return;
  }
  const KnownValue *A = In(0);
  if (!A)
    return;
  if (Op == "Identity") {
    Known[Out] = *A;
    return;
  }
  // Reshapes of one element: the value stays, the rank follows the op.
  if ((Op == "Squeeze" || Op == "Unsqueeze" || Op == "Reshape" ||
       Op == "Flatten") &&
      A->Values.size() == 1 && Full(A)) {
    Known[Out] = {A->Values, Op == "Squeeze", {}};
    return;
  }
  if (Op == "Cast") {
    const Attribute *To = Attr("to");
    if (!To || To->Kind != AttrKind::Int)
      return;
    KnownValue R{{}, A->Scalar, A->Missing};
    for (size_t I = 0; I < A->Values.size(); ++I) {
      int64_t V = A->Values[I];
      bool Unknown = !A->Missing.empty() && A->Missing[I];
      if (!Unknown && !fits(V, static_cast<int32_t>(To->I)))
        return;
      R.Values.push_back(To->I == onnx::TensorProto::BOOL && !Unknown ? V != 0
                                                                      : V);
    }
    Known[Out] = std::move(R);
    return;
  }
  if (Op == "Not" && A->Values.size() == 1 && Full(A)) {
    Known[Out] = {{A->Values[0] == 0}, A->Scalar, {}};
    return;
  }
  const KnownValue *Bv = In(1);
  if (!Bv)
    return;
  if (Op == "Gather" && Bv->Values.size() == 1 && Bv->Scalar && Full(Bv)) {
    const Attribute *Axis = Attr("axis");
    int64_t I = Bv->Values[0], N = static_cast<int64_t>(A->Values.size());
    if ((Axis && Axis->I != 0) || A->Scalar || I < -N || I >= N)
      return;
    size_t At = size_t(I < 0 ? I + N : I);
    if (!A->Missing.empty() && A->Missing[At])
      return;
    Known[Out] = {{A->Values[At]}, true, {}};
    return;
  }
  if (A->Values.size() != 1 || Bv->Values.size() != 1 || !Full(A) || !Full(Bv))
    return;
  if (std::optional<int64_t> R = binary(Op, A->Values[0], Bv->Values[0]))
    Known[Out] = {{*R}, A->Scalar && Bv->Scalar, {}};
}

std::string Converter::prefixFailure() const {
  if (PrefixFailure.empty())
    return "";
  // The message names the file already; keep what follows it.
  llvm::StringRef M(PrefixFailure);
  if (M.startswith(Name))
    M = M.drop_front(Name.size()).ltrim(": ");
  return " (the shapes of the graph before it do not infer: " + M.str() + ")";
}

std::vector<int64_t> Converter::dimsOf(const std::string &X) {
  if (auto D = InputDims.find(X); D != InputDims.end())
    return D->second;
  const PrefixValue *P = prefixValue(X);
  return P ? P->Dims : std::vector<int64_t>();
}

ElementType Converter::typeOf(const std::string &X) {
  const PrefixValue *P = prefixValue(X);
  return P ? P->Type : ElementType::Undefined;
}

const PrefixValue *Converter::prefixValue(const std::string &X) {
  if (auto D = PrefixValues.find(X); D != PrefixValues.end())
    return &D->second;
  if (!Opts.Dims || DimQueries >= MaxDimQueries ||
      DimQueryNodes >= MaxDimQueryNodes)
    return nullptr;
  ++DimQueries;
  auto G = B.prefix();
  if (!G) { // the whole graph's check says what is wrong, later
    llvm::consumeError(G.takeError());
    return nullptr;
  }
  // The prefix grows by appending, so the values asked about before keep
  // their ids and answers: only the later ones are asked for. The budget
  // counts the nodes the oracle inferred (only those added since its last
  // answer when it can go on from there).
  ValueId From = std::min(PrefixValuesAsked, ValueId((*G)->Values.size()));
  auto All = Opts.Dims(**G, From);
  if (!All) {
    DimQueryNodes += (*G)->Nodes.size();
    PrefixFailure = llvm::toString(All.takeError());
    return nullptr;
  }
  DimQueryNodes += All->NodesInferred;
  std::vector<PrefixValue> &Answer = All->Values;
  for (size_t I = 0; I < Answer.size() && From + I < (*G)->Values.size(); ++I)
    PrefixValues[(*G)->Values[From + I].Name] = std::move(Answer[I]);
  PrefixValuesAsked = ValueId((*G)->Values.size());
  auto D = PrefixValues.find(X);
  return D == PrefixValues.end() ? nullptr : &D->second;
}
