//===- Binary.cpp - CPU kernels: broadcast arithmetic and logic -*- C++ -*-===//
//
// Two or more inputs broadcast together (numpy's rules): arithmetic,
// comparisons, logic, bit operations, the variadic Max/Min/Sum/Mean, Where
// and PRelu. Integer results follow numpy's reference exactly: two's
// complement wrap-around, Div truncating toward zero (ONNX's integer Div),
// Mod taking the divisor's sign unless fmod=1; a division by zero gives 0
// rather than a trap, since a kernel must never crash the process. Max and
// Min propagate NaN as numpy.maximum does.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include <algorithm>
#include <cmath>
#include <limits>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

constexpr unsigned Flt = FloatTypes;
constexpr unsigned Numeric = NumericTypes;

/// One run of Out = Op(A, B): Len elements, the inputs stepping by SA and
/// SB (1 contiguous, 0 broadcast). The common strides get their own loops
/// so that the compiler vectorizes them.
template <typename TA, typename TB, typename TO, typename OpT>
OOMPLAN_SIMD_CLONES void binaryRun(const TA *X, const TB *Y, TO *Z, int64_t SA,
                                   int64_t SB, int64_t Len, OpT Op) {
  if (SA == 1 && SB == 1) {
    for (int64_t J = 0; J < Len; ++J)
      Z[J] = store<TO>(Op(load(X[J]), load(Y[J])));
  } else if (SA == 1 && SB == 0) {
    auto YV = load(Y[0]);
    for (int64_t J = 0; J < Len; ++J)
      Z[J] = store<TO>(Op(load(X[J]), YV));
  } else if (SA == 0 && SB == 1) {
    auto XV = load(X[0]);
    for (int64_t J = 0; J < Len; ++J)
      Z[J] = store<TO>(Op(XV, load(Y[J])));
  } else {
    for (int64_t J = 0; J < Len; ++J)
      Z[J] = store<TO>(Op(load(X[J * SA]), load(Y[J * SB])));
  }
}

/// Out = Op(A, B) with A, B, Out of storage types TA, TB, TO.
template <typename TA, typename TB, typename TO, typename OpT>
void binaryLoop(const KernelContext &C, const TensorRef &A, const TensorRef &B,
                OpT Op) {
  const TensorRef &O = C.Outputs[0];
  const TA *PA = A.data<TA>();
  const TB *PB = B.data<TB>();
  TO *PO = O.data<TO>();
  llvm::ArrayRef<int64_t> Dims[] = {A.Dims, B.Dims};
  forEachBroadcastRun(O.Dims, Dims, C.Pool, [&](const BroadcastRun &R) {
    binaryRun<TA, TB, TO>(PA + R.Offs[0], PB + R.Offs[1], PO + R.Out,
                          R.Steps[0], R.Steps[1], R.Len, Op);
  });
}

llvm::Error badType(const KernelContext &C, ElementType Ty) {
  return C.unsupported("element type " + elementTypeName(Ty));
}

/// Same-type inputs A and B, output of the same type.
template <unsigned Set, typename OpT>
llvm::Error sameTypeOn(const KernelContext &C, const TensorRef &A,
                       const TensorRef &B, OpT Op) {
  if (A.Type != B.Type)
    return C.unsupported("mixed input types");
  if (!dispatchType<Set>(A.Type, [&](auto Tag) {
        using T = typename decltype(Tag)::type;
        binaryLoop<T, T, T>(C, A, B, Op);
      }))
    return badType(C, A.Type);
  return llvm::Error::success();
}

template <unsigned Set, typename OpT>
llvm::Error sameType(const KernelContext &C, OpT Op) {
  return sameTypeOn<Set>(C, C.Inputs[0], C.Inputs[1], Op);
}

/// Same-type inputs, bool output (comparisons).
template <unsigned Set, typename OpT>
llvm::Error compare(const KernelContext &C, OpT Op) {
  const TensorRef &A = C.Inputs[0], &B = C.Inputs[1];
  if (A.Type != B.Type)
    return C.unsupported("mixed input types");
  if (!dispatchType<Set>(A.Type, [&](auto Tag) {
        using T = typename decltype(Tag)::type;
        binaryLoop<T, T, bool>(C, A, B, Op);
      }))
    return badType(C, A.Type);
  return llvm::Error::success();
}

/// Integer +, -, * wrap around as in numpy: computed unsigned.
template <typename V> using Wide = std::make_unsigned_t<V>;
template <typename V, typename F> V wrap(V A, V B, F Fn) {
  if constexpr (std::is_integral<V>::value && !std::is_same<V, bool>::value)
    return V(Fn(Wide<V>(A), Wide<V>(B)));
  else
    return V(Fn(A, B));
}

