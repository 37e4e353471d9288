//===- EltwiseKernels.cpp - unary, binary, Where, Cast, Clip on CUDA ------===//
//
// Each op is a template instance over the launcher's op code, so that the
// table holds plain function pointers. Broadcasting goes through
// setBroadcast's strides (0 on a broadcast axis); in-place outputs are
// fine because every element is read before it is written by the same
// thread.
//
//===----------------------------------------------------------------------===//
#include "CUDAContext.h"
#include "CUDAKernels.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {
// float16 and bfloat16 natively: loaded to float, the result rounded once
// (Elementwise.cu's Store), so a half model's elementwise steps need no
// float copies (HalfInFloat.h).
const llvm::SmallVector<ElementType, 4> FloatTypes = {
    ElementType::Float, ElementType::Double, ElementType::Float16,
    ElementType::BFloat16};
const llvm::SmallVector<ElementType, 4> NumberTypes = {
    ElementType::Float, ElementType::Double,  ElementType::Int32,
    ElementType::Int64, ElementType::Float16, ElementType::BFloat16};

template <UnaryOp Op> llvm::Error runUnary(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  double A = 0, B = 0;
  if (Op == UnaryOp::LeakyRelu)
    A = C.N.getFloat("alpha", 0.01);
  if (Op == UnaryOp::HardSigmoid) {
    A = C.N.getFloat("alpha", 0.2);
    B = C.N.getFloat("beta", 0.5);
  }
  // The attribute defaults of the ONNX documents, as the CPU kernels'.
  if (Op == UnaryOp::Elu || Op == UnaryOp::Celu ||
      Op == UnaryOp::ThresholdedRelu)
    A = C.N.getFloat("alpha", 1.0);
  if (Op == UnaryOp::Selu) {
    A = C.N.getFloat("alpha", 1.67326319217681884765625);
    B = C.N.getFloat("gamma", 1.05070102214813232421875);
  }
  if (Op == UnaryOp::Shrink) {
    A = C.N.getFloat("lambd", 0.5);
    B = C.N.getFloat("bias", 0);
  }
  return launched(C,
                  unary(Op, *dtypeOf(In.Type), In.Data, Out.Data,
                        int64_t(Out.numElements()), A, B, context().Compute),
                  "unary kernel");
}

// Gelu (opset 20): the erf form, or approximate="tanh" (the CPU kernel's
// two formulas).
llvm::Error runGelu(const KernelContext &C) {
  const std::string Approx = C.N.getString("approximate", "none");
  if (Approx == "tanh")
    return runUnary<UnaryOp::GeluTanh>(C);
  if (Approx != "none")
    return C.unsupported("approximate='" + Approx + "'");
  return runUnary<UnaryOp::Gelu>(C);
}

// BitwiseAnd, BitwiseOr, BitwiseXor (Op 0 to 2, broadcast) and BitwiseNot
// (3) of any integer type: the bits are the same whatever the sign.
template <int Op> llvm::Error runBitwise(const KernelContext &C) {
  const TensorRef &A = C.Inputs[0], &Out = C.Outputs[0];
  Strided S;
  if (Op == 3) {
    S.Rank = 1;
    S.Dims[0] = int64_t(Out.numElements());
    return launched(C,
                    bitwise(Op, A.Data, nullptr, Out.Data,
                            int(elementBits(A.Type) / 8), S, context().Compute),
                    "bitwise kernel");
  }
  const TensorRef &B = C.Inputs[1];
  if (A.Type != B.Type)
    return C.unsupported("operand types " + elementTypeName(A.Type) + ", " +
                         elementTypeName(B.Type));
  if (!setBroadcast(S, 0, A.Dims, Out.Dims) ||
      !setBroadcast(S, 1, B.Dims, Out.Dims))
    return C.unsupported("operands do not broadcast to the output within " +
                         llvm::Twine(MaxRank) + " dims");
  return launched(C,
                  bitwise(Op, A.Data, B.Data, Out.Data,
                          int(elementBits(A.Type) / 8), S, context().Compute),
                  "bitwise kernel");
}

