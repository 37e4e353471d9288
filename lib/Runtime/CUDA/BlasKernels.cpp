//===- BlasKernels.cpp - MatMul and Gemm on cuBLAS ------------------------===//
//
// Row-major products through column-major cuBLAS: Y = A B in row major is
// Y^T = B^T A^T in column major, and a row-major matrix read as column
// major is its transpose, so the call passes B first and swaps M and N.
// Batched MatMul is one strided-batched call when each operand is either
// shared by every batch or has one matrix per batch; other broadcasts loop.
// Full FP32 (the handle's math mode): no TF32, so that outputs match the
// CPU backend at rtol 1e-3. The step's planned workspace is cuBLAS's only
// workspace.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/TensorUtil.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {
const llvm::SmallVector<ElementType, 4> F32 = {ElementType::Float};
// MatMul takes float16 and bfloat16 natively (cublasGemmEx: half storage,
// FP32 accumulation, the result rounded once, as the CPU's float kernel on
// float copies), so a half model's weights need no float copies. Gemm's
// bias handling is float-only: its half steps run on float copies
// (HalfInFloat.h).
const llvm::SmallVector<ElementType, 4> MatMulTypes = {
    ElementType::Float, ElementType::Float16, ElementType::BFloat16};

} // namespace

uint64_t cuda::blasWorkspace(const Node &, llvm::ArrayRef<TensorRef>,
                             llvm::ArrayRef<TensorRef>) {
  return blasWorkspaceBytes();
}

llvm::Error cuda::useBlasWorkspace(const KernelContext &C, void *Ptr,
                                   uint64_t Bytes) {
  // cublasSetWorkspace rejects a pointer that is not 256-byte aligned
  // (CUBLAS_STATUS_INVALID_VALUE), and a plan made with --align below 256
  // may place the workspace so: give cuBLAS the aligned part.
  uintptr_t P = reinterpret_cast<uintptr_t>(Ptr),
            A = (P + 255) & ~uintptr_t(255);
  size_t Usable = Ptr && Bytes > A - P ? size_t(Bytes - (A - P)) : 0;
  if (cublasStatus_t S = cublasSetWorkspace(
          context().Blas, Usable ? reinterpret_cast<void *>(A) : nullptr,
          Usable))
    return blasFailure(C, S, "setting the workspace");
  return llvm::Error::success();
}

namespace {

llvm::Error useWorkspace(const KernelContext &C) {
  return useBlasWorkspace(C, C.Workspace, C.WorkspaceBytes);
}

// Row-major Y (M x N) = op(A) op(B), op(A) M x K, op(B) K x N, batched;
// every operand of type T (Float, Float16 or BFloat16). Strides are in
// elements.
llvm::Error gemm(const KernelContext &C, bool TA, bool TB, int64_t M, int64_t N,
                 int64_t K, float Alpha, const void *A, int64_t StrideA,
                 const void *B, int64_t StrideB, float Beta, void *Y,
                 int64_t Batches, ElementType T = ElementType::Float) {
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || Batches > INT32_MAX)
    return C.unsupported("a product dimension above 2^31");
  // cuBLAS requires every leading dimension >= 1 (a K of 0 would give 0).
  int LdA = int(std::max<int64_t>(1, TA ? M : K)),
      LdB = int(std::max<int64_t>(1, TB ? K : N));
  cublasOperation_t OpA = TA ? CUBLAS_OP_T : CUBLAS_OP_N,
                    OpB = TB ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (T == ElementType::Float) {
    cublasStatus_t S = cublasSgemmStridedBatched(
        context().Blas, OpB, OpA, int(N), int(M), int(K), &Alpha,
        static_cast<const float *>(B), LdB, StrideB,
        static_cast<const float *>(A), LdA, StrideA, &Beta,
        static_cast<float *>(Y), int(N), M * N, int(Batches));
    if (S)
      return blasFailure(C, S, "cublasSgemmStridedBatched");
    return llvm::Error::success();
  }
  cudaDataType_t DT = T == ElementType::Float16 ? CUDA_R_16F : CUDA_R_16BF;
  cublasStatus_t S = cublasGemmStridedBatchedEx(
      context().Blas, OpB, OpA, int(N), int(M), int(K), &Alpha, B, DT, LdB,
      StrideB, A, DT, LdA, StrideA, &Beta, Y, DT, int(N), M * N, int(Batches),
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (S)
    return blasFailure(C, S, "cublasGemmStridedBatchedEx");
  return llvm::Error::success();
}

} // namespace

