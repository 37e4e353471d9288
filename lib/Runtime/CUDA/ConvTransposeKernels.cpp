//===- ConvTransposeKernels.cpp - ConvTranspose on cuDNN ------------------===//
//
// ConvTranspose is the data gradient of the convolution with the same
// weights: Y = cudnnConvolutionBackwardData(W, dy = X), the filter in
// ONNX's [C_in, C_out / group, k...] layout being cuDNN's [K, C / group,
// k...] for that convolution. Output element o of an axis sums the taps
// with o = i * stride - pad_begin + k * dilation, exactly the CPU kernel's
// col2im, so only pad_begin enters; cuDNN pads both sides alike, and the
// output's extent comes from the Y descriptor. That extent is one cuDNN
// accepts when the forward convolution of Y gives X back:
// 0 <= output_padding + pad_begin - pad_end < stride on every axis, which
// covers symmetric pads with output_padding and most output_shape and
// SAME_* paddings; the rest is refused. The algorithm is chosen as Conv's
// (DnnKernels.cpp): cuDNN's heuristic, FMA math only, under the workspace
// limit, cached by geometry so that the plan and the run agree.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/ConvGeometry.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"
#include "DnnCommon.h"
#include <map>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {
const llvm::SmallVector<ElementType, 4> F32 = {ElementType::Float};

struct TransposeSetup {
  Descs D; // X: the output Y (dx); Y: the input X (dy)
  cudnnConvolutionBwdDataAlgo_t Algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  size_t WorkspaceBytes = 0;
  std::string Key;
};

std::map<std::string, std::pair<cudnnConvolutionBwdDataAlgo_t, size_t>> &
algoCache() {
  static std::map<std::string, std::pair<cudnnConvolutionBwdDataAlgo_t, size_t>>
      Cache;
  return Cache;
}

// The window cuDNN's data gradient runs for ConvTranspose node N at these
// dims, each axis's kernel, stride, dilation and padding (a unit axis
// first for 1-d), or why it cannot ("" when it can).
std::string transposeGeometry(const Node &N, llvm::ArrayRef<int64_t> X,
                              llvm::ArrayRef<int64_t> W,
                              llvm::ArrayRef<int64_t> Y,
                              llvm::SmallVectorImpl<int> &K,
                              llvm::SmallVectorImpl<int> &St,
                              llvm::SmallVectorImpl<int> &Dl,
                              llvm::SmallVectorImpl<int> &Pad) {
  if (X.size() < 3 || W.size() != X.size() || Y.size() != X.size())
    return "X, W and Y must have the same rank, at least 3";
  cpu::WindowGeometry G;
  std::string Bad = cpu::windowGeometry(N, X.drop_front(2), Y.drop_front(2),
                                        W.drop_front(2), true, G);
  if (Bad.empty() && llvm::ArrayRef<int64_t>(G.K) != W.drop_front(2))
    Bad = "kernel_shape differs from W's spatial dims";
  if (!Bad.empty())
    return Bad;
  if (G.rank() > 3)
    return "a window of rank " + std::to_string(G.rank());
  const int64_t Group = N.getInt("group", 1);
  if (Group <= 0 || X[1] % Group || W[0] != X[1] || Y[1] != W[1] * Group ||
      Y[0] != X[0])
    return "channels of X, W and Y do not match group " + std::to_string(Group);
  if (G.rank() == 1) {
    K.push_back(1);
    St.push_back(1);
    Dl.push_back(1);
    Pad.push_back(0);
  }
  for (size_t I = 0; I < G.rank(); ++I) {
    // Y's extent less the natural one, which cuDNN's floor division of
    // the forward convolution must absorb.
    const int64_t Extra =
        Y[2 + I] - (G.S[I] * (X[2 + I] - 1) + (G.K[I] - 1) * G.D[I] + 1 -
                    2 * G.PadBegin[I]);
    if (G.PadBegin[I] < 0 || Extra < 0 || Extra >= G.S[I])
      return "padding cuDNN cannot express (pads " +
             std::to_string(G.PadBegin[I]) + " and " +
             std::to_string(G.PadEnd[I]) + " with stride " +
             std::to_string(G.S[I]) + ")";
    K.push_back(int(G.K[I]));
    St.push_back(int(G.S[I]));
    Dl.push_back(int(G.D[I]));
    Pad.push_back(int(G.PadBegin[I]));
  }
  return "";
}

