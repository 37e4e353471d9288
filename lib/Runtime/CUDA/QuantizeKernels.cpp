//===- QuantizeKernels.cpp - Quantize, Dequantize, DynamicQuantize on CUDA ===//
//
// The Q and DQ nodes of a quantized (QDQ) model, and the
// DynamicQuantizeLinear of a dynamically quantized one: elementwise, so
// they run where the tensors are instead of as host steps with a wait
// each. The CPU kernel's checks (cpu::quantParams: per tensor or per axis)
// and its arithmetic (QuantizePoint.h). CUDA takes what QDQ exports use:
// float into int8 or uint8, and int8, uint8 or int32 (biases) into float,
// and ONNX's int4 and uint4 (packed weights; LowBit.cu);
// other types run on the host (a float16 input on float copies,
// HalfInFloat.h).
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/TensorUtil.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {

// Scale and zero point (input 2, may be omitted) and their axis.
llvm::Error params(const KernelContext &C, ElementType ZeroType, quant::Axis &A,
                   const void *&Zero) {
  const TensorRef &Scale = C.Inputs[1];
  if (Scale.Type != ElementType::Float)
    return C.unsupported("scale of type " + elementTypeName(Scale.Type));
  if (llvm::Error E = cpu::quantParams(C, A))
    return E;
  Zero = nullptr;
  if (cpu::hasInput(C, 2)) {
    const TensorRef &Z = C.Inputs[2];
    if (Z.Type != ZeroType)
      return C.badInput("zero point of type " + elementTypeName(Z.Type) +
                        ", expected " + elementTypeName(ZeroType));
    Zero = Z.Data;
  }
  return llvm::Error::success();
}

llvm::Error runQuantize(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (Y.Type != ElementType::Int8 && Y.Type != ElementType::UInt8)
    return C.unsupported("output of type " + elementTypeName(Y.Type));
  quant::Axis A;
  const void *Zero;
  if (llvm::Error E = params(C, Y.Type, A, Zero))
    return E;
  return launched(C,
                  quantizeLinear(X.data<float>(), C.Inputs[1].data<float>(),
                                 Zero, Y.Data, Y.Type == ElementType::Int8,
                                 int64_t(X.numElements()), A,
                                 context().Compute),
                  "QuantizeLinear kernel");
}

llvm::Error runDequantize(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (Y.Type != ElementType::Float)
    return C.unsupported("output of type " + elementTypeName(Y.Type));
  quant::Axis A;
  const void *Zero;
  if (llvm::Error E = params(C, X.Type, A, Zero))
    return E;
  if (isSubByte(X.Type))
    return launched(
        C,
        lowbit::dequantize4(X.data<uint8_t>(), X.Type == ElementType::Int4,
                            C.Inputs[1].data<float>(),
                            static_cast<const uint8_t *>(Zero), Y.data<float>(),
                            int64_t(X.numElements()), A, context().Compute),
        "DequantizeLinear kernel");
  return launched(C,
                  dequantizeLinear(X.Data, *dtypeOf(X.Type),
                                   C.Inputs[1].data<float>(), Zero,
                                   Y.data<float>(), int64_t(X.numElements()), A,
                                   context().Compute),
                  "DequantizeLinear kernel");
}

// DynamicQuantizeLinear (ONNX Runtime's dynamic quantization, before each
// MatMulInteger): its range in one block, then the elements; y_scale and
// y_zero_point are written on the device and read there.
llvm::Error runDynamicQuantize(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0];
  if (C.Outputs.size() < 3 || C.Outputs[0].Type != ElementType::UInt8)
    return C.unsupported("only a uint8 output");
  return launched(C,
                  dynamicQuantizeLinear(
                      X.data<float>(), int64_t(X.numElements()),
                      C.Outputs[0].data<uint8_t>(), C.Outputs[1].data<float>(),
                      C.Outputs[2].data<uint8_t>(), context().Compute),
                  "DynamicQuantizeLinear kernel");
}

// The kernel writes y_scale and y_zero_point where the next kernel reads
// them: a node that drops either (the CPU kernel allows it) runs on the
// host.
std::string dynamicRefuses(const Node &N, llvm::ArrayRef<TensorRef>,
                           llvm::ArrayRef<TensorRef>) {
  if (N.Outputs.size() < 3 || N.Outputs[1] == NoId || N.Outputs[2] == NoId)
    return "DynamicQuantizeLinear without y_scale or y_zero_point";
  return "";
}

// Quantizing into a type other than int8 or uint8 (int16, the float8
// types of later opsets) runs on the host.
std::string quantizeRefuses(const Node &, llvm::ArrayRef<TensorRef>,
                            llvm::ArrayRef<TensorRef> Out) {
  if (Out.empty() || Out[0].Type == ElementType::Undefined ||
      Out[0].Type == ElementType::Int8 || Out[0].Type == ElementType::UInt8)
    return "";
  return ("QuantizeLinear into " + elementTypeName(Out[0].Type)).str();
}

// A scale or output other than float (a float16 scale, opset 23's
// output_dtype) runs on the host: the CUDA kernel reads and writes float.
std::string dequantizeRefuses(const Node &, llvm::ArrayRef<TensorRef> In,
                              llvm::ArrayRef<TensorRef> Out) {
  auto NotFloat = [](llvm::ArrayRef<TensorRef> Refs, size_t I) {
    return I < Refs.size() && Refs[I].Type != ElementType::Undefined &&
           Refs[I].Type != ElementType::Float;
  };
  if (NotFloat(In, 1))
    return ("DequantizeLinear with a scale of " + elementTypeName(In[1].Type))
        .str();
  if (NotFloat(Out, 0))
    return ("DequantizeLinear into " + elementTypeName(Out[0].Type)).str();
  return "";
}

} // namespace

void cuda::registerQuantizeKernels(CUDAKernelTable &T) {
  addKernel(T, "QuantizeLinear",
            {runQuantize, nullptr, {ElementType::Float}, 0, quantizeRefuses});
  addKernel(T, "DequantizeLinear",
            {runDequantize,
             nullptr,
             {ElementType::Int8, ElementType::UInt8, ElementType::Int32,
              ElementType::Int4, ElementType::UInt4},
             0,
             dequantizeRefuses});
  addKernel(
      T, "DynamicQuantizeLinear",
      {runDynamicQuantize, nullptr, {ElementType::Float}, 0, dynamicRefuses});
}
