//===- FusedKernels.cpp - OomplanConv, OomplanMatMul, OomplanAttention ----===//
//
// The fused ops of --fuse=auto (docs/fusion.md), with the CPU kernels'
// semantics (lib/Runtime/CPU/Kernels/Fused*.cpp), so that a CUDA run plans
// the same fused graph as `oomplan` and the CPU backend:
// - OomplanConv: act(Conv(X, W, B) + Residual): the residual is put in the
//   output (unless the planner already made them one buffer), cuDNN adds
//   the convolution into it (beta 1), and one epilogue kernel adds the bias
//   per channel and applies the activation.
// - OomplanMatMul: the table's own MatMul or Gemm on this node (attribute
//   `gemm`; Gemm takes the bias as its C), then the epilogue: the bias
//   broadcast (MatMul) and the activation, in one pass.
// - OomplanAttention: Attention.cu's online softmax. Its workspace is the
//   CPU kernel's formula (fused::attentionWorkspaceBytes) although the
//   CUDA kernel keeps its tiles in shared memory: the planner-only path of
//   `oomplan` counts that formula, and a CUDA plan must hold what the
//   report says (the bytes are unused scratch, at most a few MiB).
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/FusedKernels.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"
#include "oomplan/IR/FusedOps.h"
#include <cstdlib>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {
const llvm::SmallVector<ElementType, 4> F32 = {ElementType::Float};

// The launcher's Act lists the CPU's activations in the same order (nvcc
// never sees the CPU header), so one is the other's number.
#define OOMPLAN_SAME(Name)                                                     \
  static_assert(int(Act::Name) == int(cpu::Activation::Name),                  \
                "Launch.h's Act and FusedKernels.h's Activation differ");
OOMPLAN_SAME(None)
OOMPLAN_SAME(Relu)
OOMPLAN_SAME(Clip)
OOMPLAN_SAME(LeakyRelu)
OOMPLAN_SAME(Gelu)
OOMPLAN_SAME(GeluTanh)
OOMPLAN_SAME(Sigmoid)
OOMPLAN_SAME(SiLU)
OOMPLAN_SAME(Tanh)
OOMPLAN_SAME(HardSwish)
#undef OOMPLAN_SAME

bool epilogueOf(const Node &N, Act &A, cpu::Epilogue &E) {
  if (!cpu::readEpilogue(N, E))
    return false;
  A = Act(int(E.Act));
  return true;
}

llvm::Error runEpilogue(const KernelContext &C, Act A, const cpu::Epilogue &E,
                        const TensorRef *Bias,
                        llvm::ArrayRef<int64_t> BiasDims) {
  const TensorRef &Y = C.Outputs[0];
  Strided S;
  if (!setBroadcast(S, 0, Bias ? BiasDims : llvm::ArrayRef<int64_t>(), Y.Dims))
    return C.badInput("the bias does not broadcast to the output");
  return launched(
      C,
      epilogue(A, Y.data<float>(), Bias ? Bias->data<float>() : nullptr, S,
               float(E.Min), float(E.Max), float(E.Alpha), context().Compute),
      "epilogue kernel");
}

llvm::Error runFusedConv(const KernelContext &C) {
  Act A;
  cpu::Epilogue E;
  if (!epilogueOf(C.N, A, E))
    return C.unsupported("activation '" + C.N.getString("activation", "") +
                         "'");
  const TensorRef &Y = C.Outputs[0];
  const bool Residual = C.Inputs.size() > 3 && C.Inputs[3].present();
  if (Residual) {
    const TensorRef &R = C.Inputs[3];
    if (R.Type != Y.Type || R.Dims != Y.Dims)
      return C.badInput("the residual's type or dims differ from the output's");
    if (R.Data != Y.Data && Y.bytes())
      if (int Err =
              cudaMemcpyAsync(Y.Data, R.Data, Y.bytes(),
                              cudaMemcpyDeviceToDevice, context().Compute))
        return kernelFailure(C, Err, "residual copy");
  }
  if (llvm::Error Err = convForward(C, Residual))
    return Err;
  const bool HasBias = C.Inputs.size() > 2 && C.Inputs[2].present();
  // The bias is per channel: dims [C, 1, ..., 1] against [N, C, spatial].
  llvm::SmallVector<int64_t, 6> BiasDims;
  if (HasBias) {
    BiasDims.push_back(int64_t(C.Inputs[2].numElements()));
    BiasDims.append(Y.Dims.size() - 2, 1);
  }
  return runEpilogue(C, A, E, HasBias ? &C.Inputs[2] : nullptr, BiasDims);
}