template <FloatClass What> llvm::Error runClassify(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  int Flags = (C.N.getInt("detect_positive", 1) != 0 ? 1 : 0) |
              (C.N.getInt("detect_negative", 1) != 0 ? 2 : 0);
  return launched(C,
                  classify(What, Flags, *dtypeOf(In.Type), In.Data,
                           Out.data<bool>(), int64_t(Out.numElements()),
                           context().Compute),
                  "IsNaN/IsInf kernel");
}

// Clip: min and max are inputs (opset 11+) or attributes (opset 6).
// Unbounded by default (not +-FLT_MAX, which would clip a double).
llvm::Error runClip(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  double Lo = C.N.getFloat("min", -HUGE_VAL);
  double Hi = C.N.getFloat("max", HUGE_VAL);
  for (unsigned I = 1; I <= 2; ++I) {
    if (I >= C.Inputs.size() || !C.Inputs[I].present())
      continue;
    auto V = hostScalar(C, I);
    if (!V)
      return V.takeError();
    (I == 1 ? Lo : Hi) = *V;
  }
  return launched(C,
                  unary(UnaryOp::Clip, *dtypeOf(In.Type), In.Data, Out.Data,
                        int64_t(Out.numElements()), Lo, Hi, context().Compute),
                  "Clip kernel");
}

// Max and Min are variadic: one input is a copy; more than two fold into
// the output. The output may be any input of its size (Alias::InPlace), so
// the inputs it shares bytes with go into the first step, which reads each
// element before writing it; later steps read only the output and inputs
// it does not overwrite.
template <BinaryOp Op> llvm::Error runFold(const KernelContext &C) {
  const TensorRef &Out = C.Outputs[0];
  for (const TensorRef &In : C.Inputs)
    if (!In.present() || In.Type != C.Inputs[0].Type)
      return C.unsupported("mixed or missing inputs");
  if (C.Inputs.size() == 1)
    return copyUnlessAliased(C);
  auto T = dtypeOf(Out.Type);
  if (!T)
    return C.unsupported("element type " + elementTypeName(Out.Type));
  llvm::SmallVector<const TensorRef *, 8> Order;
  for (const TensorRef &In : C.Inputs)
    if (In.Data == Out.Data)
      Order.push_back(&In);
  for (const TensorRef &In : C.Inputs)
    if (In.Data != Out.Data)
      Order.push_back(&In);
  for (size_t I = 1; I < Order.size(); ++I) {
    const TensorRef &A = I == 1 ? *Order[0] : Out, &B = *Order[I];
    Strided S;
    if (!setBroadcast(S, 0, A.Dims, Out.Dims) ||
        !setBroadcast(S, 1, B.Dims, Out.Dims))
      return C.unsupported("operands do not broadcast to the output within " +
                           llvm::Twine(MaxRank) + " dims");
    if (llvm::Error E = launched(
            C, binary(Op, *T, A.Data, B.Data, Out.Data, S, context().Compute),
            "binary kernel"))
      return E;
  }
  return llvm::Error::success();
}

// Sum folds Add; Mean divides the sum by the count afterwards, in the
// output's type, as the CPU's (V / K, not a multiplication by 1 / K).
llvm::Error runSum(const KernelContext &C) { return runFold<BinaryOp::Add>(C); }
llvm::Error runMean(const KernelContext &C) {
  if (llvm::Error E = runFold<BinaryOp::Add>(C))
    return E;
  const TensorRef &Out = C.Outputs[0];
  if (C.Inputs.size() == 1)
    return llvm::Error::success();
  return launched(C,
                  unary(UnaryOp::DivScalar, *dtypeOf(Out.Type), Out.Data,
                        Out.Data, int64_t(Out.numElements()),
                        double(C.Inputs.size()), 0, context().Compute),
                  "Mean kernel");
}

