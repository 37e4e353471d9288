//===- QLinearKernels.cpp - quantized MatMuls and Convs on CUDA -----------===//
//
// The quantized products of ONNX Runtime's quantizers: dynamic
// quantization (DynamicQuantizeLinear, then MatMulInteger into int32) and
// QOperator models (QLinearMatMul and QLinearConv, requantized into 8
// bits; ConvInteger). Each was a host step, with a wait for the device and
// a copy of its operands each. The checks are the CPU kernel's
// (cpu::matMulShape, cpu::convGeometry, cpu::convChannels,
// cpu::zeroPointAxis, cpu::qlinearParams); the sums are exact
// (Kernels/QuantizedMatMul.cu, Kernels/QuantizedConv.cu). No workspace:
// the CPU's double copies are not needed on the device.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/ConvGeometry.h"
#include "../CPU/Kernels/TensorUtil.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {

bool is8Bit(ElementType T) {
  return T == ElementType::Int8 || T == ElementType::UInt8;
}

const TensorRef *optIn(const KernelContext &C, unsigned I) {
  return cpu::hasInput(C, I) ? &C.Inputs[I] : nullptr;
}

} // namespace

llvm::Error cuda::qMatMulArgs(const KernelContext &C, QMatMulArgs &P) {
  const bool QLinear = C.N.OpType == "QLinearMatMul";
  // MatMulInteger: a, b, a_zero_point, b_zero_point. QLinearMatMul: a,
  // a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
  const unsigned IA = 0, IB = QLinear ? 3 : 1, IAZ = 2, IBZ = QLinear ? 5 : 3;
  if (C.Inputs.size() <= IB || (QLinear && C.Inputs.size() < 8))
    return C.badInput("missing inputs");
  const TensorRef &A = C.Inputs[IA], &B = C.Inputs[IB], &Y = C.Outputs[0];
  if (!is8Bit(A.Type) || !is8Bit(B.Type))
    return C.unsupported("operands of type " + elementTypeName(A.Type) + ", " +
                         elementTypeName(B.Type));
  cpu::MatMulShape Sh;
  if (!cpu::matMulShape(A.Dims, B.Dims, Sh))
    return C.badInput("inner dims differ or batch dims do not broadcast");
  if (int64_t(Y.numElements()) != Sh.batches() * Sh.M * Sh.N)
    return C.badInput("the output's size disagrees with the operands'");
  if (Sh.YBatch.size() > size_t(MaxRank))
    return C.unsupported("more than " + llvm::Twine(MaxRank) + " batch dims");
  P = QMatMulArgs();
  P.A = A.Data;
  P.B = B.Data;
  P.ASigned = A.Type == ElementType::Int8;
  P.BSigned = B.Type == ElementType::Int8;
  const TensorRef *AZ = optIn(C, IAZ), *BZ = optIn(C, IBZ);
  // A's zero point follows its rows, B's its columns (the CPU's widen).
  if (llvm::Error E =
          cpu::zeroPointAxis(C, A, AZ, int64_t(A.Dims.size()) - 2, P.AZ))
    return E;
  if (llvm::Error E =
          cpu::zeroPointAxis(C, B, BZ, int64_t(B.Dims.size()) - 1, P.BZ))
    return E;
  P.AZero = AZ ? AZ->Data : nullptr;
  P.BZero = BZ ? BZ->Data : nullptr;
  P.M = Sh.M;
  P.K = Sh.K;
  P.N = Sh.N;
  P.Batches = Sh.batches();
  P.BatchRank = int(Sh.YBatch.size());
  // Each operand's batches are row-major over its own batch dims.
  int64_t SA = Sh.M * Sh.K, SB = Sh.K * Sh.N;
  for (int D = P.BatchRank - 1; D >= 0; --D) {
    P.YBatch[D] = Sh.YBatch[size_t(D)];
    P.AStride[D] = Sh.ABatch[size_t(D)] == 1 ? 0 : SA;
    P.BStride[D] = Sh.BBatch[size_t(D)] == 1 ? 0 : SB;
    SA *= Sh.ABatch[size_t(D)];
    SB *= Sh.BBatch[size_t(D)];
  }
  P.Y = Y.Data;
  if (!QLinear) {
    if (Y.Type != ElementType::Int32)
      return C.badInput("output must be int32");
  } else {
    if (!is8Bit(Y.Type))
      return C.badInput("output must be uint8 or int8");
    const int64_t RY = int64_t(Y.Dims.size());
    P.YCols = Y.Dims.empty() ? 1 : Y.Dims[size_t(RY - 1)];
    P.YRows = RY >= 2 ? Y.Dims[size_t(RY - 2)] : 1;
    if (llvm::Error E = cpu::qlinearParams(C, false, P.YRows, P.YCols))
      return E;
    P.QLinear = true;
    P.YSigned = Y.Type == ElementType::Int8;
    P.AScale = C.Inputs[1].data<float>();
    P.BScale = C.Inputs[4].data<float>();
    P.YScale = C.Inputs[6].data<float>();
    P.AScaleOne = C.Inputs[1].numElements() == 1;
    P.BScaleOne = C.Inputs[4].numElements() == 1;
    const TensorRef *YZ = optIn(C, 7);
    P.YZero = YZ ? YZ->Data : nullptr;
  }
  return llvm::Error::success();
}

