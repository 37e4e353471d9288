//===- RecurrentKernels.cpp - RNN, GRU and LSTM on cuBLAS -----------------===//
//
// The CPU kernel's algorithm (CPU/Kernels/Recurrent.cpp) with the device
// doing each part: per direction and time step, the gates' input part X_t
// W^T and recurrent part H_{t-1} R^T are two cuBLAS products into the
// gates, then one kernel applies the cell (RecurrentCell.h, the CPU's own
// function) to every (row, unit); GRU's h block waits for the reset gate
// (a kernel, a third product). The host only queues: time steps follow
// each other on the compute stream, and lengths are read on the device.
// T steps cost 3 to 5 launches each, a price ONNX Runtime's CUDA provider
// pays too (it loops over time steps around cuBLAS in the same way);
// the input products of all steps could be one product, at T times the
// gates' workspace, which the plan would then have to hold.
//
// Workspace: the CPU kernel's gates, states and temporaries, then cuBLAS's
// (recurrentWorkspace in CUDAWorkspaces.h, which `oomplan --backend=cuda`
// plans too). Full FP32 products, as MatMul's. The order of calls is
// queueRecurrent's (RecurrentDriver.h), which a test runs on the host.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/TensorUtil.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"
#include "RecurrentDriver.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {

uint64_t recurrentWorkspaceBytes(const Node &N, llvm::ArrayRef<TensorRef> In,
                                 llvm::ArrayRef<TensorRef>) {
  if (In.size() < 3 || In[0].Dims.size() != 3 || In[2].Dims.size() != 3)
    return 0;
  const bool BatchMajor = N.getInt("layout", 0) == 1;
  const int64_t B = In[0].Dims[BatchMajor ? 0 : 1], H = In[2].Dims[2];
  if (B < 0 || H < 0)
    return 0;
  return recurrentWorkspace(N.OpType, uint64_t(B), uint64_t(H),
                            blasWorkspaceBytes());
}

// Row-major Y (M x N, leading dimension LdY) = Beta Y + X W^T (Beta 0 or
// 1): a zero fill when K is 0, else one SGEMM.
llvm::Error product(RecurrentQueue &Q, int64_t M, int64_t N, int64_t K,
                    const float *X, int64_t LdX, const float *W, float Beta,
                    float *Y, int64_t LdY) {
  if (M == 0 || N == 0)
    return llvm::Error::success();
  if (K == 0)
    return Beta != 0 ? llvm::Error::success() : Q.zero(Y, M, N, LdY);
  return Q.sgemm(productBT(M, N, K, X, LdX, W, Beta, Y, LdY));
}

const float *inputOrNull(const KernelContext &C, unsigned I) {
  return cpu::hasInput(C, I) ? C.Inputs[I].data<const float>() : nullptr;
}
float *outputOrNull(const KernelContext &C, unsigned I) {
  return cpu::hasOutput(C, I) ? C.Outputs[I].data<float>() : nullptr;
}

// The CUDA queue: cuBLAS on the compute stream, Recurrent.cu's launchers.
class CUDAQueue final : public RecurrentQueue {
public:
  explicit CUDAQueue(const KernelContext &C) : C(C) {}
  llvm::Error sgemm(const SgemmArgs &G) override {
    if (G.M > INT32_MAX || G.N > INT32_MAX || G.K > INT32_MAX ||
        G.LdA > INT32_MAX || G.LdB > INT32_MAX || G.LdC > INT32_MAX)
      return C.unsupported("a recurrent product dimension above 2^31");
    const float One = 1;
    if (cublasStatus_t S = cublasSgemm(
            context().Blas, G.TransA ? CUBLAS_OP_T : CUBLAS_OP_N,
            G.TransB ? CUBLAS_OP_T : CUBLAS_OP_N, int(G.M), int(G.N), int(G.K),
            &One, G.A, int(G.LdA), G.B, int(G.LdB), &G.Beta, G.C, int(G.LdC)))
      return blasFailure(C, S, "cublasSgemm");
    return llvm::Error::success();
  }
  llvm::Error zero(float *Y, int64_t Rows, int64_t Cols, int64_t Ld) override {
    for (int64_t R = 0; R < Rows; ++R)
      if (llvm::Error E = launched(
              C, fill(Y + R * Ld, uint64_t(Cols) * 4, 0, 4, context().Compute),
              "recurrent zero fill"))
        return E;
    return llvm::Error::success();
  }
  llvm::Error start(const RecurrentArgs &A, const float *H0,
                    const float *C0) override {
    return launched(C, recurrentStart(A, H0, C0, context().Compute),
                    "recurrent state kernel");
  }
  llvm::Error reset(const RecurrentArgs &A) override {
    return launched(C, recurrentReset(A, context().Compute),
                    "GRU reset-gate kernel");
  }
  llvm::Error step(const RecurrentArgs &A, int64_t Ti, float *Y) override {
    return launched(
        C, recurrentStep(A, Ti, Y, context().BadIndex, context().Compute),
        "recurrent cell kernel");
  }
  llvm::Error finish(const RecurrentArgs &A, float *Yh, float *Yc) override {
    return launched(C, recurrentFinish(A, Yh, Yc, context().Compute),
                    "recurrent output kernel");
  }

private:
  const KernelContext &C;
};