template <BinaryOp Op> llvm::Error runBinary(const KernelContext &C);

// Mod: numpy's (the divisor's sign) unless fmod=1, C's.
llvm::Error runMod(const KernelContext &C) {
  if (C.N.getInt("fmod", 0) != 0)
    return runBinary<BinaryOp::FMod>(C);
  return runBinary<BinaryOp::Mod>(C);
}

// Pow's exponent may be of another type than its base (Pow-12: a float
// base, an integer exponent). The kernel takes one such exponent value,
// read on the host (hostScalar's types), over a base of the output's shape;
// a tensor of them, or a broadcast base, runs as a host step on the CPU
// kernel (Kernel::Refuses). The first run's node tests
// test_pow_types_float32_int32 and its kin failed on the device before.
std::string powRefuses(const Node &, llvm::ArrayRef<TensorRef> In,
                       llvm::ArrayRef<TensorRef> Out) {
  if (In.size() < 2 || Out.empty() || In[0].Type == In[1].Type ||
      In[0].Type == ElementType::Undefined ||
      In[1].Type == ElementType::Undefined)
    return "";
  switch (In[1].Type) {
  case ElementType::Float:
  case ElementType::Double:
  case ElementType::Int32:
  case ElementType::Int64:
  case ElementType::Float16:
  case ElementType::BFloat16:
    if (In[1].numElements() == 1 && Out[0].Dims == In[0].Dims)
      return "";
    break;
  default:
    break;
  }
  return ("a " + elementTypeName(In[0].Type) + " base with " +
          elementTypeName(In[1].Type) +
          " exponents (one exponent value of int32, int64 or a float "
          "type only)")
      .str();
}

template <BinaryOp Op> llvm::Error runBinary(const KernelContext &C) {
  if constexpr (Op == BinaryOp::Max || Op == BinaryOp::Min)
    if (C.Inputs.size() != 2)
      return runFold<Op>(C);
  const TensorRef &A = C.Inputs[0], &Out = C.Outputs[0];
  TensorRef B = C.Inputs[1];
  // Before opset 7 a 1-D slope of X's channel count applies per channel
  // (axis 1), not along the last axis as numpy broadcasting would (the
  // CPU kernel's rule).
  if (Op == BinaryOp::PRelu && C.G.defaultOpset() < 7 && B.Dims.size() == 1 &&
      A.Dims.size() >= 2 && B.Dims[0] == A.Dims[1] && B.Dims[0] != 1)
    B.Dims.append(A.Dims.size() - 2, 1);
  Strided S;
  if (!setBroadcast(S, 0, A.Dims, Out.Dims) ||
      !setBroadcast(S, 1, B.Dims, Out.Dims))
    return C.unsupported("operands do not broadcast to the output within " +
                         llvm::Twine(MaxRank) + " dims");
  auto T = dtypeOf(A.Type);
  // Pow's exponent may be of another type (a float base with an int64
  // exponent of 2 or 3 in exported models): one exponent value is read on
  // the host and the power taken in double, as the CPU does.
  if (Op == BinaryOp::Pow && T && A.Type != B.Type) {
    if (std::string Why = powRefuses(C.N, C.Inputs, C.Outputs); !Why.empty())
      return C.unsupported(Why);
    auto E = hostScalar(C, 1);
    if (!E)
      return E.takeError();
    return launched(C,
                    unary(UnaryOp::PowScalar, *T, A.Data, Out.Data,
                          int64_t(Out.numElements()), *E, 0, context().Compute),
                    "Pow kernel");
  }
  if (!T || A.Type != B.Type)
    return C.unsupported("operand types " + elementTypeName(A.Type) + ", " +
                         elementTypeName(B.Type));
  return launched(
      C, binary(Op, *T, A.Data, B.Data, Out.Data, S, context().Compute),
      "binary kernel");
}