llvm::Error cuda::qConvArgs(const KernelContext &C, QConvArgs &P) {
  const bool QLinear = C.N.OpType == "QLinearConv";
  // ConvInteger: x, w, x_zero_point, w_zero_point. QLinearConv: x,
  // x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
  // y_zero_point, B.
  const unsigned IX = 0, IW = QLinear ? 3 : 1, IXZ = 2, IWZ = QLinear ? 5 : 3;
  if (C.Inputs.size() <= IW || (QLinear && C.Inputs.size() < 8))
    return C.badInput("missing inputs");
  const TensorRef &X = C.Inputs[IX], &W = C.Inputs[IW], &Y = C.Outputs[0];
  if (!is8Bit(X.Type) || !is8Bit(W.Type))
    return C.unsupported("operands of type " + elementTypeName(X.Type) + ", " +
                         elementTypeName(W.Type));
  cpu::WindowGeometry G;
  const TensorRef XW[2] = {X, W};
  std::string Why = cpu::convGeometry(C.N, XW, C.Outputs, false, G);
  if (Why.empty())
    Why = cpu::convChannels(C.N, X, W, Y);
  if (!Why.empty())
    return C.badInput(Why);
  P = QConvArgs();
  if (!cpu::poolWindow(G, C.N, P.Geo))
    return C.unsupported("more than " + llvm::Twine(pool::Window::MaxRank) +
                         " spatial dims");
  P.X = X.Data;
  P.W = W.Data;
  P.XSigned = X.Type == ElementType::Int8;
  P.WSigned = W.Type == ElementType::Int8;
  const TensorRef *XZ = optIn(C, IXZ), *WZ = optIn(C, IWZ);
  // X's zero point is one value, W's one or one per output channel (the
  // CPU's widen).
  quant::Axis XAxis;
  if (llvm::Error E = cpu::zeroPointAxis(C, X, XZ, -1, XAxis))
    return E;
  if (llvm::Error E = cpu::zeroPointAxis(C, W, WZ, 0, P.WZ))
    return E;
  P.XZero = XZ ? XZ->Data : nullptr;
  P.WZero = WZ ? WZ->Data : nullptr;
  P.N = X.Dims[0];
  P.C = X.Dims[1];
  P.M = W.Dims[0];
  P.Group = C.N.getInt("group", 1);
  P.InSize = G.inSize();
  P.OutSize = G.outSize();
  P.Y = Y.Data;
  if (!QLinear) {
    if (Y.Type != ElementType::Int32)
      return C.badInput("output must be int32");
    return llvm::Error::success();
  }
  if (!is8Bit(Y.Type))
    return C.badInput("output must be uint8 or int8");
  if (llvm::Error E = cpu::qlinearParams(C, true, 1, P.M))
    return E;
  P.QLinear = true;
  P.YSigned = Y.Type == ElementType::Int8;
  P.XScale = C.Inputs[1].data<float>();
  P.WScale = C.Inputs[4].data<float>();
  P.YScale = C.Inputs[6].data<float>();
  P.WScaleOne = C.Inputs[4].numElements() == 1;
  const TensorRef *YZ = optIn(C, 7), *Bias = optIn(C, 8);
  P.YZero = YZ ? YZ->Data : nullptr;
  P.Bias = Bias ? Bias->data<int32_t>() : nullptr;
  return llvm::Error::success();
}

namespace {

llvm::Error runQConv(const KernelContext &C) {
  QConvArgs P;
  if (llvm::Error E = qConvArgs(C, P))
    return E;
  return launched(C, quantizedConv(P, context().Compute),
                  "quantized convolution kernel");
}

llvm::Error runQMatMul(const KernelContext &C) {
  QMatMulArgs P;
  if (llvm::Error E = qMatMulArgs(C, P))
    return E;
  return launched(C, quantizedMatMul(P, context().Compute),
                  "quantized MatMul kernel");
}

// What the device kernel does not read, left to the host (the CPU kernel
// reads any of them): scales other than float, zero points of another
// type than their operand's or the output's.
std::string qLinearRefuses(const Node &N, llvm::ArrayRef<TensorRef> In,
                           llvm::ArrayRef<TensorRef> Out) {
  const bool QLinear = N.OpType == "QLinearMatMul" || N.OpType == "QLinearConv";
  auto TypeAt = [&](unsigned I) {
    return I < In.size() ? In[I].Type : ElementType::Undefined;
  };
  auto Differs = [&](unsigned Zero, ElementType Of) {
    const ElementType T = TypeAt(Zero);
    return T != ElementType::Undefined && Of != ElementType::Undefined &&
           T != Of;
  };
  const ElementType A = TypeAt(0), B = TypeAt(QLinear ? 3 : 1);
  if (!is8Bit(B) && B != ElementType::Undefined)
    return ("b of type " + elementTypeName(B)).str();
  if (Differs(2, A) || Differs(QLinear ? 5 : 3, B))
    return "a zero point of another type than its operand";
  if (!QLinear)
    return "";
  for (unsigned S : {1u, 4u, 6u})
    if (TypeAt(S) != ElementType::Float && TypeAt(S) != ElementType::Undefined)
      return ("a scale of type " + elementTypeName(TypeAt(S))).str();
  if (!Out.empty() && Differs(7, Out[0].Type))
    return "y_zero_point of another type than y";
  if (TypeAt(8) != ElementType::Int32 && TypeAt(8) != ElementType::Undefined)
    return ("a bias of type " + elementTypeName(TypeAt(8))).str();
  return "";
}

} // namespace

void cuda::registerQLinearKernels(CUDAKernelTable &T) {
  for (const char *Op : {"MatMulInteger", "QLinearMatMul"})
    addKernel(T, Op,
              {runQMatMul,
               nullptr,
               {ElementType::Int8, ElementType::UInt8},
               0,
               qLinearRefuses});
  for (const char *Op : {"ConvInteger", "QLinearConv"})
    addKernel(T, Op,
              {runQConv,
               nullptr,
               {ElementType::Int8, ElementType::UInt8},
               0,
               qLinearRefuses});
}