llvm::Error cuda::runMatMul(const KernelContext &C) {
  const TensorRef &A = C.Inputs[0], &B = C.Inputs[1], &Y = C.Outputs[0];
  if (A.Dims.empty() || B.Dims.empty())
    return C.badInput("MatMul of a scalar");
  cpu::MatMulShape Sh;
  if (!cpu::matMulShape(A.Dims, B.Dims, Sh))
    return C.badInput("inner dims differ or batch dims do not broadcast");
  const int64_t M = Sh.M, K = Sh.K, N = Sh.N;
  const cpu::DimVector &ABatch = Sh.ABatch, &BBatch = Sh.BBatch,
                       &YBatch = Sh.YBatch;
  const size_t BR = YBatch.size();
  const int64_t Batches = Sh.batches();
  if (int64_t(Y.numElements()) != Batches * M * N)
    return C.badInput("the output's size disagrees with the operands'");
  if (Y.numElements() == 0)
    return llvm::Error::success();
  if (A.Type != B.Type || A.Type != Y.Type)
    return C.unsupported("operand types " + elementTypeName(A.Type) + ", " +
                         elementTypeName(B.Type));
  const int64_t EB = int64_t(elementBits(Y.Type) / 8);
  if (K == 0)
    return launched(C, fill(Y.Data, Y.bytes(), 0, int(EB), context().Compute),
                    "MatMul zero fill");
  if (llvm::Error E = useWorkspace(C))
    return E;
  const int64_t NA = cpu::productOf(ABatch, 0, BR),
                NB = cpu::productOf(BBatch, 0, BR);
  const char *AP = A.data<const char>(), *BP = B.data<const char>();
  char *YP = Y.data<char>();
  const ElementType T = Y.Type;
  // B shared: the batches of A are rows of one tall product.
  if (NB == 1 && NA == Batches)
    return gemm(C, false, false, Batches * M, N, K, 1, AP, 0, BP, 0, 0, YP, 1,
                T);
  if ((NA == 1 || NA == Batches) && (NB == 1 || NB == Batches))
    return gemm(C, false, false, M, N, K, 1, AP, NA == 1 ? 0 : M * K, BP,
                NB == 1 ? 0 : K * N, 0, YP, Batches, T);
  // Both broadcast on different axes: one product per batch.
  cpu::DimVector AS = cpu::stridesOf(ABatch), BS = cpu::stridesOf(BBatch);
  for (int64_t Bt = 0; Bt < Batches; ++Bt) {
    int64_t Rem = Bt, AOff = 0, BOff = 0;
    for (int64_t I = int64_t(BR) - 1; I >= 0; --I) {
      int64_t X = Rem % YBatch[I];
      Rem /= YBatch[I];
      AOff += (ABatch[I] == 1 ? 0 : X) * AS[I];
      BOff += (BBatch[I] == 1 ? 0 : X) * BS[I];
    }
    if (llvm::Error E =
            gemm(C, false, false, M, N, K, 1, AP + AOff * M * K * EB, 0,
                 BP + BOff * K * N * EB, 0, 0, YP + Bt * M * N * EB, 1, T))
      return E;
  }
  return llvm::Error::success();
}

// Y = alpha op(A) op(B) + beta C, C broadcast to Y first.
llvm::Error cuda::runGemm(const KernelContext &C) {
  const TensorRef &A = C.Inputs[0], &B = C.Inputs[1], &Y = C.Outputs[0];
  if (A.Dims.size() != 2 || B.Dims.size() != 2 || Y.Dims.size() != 2)
    return C.badInput("Gemm operands must be matrices");
  bool TA = C.N.getInt("transA", 0), TB = C.N.getInt("transB", 0);
  float Alpha = float(C.N.getFloat("alpha", 1)),
        Beta = float(C.N.getFloat("beta", 1));
  int64_t M = TA ? A.Dims[1] : A.Dims[0], K = TA ? A.Dims[0] : A.Dims[1];
  int64_t N = TB ? B.Dims[0] : B.Dims[1];
  if ((TB ? B.Dims[1] : B.Dims[0]) != K || Y.Dims[0] != M || Y.Dims[1] != N)
    return C.badInput("Gemm dims disagree");
  bool HasC = C.Inputs.size() > 2 && C.Inputs[2].present() && Beta != 0;
  if (HasC) {
    Strided S;
    if (!setBroadcast(S, 0, C.Inputs[2].Dims, Y.Dims))
      return C.badInput("C does not broadcast to the output");
    if (llvm::Error E = launched(
            C,
            stridedCopy(C.Inputs[2].Data, 0, Y.Data, 4, S, context().Compute),
            "Gemm bias broadcast"))
      return E;
  }
  if (Y.numElements() == 0)
    return llvm::Error::success();
  if (llvm::Error E = useWorkspace(C))
    return E;
  if (K == 0) { // Y = beta C: no product to add (and none for cuBLAS to run)
    if (!HasC)
      return launched(C, fill(Y.Data, Y.bytes(), 0, 4, context().Compute),
                      "Gemm zero fill");
    if (Beta == 1)
      return llvm::Error::success();
    if (Y.numElements() > uint64_t(INT32_MAX))
      return C.unsupported("a Gemm output above 2^31 elements");
    if (cublasStatus_t S = cublasSscal(context().Blas, int(Y.numElements()),
                                       &Beta, Y.data<float>(), 1))
      return blasFailure(C, S, "cublasSscal");
    return llvm::Error::success();
  }
  return gemm(C, TA, TB, M, N, K, Alpha, A.data<float>(), 0, B.data<float>(), 0,
              HasC ? Beta : 0, Y.data<float>(), 1);
}

void cuda::registerBlasKernels(CUDAKernelTable &T) {
  addKernel(T, "MatMul", {runMatMul, blasWorkspace, MatMulTypes});
  addKernel(T, "Gemm", {runGemm, blasWorkspace, F32});
}