std::string transposeRefuses(const Node &N, llvm::ArrayRef<TensorRef> In,
                             llvm::ArrayRef<TensorRef> Out) {
  if (In.size() < 2 || Out.empty())
    return ""; // the run reports the bad input
  llvm::SmallVector<int, 4> K, St, Dl, Pad;
  return transposeGeometry(N, In[0].Dims, In[1].Dims, Out[0].Dims, K, St, Dl,
                           Pad);
}

cudnnStatus_t setupTranspose(const Node &N, llvm::ArrayRef<int64_t> X,
                             llvm::ArrayRef<int64_t> W,
                             llvm::ArrayRef<int64_t> Y, TransposeSetup &S,
                             std::string &Bad) {
  llvm::SmallVector<int, 4> K, St, Dl, Pad;
  Bad = transposeGeometry(N, X, W, Y, K, St, Dl, Pad);
  if (!Bad.empty())
    return CUDNN_STATUS_NOT_SUPPORTED;
  const int64_t Group = N.getInt("group", 1);
  if (cudnnStatus_t E = tensorDesc(S.D.X, Y))
    return E;
  if (cudnnStatus_t E = tensorDesc(S.D.Y, X))
    return E;
  if (cudnnStatus_t E = cudnnCreateFilterDescriptor(&S.D.W))
    return E;
  llvm::SmallVector<int, 8> WD = dnnDims(W);
  if (cudnnStatus_t E =
          cudnnSetFilterNdDescriptor(S.D.W, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                     int(WD.size()), WD.data()))
    return E;
  if (cudnnStatus_t E = cudnnCreateConvolutionDescriptor(&S.D.Conv))
    return E;
  if (cudnnStatus_t E = cudnnSetConvolutionNdDescriptor(
          S.D.Conv, int(K.size()), Pad.data(), St.data(), Dl.data(),
          CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT))
    return E;
  if (cudnnStatus_t E = cudnnSetConvolutionGroupCount(S.D.Conv, int(Group)))
    return E;
  if (cudnnStatus_t E = cudnnSetConvolutionMathType(S.D.Conv, CUDNN_FMA_MATH))
    return E;
  for (auto Dims : {X, W, Y})
    for (int64_t V : Dims)
      S.Key += std::to_string(V) + ",";
  for (auto &V : {K, St, Dl, Pad})
    for (int I : V)
      S.Key += std::to_string(I) + ";";
  S.Key += std::to_string(Group);
  Context &Cx = context();
  std::lock_guard<std::mutex> Lock(Cx.Lock);
  auto &Cache = algoCache();
  auto It = Cache.find(S.Key);
  if (It != Cache.end()) {
    S.Algo = It->second.first;
    S.WorkspaceBytes = It->second.second;
    return CUDNN_STATUS_SUCCESS;
  }
  auto Bytes = [&](cudnnConvolutionBwdDataAlgo_t A, size_t &Out) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(
        Cx.Dnn, S.D.W, S.D.Y, S.D.Conv, S.D.X, A, &Out);
  };
  cudnnConvolutionBwdDataAlgoPerf_t Perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  int Got = 0;
  if (cudnnStatus_t E = cudnnGetConvolutionBackwardDataAlgorithm_v7(
          Cx.Dnn, S.D.W, S.D.Y, S.D.Conv, S.D.X,
          CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &Got, Perf))
    return E;
  bool Found = false;
  for (int I = 0; I < Got && !Found; ++I) {
    size_t B = 0;
    if (Perf[I].status != CUDNN_STATUS_SUCCESS ||
        Perf[I].mathType == CUDNN_TENSOR_OP_MATH ||
        Perf[I].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ||
        Bytes(Perf[I].algo, B) != CUDNN_STATUS_SUCCESS ||
        B > ConvWorkspaceLimit)
      continue;
    S.Algo = Perf[I].algo;
    S.WorkspaceBytes = B;
    Found = true;
  }
  // ALGO_1 (deterministic, little or no workspace) when the heuristic's
  // list had nothing that fits.
  size_t B1 = 0;
  if (!Found &&
      Bytes(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, B1) == CUDNN_STATUS_SUCCESS &&
      B1 <= ConvWorkspaceLimit) {
    S.Algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    S.WorkspaceBytes = B1;
    Found = true;
  }
  if (!Found) {
    Bad = "no cuDNN algorithm fits the workspace limit";
    return CUDNN_STATUS_NOT_SUPPORTED;
  }
  Cache[S.Key] = {S.Algo, S.WorkspaceBytes};
  return CUDNN_STATUS_SUCCESS;
}

