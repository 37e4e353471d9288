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

const Converter::KnownValue *Converter::known(const std::string &Flat) const {
  auto It = Known.find(Flat);
  return It == Known.end() ? nullptr : &It->second;
}

std::optional<int64_t> Converter::knownScalar(const std::string &Flat) const {
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
  Known[Name] = {T.Ints, T.Dims.empty()};
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

void Converter::noteKnown(const NodeDesc &D) {
  if (!D.Domain.empty() || D.Outputs.empty() || D.Outputs[0].empty())
    return;
  const std::string &Out = D.Outputs[0];
  auto In = [&](size_t I) -> const KnownValue * {
    return I < D.Inputs.size() && !D.Inputs[I].empty() ? known(D.Inputs[I])
                                                       : nullptr;
  };
  auto Attr = [&](llvm::StringRef AName) -> const Attribute * {
    for (const Attribute &A : D.Attrs)
      if (A.Name == AName)
        return &A;
    return nullptr;
  };
  llvm::StringRef Op = D.OpType;
  if (Op == "Constant") {
    if (const Attribute *A = Attr("value")) {
      if (A->Kind == AttrKind::Tensor && A->T) {
        const TensorData &T = *A->T;
        if (isIntegral(T.Type) && T.Dims.size() <= 1 &&
            T.Ints.size() == T.numElements() &&
            T.Ints.size() <= MaxKnownElements)
          Known[Out] = {T.Ints, T.Dims.empty()};
      }
    } else if (const Attribute *A = Attr("value_int")) {
      Known[Out] = {{A->I}, true};
    } else if (const Attribute *A = Attr("value_ints")) {
      if (A->Ints.size() <= MaxKnownElements)
        Known[Out] = {A->Ints, false};
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
      A->Values.size() == 1) {
    Known[Out] = {A->Values, Op == "Squeeze"};
    return;
  }
  if (Op == "Cast") {
    const Attribute *To = Attr("to");
    if (!To || To->Kind != AttrKind::Int)
      return;
    KnownValue R{{}, A->Scalar};
    for (int64_t V : A->Values) {
      if (!fits(V, static_cast<int32_t>(To->I)))
        return;
      R.Values.push_back(To->I == onnx::TensorProto::BOOL ? V != 0 : V);
    }
    Known[Out] = std::move(R);
    return;
  }
  if (Op == "Not" && A->Values.size() == 1) {
    Known[Out] = {{A->Values[0] == 0}, A->Scalar};
    return;
  }
  const KnownValue *Bv = In(1);
  if (!Bv)
    return;
  if (Op == "Gather" && Bv->Values.size() == 1 && Bv->Scalar) {
    const Attribute *Axis = Attr("axis");
    int64_t I = Bv->Values[0], N = static_cast<int64_t>(A->Values.size());
    if ((Axis && Axis->I != 0) || A->Scalar || I < -N || I >= N)
      return;
    Known[Out] = {{A->Values[I < 0 ? I + N : I]}, true};
    return;
  }
  if (A->Values.size() != 1 || Bv->Values.size() != 1)
    return;
  if (std::optional<int64_t> R = binary(Op, A->Values[0], Bv->Values[0]))
    Known[Out] = {{*R}, A->Scalar && Bv->Scalar};
}
