//===- Quantize.cpp - CPU kernels: linear (de)quantization ------*- C++ -*-===//
//
// QuantizeLinear, DequantizeLinear (also of int4/uint4) and
// DynamicQuantizeLinear as ONNX's
// reference computes them: x / scale in float32, rounded half to even
// (numpy.rint), plus the zero point, saturated to the integer type (8 or,
// from opset 21, 16 bits); scales and zero points per tensor (scalars), per
// axis (1-D, axis attribute) or per block along the axis (opset 21's
// block_size). The 8-bit floats of opset 19 quantize by Cast's rules
// (Float8.h) and dequantize exactly.
// The per-element arithmetic is QuantizePoint.h, which the CUDA kernels
// share.
// Registered by the Cast family (CPUKernels.h).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include "Float8.h"
#include "QuantizePoint.h"
#include "TensorUtil.h"
#include <algorithm>
#include <cmath>
#include <limits>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

template <typename Q> Q saturateRound(float V) {
  return Q(quant::saturate(V, float(std::numeric_limits<Q>::lowest()),
                           float(std::numeric_limits<Q>::max())));
}

/// QuantizeLinear into an 8-bit float (opset 19): x / scale in float32,
/// plus the zero point, encoded with Cast's rules (saturate, default 1).
llvm::Error quantizeFloat8(const KernelContext &C, const quant::Axis &Idx,
                           const f8::Format &F) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const TensorRef *ZP = hasInput(C, 2) ? &C.Inputs[2] : nullptr;
  if (ZP && ZP->Type != Y.Type)
    return C.badInput("zero point and output types differ");
  const float *S = C.Inputs[1].data<float>();
  const bool Saturate = C.N.getInt("saturate", 1) != 0;
  uint8_t *PY = Y.data<uint8_t>();
  bool Ok = dispatchType<FloatTypes>(X.Type, [&](auto Tag) {
    using TX = typename decltype(Tag)::type;
    const TX *PX = X.data<TX>();
    for (int64_t I = 0, E = int64_t(X.numElements()); I < E; ++I) {
      int64_t K = Idx(I);
      double Z = ZP ? f8::decode(F, ZP->data<uint8_t>()[K]) : 0.0;
      PY[I] = f8::encode(F, double(float(load(PX[I])) / S[K]) + Z, Saturate);
    }
  });
  if (!Ok)
    return C.unsupported("input of type " + elementTypeName(X.Type));
  return llvm::Error::success();
}

llvm::Error runQuantize(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &Scale = C.Inputs[1];
  const TensorRef *ZP =
      C.Inputs.size() > 2 && C.Inputs[2].present() ? &C.Inputs[2] : nullptr;
  const TensorRef &Y = C.Outputs[0];
  quant::Axis Idx;
  if (llvm::Error E = quantParams(C, Idx))
    return E;
  if (Scale.Type != ElementType::Float)
    return C.unsupported("scale of type " + elementTypeName(Scale.Type));
  if (const f8::Format *F = f8::formatOf(Y.Type))
    return quantizeFloat8(C, Idx, *F);
  const float *S = Scale.data<float>();
  llvm::Error Result = llvm::Error::success();
  bool Ok = dispatchType<FloatTypes | SignedInts>(X.Type, [&](auto TagX) {
    using TX = typename decltype(TagX)::type;
    const TX *PX = X.data<TX>();
    bool OkY = false;
    if (Y.Type == ElementType::UInt8 || Y.Type == ElementType::Int8 ||
        Y.Type == ElementType::UInt16 || Y.Type == ElementType::Int16)
      OkY = dispatchType<IntTypes>(Y.Type, [&](auto TagY) {
        using TY = typename decltype(TagY)::type;
        const TY *Z = ZP ? ZP->data<TY>() : nullptr;
        TY *PY = Y.data<TY>();
        for (int64_t I = 0, E = int64_t(X.numElements()); I < E; ++I) {
          int64_t K = Idx(I);
          PY[I] =
              TY(quant::quantize(float(load(PX[I])), S[K], float(Z ? Z[K] : 0),
                                 float(std::numeric_limits<TY>::lowest()),
                                 float(std::numeric_limits<TY>::max())));
        }
      });
    if (!OkY)
      Result = C.unsupported("output of type " + elementTypeName(Y.Type));
  });
  if (!Ok)
    return C.unsupported("input of type " + elementTypeName(X.Type));
  return Result;
}

