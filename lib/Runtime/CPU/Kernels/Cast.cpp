//===- Cast.cpp - CPU kernels: conversions and pass-throughs ----*- C++ -*-===//
//
// Cast and CastLike between every numeric and bool type (and the 8-bit
// floats of opset 19, Float8.h), with numpy's
// astype semantics where C++ has none: float16 and bfloat16 round to nearest
// even in one step from the source value, a float out of an integer's range
// saturates and NaN becomes 0 (numpy leaves it unspecified; C++ calls it
// undefined, and a kernel must never trap). Identity and inference-mode
// Dropout copy only when the planner could not make them views. Clip takes
// its bounds as attributes before opset 11 and as inputs after.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include "Float8.h"
#include "TensorUtil.h"
#include <cmath>
#include <cstring>
#include <limits>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// Float to integer: truncation toward zero, saturating, NaN to 0.
template <typename To> To floatToInt(double D) {
  if (std::isnan(D))
    return To(0);
  if (D <= double(std::numeric_limits<To>::lowest()))
    return std::numeric_limits<To>::lowest();
  if (D >= double(std::numeric_limits<To>::max()))
    return std::numeric_limits<To>::max();
  return To(D);
}

template <typename From, typename To> To convert(const From &V) {
  auto C = load(V);
  using CT = decltype(C);
  if constexpr (std::is_same<To, bool>::value)
    return C != CT(0);
  else if constexpr (std::is_same<To, Half>::value ||
                     std::is_same<To, BFloat16>::value)
    return store<To>(double(C));
  else if constexpr (std::is_integral<To>::value &&
                     !std::is_integral<CT>::value)
    return floatToInt<To>(double(C));
  else
    return To(C);
}

/// Cast and CastLike to or from an 8-bit float (Float8.h): through double,
/// which holds every value of both sides exactly but for float64 sources,
/// rounded once by the encoder. saturate (default 1) picks Cast's table.
llvm::Error castFloat8(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  const f8::Format *FIn = f8::formatOf(In.Type), *FOut = f8::formatOf(Out.Type);
  const bool Saturate = C.N.getInt("saturate", 1) != 0;
  const int64_t N = int64_t(Out.numElements());
  bool Ok = true;
  auto WriteAll = [&](auto Read) {
    if (FOut) {
      uint8_t *Y = Out.data<uint8_t>();
      for (int64_t I = 0; I < N; ++I)
        Y[I] = f8::encode(*FOut, Read(I), Saturate);
      return;
    }
    Ok = dispatchType<AllTypes>(Out.Type, [&](auto Tag) {
      using To = typename decltype(Tag)::type;
      To *Y = Out.data<To>();
      for (int64_t I = 0; I < N; ++I)
        Y[I] = convert<double, To>(Read(I));
    });
  };
  if (FIn) {
    const uint8_t *X = In.data<const uint8_t>();
    WriteAll([&](int64_t I) { return f8::decode(*FIn, X[I]); });
  } else {
    Ok = dispatchType<AllTypes>(
             In.Type,
             [&](auto Tag) {
               using From = typename decltype(Tag)::type;
               const From *X = In.data<const From>();
               WriteAll([&](int64_t I) { return double(load(X[I])); });
             }) &&
         Ok;
  }
  if (!Ok)
    return C.unsupported("cast from " + elementTypeName(In.Type) + " to " +
                         elementTypeName(Out.Type));
  return llvm::Error::success();
}

/// Converts Inputs[0] into Outputs[0]'s type (Cast, CastLike).
llvm::Error castTo(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  if (isFloat8(In.Type) || isFloat8(Out.Type))
    return castFloat8(C);
  bool Inner = false;
  bool Outer = dispatchType<AllTypes>(In.Type, [&](auto TagIn) {
    using From = typename decltype(TagIn)::type;
    Inner = dispatchType<AllTypes>(Out.Type, [&](auto TagOut) {
      using To = typename decltype(TagOut)::type;
      const From *X = In.data<From>();
      To *Y = Out.data<To>();
      C.Pool.parallelFor(int64_t(Out.numElements()), ElementwiseGrain,
                         [&](int64_t B, int64_t E) {
                           for (int64_t I = B; I < E; ++I)
                             Y[I] = convert<From, To>(X[I]);
                         });
    });
  });
  if (!Outer || !Inner)
    return C.unsupported("cast from " + elementTypeName(In.Type) + " to " +
                         elementTypeName(Out.Type));
  return llvm::Error::success();
}

llvm::Error runIdentity(const KernelContext &C) {
  if (elementBits(C.Inputs[0].Type) == 0)
    return C.unsupported("element type " + elementTypeName(C.Inputs[0].Type));
  copyUnlessAliased(C.Inputs[0], C.Outputs[0]);
  return llvm::Error::success();
}