llvm::Error runAdd(const KernelContext &C) {
  return sameType<Numeric>(C, [](auto A, auto B) {
    return wrap(A, B, [](auto X, auto Y) { return X + Y; });
  });
}
llvm::Error runSub(const KernelContext &C) {
  return sameType<Numeric>(C, [](auto A, auto B) {
    return wrap(A, B, [](auto X, auto Y) { return X - Y; });
  });
}
llvm::Error runMul(const KernelContext &C) {
  return sameType<Numeric>(C, [](auto A, auto B) {
    return wrap(A, B, [](auto X, auto Y) { return X * Y; });
  });
}

template <typename V> V divide(V A, V B) {
  if constexpr (std::is_integral<V>::value) {
    if (B == 0)
      return 0;
    if constexpr (std::is_signed<V>::value)
      if (B == V(-1))
        return V(Wide<V>(0) - Wide<V>(A)); // INT_MIN / -1 wraps.
    return V(A / B);
  } else {
    return A / B;
  }
}

llvm::Error runDiv(const KernelContext &C) {
  return sameType<Numeric>(C, [](auto A, auto B) { return divide(A, B); });
}

/// numpy.mod for integers: the result takes the divisor's sign.
template <typename V> V intMod(V A, V B, bool CStyle) {
  if (B == 0)
    return 0;
  if constexpr (std::is_signed<V>::value) {
    if (B == V(-1))
      return 0;
    V R = V(A % B);
    if (!CStyle && R != 0 && ((R < 0) != (B < 0)))
      R = V(R + B);
    return R;
  } else {
    return V(A % B);
  }
}

llvm::Error runMod(const KernelContext &C) {
  bool FMod = C.N.getInt("fmod", 0) != 0;
  return sameType<Numeric>(C, [FMod](auto A, auto B) {
    using V = decltype(A);
    if constexpr (std::is_integral<V>::value) {
      return intMod(A, B, FMod);
    } else {
      V R = std::fmod(A, B);
      // fmod=0 on floats: numpy.mod, the divisor's sign.
      if (!FMod && R != V(0) && ((R < V(0)) != (B < V(0))))
        R += B;
      return R;
    }
  });
}

template <typename V> V maxOf(V A, V B) {
  if constexpr (!std::is_integral<V>::value)
    if (std::isnan(A) || std::isnan(B))
      return std::numeric_limits<V>::quiet_NaN();
  return A < B ? B : A;
}
template <typename V> V minOf(V A, V B) {
  if constexpr (!std::is_integral<V>::value)
    if (std::isnan(A) || std::isnan(B))
      return std::numeric_limits<V>::quiet_NaN();
  return B < A ? B : A;
}

/// Folds Op over every input (Max, Min, Sum, Mean) element by element, so
/// that an output aliasing any input is still read before it is written;
/// Finish maps the folded value (Mean divides).
template <unsigned Set, typename OpT, typename FinT>
llvm::Error variadic(const KernelContext &C, OpT Op, FinT Finish) {
  size_t K = C.Inputs.size();
  for (const TensorRef &In : C.Inputs)
    if (In.Type != C.Inputs[0].Type || !In.present())
      return C.unsupported("mixed or missing inputs");
  if (K == 2)
    return sameType<Set>(C,
                         [&](auto A, auto B) { return Finish(Op(A, B), 2); });
  llvm::SmallVector<llvm::ArrayRef<int64_t>, 4> Dims;
  for (const TensorRef &In : C.Inputs)
    Dims.push_back(In.Dims);
  const TensorRef &O = C.Outputs[0];
  if (!dispatchType<Set>(O.Type, [&](auto Tag) {
        using T = typename decltype(Tag)::type;
        T *PO = O.data<T>();
        forEachBroadcastRun(O.Dims, Dims, C.Pool, [&](const BroadcastRun &R) {
          for (int64_t J = 0; J < R.Len; ++J) {
            auto Acc = load(C.Inputs[0].data<T>()[R.Offs[0] + J * R.Steps[0]]);
            for (size_t I = 1; I < K; ++I)
              Acc = Op(Acc,
                       load(C.Inputs[I].data<T>()[R.Offs[I] + J * R.Steps[I]]));
            PO[R.Out + J] = store<T>(Finish(Acc, int64_t(K)));
          }
        });
      }))
    return badType(C, O.Type);
  return llvm::Error::success();
}

auto Keep = [](auto V, int64_t) { return V; };

