//===- Unary.cpp - CPU kernels: unary math and activations ------*- C++ -*-===//
//
// One input, one output of the same shape: each kernel is a formula applied
// per element, in float for float/float16/bfloat16 and double for double
// (numpy's reference computes float16 in float too), in the type itself for
// the integer ops ONNX allows (Abs, Neg, Sign, Relu, Shrink). Formulas follow
// the ONNX operator documents, including the attribute defaults. The output
// may alias the input (AliasClass InPlace): each element is read before it is
// written.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include "FastMath.h"
#include <cmath>
#include <limits>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// Y[i] = Op(X[i]) on [0, N). Cloned (Elementwise.h) so that the formulas
/// without libm calls (Relu, Erf, Tanh, GELU) run eight floats at a time.
template <typename T, typename OpT>
OOMPLAN_SIMD_CLONES void unaryRun(const T *X, T *Y, int64_t N, OpT Op) {
  for (int64_t I = 0; I < N; ++I)
    Y[I] = store<T>(Op(load(X[I])));
}

/// Out[i] = Op(In[i]) over the types in Set; same storage type in and out.
template <unsigned Set, typename OpT>
llvm::Error mapUnary(const KernelContext &C, OpT Op) {
  const TensorRef &In = C.Inputs[0];
  const TensorRef &Out = C.Outputs[0];
  bool Ok = dispatchType<Set>(In.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    const T *X = In.data<T>();
    T *Y = Out.data<T>();
    C.Pool.parallelFor(
        int64_t(Out.numElements()), ElementwiseGrain,
        [&](int64_t B, int64_t E) { unaryRun(X + B, Y + B, E - B, Op); });
  });
  if (!Ok)
    return C.unsupported("element type " + elementTypeName(In.Type));
  return llvm::Error::success();
}

/// Out[i] = Pred(In[i]) as bool (IsNaN, IsInf).
template <unsigned Set, typename PredT>
llvm::Error mapToBool(const KernelContext &C, PredT Pred) {
  const TensorRef &In = C.Inputs[0];
  bool *Y = C.Outputs[0].data<bool>();
  bool Ok = dispatchType<Set>(In.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    const T *X = In.data<T>();
    C.Pool.parallelFor(int64_t(C.Outputs[0].numElements()), ElementwiseGrain,
                       [&](int64_t B, int64_t E) {
                         for (int64_t I = B; I < E; ++I)
                           Y[I] = Pred(load(X[I]));
                       });
  });
  if (!Ok)
    return C.unsupported("element type " + elementTypeName(In.Type));
  return llvm::Error::success();
}

/// Negation that wraps for the most negative integer, as numpy does.
template <typename V> V negate(V X) {
  if constexpr (std::is_integral<V>::value)
    return V(std::make_unsigned_t<V>(0) - std::make_unsigned_t<V>(X));
  else
    return -X;
}

template <typename V> V sigmoid(V X) {
  // Split by sign so that exp never overflows into inf/inf.
  if (X >= 0)
    return V(1) / (V(1) + std::exp(-X));
  V E = std::exp(X);
  return E / (V(1) + E);
}

template <typename V> V softplus(V X) {
  // log(1 + exp(x)) without overflow for large x.
  if (X > V(0))
    return X + std::log1p(std::exp(-X));
  return std::log1p(std::exp(X));
}

constexpr unsigned Flt = FloatTypes;
constexpr unsigned FltSigned = FloatTypes | SignedInts;
constexpr unsigned FltInts = FloatTypes | IntTypes;

// A kernel whose formula needs no attribute: NAME's body is EXPR of X.
#define OOMPLAN_UNARY(NAME, SET, EXPR)                                         \
  llvm::Error run##NAME(const KernelContext &C) {                              \
    return mapUnary<SET>(C, [](auto X) {                                       \
      using V = decltype(X);                                                   \
      (void)sizeof(V);                                                         \
      return V(EXPR);                                                          \
    });                                                                        \
  }

