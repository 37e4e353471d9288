//===- MatMul.cpp - CPU kernels: MatMul, Gemm, Einsum ---------------------===//
//
// MatMul follows numpy: 1-D operands gain and then lose a unit dim, and the
// batch dims broadcast. When B is one matrix shared by every batch (a linear
// layer), the batches of A are stacked into one tall GEMM, which OpenBLAS
// runs far faster than many small ones. Gemm writes beta*C broadcast into
// Y first and then accumulates alpha*A*B with beta 1. Einsum is a generic
// loop over every index letter: correct for any equation ONNX allows,
// meant for the small tensors the models here use it on. The family's
// register function also adds Quantized.cpp, Det.cpp, DFT.cpp and Signal.cpp.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Gemm.h"
#include "TensorUtil.h"
#include "llvm/ADT/StringExtras.h"

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

template <typename T> bool matMulTyped(const KernelContext &C) {
  const TensorRef &A = C.Inputs[0], &B = C.Inputs[1], &Y = C.Outputs[0];
  MatMulShape Sh;
  if (!matMulShape(A.Dims, B.Dims, Sh))
    return false;
  const int64_t M = Sh.M, K = Sh.K, N = Sh.N;
  const DimVector &ABatch = Sh.ABatch, &BBatch = Sh.BBatch, &YBatch = Sh.YBatch;
  const size_t BR = YBatch.size();
  const int64_t Batches = Sh.batches();
  if (int64_t(Y.numElements()) != Batches * M * N)
    return false;
  const T *AP = A.data<const T>(), *BP = B.data<const T>();
  T *YP = Y.data<T>();
  if (K == 0) {
    std::fill(YP, YP + Y.numElements(), T(0));
    return true;
  }
  const bool BShared = productOf(BBatch, 0, BR) == 1;
  if (BShared && productOf(ABatch, 0, BR) == Batches) {
    parallelGemm<T>(C.Pool, false, false, Batches * M, N, K, T(1), AP, K, BP, N,
                    T(0), YP, N);
    return true;
  }
  DimVector AS = stridesOf(ABatch), BS = stridesOf(BBatch);
  auto One = [&](int64_t Bt, bool Split) {
    int64_t Rem = Bt, AOff = 0, BOff = 0;
    for (int64_t I = int64_t(BR) - 1; I >= 0; --I) {
      int64_t X = Rem % YBatch[I];
      Rem /= YBatch[I];
      AOff += (ABatch[I] == 1 ? 0 : X) * AS[I];
      BOff += (BBatch[I] == 1 ? 0 : X) * BS[I];
    }
    if (Split)
      parallelGemm<T>(C.Pool, false, false, M, N, K, T(1), AP + AOff * M * K, K,
                      BP + BOff * K * N, N, T(0), YP + Bt * M * N, N);
    else
      gemm<T>(false, false, M, N, K, T(1), AP + AOff * M * K, K,
              BP + BOff * K * N, N, T(0), YP + Bt * M * N, N);
  };
  // Many products (attention's batch x heads): one whole product per task.
  // Few: each product split over the pool.
  if (Batches >= 2 * int64_t(C.Pool.threads())) {
    C.Pool.parallelFor(Batches, 1, [&](int64_t B0, int64_t B1) {
      for (int64_t Bt = B0; Bt < B1; ++Bt)
        One(Bt, false);
    });
  } else {
    for (int64_t Bt = 0; Bt < Batches; ++Bt)
      One(Bt, true);
  }
  return true;
}

llvm::Error runMatMul(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  const TensorRef &A = C.Inputs[0], &B = C.Inputs[1];
  if (A.Dims.empty() || B.Dims.empty())
    return C.badInput("MatMul of a scalar");
  int64_t KA = A.Dims.back(),
          KB = B.Dims.size() == 1 ? B.Dims[0] : B.Dims[B.Dims.size() - 2];
  if (KA != KB)
    return C.badInput("inner dims differ (" + llvm::Twine(KA) + " and " +
                      llvm::Twine(KB) + ")");
  if (A.Type != B.Type)
    return C.badInput("operand types differ");
  useBlasThreads(C.Pool.threads());
  bool SizeOk = true;
  if (!visitNumeric(A.Type,
                    [&](auto Tag) { SizeOk = matMulTyped<decltype(Tag)>(C); }))
    return C.unsupported("MatMul of type " + elementTypeName(A.Type));
  if (!SizeOk)
    return C.badInput("the output's size disagrees with the operands'");
  return llvm::Error::success();
}