llvm::Error runMax(const KernelContext &C) {
  return variadic<Numeric>(
      C, [](auto A, auto B) { return maxOf(A, B); }, Keep);
}
llvm::Error runMin(const KernelContext &C) {
  return variadic<Numeric>(
      C, [](auto A, auto B) { return minOf(A, B); }, Keep);
}
llvm::Error runSum(const KernelContext &C) {
  return variadic<Flt>(
      C, [](auto A, auto B) { return A + B; }, Keep);
}
llvm::Error runMean(const KernelContext &C) {
  return variadic<Flt>(
      C, [](auto A, auto B) { return A + B; },
      [](auto V, int64_t K) { return V / decltype(V)(K); });
}

llvm::Error runEqual(const KernelContext &C) {
  return compare<AllTypes>(C, [](auto A, auto B) { return A == B; });
}
llvm::Error runLess(const KernelContext &C) {
  return compare<Numeric>(C, [](auto A, auto B) { return A < B; });
}
llvm::Error runLessOrEqual(const KernelContext &C) {
  return compare<Numeric>(C, [](auto A, auto B) { return A <= B; });
}
llvm::Error runGreater(const KernelContext &C) {
  return compare<Numeric>(C, [](auto A, auto B) { return A > B; });
}
llvm::Error runGreaterOrEqual(const KernelContext &C) {
  return compare<Numeric>(C, [](auto A, auto B) { return A >= B; });
}
llvm::Error runAnd(const KernelContext &C) {
  return sameType<BoolType>(C, [](bool A, bool B) { return A && B; });
}
llvm::Error runOr(const KernelContext &C) {
  return sameType<BoolType>(C, [](bool A, bool B) { return A || B; });
}
llvm::Error runXor(const KernelContext &C) {
  return sameType<BoolType>(C, [](bool A, bool B) { return A != B; });
}
llvm::Error runBitwiseAnd(const KernelContext &C) {
  return sameType<IntTypes>(C, [](auto A, auto B) { return A & B; });
}
llvm::Error runBitwiseOr(const KernelContext &C) {
  return sameType<IntTypes>(C, [](auto A, auto B) { return A | B; });
}
llvm::Error runBitwiseXor(const KernelContext &C) {
  return sameType<IntTypes>(C, [](auto A, auto B) { return A ^ B; });
}

llvm::Error runBitShift(const KernelContext &C) {
  std::string Dir = C.N.getString("direction", "");
  if (Dir != "LEFT" && Dir != "RIGHT")
    return C.badInput("direction must be LEFT or RIGHT");
  bool Left = Dir == "LEFT";
  return sameType<UnsignedInts>(C, [Left](auto A, auto B) {
    using V = decltype(A);
    // Shifting by the width or more is undefined in C++; numpy gives 0.
    if (uint64_t(B) >= sizeof(V) * 8)
      return V(0);
    return Left ? V(A << B) : V(A >> B);
  });
}

/// Integer power by squaring, wrapping as numpy does; a negative exponent
/// gives 0 except for the bases 1 and -1.
template <typename V> V intPow(V Base, int64_t Exp) {
  if (Exp < 0) {
    if (Base == V(1))
      return 1;
    if constexpr (std::is_signed<V>::value)
      if (Base == V(-1))
        return (Exp & 1) ? V(-1) : V(1);
    return 0;
  }
  Wide<V> R = 1, B = Wide<V>(Base);
  for (uint64_t E = uint64_t(Exp); E; E >>= 1) {
    if (E & 1)
      R = Wide<V>(R * B);
    B = Wide<V>(B * B);
  }
  return V(R);
}

/// A double to integer type V without undefined behaviour when out of range.
template <typename V> V saturate(double D) {
  if (!(D == D))
    return 0;
  if (D <= double(std::numeric_limits<V>::lowest()))
    return std::numeric_limits<V>::lowest();
  if (D >= double(std::numeric_limits<V>::max()))
    return std::numeric_limits<V>::max();
  return V(D);
}

