//===- CenterCropPad.cpp - CPU kernel: CenterCropPad (opset 18) -----------===//
//
// Each axis named by the axes attribute (all by default) takes the length
// the shape input gives: a longer input is cropped about its centre, a
// shorter one lands in the centre of zeros. When the difference is odd the
// extra element goes to the end, in both directions, as ONNX's reference
// does. Rows along the last axis move with one memcpy each; any element
// type.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cstring>

namespace oomplan {
namespace runtime {
namespace cpu {

llvm::Error centerCropCheck(const KernelContext &C,
                            llvm::ArrayRef<int64_t> Shape) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const int64_t R = int64_t(X.Dims.size());
  DimVector Axes;
  if (auto A = C.N.getInts("axes"))
    Axes.assign(A->begin(), A->end());
  else
    for (int64_t A = 0; A < R; ++A)
      Axes.push_back(A);
  if (Shape.size() != Axes.size() || int64_t(Y.Dims.size()) != R)
    return C.badInput("shape needs one length per axis");
  DimVector Want(X.Dims.begin(), X.Dims.end());
  for (size_t K = 0; K < Axes.size(); ++K) {
    int64_t A = Axes[K];
    if (!normAxis(A, R))
      return C.badInput("axis out of range");
    Want[size_t(A)] = Shape[K];
  }
  for (int64_t A = 0; A < R; ++A)
    if (Want[size_t(A)] != Y.Dims[size_t(A)])
      return C.badInput("shape disagrees with the planned output shape");
  return llvm::Error::success();
}

namespace {

llvm::Error runCenterCropPad(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  const int64_t R = int64_t(X.Dims.size());
  DimVector Shape;
  if (!readInts(C.Inputs[1], Shape))
    return C.badInput("shape must be integers");
  if (llvm::Error E = centerCropCheck(C, Shape))
    return E;
  const uint64_t EB = elemBytes(X.Type);
  std::memset(Y.Data, 0, Y.numElements() * EB);
  if (X.numElements() == 0 || Y.numElements() == 0)
    return llvm::Error::success();
  if (R == 0) {
    std::memcpy(Y.Data, X.Data, EB);
    return llvm::Error::success();
  }
  // Per axis: where the kept run starts in X and in Y, and its length.
  DimVector FromX(R), FromY(R), Len(R);
  for (int64_t A = 0; A < R; ++A) {
    int64_t In = X.Dims[size_t(A)], Out = Y.Dims[size_t(A)];
    FromX[A] = In > Out ? (In - Out) / 2 : 0;
    FromY[A] = Out > In ? (Out - In) / 2 : 0;
    Len[A] = std::min(In, Out);
  }
  DimVector SX = stridesOf(X.Dims), SY = stridesOf(Y.Dims);
  const auto *PX = static_cast<const char *>(X.Data);
  auto *PY = static_cast<char *>(Y.Data);
  const uint64_t RowBytes = uint64_t(Len[R - 1]) * EB;
  // An odometer over every axis of the kept block but the last.
  DimVector Idx(R, 0);
  while (true) {
    int64_t OffX = FromX[R - 1], OffY = FromY[R - 1];
    for (int64_t A = 0; A + 1 < R; ++A) {
      OffX += (FromX[A] + Idx[A]) * SX[A];
      OffY += (FromY[A] + Idx[A]) * SY[A];
    }
    std::memcpy(PY + uint64_t(OffY) * EB, PX + uint64_t(OffX) * EB, RowBytes);
    int64_t A = R - 2;
    while (A >= 0 && ++Idx[A] == Len[A])
      Idx[A--] = 0;
    if (A < 0)
      break;
  }
  return llvm::Error::success();
}

} // namespace

void registerCenterCropPadKernels(CPUKernelTable &T) {
  addKernel(T, "CenterCropPad", Kernel{&runCenterCropPad, nullptr, {}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