template <typename T> llvm::Error gemmTyped(const KernelContext &C) {
  const TensorRef &A = C.Inputs[0], &B = C.Inputs[1], &Y = C.Outputs[0];
  const bool TA = C.N.getInt("transA", 0), TB = C.N.getInt("transB", 0);
  const T Alpha = T(C.N.getFloat("alpha", 1)),
          Beta = T(C.N.getFloat("beta", 1));
  if (A.Dims.size() != 2 || B.Dims.size() != 2 || Y.Dims.size() != 2)
    return C.badInput("A, B and Y must be 2-D");
  const int64_t M = TA ? A.Dims[1] : A.Dims[0], K = TA ? A.Dims[0] : A.Dims[1];
  const int64_t N = TB ? B.Dims[0] : B.Dims[1];
  if ((TB ? B.Dims[1] : B.Dims[0]) != K || Y.Dims[0] != M || Y.Dims[1] != N)
    return C.badInput("A, B and Y have inconsistent dims");
  T *YP = Y.data<T>();
  T Acc = T(0);
  if (hasInput(C, 2) && Beta != T(0)) {
    const TensorRef &Bias = C.Inputs[2];
    DimVector Src;
    DimVector CD(Bias.Dims.begin(), Bias.Dims.end());
    // Unidirectional broadcast of C to (M, N).
    if (CD.size() > 2)
      return C.badInput("C has rank above 2");
    DimVector S = stridesOf(CD);
    Src.assign(2, 0);
    for (size_t I = 0; I < CD.size(); ++I) {
      size_t O = 2 - CD.size() + I;
      if (CD[I] != 1 && CD[I] != Y.Dims[O])
        return C.badInput("C does not broadcast to (M, N)");
      Src[O] = CD[I] == 1 ? 0 : S[I];
    }
    stridedCopy(YP, Bias.Data, Y.Dims, Src, sizeof(T), nullptr);
    if (Beta != T(1))
      for (uint64_t I = 0; I < Y.numElements(); ++I)
        YP[I] = T(YP[I] * Beta);
    Acc = T(1);
  }
  if (K == 0) {
    if (Acc == T(0))
      std::fill(YP, YP + Y.numElements(), T(0));
    return llvm::Error::success();
  }
  parallelGemm<T>(C.Pool, TA, TB, M, N, K, Alpha, A.data<const T>(), A.Dims[1],
                  B.data<const T>(), B.Dims[1], Acc, YP, N);
  return llvm::Error::success();
}

llvm::Error runGemm(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  useBlasThreads(C.Pool.threads());
  llvm::Error Result = llvm::Error::success();
  bool Done = visitNumeric(C.Inputs[0].Type, [&](auto Tag) {
    llvm::consumeError(std::move(Result));
    Result = gemmTyped<decltype(Tag)>(C);
  });
  if (!Done) {
    llvm::consumeError(std::move(Result));
    return C.unsupported("Gemm of type " + elementTypeName(C.Inputs[0].Type));
  }
  return Result;
}

} // namespace

/// Einsum.cpp
llvm::Error runEinsum(const KernelContext &C);
/// Det.cpp, DFT.cpp
void registerDetKernels(CPUKernelTable &T);
void registerDFTKernels(CPUKernelTable &T);
/// Signal.cpp
void registerSignalKernels(CPUKernelTable &T);

void registerMatMulKernels(CPUKernelTable &T) {
  addKernel(T, "MatMul", Kernel{&runMatMul, nullptr, numericTypes()});
  addKernel(T, "Gemm", Kernel{&runGemm, nullptr, numericTypes()});
  addKernel(T, "Einsum", Kernel{&runEinsum, nullptr, numericTypes()});
  registerQuantizedKernels(T);
  registerMatMulNBitsKernels(T);
  registerGroupQueryAttentionKernels(T);
  registerDetKernels(T);
  registerDFTKernels(T);
  registerSignalKernels(T);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