// BitShift of the unsigned types (the CPU kernel's; its direction check).
llvm::Error runBitShift(const KernelContext &C) {
  const std::string Dir = C.N.getString("direction", "");
  if (Dir != "LEFT" && Dir != "RIGHT")
    return C.badInput("direction must be LEFT or RIGHT");
  const TensorRef &A = C.Inputs[0], &B = C.Inputs[1], &Out = C.Outputs[0];
  if (A.Type != B.Type)
    return C.unsupported("operand types " + elementTypeName(A.Type) + ", " +
                         elementTypeName(B.Type));
  Strided S;
  if (!setBroadcast(S, 0, A.Dims, Out.Dims) ||
      !setBroadcast(S, 1, B.Dims, Out.Dims))
    return C.unsupported("operands do not broadcast to the output within " +
                         llvm::Twine(MaxRank) + " dims");
  return launched(C,
                  bitShift(A.Data, B.Data, Out.Data,
                           int(elementBits(A.Type) / 8), Dir == "LEFT", S,
                           context().Compute),
                  "BitShift kernel");
}

llvm::Error runWhere(const KernelContext &C) {
  const TensorRef &Out = C.Outputs[0];
  Strided S;
  for (unsigned I = 0; I < 3; ++I)
    if (!setBroadcast(S, I, C.Inputs[I].Dims, Out.Dims))
      return C.unsupported("operands do not broadcast to the output");
  return launched(C,
                  where(C.Inputs[0].data<bool>(), C.Inputs[1].Data,
                        C.Inputs[2].Data, Out.Data,
                        int(elementBits(Out.Type) / 8), S, context().Compute),
                  "Where kernel");
}

// The element types the Cast kernel converts between (Kernel::Refuses:
// others, as uint64 or float8, run as host steps).
std::string castRefuses(const Node &, llvm::ArrayRef<TensorRef> In,
                        llvm::ArrayRef<TensorRef> Out) {
  if (In.empty() || Out.empty() || In[0].Type == ElementType::Undefined ||
      Out[0].Type == ElementType::Undefined)
    return "";
  if (dtypeOf(In[0].Type) && dtypeOf(Out[0].Type))
    return "";
  return ("Cast from " + elementTypeName(In[0].Type) + " to " +
          elementTypeName(Out[0].Type))
      .str();
}

llvm::Error runCast(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  auto From = dtypeOf(In.Type), To = dtypeOf(Out.Type);
  if (!From || !To)
    return C.unsupported(castRefuses(C.N, C.Inputs, C.Outputs));
  if (*From == *To)
    return copyUnlessAliased(C);
  return launched(C,
                  cast(*From, *To, In.Data, Out.Data,
                       int64_t(Out.numElements()), context().Compute),
                  "Cast kernel");
}

llvm::Error runIdentity(const KernelContext &C) {
  // Dropout in inference: the data unchanged, and a mask of ones.
  if (C.Outputs.size() > 1 && C.Outputs[1].present())
    if (llvm::Error E = launched(C,
                                 fill(C.Outputs[1].Data, C.Outputs[1].bytes(),
                                      1, 1, context().Compute),
                                 "Dropout mask"))
      return E;
  return copyUnlessAliased(C);
}

// Dropout is the identity in inference. Training mode with a nonzero
// ratio draws random numbers no reference could match: refused, as on the
// CPU, rather than silently the identity.
llvm::Error runDropout(const KernelContext &C) {
  bool Training = C.N.getInt("is_test", 1) == 0;
  if (C.Inputs.size() > 2 && C.Inputs[2].present()) {
    auto T = hostScalar(C, 2);
    if (!T)
      return T.takeError();
    Training = *T != 0;
  }
  double Ratio = C.N.getFloat("ratio", 0.5);
  if (Training && C.Inputs.size() > 1 && C.Inputs[1].present()) {
    auto R = hostScalar(C, 1);
    if (!R)
      return R.takeError();
    Ratio = *R;
  }
  if (Training && Ratio != 0)
    return C.unsupported("training-mode Dropout with a nonzero ratio");
  if (C.Outputs.size() > 1 && C.Outputs[1].present() &&
      C.Outputs[1].Type != ElementType::Bool)
    return C.unsupported("mask of type " + elementTypeName(C.Outputs[1].Type));
  return runIdentity(C);
}
} // namespace