OOMPLAN_UNARY(Abs, FltInts, X < V(0) ? negate(X) : X)
OOMPLAN_UNARY(Neg, FltSigned, negate(X))
OOMPLAN_UNARY(Sign, FltInts, X > V(0) ? V(1) : (X < V(0) ? V(-1) : V(0)))
// NaN stays NaN, as in ONNX's reference (numpy's maximum(x, 0)), PyTorch
// and the fused kernels' epilogue (FusedKernels.h).
OOMPLAN_UNARY(Relu, FltSigned, X < V(0) ? V(0) : X)
OOMPLAN_UNARY(Exp, Flt, std::exp(X))
OOMPLAN_UNARY(Log, Flt, std::log(X))
OOMPLAN_UNARY(Sqrt, Flt, std::sqrt(X))
OOMPLAN_UNARY(Reciprocal, Flt, V(1) / X)
OOMPLAN_UNARY(Floor, Flt, std::floor(X))
OOMPLAN_UNARY(Ceil, Flt, std::ceil(X))
// Halves to even, as numpy.round (the default rounding mode).
OOMPLAN_UNARY(Round, Flt, std::nearbyint(X))
OOMPLAN_UNARY(Sin, Flt, std::sin(X))
OOMPLAN_UNARY(Cos, Flt, std::cos(X))
OOMPLAN_UNARY(Tan, Flt, std::tan(X))
OOMPLAN_UNARY(Asin, Flt, std::asin(X))
OOMPLAN_UNARY(Acos, Flt, std::acos(X))
OOMPLAN_UNARY(Atan, Flt, std::atan(X))
OOMPLAN_UNARY(Sinh, Flt, std::sinh(X))
OOMPLAN_UNARY(Cosh, Flt, std::cosh(X))
OOMPLAN_UNARY(Asinh, Flt, std::asinh(X))
OOMPLAN_UNARY(Acosh, Flt, std::acosh(X))
OOMPLAN_UNARY(Atanh, Flt, std::atanh(X))
OOMPLAN_UNARY(Tanh, Flt, tanhOf(X))
OOMPLAN_UNARY(Erf, Flt, erfOf(X))
OOMPLAN_UNARY(Sigmoid, Flt, sigmoid(X))
OOMPLAN_UNARY(Softplus, Flt, softplus(X))
OOMPLAN_UNARY(Softsign, Flt, X / (V(1) + std::fabs(X)))
OOMPLAN_UNARY(Mish, Flt, X *std::tanh(softplus(X)))
OOMPLAN_UNARY(HardSwish, Flt,
              X *std::max(V(0), std::min(V(1), X / V(6) + V(0.5))))
#undef OOMPLAN_UNARY

llvm::Error runNot(const KernelContext &C) {
  return mapUnary<BoolType>(C, [](bool X) { return !X; });
}

llvm::Error runBitwiseNot(const KernelContext &C) {
  return mapUnary<IntTypes>(C, [](auto X) {
    using V = decltype(X);
    return V(~X);
  });
}

llvm::Error runLeakyRelu(const KernelContext &C) {
  double Alpha = C.N.getFloat("alpha", 0.01);
  return mapUnary<Flt>(C, [Alpha](auto X) {
    using V = decltype(X);
    return X < V(0) ? V(Alpha) * X : X;
  });
}

llvm::Error runElu(const KernelContext &C) {
  double Alpha = C.N.getFloat("alpha", 1.0);
  return mapUnary<Flt>(C, [Alpha](auto X) {
    using V = decltype(X);
    return X < V(0) ? V(Alpha) * (std::exp(X) - V(1)) : X;
  });
}

llvm::Error runSelu(const KernelContext &C) {
  double Alpha = C.N.getFloat("alpha", 1.67326319217681884765625);
  double Gamma = C.N.getFloat("gamma", 1.05070102214813232421875);
  return mapUnary<Flt>(C, [Alpha, Gamma](auto X) {
    using V = decltype(X);
    return X > V(0) ? V(Gamma) * X
                    : V(Gamma) * (V(Alpha) * std::exp(X) - V(Alpha));
  });
}

llvm::Error runCelu(const KernelContext &C) {
  double Alpha = C.N.getFloat("alpha", 1.0);
  return mapUnary<Flt>(C, [Alpha](auto X) {
    using V = decltype(X);
    V A = V(Alpha);
    return std::max(V(0), X) + std::min(V(0), A * (std::exp(X / A) - V(1)));
  });
}

llvm::Error runHardSigmoid(const KernelContext &C) {
  double Alpha = C.N.getFloat("alpha", 0.2), Beta = C.N.getFloat("beta", 0.5);
  return mapUnary<Flt>(C, [Alpha, Beta](auto X) {
    using V = decltype(X);
    // NaN stays NaN (numpy's clip; std::min(1, NaN) would give 1).
    V Y = V(Alpha) * X + V(Beta);
    return Y < V(0) ? V(0) : (Y > V(1) ? V(1) : Y);
  });
}

