//===- CUDAKernels.cpp - the CUDA backend's kernel table and helpers ------===//
//
// Builds the table from every family once; a missing record is a bug in a
// family file, so it aborts with the op's name.
//
//===----------------------------------------------------------------------===//
#include "CUDAKernels.h"
#include "CUDAContext.h"
#include "llvm/Support/ErrorHandling.h"

namespace oomplan {
namespace runtime {
namespace cuda {

void addKernel(CUDAKernelTable &T, llvm::StringRef OpType, Kernel K) {
  setKernel(T, OpType, std::move(K), "CUDA");
}

const CUDAKernelTable &cudaKernels() {
  static const CUDAKernelTable Table = [] {
    CUDAKernelTable T;
    registerEltwiseKernels(T);
    registerDataKernels(T);
    registerLayoutKernels(T);
    registerIndexKernels(T);
    registerGatherScatterKernels(T);
    registerNormKernels(T);
    registerBlasKernels(T);
    registerDnnKernels(T);
    registerConvTransposeKernels(T);
    registerFusedKernels(T);
    registerRecurrentKernels(T);
    registerQuantizeKernels(T);
    registerQLinearKernels(T);
    registerLowBitKernels(T);
    registerGQAKernels(T);
    registerNewerOpsKernels(T);
    return T;
  }();
  return Table;
}

std::optional<DType> dtypeOf(ElementType T) {
  switch (T) {
  case ElementType::Float:
    return DType::F32;
  case ElementType::Double:
    return DType::F64;
  case ElementType::Int32:
    return DType::I32;
  case ElementType::Int64:
    return DType::I64;
  case ElementType::Bool:
    return DType::Bool;
  case ElementType::UInt8:
    return DType::U8;
  case ElementType::Int8:
    return DType::I8;
  case ElementType::Float16:
    return DType::F16;
  case ElementType::BFloat16:
    return DType::BF16;
  default:
    return std::nullopt;
  }
}

bool setBroadcast(Strided &S, unsigned Op, llvm::ArrayRef<int64_t> Dims,
                  llvm::ArrayRef<int64_t> Out) {
  if (Out.size() > size_t(MaxRank) || Dims.size() > Out.size())
    return false;
  S.Rank = int(Out.size());
  for (size_t I = 0; I < Out.size(); ++I)
    S.Dims[I] = Out[I];
  int64_t Stride = 1;
  size_t Shift = Out.size() - Dims.size();
  for (size_t I = Out.size(); I-- > 0;) {
    if (I < Shift) {
      S.Stride[Op][I] = 0;
      continue;
    }
    int64_t D = Dims[I - Shift];
    if (D != Out[I] && D != 1)
      return false;
    S.Stride[Op][I] = D == 1 ? 0 : Stride;
    Stride *= D;
  }
  return true;
}

llvm::Error launched(const KernelContext &C, int Code, const char *What) {
  if (Code == 0)
    return llvm::Error::success();
  return kernelFailure(C, Code, What);
}

llvm::Error copyUnlessAliased(const KernelContext &C) {
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  if (In.Data == Out.Data || !Out.bytes())
    return llvm::Error::success();
  return launched(C,
                  cudaMemcpyAsync(Out.Data, In.Data, Out.bytes(),
                                  cudaMemcpyDeviceToDevice, context().Compute),
                  "copy");
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