uint64_t convTransposeWorkspace(const Node &N, llvm::ArrayRef<TensorRef> In,
                                llvm::ArrayRef<TensorRef> Out) {
  if (!haveContext() || In.size() < 2 || Out.empty())
    return 0;
  TransposeSetup S;
  std::string Bad;
  if (setupTranspose(N, In[0].Dims, In[1].Dims, Out[0].Dims, S, Bad))
    return 0; // the run reports what is wrong
  return S.WorkspaceBytes;
}

llvm::Error runConvTranspose(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &W = C.Inputs[1], &Y = C.Outputs[0];
  if (Y.numElements() == 0)
    return llvm::Error::success();
  TransposeSetup S;
  std::string Bad;
  if (cudnnStatus_t St = setupTranspose(C.N, X.Dims, W.Dims, Y.Dims, S, Bad))
    return Bad.empty() ? dnnFailure(C, St,
                                    "setting up the transposed "
                                    "convolution")
                       : C.unsupported(Bad);
  if (S.WorkspaceBytes > C.WorkspaceBytes)
    return C.unsupported(
        "cuDNN's algorithm needs " + llvm::Twine(S.WorkspaceBytes) +
        " bytes of workspace; the plan has " + llvm::Twine(C.WorkspaceBytes));
  const bool HasBias = C.Inputs.size() > 2 && C.Inputs[2].present();
  if (HasBias && int64_t(C.Inputs[2].numElements()) != Y.Dims[1])
    return C.badInput("bias length differs from the output channels");
  float One = 1, Zero = 0;
  auto Backward = [&] {
    return cudnnConvolutionBackwardData(
        context().Dnn, &One, S.D.W, W.Data, S.D.Y, X.Data, S.D.Conv, S.Algo,
        C.Workspace, S.WorkspaceBytes, &Zero, S.D.X, Y.Data);
  };
  cudnnStatus_t St = Backward();
  // As Conv's (DnnKernels.cpp): the heuristic can list an algorithm the
  // call refuses for some grouped or dilated geometries; ALGO_1 runs them,
  // in the planned workspace, and becomes the geometry's choice. Refused
  // on the host before anything is queued, so a capture is not broken.
  if (notSupported(St) && S.Algo != CUDNN_CONVOLUTION_BWD_DATA_ALGO_1) {
    size_t B1 = 0;
    if (cudnnGetConvolutionBackwardDataWorkspaceSize(
            context().Dnn, S.D.W, S.D.Y, S.D.Conv, S.D.X,
            CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, &B1) == CUDNN_STATUS_SUCCESS &&
        B1 <= C.WorkspaceBytes) {
      S.Algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
      S.WorkspaceBytes = B1;
      St = Backward();
      if (St == CUDNN_STATUS_SUCCESS) {
        std::lock_guard<std::mutex> Lock(context().Lock);
        algoCache()[S.Key] = {S.Algo, S.WorkspaceBytes};
      }
    }
  }
  if (St)
    return dnnFailure(C, St, "cudnnConvolutionBackwardData");
  if (!HasBias)
    return llvm::Error::success();
  return launched(C,
                  addChannelBias(Y.data<float>(), C.Inputs[2].data<float>(),
                                 Y.Dims[0], Y.Dims[1],
                                 cpu::productOf(Y.Dims, 2, Y.Dims.size()),
                                 context().Compute),
                  "ConvTranspose bias kernel");
}
} // namespace

void cuda::registerConvTransposeKernels(CUDAKernelTable &T) {
  addKernel(
      T, "ConvTranspose",
      {runConvTranspose, convTransposeWorkspace, F32, 0, transposeRefuses});
}