llvm::Error runThresholdedRelu(const KernelContext &C) {
  double Alpha = C.N.getFloat("alpha", 1.0);
  return mapUnary<Flt>(C, [Alpha](auto X) {
    using V = decltype(X);
    return X > V(Alpha) ? X : V(0);
  });
}

llvm::Error runShrink(const KernelContext &C) {
  double Lambd = C.N.getFloat("lambd", 0.5), Bias = C.N.getFloat("bias", 0);
  return mapUnary<FltInts>(C, [Lambd, Bias](auto X) {
    using V = decltype(X);
    // Compared in double: an integer input with a fractional lambd.
    double D = double(X);
    if (D < -Lambd)
      return V(D + Bias);
    if (D > Lambd)
      return V(D - Bias);
    return V(0);
  });
}

llvm::Error runGelu(const KernelContext &C) {
  std::string Approx = C.N.getString("approximate", "none");
  if (Approx == "tanh")
    return mapUnary<Flt>(C, [](auto X) {
      using V = decltype(X);
      const V K = V(0.7978845608028654); // sqrt(2 / pi)
      return V(0.5) * X * (V(1) + tanhOf(K * (X + V(0.044715) * X * X * X)));
    });
  if (Approx != "none")
    return C.unsupported("approximate='" + Approx + "'");
  return mapUnary<Flt>(C, [](auto X) {
    using V = decltype(X);
    return V(0.5) * X * (V(1) + erfOf(X * V(0.7071067811865476)));
  });
}

llvm::Error runIsNaN(const KernelContext &C) {
  return mapToBool<Flt>(C, [](auto X) { return std::isnan(X); });
}

llvm::Error runIsInf(const KernelContext &C) {
  bool Neg = C.N.getInt("detect_negative", 1) != 0;
  bool Pos = C.N.getInt("detect_positive", 1) != 0;
  return mapToBool<Flt>(
      C, [Neg, Pos](auto X) { return std::isinf(X) && (X > 0 ? Pos : Neg); });
}

} // namespace

void registerUnaryKernels(CPUKernelTable &T) {
  auto Add = [&T](llvm::StringRef Op, KernelFn Fn, unsigned Set) {
    addKernel(T, Op, Kernel{Fn, nullptr, typesOf(Set)});
  };
  Add("Abs", runAbs, FltInts);
  Add("Neg", runNeg, FltSigned);
  Add("Sign", runSign, FltInts);
  Add("Relu", runRelu, FltSigned);
  Add("Exp", runExp, Flt);
  Add("Log", runLog, Flt);
  Add("Sqrt", runSqrt, Flt);
  Add("Reciprocal", runReciprocal, Flt);
  Add("Floor", runFloor, Flt);
  Add("Ceil", runCeil, Flt);
  Add("Round", runRound, Flt);
  Add("Sin", runSin, Flt);
  Add("Cos", runCos, Flt);
  Add("Tan", runTan, Flt);
  Add("Asin", runAsin, Flt);
  Add("Acos", runAcos, Flt);
  Add("Atan", runAtan, Flt);
  Add("Sinh", runSinh, Flt);
  Add("Cosh", runCosh, Flt);
  Add("Asinh", runAsinh, Flt);
  Add("Acosh", runAcosh, Flt);
  Add("Atanh", runAtanh, Flt);
  Add("Tanh", runTanh, Flt);
  Add("Erf", runErf, Flt);
  Add("Sigmoid", runSigmoid, Flt);
  Add("Softplus", runSoftplus, Flt);
  Add("Softsign", runSoftsign, Flt);
  Add("Mish", runMish, Flt);
  Add("HardSwish", runHardSwish, Flt);
  Add("Not", runNot, BoolType);
  Add("BitwiseNot", runBitwiseNot, IntTypes);
  Add("LeakyRelu", runLeakyRelu, Flt);
  Add("Elu", runElu, Flt);
  Add("Selu", runSelu, Flt);
  Add("Celu", runCelu, Flt);
  Add("HardSigmoid", runHardSigmoid, Flt);
  Add("ThresholdedRelu", runThresholdedRelu, Flt);
  Add("Shrink", runShrink, FltInts);
  Add("Gelu", runGelu, Flt);
  Add("IsNaN", runIsNaN, Flt);
  Add("IsInf", runIsInf, Flt);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