llvm::Error runPow(const KernelContext &C) {
  const TensorRef &A = C.Inputs[0], &B = C.Inputs[1];
  bool Ok = false;
  bool Found = dispatchType<Numeric>(A.Type, [&](auto TagA) {
    using TA = typename decltype(TagA)::type;
    Ok = dispatchType<Numeric>(B.Type, [&](auto TagB) {
      using TB = typename decltype(TagB)::type;
      binaryLoop<TA, TB, TA>(C, A, B, [](auto X, auto Y) {
        using VX = decltype(X);
        using VY = decltype(Y);
        if constexpr (std::is_integral<VX>::value &&
                      std::is_integral<VY>::value)
          return intPow(X, int64_t(Y));
        else if constexpr (std::is_integral<VX>::value)
          return saturate<VX>(std::pow(double(X), double(Y)));
        else if constexpr (std::is_same<VX, float>::value &&
                           std::is_same<VY, float>::value)
          // x^2 (LayerNorm's variance in exported models) as one multiply:
          // the same correctly rounded value, without the cost of powf.
          return Y == 2.0f ? X * X : std::pow(X, Y);
        else
          return VX(std::pow(double(X), double(Y)));
      });
    });
  });
  if (!Found || !Ok)
    return C.unsupported("element types " + elementTypeName(A.Type) + ", " +
                         elementTypeName(B.Type));
  return llvm::Error::success();
}

llvm::Error runWhere(const KernelContext &C) {
  const TensorRef &Cond = C.Inputs[0], &X = C.Inputs[1], &Y = C.Inputs[2];
  const TensorRef &O = C.Outputs[0];
  if (Cond.Type != ElementType::Bool || X.Type != Y.Type)
    return C.unsupported("condition must be bool and X, Y of one type");
  llvm::ArrayRef<int64_t> Dims[] = {Cond.Dims, X.Dims, Y.Dims};
  // Copied as raw bytes: Where moves values, whatever their type.
  unsigned Width = elementBits(X.Type) / 8;
  if (Width == 0 || X.Type == ElementType::String)
    return badType(C, X.Type);
  const bool *PC = Cond.data<bool>();
  const char *PX = X.data<char>(), *PY = Y.data<char>();
  char *PO = O.data<char>();
  forEachBroadcastRun(O.Dims, Dims, C.Pool, [&](const BroadcastRun &R) {
    for (int64_t J = 0; J < R.Len; ++J) {
      bool Pick = PC[R.Offs[0] + J * R.Steps[0]];
      const char *Src = Pick ? PX + (R.Offs[1] + J * R.Steps[1]) * Width
                             : PY + (R.Offs[2] + J * R.Steps[2]) * Width;
      std::memmove(PO + (R.Out + J) * Width, Src, Width);
    }
  });
  return llvm::Error::success();
}

llvm::Error runPRelu(const KernelContext &C) {
  TensorRef Slope = C.Inputs[1];
  const TensorRef &X = C.Inputs[0];
  // Before opset 7 a 1-D slope of X's channel count applies per channel
  // (axis 1), not along the last axis as numpy broadcasting would.
  if (C.G.defaultOpset() < 7 && Slope.Dims.size() == 1 && X.Dims.size() >= 2 &&
      Slope.Dims[0] == X.Dims[1] && Slope.Dims[0] != 1)
    Slope.Dims.append(X.Dims.size() - 2, 1);
  if (!broadcastsTo(Slope.Dims, X.Dims))
    return C.badInput("slope does not broadcast to the input");
  return sameTypeOn<Flt | SignedInts>(C, X, Slope, [](auto V, auto S) {
    using T = decltype(V);
    return V < T(0) ? T(S * V) : V;
  });
}

} // namespace

void registerBinaryKernels(CPUKernelTable &T) {
  auto Add = [&T](llvm::StringRef Op, KernelFn Fn, unsigned Set) {
    addKernel(T, Op, Kernel{Fn, nullptr, typesOf(Set)});
  };
  Add("Add", runAdd, Numeric);
  Add("Sub", runSub, Numeric);
  Add("Mul", runMul, Numeric);
  Add("Div", runDiv, Numeric);
  Add("Mod", runMod, Numeric);
  Add("Pow", runPow, Numeric);
  Add("Max", runMax, Numeric);
  Add("Min", runMin, Numeric);
  Add("Sum", runSum, Flt);
  Add("Mean", runMean, Flt);
  Add("Equal", runEqual, AllTypes);
  Add("Less", runLess, Numeric);
  Add("LessOrEqual", runLessOrEqual, Numeric);
  Add("Greater", runGreater, Numeric);
  Add("GreaterOrEqual", runGreaterOrEqual, Numeric);
  Add("And", runAnd, BoolType);
  Add("Or", runOr, BoolType);
  Add("Xor", runXor, BoolType);
  Add("BitwiseAnd", runBitwiseAnd, IntTypes);
  Add("BitwiseOr", runBitwiseOr, IntTypes);
  Add("BitwiseXor", runBitwiseXor, IntTypes);
  Add("BitShift", runBitShift, UnsignedInts);
  addKernel(T, "Where", Kernel{runWhere, nullptr, {ElementType::Bool}});
  Add("PRelu", runPRelu, Flt | SignedInts);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