llvm::Error runDequantize(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &Scale = C.Inputs[1];
  const TensorRef *ZP =
      C.Inputs.size() > 2 && C.Inputs[2].present() ? &C.Inputs[2] : nullptr;
  quant::Axis Idx;
  if (llvm::Error E = quantParams(C, Idx))
    return E;
  if (Scale.Type != ElementType::Float ||
      C.Outputs[0].Type != ElementType::Float)
    return C.unsupported("scale and output must be float");
  if (ZP && ZP->Type != X.Type)
    return C.badInput("zero point and input types differ");
  const float *S = Scale.data<float>();
  float *PY = C.Outputs[0].data<float>();
  // From an 8-bit float (opset 19): (x - zero point) * scale.
  if (const f8::Format *F = f8::formatOf(X.Type)) {
    const uint8_t *PX = X.data<uint8_t>();
    const uint8_t *Z = ZP ? ZP->data<uint8_t>() : nullptr;
    for (int64_t I = 0, E = int64_t(X.numElements()); I < E; ++I) {
      int64_t K = Idx(I);
      PY[I] = float((f8::decode(*F, PX[I]) - (Z ? f8::decode(*F, Z[K]) : 0)) *
                    double(S[K]));
    }
    return llvm::Error::success();
  }
  // From int4 or uint4 (opset 21): two to a byte, the first in the low
  // bits; int4 sign-extended.
  if (isSubByte(X.Type)) {
    const uint8_t *PX = X.data<uint8_t>();
    const uint8_t *Z = ZP ? ZP->data<uint8_t>() : nullptr;
    const bool Signed = X.Type == ElementType::Int4;
    auto At = [&](const uint8_t *P, int64_t I) -> int64_t {
      int64_t V = (P[I / 2] >> (4 * (I % 2))) & 0xF;
      return Signed && V >= 8 ? V - 16 : V;
    };
    for (int64_t I = 0, E = int64_t(X.numElements()); I < E; ++I) {
      int64_t K = Idx(I);
      PY[I] = quant::dequantize(At(PX, I), Z ? At(Z, K) : 0, S[K]);
    }
    return llvm::Error::success();
  }
  if (!dispatchType<IntTypes>(X.Type, [&](auto Tag) {
        using T = typename decltype(Tag)::type;
        const T *PX = X.data<T>();
        const T *Z = ZP ? ZP->data<T>() : nullptr;
        for (int64_t I = 0, E = int64_t(X.numElements()); I < E; ++I) {
          int64_t K = Idx(I);
          PY[I] =
              quant::dequantize(int64_t(PX[I]), int64_t(Z ? Z[K] : 0), S[K]);
        }
      }))
    return C.unsupported("input of type " + elementTypeName(X.Type));
  return llvm::Error::success();
}

llvm::Error runDynamicQuantize(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0];
  if (X.Type != ElementType::Float || C.Outputs.size() < 3 ||
      C.Outputs[0].Type != ElementType::UInt8)
    return C.unsupported("only float input and uint8 output");
  const float *PX = X.data<float>();
  int64_t N = int64_t(X.numElements());
  // The range always includes 0, so that 0 is exactly representable.
  float Min = 0, Max = 0;
  for (int64_t I = 0; I < N; ++I) {
    Min = std::min(Min, PX[I]);
    Max = std::max(Max, PX[I]);
  }
  float Scale = (Max - Min) / 255.0f;
  uint8_t Zero = saturateRound<uint8_t>(0.0f - Min / Scale);
  uint8_t *PY = C.Outputs[0].data<uint8_t>();
  for (int64_t I = 0; I < N; ++I)
    PY[I] = saturateRound<uint8_t>(std::nearbyint(PX[I] / Scale) + float(Zero));
  if (C.Outputs[1].present())
    C.Outputs[1].data<float>()[0] = Scale;
  if (C.Outputs[2].present())
    C.Outputs[2].data<uint8_t>()[0] = Zero;
  return llvm::Error::success();
}

} // namespace

llvm::Error quantAxis(const KernelContext &C, const TensorRef &Param,
                      quant::Axis &Out) {
  const TensorRef &X = C.Inputs[0];
  if (Param.numElements() == 1) {
    Out = {1, 1};
    return llvm::Error::success();
  }
  int64_t Rank = int64_t(X.Dims.size());
  int64_t Axis = C.N.getInt("axis", 1);
  if (Axis < 0)
    Axis += Rank;
  int64_t Block = C.N.getInt("block_size", 0);
  if (Block < 0)
    return C.badInput("block_size is negative");
  if (Axis < 0 || Axis >= Rank)
    return C.badInput("axis is out of range for the input's rank");
  if (Block == 0 &&
      (Param.Dims.size() != 1 || Param.Dims[0] != X.Dims[size_t(Axis)]))
    return C.badInput("scale/zero point do not match the input's axis");
  if (Block > 0) {
    // Blocked (opset 21): the input's dims, the axis's divided by Block
    // rounded up.
    bool Ok = Param.Dims.size() == X.Dims.size();
    for (size_t I = 0; Ok && I < X.Dims.size(); ++I)
      Ok = Param.Dims[I] ==
           (int64_t(I) == Axis ? (X.Dims[I] + Block - 1) / Block : X.Dims[I]);
    if (!Ok)
      return C.badInput("scale/zero point are not the input's dims with "
                        "the axis divided by block_size");
  }
  Out.Size = X.Dims[size_t(Axis)];
  Out.Block = Block;
  Out.Inner = 1;
  for (int64_t I = Axis + 1; I < Rank; ++I)
    Out.Inner *= X.Dims[size_t(I)];
  return llvm::Error::success();
}

llvm::Error quantParams(const KernelContext &C, quant::Axis &Out) {
  const TensorRef &Scale = C.Inputs[1];
  // The kernels read one zero point per scale (ONNX: the same shape).
  if (hasInput(C, 2) && C.Inputs[2].numElements() != Scale.numElements())
    return C.badInput("zero point and scale sizes differ");
  return quantAxis(C, Scale, Out);
}

void registerQuantizeKernels(CPUKernelTable &T) {
  addKernel(T, "QuantizeLinear",
            Kernel{runQuantize, nullptr, typesOf(FloatTypes | SignedInts)});
  llvm::SmallVector<ElementType, 4> DequantTypes = typesOf(IntTypes);
  DequantTypes.append({ElementType::UInt4, ElementType::Int4});
  DequantTypes.append({ElementType::Float8E4M3FN, ElementType::Float8E4M3FNUZ,
                       ElementType::Float8E5M2, ElementType::Float8E5M2FNUZ});
  addKernel(T, "DequantizeLinear",
            Kernel{runDequantize, nullptr, DequantTypes});
  addKernel(T, "DynamicQuantizeLinear",
            Kernel{runDynamicQuantize, nullptr, {ElementType::Float}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