llvm::Error runRecurrent(const KernelContext &C) {
  cpu::RecurrentSetup S;
  if (llvm::Error E = cpu::recurrentSetup(C, S))
    return E;
  const recurrent::Layout &L = S.L;
  if (cpu::hasInput(C, 4) && C.Inputs[4].Type != ElementType::Int32 &&
      C.Inputs[4].Type != ElementType::Int64)
    return C.badInput("sequence_lens must be int32 or int64");
  // A length the host already holds (a constant) is checked here, as the
  // CPU kernel does; one computed on the device raises the device flag.
  if (cpu::hasInput(C, 4) && C.HostInputs.size() > 4 && C.HostInputs[4].Data)
    if (llvm::Error E = cpu::recurrentLengths(C, C.HostInputs[4], L))
      return E;
  // The workspace without cuBLAS's part: the gates and states, aligned.
  const uint64_t StatesAligned =
      recurrentWorkspace(C.N.OpType, uint64_t(L.B), uint64_t(L.H), 0);
  if (C.WorkspaceBytes < StatesAligned)
    return C.badInput("the plan gave too little workspace");
  if (C.Outputs.empty() || L.B == 0 || L.H == 0)
    return llvm::Error::success();
  char *Ws = static_cast<char *>(C.Workspace);
  if (llvm::Error E = useBlasWorkspace(C, Ws + StatesAligned,
                                       C.WorkspaceBytes - StatesAligned))
    return E;
  CUDAQueue Q(C);
  return queueRecurrent(C, S, reinterpret_cast<float *>(Ws), Q);
}

} // namespace

llvm::Error cuda::queueRecurrent(const KernelContext &C,
                                 const cpu::RecurrentSetup &S, float *States,
                                 RecurrentQueue &Q) {
  const recurrent::Layout &L = S.L;
  const uint64_t BH = uint64_t(L.B) * uint64_t(L.H);
  const int64_t G = recurrent::gatesOf(S.K), GH = G * L.H;
  RecurrentArgs A;
  A.L = L;
  A.Gates = States;
  A.Hs = A.Gates + BH * uint64_t(G);
  A.Cs = A.Hs + BH;
  A.Tmp = A.Cs + BH;
  A.Tmp2 = A.Tmp + BH;
  if (cpu::hasInput(C, 4)) {
    A.SeqLens = C.Inputs[4].Data;
    A.SeqLens64 = C.Inputs[4].Type == ElementType::Int64;
  }
  const bool LSTM = S.K == recurrent::Cell::LSTM,
             GRU = S.K == recurrent::Cell::GRU;
  const float *X = C.Inputs[0].data<const float>();
  float *Y = outputOrNull(C, 0);
  // Row t of X is [B, I] with rows T * I apart (batch-major) or I apart.
  const int64_t Ldx = L.BatchMajor ? L.T * L.I : L.I;
  for (int64_t Dir = 0; Dir < L.Dirs; ++Dir) {
    const bool Reverse = S.Reverse || Dir == 1;
    const float *W = C.Inputs[1].data<const float>() + Dir * GH * L.I;
    const float *R = C.Inputs[2].data<const float>() + Dir * GH * L.H;
    A.Dir = Dir;
    A.P = S.cell(Dir, inputOrNull(C, 3), LSTM ? inputOrNull(C, 7) : nullptr);
    if (llvm::Error E =
            Q.start(A, inputOrNull(C, 5), LSTM ? inputOrNull(C, 6) : nullptr))
      return E;
    for (int64_t St = 0; St < L.T; ++St) {
      const int64_t T = Reverse ? L.T - 1 - St : St;
      const float *Xt = X + (L.BatchMajor ? T * L.I : T * L.B * L.I);
      if (llvm::Error E =
              product(Q, L.B, GH, L.I, Xt, Ldx, W, 0.0f, A.Gates, GH))
        return E;
      // GRU's h block waits for the reset gate.
      const int64_t RecGates = GRU ? 2 : G;
      if (llvm::Error E = product(Q, L.B, RecGates * L.H, L.H, A.Hs, L.H, R,
                                  1.0f, A.Gates, GH))
        return E;
      if (GRU) {
        if (llvm::Error E = Q.reset(A))
          return E;
        if (llvm::Error E = product(Q, L.B, L.H, L.H, A.Tmp, L.H,
                                    R + 2 * L.H * L.H, 0.0f, A.Tmp2, L.H))
          return E;
      }
      if (llvm::Error E = Q.step(A, T, Y))
        return E;
    }
    if (llvm::Error E = Q.finish(A, outputOrNull(C, 1),
                                 LSTM ? outputOrNull(C, 2) : nullptr))
      return E;
  }
  return llvm::Error::success();
}

void cuda::registerRecurrentKernels(CUDAKernelTable &T) {
  for (const char *Op : {"RNN", "GRU", "LSTM"})
    addKernel(T, Op,
              {runRecurrent, recurrentWorkspaceBytes, {ElementType::Float}});
}