void cuda::registerEltwiseKernels(CUDAKernelTable &T) {
  auto Un = [&](const char *Op, Kernel K) { addKernel(T, Op, std::move(K)); };
  Un("Relu", {runUnary<UnaryOp::Relu>, nullptr, NumberTypes});
  Un("Neg", {runUnary<UnaryOp::Neg>, nullptr, NumberTypes});
  Un("Abs", {runUnary<UnaryOp::Abs>, nullptr, NumberTypes});
  Un("Sign", {runUnary<UnaryOp::Sign>, nullptr, NumberTypes});
  Un("Sigmoid", {runUnary<UnaryOp::Sigmoid>, nullptr, FloatTypes});
  Un("Tanh", {runUnary<UnaryOp::Tanh>, nullptr, FloatTypes});
  Un("Erf", {runUnary<UnaryOp::Erf>, nullptr, FloatTypes});
  Un("Exp", {runUnary<UnaryOp::Exp>, nullptr, FloatTypes});
  Un("Log", {runUnary<UnaryOp::Log>, nullptr, FloatTypes});
  Un("Sqrt", {runUnary<UnaryOp::Sqrt>, nullptr, FloatTypes});
  Un("Reciprocal", {runUnary<UnaryOp::Reciprocal>, nullptr, FloatTypes});
  Un("Floor", {runUnary<UnaryOp::Floor>, nullptr, FloatTypes});
  Un("Ceil", {runUnary<UnaryOp::Ceil>, nullptr, FloatTypes});
  Un("Sin", {runUnary<UnaryOp::Sin>, nullptr, FloatTypes});
  Un("Cos", {runUnary<UnaryOp::Cos>, nullptr, FloatTypes});
  Un("LeakyRelu", {runUnary<UnaryOp::LeakyRelu>, nullptr, FloatTypes});
  Un("HardSigmoid", {runUnary<UnaryOp::HardSigmoid>, nullptr, FloatTypes});
  Un("Softplus", {runUnary<UnaryOp::Softplus>, nullptr, FloatTypes});
  Un("Not", {runUnary<UnaryOp::Not>, nullptr, {ElementType::Bool}});
  Un("Round", {runUnary<UnaryOp::Round>, nullptr, FloatTypes});
  Un("Tan", {runUnary<UnaryOp::Tan>, nullptr, FloatTypes});
  Un("Asin", {runUnary<UnaryOp::Asin>, nullptr, FloatTypes});
  Un("Acos", {runUnary<UnaryOp::Acos>, nullptr, FloatTypes});
  Un("Atan", {runUnary<UnaryOp::Atan>, nullptr, FloatTypes});
  Un("Sinh", {runUnary<UnaryOp::Sinh>, nullptr, FloatTypes});
  Un("Cosh", {runUnary<UnaryOp::Cosh>, nullptr, FloatTypes});
  Un("Asinh", {runUnary<UnaryOp::Asinh>, nullptr, FloatTypes});
  Un("Acosh", {runUnary<UnaryOp::Acosh>, nullptr, FloatTypes});
  Un("Atanh", {runUnary<UnaryOp::Atanh>, nullptr, FloatTypes});
  Un("Softsign", {runUnary<UnaryOp::Softsign>, nullptr, FloatTypes});
  Un("HardSwish", {runUnary<UnaryOp::HardSwish>, nullptr, FloatTypes});
  Un("Elu", {runUnary<UnaryOp::Elu>, nullptr, FloatTypes});
  Un("Selu", {runUnary<UnaryOp::Selu>, nullptr, FloatTypes});
  Un("Celu", {runUnary<UnaryOp::Celu>, nullptr, FloatTypes});
  Un("ThresholdedRelu",
     {runUnary<UnaryOp::ThresholdedRelu>, nullptr, FloatTypes});
  Un("Shrink", {runUnary<UnaryOp::Shrink>, nullptr, FloatTypes});
  Un("IsNaN", {runClassify<FloatClass::NaN>, nullptr, FloatTypes});
  Un("IsInf", {runClassify<FloatClass::Inf>, nullptr, FloatTypes});
  Un("Clip", {runClip, nullptr, FloatTypes, 0b110});
  Un("Add", {runBinary<BinaryOp::Add>, nullptr, NumberTypes});
  Un("Sub", {runBinary<BinaryOp::Sub>, nullptr, NumberTypes});
  Un("Mul", {runBinary<BinaryOp::Mul>, nullptr, NumberTypes});
  Un("Div", {runBinary<BinaryOp::Div>, nullptr, NumberTypes});
  Un("Pow", {runBinary<BinaryOp::Pow>, nullptr, FloatTypes, 0, powRefuses});
  Un("Max", {runBinary<BinaryOp::Max>, nullptr, NumberTypes});
  Un("Min", {runBinary<BinaryOp::Min>, nullptr, NumberTypes});
  Un("Mod", {runMod, nullptr, NumberTypes});
  Un("Sum", {runSum, nullptr, FloatTypes});
  Un("Mean", {runMean, nullptr, FloatTypes});
  Un("PRelu", {runBinary<BinaryOp::PRelu>, nullptr, FloatTypes});
  Un("Equal", {runBinary<BinaryOp::Equal>, nullptr, {}});
  Un("Greater", {runBinary<BinaryOp::Greater>, nullptr, NumberTypes});
  Un("Less", {runBinary<BinaryOp::Less>, nullptr, NumberTypes});
  Un("GreaterOrEqual",
     {runBinary<BinaryOp::GreaterOrEqual>, nullptr, NumberTypes});
  Un("LessOrEqual", {runBinary<BinaryOp::LessOrEqual>, nullptr, NumberTypes});
  Un("And", {runBinary<BinaryOp::And>, nullptr, {ElementType::Bool}});
  Un("Or", {runBinary<BinaryOp::Or>, nullptr, {ElementType::Bool}});
  Un("Xor", {runBinary<BinaryOp::Xor>, nullptr, {ElementType::Bool}});
  Un("Where", {runWhere, nullptr, {ElementType::Bool}});
  Un("Gelu", {runGelu, nullptr, FloatTypes});
  Un("Mish", {runUnary<UnaryOp::Mish>, nullptr, FloatTypes});
  const llvm::SmallVector<ElementType, 4> Ints = {
      ElementType::Int8,   ElementType::Int16, ElementType::Int32,
      ElementType::Int64,  ElementType::UInt8, ElementType::UInt16,
      ElementType::UInt32, ElementType::UInt64};
  Un("BitwiseAnd", {runBitwise<0>, nullptr, Ints});
  Un("BitwiseOr", {runBitwise<1>, nullptr, Ints});
  Un("BitwiseXor", {runBitwise<2>, nullptr, Ints});
  Un("BitwiseNot", {runBitwise<3>, nullptr, Ints});
  Un("BitShift", {runBitShift,
                  nullptr,
                  {ElementType::UInt8, ElementType::UInt16, ElementType::UInt32,
                   ElementType::UInt64}});
  Un("Cast", {runCast, nullptr, {}, 0, castRefuses});
  // CastLike: input 1 gives only the type, which the output already has.
  Un("CastLike", {runCast, nullptr, {}, 0b10, castRefuses});
  Un("Identity", {runIdentity, nullptr, {}});
  Un("Dropout", {runDropout, nullptr, {}});
}