llvm::Error runFusedMatMul(const KernelContext &C) {
  Act A;
  cpu::Epilogue E;
  if (!epilogueOf(C.N, A, E))
    return C.unsupported("activation '" + C.N.getString("activation", "") +
                         "'");
  const bool Gemm = C.N.getInt("gemm", 0) != 0;
  KernelContext Product{
      C.G,       C.N,         Gemm ? C.Inputs : C.Inputs.take_front(2),
      C.Outputs, C.Workspace, C.WorkspaceBytes,
      C.Pool,    C.ActualDims};
  if (llvm::Error Err = Gemm ? runGemm(Product) : runMatMul(Product))
    return Err;
  const TensorRef *Bias = !Gemm && C.Inputs.size() > 2 && C.Inputs[2].present()
                              ? &C.Inputs[2]
                              : nullptr;
  if (Bias && Bias->Type != ElementType::Float)
    return C.badInput("the bias is not float32");
  return runEpilogue(C, A, E, Bias,
                     Bias ? llvm::ArrayRef<int64_t>(Bias->Dims)
                          : llvm::ArrayRef<int64_t>());
}

uint64_t attentionWorkspace(const Node &, llvm::ArrayRef<TensorRef> Inputs,
                            llvm::ArrayRef<TensorRef> Outputs) {
  if (Inputs.size() < 3 || Outputs.empty() || Outputs[0].Dims.size() < 2 ||
      Inputs[2].Dims.size() < 2)
    return 0;
  const auto &YD = Outputs[0].Dims, &VD = Inputs[2].Dims;
  const size_t R = YD.size();
  return fused::attentionWorkspaceBytes(
      uint64_t(cpu::productOf(YD, 0, R - 2)), uint64_t(YD[R - 2]),
      uint64_t(VD[VD.size() - 2]), uint64_t(YD[R - 1]));
}

llvm::Error runAttention(const KernelContext &C) {
  cpu::AttentionShape Sh;
  if (llvm::Error E = cpu::attentionShape(C, Sh))
    return E;
  if (Sh.BatchDims.size() > size_t(MaxRank))
    return C.unsupported("more than " + llvm::Twine(MaxRank) + " batch dims");
  AttentionArgs A;
  A.Sq = Sh.Sq;
  A.Sk = Sh.Sk;
  A.D = Sh.D;
  A.Dv = Sh.Dv;
  A.KTransposed = Sh.KTransposed;
  A.FillWhere = Sh.FillWhere;
  A.Scale = Sh.Scale;
  A.Fill = Sh.Fill;
  A.NB = int(Sh.BatchDims.size());
  for (size_t I = 0; I < Sh.BatchDims.size(); ++I)
    A.BatchDims[I] = Sh.BatchDims[I];
  for (int O = 0; O < 5; ++O) {
    const cpu::DimVector &S = Sh.Strides[O];
    if (S.empty())
      continue;
    A.Data[O] = C.Inputs[O].Data;
    A.Row[O] = S[S.size() - 2];
    A.Col[O] = S[S.size() - 1];
    for (size_t Ax = 0; Ax + 2 < S.size(); ++Ax)
      A.BatchStride[O][Ax] = S[Ax];
  }
  const TensorRef &Y = C.Outputs[0];
  A.Y = Y.data<float>();
  // The tiled kernel where its tiles fit: on the H200 bert_like at batch 8
  // ran in 7.89 ms with it, 8.67 ms with the row kernel, outputs equal to
  // the CPU's (docs/gpu-results.md). OOMPLAN_CUDA_ATTENTION=rows chooses
  // the row kernel.
  const char *Choice = std::getenv("OOMPLAN_CUDA_ATTENTION");
  A.Tiles = !(Choice && llvm::StringRef(Choice) == "rows");
  if (Sh.Batch == 0 || A.Sq == 0 || A.Dv == 0)
    return llvm::Error::success();
  if (A.Sk == 0) // softmax over nothing, times an empty V: zeros
    return launched(C, fill(Y.Data, Y.bytes(), 0, 4, context().Compute),
                    "attention zero fill");
  return launched(C, attention(A, Sh.Batch, context().Compute),
                  "attention kernel");
}
} // namespace

void cuda::registerFusedKernels(CUDAKernelTable &T) {
  addKernel(T, fused::ConvOp,
            {runFusedConv, convWorkspace, F32, 0, convRefuses});
  addKernel(T, fused::MatMulOp, {runFusedMatMul, blasWorkspace, F32});
  addKernel(T, fused::AttentionOp, {runAttention, attentionWorkspace, F32});
}