/// OomplanIf (a flattened If, IR/Graph.h): each output is a copy of the
/// taken branch's result; the other branch's steps did not run, so its
/// results are never read. Strings have no bytes to copy (elementBits 0).
llvm::Error runIfSelect(const KernelContext &C) {
  int64_t Cond = 0;
  if (C.Inputs.size() != 1 + 2 * C.Outputs.size() ||
      !readInt(C.Inputs[0], 0, Cond))
    return C.badInput("needs a bool condition and both branches' results");
  for (size_t I = 0; I < C.Outputs.size(); ++I) {
    llvm::Expected<const TensorRef *> From = ifSelectSource(C, Cond != 0, I);
    if (!From)
      return From.takeError();
    const TensorRef &To = C.Outputs[I];
    if (*From && (*From)->Data != To.Data && (*From)->bytes())
      std::memmove(To.Data, (*From)->Data, (*From)->bytes());
  }
  return llvm::Error::success();
}

/// Inference Dropout is the identity with an all-true mask. Training mode
/// with a nonzero ratio draws random numbers no reference could match, so
/// it is unsupported rather than silently different.
llvm::Error runDropout(const KernelContext &C) {
  bool Training = C.N.getInt("is_test", 1) == 0;
  if (C.Inputs.size() > 2 && C.Inputs[2].present()) {
    int64_t T = 0;
    if (!readInt(C.Inputs[2], 0, T))
      return C.badInput("training_mode must be bool");
    Training = T != 0;
  }
  double Ratio = C.N.getFloat("ratio", 0.5);
  if (C.Inputs.size() > 1 && C.Inputs[1].present() &&
      !readDouble(C.Inputs[1], 0, Ratio))
    return C.badInput("ratio must be a number");
  if (Training && Ratio != 0)
    return C.unsupported("training-mode Dropout with a nonzero ratio");
  if (llvm::Error E = runIdentity(C))
    return E;
  if (C.Outputs.size() > 1 && C.Outputs[1].present()) {
    const TensorRef &Mask = C.Outputs[1];
    if (Mask.Type != ElementType::Bool)
      return C.unsupported("mask of type " + elementTypeName(Mask.Type));
    std::memset(Mask.Data, 1, Mask.numElements());
  }
  return llvm::Error::success();
}

/// numpy.clip on N elements: minimum(maximum(x, lo), hi); NaN stays NaN.
template <typename T, typename Comp>
OOMPLAN_SIMD_CLONES void clipRun(const T *X, T *Y, int64_t N, Comp Lo,
                                 Comp Hi) {
  for (int64_t I = 0; I < N; ++I) {
    Comp V = load(X[I]);
    if (V < Lo)
      V = Lo;
    if (V > Hi)
      V = Hi;
    Y[I] = store<T>(V);
  }
}

llvm::Error runClip(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0];
  bool Old = C.G.defaultOpset() < 11;
  bool Ok = dispatchType<NumericTypes>(In.Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    using Comp = ComputeT<T>;
    // An absent bound is no bound: -inf and +inf stay (numpy.clip with
    // None), where lowest() and max() would clip them to finite values.
    using Lim = std::numeric_limits<Comp>;
    Comp Lo = Lim::has_infinity ? -Lim::infinity() : Lim::lowest();
    Comp Hi = Lim::has_infinity ? Lim::infinity() : Lim::max();
    if (Old) {
      if (C.N.attr("min"))
        Lo = Comp(C.N.getFloat("min", 0));
      if (C.N.attr("max"))
        Hi = Comp(C.N.getFloat("max", 0));
    } else {
      if (C.Inputs.size() > 1 && C.Inputs[1].present())
        Lo = load(C.Inputs[1].data<T>()[0]);
      if (C.Inputs.size() > 2 && C.Inputs[2].present())
        Hi = load(C.Inputs[2].data<T>()[0]);
    }
    const T *X = In.data<T>();
    T *Y = C.Outputs[0].data<T>();
    C.Pool.parallelFor(int64_t(In.numElements()), ElementwiseGrain,
                       [&](int64_t B, int64_t E) {
                         clipRun<T, Comp>(X + B, Y + B, E - B, Lo, Hi);
                       });
  });
  if (!Ok)
    return C.unsupported("element type " + elementTypeName(In.Type));
  return llvm::Error::success();
}

/// Every numeric and bool type, and the 8-bit floats.
llvm::SmallVector<ElementType, 4> castTypes() {
  llvm::SmallVector<ElementType, 4> T = typesOf(AllTypes);
  T.append({ElementType::Float8E4M3FN, ElementType::Float8E4M3FNUZ,
            ElementType::Float8E5M2, ElementType::Float8E5M2FNUZ});
  return T;
}

} // namespace

// Quantize.cpp: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.
void registerQuantizeKernels(CPUKernelTable &T);

void registerCastKernels(CPUKernelTable &T) {
  addKernel(T, "Cast", Kernel{castTo, nullptr, castTypes()});
  addKernel(T, "CastLike", Kernel{castTo, nullptr, castTypes()});
  addKernel(T, "Identity", Kernel{runIdentity, nullptr, {}});
  addKernel(T, "Dropout", Kernel{runDropout, nullptr, typesOf(FloatTypes)});
  addKernel(T, "Clip", Kernel{runClip, nullptr, typesOf(NumericTypes)});
  // Input 0 is the bool condition; the results may be of any type.
  addKernel(T, "OomplanIf", Kernel{runIfSelect, nullptr, {}});
  registerQuantizeKernels(T);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
