//===- DnnCommon.h - cuDNN descriptors the convolutions share ---*- C++ -*-===//
//
// DnnKernels.cpp (Conv, the pools) and ConvTransposeKernels.cpp: the
// descriptors freed at scope exit, N-d float tensors (a 1-d window gets a
// unit height), and cuDNN 9's "not supported" codes.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CUDA_DNNCOMMON_H
#define OOMPLAN_LIB_RUNTIME_CUDA_DNNCOMMON_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <cstdint>
#include <cudnn.h>

namespace oomplan {
namespace runtime {
namespace cuda {

// Descriptors freed at scope exit.
struct Descs {
  cudnnTensorDescriptor_t X = nullptr, Y = nullptr;
  cudnnFilterDescriptor_t W = nullptr;
  cudnnConvolutionDescriptor_t Conv = nullptr;
  cudnnPoolingDescriptor_t Pool = nullptr;
  ~Descs() {
    if (X)
      cudnnDestroyTensorDescriptor(X);
    if (Y)
      cudnnDestroyTensorDescriptor(Y);
    if (W)
      cudnnDestroyFilterDescriptor(W);
    if (Conv)
      cudnnDestroyConvolutionDescriptor(Conv);
    if (Pool)
      cudnnDestroyPoolingDescriptor(Pool);
  }
};

// Dims with a unit height inserted for a 1-d window (cuDNN needs >= 4 dims).
inline llvm::SmallVector<int, 8> dnnDims(llvm::ArrayRef<int64_t> Dims) {
  llvm::SmallVector<int, 8> D(Dims.begin(), Dims.end());
  if (D.size() == 3)
    D.insert(D.begin() + 2, 1);
  return D;
}

inline cudnnStatus_t tensorDesc(cudnnTensorDescriptor_t &T,
                                llvm::ArrayRef<int64_t> Dims) {
  if (cudnnStatus_t S = cudnnCreateTensorDescriptor(&T))
    return S;
  // cuDNN's dims and strides are int: a tensor past 2^31 elements would
  // wrap them (wrong addresses, not an error).
  int64_t Elems = 1;
  for (int64_t V : Dims)
    Elems *= V;
  if (Elems > INT32_MAX)
    return CUDNN_STATUS_NOT_SUPPORTED;
  llvm::SmallVector<int, 8> D = dnnDims(Dims), Str(D.size(), 1);
  for (int I = int(D.size()) - 2; I >= 0; --I)
    Str[I] = Str[I + 1] * D[I + 1];
  return cudnnSetTensorNdDescriptor(T, CUDNN_DATA_FLOAT, int(D.size()),
                                    D.data(), Str.data());
}

// cuDNN 9 reports "not supported" as 3000 plus a reason (3001 shape, 3002
// layout...); earlier versions as the one code.
inline bool notSupported(cudnnStatus_t St) {
#ifdef CUDNN_STATUS_CATEGORY
  return CUDNN_STATUS_CATEGORY(int(St)) == int(CUDNN_STATUS_NOT_SUPPORTED);
#else
  return St == CUDNN_STATUS_NOT_SUPPORTED;
#endif
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan

#endif
