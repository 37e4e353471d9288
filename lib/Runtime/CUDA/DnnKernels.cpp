//===- DnnKernels.cpp - Conv and the window pools on cuDNN ----------------===//
//
// The legacy cuDNN API with N-d descriptors (a 1-d window gets a unit
// height). Conv's algorithm is cuDNN's heuristic choice
// (cudnnGetConvolutionForwardAlgorithm_v7, which runs nothing) among those
// whose workspace fits ConvWorkspaceLimit; the choice is cached by
// geometry, so the planner's workspace query and the run pick the same
// algorithm and the plan holds exactly its workspace. FMA math: no TF32, so
// outputs match the CPU backend at rtol 1e-3.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/ConvGeometry.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"
#include "DnnCommon.h"
#include "Kernels/ThreadMath.h"
#include <map>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {
const llvm::SmallVector<ElementType, 4> F32 = {ElementType::Float};

// The spatial geometry with a unit axis first for 1-d windows.
struct Window {
  llvm::SmallVector<int, 4> K, S, D, Pad;
};
std::string windowOf(const Node &N, llvm::ArrayRef<int64_t> X,
                     llvm::ArrayRef<int64_t> Y, llvm::ArrayRef<int64_t> W,
                     Window &Out) {
  cpu::WindowGeometry G;
  std::string Bad =
      cpu::windowGeometry(N, X.drop_front(2), Y.drop_front(2),
                          W.empty() ? W : W.drop_front(2), false, G);
  if (!Bad.empty())
    return Bad;
  if (G.rank() < 1 || G.rank() > 3)
    return "a window of rank " + std::to_string(G.rank());
  if (G.rank() == 1) {
    Out.K.push_back(1);
    Out.S.push_back(1);
    Out.D.push_back(1);
    Out.Pad.push_back(0);
  }
  for (size_t I = 0; I < G.rank(); ++I) {
    if (G.PadBegin[I] != G.PadEnd[I])
      return "asymmetric padding (cuDNN pads both sides alike)";
    Out.K.push_back(int(G.K[I]));
    Out.S.push_back(int(G.S[I]));
    Out.D.push_back(int(G.D[I]));
    Out.Pad.push_back(int(G.PadBegin[I]));
  }
  return "";
}

struct ConvSetup {
  Descs D;
  cudnnConvolutionFwdAlgo_t Algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t WorkspaceBytes = 0;
  std::string Key; ///< The geometry: the algorithm cache's key.
};

// The chosen algorithm and its workspace by geometry (under Context::Lock):
// the planner's workspace query and every run of that geometry agree.
std::map<std::string, std::pair<cudnnConvolutionFwdAlgo_t, size_t>> &
algoCache() {
  static std::map<std::string, std::pair<cudnnConvolutionFwdAlgo_t, size_t>>
      Cache;
  return Cache;
}

// Descriptors and the algorithm for Conv node N at these dims. The choice
// is cached by everything that determines it.
cudnnStatus_t setupConv(const Node &N, llvm::ArrayRef<int64_t> X,
                        llvm::ArrayRef<int64_t> W, llvm::ArrayRef<int64_t> Y,
                        ConvSetup &S, std::string &Bad) {
  Window Win;
  Bad = windowOf(N, X, Y, W, Win);
  if (!Bad.empty())
    return CUDNN_STATUS_NOT_SUPPORTED;
  int Groups = int(N.getInt("group", 1));
  if (cudnnStatus_t St = tensorDesc(S.D.X, X))
    return St;
  if (cudnnStatus_t St = tensorDesc(S.D.Y, Y))
    return St;
  if (cudnnStatus_t St = cudnnCreateFilterDescriptor(&S.D.W))
    return St;
  llvm::SmallVector<int, 8> WD = dnnDims(W);
  if (cudnnStatus_t St =
          cudnnSetFilterNdDescriptor(S.D.W, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                     int(WD.size()), WD.data()))
    return St;
  if (cudnnStatus_t St = cudnnCreateConvolutionDescriptor(&S.D.Conv))
    return St;
  if (cudnnStatus_t St = cudnnSetConvolutionNdDescriptor(
          S.D.Conv, int(Win.K.size()), Win.Pad.data(), Win.S.data(),
          Win.D.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT))
    return St;
  if (cudnnStatus_t St = cudnnSetConvolutionGroupCount(S.D.Conv, Groups))
    return St;
  // A math type cuDNN refused would leave the default, which allows TF32.
  if (cudnnStatus_t St = cudnnSetConvolutionMathType(S.D.Conv, CUDNN_FMA_MATH))
    return St;
  std::string &Key = S.Key;
  for (auto Dims : {X, W, Y})
    for (int64_t V : Dims)
      Key += std::to_string(V) + ",";
  for (auto &V : {Win.K, Win.S, Win.D, Win.Pad})
    for (int I : V)
      Key += std::to_string(I) + ";";
  Key += std::to_string(Groups);
  auto &Cache = algoCache();
  Context &Cx = context();
  std::lock_guard<std::mutex> Lock(Cx.Lock);
  auto It = Cache.find(Key);
  if (It != Cache.end()) {
    S.Algo = It->second.first;
    S.WorkspaceBytes = It->second.second;
    return CUDNN_STATUS_SUCCESS;
  }
  cudnnConvolutionFwdAlgoPerf_t Perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int Got = 0;
  if (cudnnStatus_t St = cudnnGetConvolutionForwardAlgorithm_v7(
          Cx.Dnn, S.D.X, S.D.W, S.D.Conv, S.D.Y,
          CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &Got, Perf))
    return St;
  bool Found = false;
  for (int I = 0; I < Got && !Found; ++I) {
    size_t Bytes = 0;
    // The heuristic may also list tensor-core versions of an algorithm;
    // the descriptor's FMA math runs none of them (no TF32).
    if (Perf[I].status != CUDNN_STATUS_SUCCESS ||
        Perf[I].mathType == CUDNN_TENSOR_OP_MATH ||
        Perf[I].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ||
        cudnnGetConvolutionForwardWorkspaceSize(Cx.Dnn, S.D.X, S.D.W, S.D.Conv,
                                                S.D.Y, Perf[I].algo, &Bytes) !=
            CUDNN_STATUS_SUCCESS ||
        Bytes > ConvWorkspaceLimit)
      continue;
    S.Algo = Perf[I].algo;
    S.WorkspaceBytes = Bytes;
    Found = true;
  }
  // Implicit GEMM runs every geometry with FMA math and no workspace: the
  // fallback when the filter above left nothing, rather than no convolution.
  size_t Implicit = 0;
  if (!Found &&
      cudnnGetConvolutionForwardWorkspaceSize(
          Cx.Dnn, S.D.X, S.D.W, S.D.Conv, S.D.Y,
          CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
          &Implicit) == CUDNN_STATUS_SUCCESS &&
      Implicit <= ConvWorkspaceLimit) {
    S.Algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    S.WorkspaceBytes = Implicit;
    Found = true;
  }
  if (!Found) {
    Bad = "no cuDNN algorithm fits the workspace limit";
    return CUDNN_STATUS_NOT_SUPPORTED;
  }
  Cache[Key] = {S.Algo, S.WorkspaceBytes};
  return CUDNN_STATUS_SUCCESS;
}

} // namespace

uint64_t cuda::convWorkspace(const Node &N, llvm::ArrayRef<TensorRef> In,
                             llvm::ArrayRef<TensorRef> Out) {
  if (!haveContext() || In.size() < 2 || Out.empty() || In[0].Dims.size() < 3)
    return 0;
  ConvSetup S;
  std::string Bad;
  if (setupConv(N, In[0].Dims, In[1].Dims, Out[0].Dims, S, Bad))
    return 0; // the run reports what is wrong
  return S.WorkspaceBytes;
}

std::string cuda::convRefuses(const Node &N, llvm::ArrayRef<TensorRef> In,
                              llvm::ArrayRef<TensorRef> Out) {
  if (In.size() < 2 || Out.empty() || In[0].Dims.size() < 3)
    return ""; // the run reports the bad input
  Window Win;
  return windowOf(N, In[0].Dims, Out[0].Dims, In[1].Dims, Win);
}

llvm::Error cuda::convForward(const KernelContext &C, bool Accumulate) {
  const TensorRef &X = C.Inputs[0], &W = C.Inputs[1], &Y = C.Outputs[0];
  if (X.Dims.size() < 3)
    return C.badInput("input rank below 3");
  if (Y.numElements() == 0)
    return llvm::Error::success();
  ConvSetup S;
  std::string Bad;
  if (cudnnStatus_t St = setupConv(C.N, X.Dims, W.Dims, Y.Dims, S, Bad))
    return Bad.empty() ? dnnFailure(C, St, "setting up the convolution")
                       : C.unsupported(Bad);
  if (S.WorkspaceBytes > C.WorkspaceBytes)
    return C.unsupported(
        "cuDNN's algorithm needs " + llvm::Twine(S.WorkspaceBytes) +
        " bytes of workspace; the plan has " + llvm::Twine(C.WorkspaceBytes));
  float One = 1, Beta = Accumulate ? 1 : 0;
  auto Forward = [&] {
    return cudnnConvolutionForward(context().Dnn, &One, S.D.X, X.Data, S.D.W,
                                   W.Data, S.D.Conv, S.Algo, C.Workspace,
                                   S.WorkspaceBytes, &Beta, S.D.Y, Y.Data);
  };
  cudnnStatus_t St = Forward();
  // The heuristic can list an algorithm that the call then refuses for
  // some grouped or dilated geometries: implicit GEMM runs them all, in
  // the planned workspace, and becomes the geometry's choice. Checked on
  // the host before anything is queued, so a capture is not broken.
  if (notSupported(St) && S.Algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) {
    size_t Implicit = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(
            context().Dnn, S.D.X, S.D.W, S.D.Conv, S.D.Y,
            CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
            &Implicit) == CUDNN_STATUS_SUCCESS &&
        Implicit <= C.WorkspaceBytes) {
      S.Algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
      S.WorkspaceBytes = Implicit;
      St = Forward();
      if (St == CUDNN_STATUS_SUCCESS) {
        std::lock_guard<std::mutex> Lock(context().Lock);
        algoCache()[S.Key] = {S.Algo, S.WorkspaceBytes};
      }
    }
  }
  if (St)
    return dnnFailure(C, St, "cudnnConvolutionForward");
  return llvm::Error::success();
}

namespace {
llvm::Error runConv(const KernelContext &C) {
  const TensorRef &Y = C.Outputs[0];
  if (llvm::Error E = convForward(C, false))
    return E;
  if (Y.numElements() && C.Inputs.size() > 2 && C.Inputs[2].present())
    return launched(C,
                    addChannelBias(Y.data<float>(), C.Inputs[2].data<float>(),
                                   Y.Dims[0], Y.Dims[1],
                                   cpu::productOf(Y.Dims, 2, Y.Dims.size()),
                                   context().Compute),
                    "Conv bias kernel");
  return llvm::Error::success();
}

// What a cuDNN pool cannot express for this node (Window's rules, no
// dilations, no Indices output, ceil_mode only where it keeps the floor's
// dims), or "": such a pool runs on runDirectPool. Win: the window when
// cuDNN can.
std::string poolRefusal(const Node &N, llvm::ArrayRef<TensorRef> In,
                        llvm::ArrayRef<TensorRef> Out, Window &Win) {
  if (In.empty() || Out.empty() || In[0].Dims.size() < 3)
    return ""; // the run reports the bad input
  llvm::ArrayRef<int64_t> X = In[0].Dims, Y = Out[0].Dims;
  if (Out.size() > 1 && Out[1].Type != ElementType::Undefined)
    return "MaxPool's Indices output";
  std::string Bad = windowOf(N, X, Y, {}, Win);
  if (!Bad.empty())
    return Bad;
  for (size_t I = 0; I < Win.D.size(); ++I)
    if (Win.D[I] != 1)
      return "dilations (cuDNN pools have none)";
  // cuDNN sizes the output by floor division: ceil_mode is supported only
  // where it gives the same dims.
  size_t Off = Win.K.size() + 2 - X.size(); // the unit axis of 1-d
  for (size_t I = Off; I < Win.K.size(); ++I) {
    int64_t Len = X[2 + I - Off];
    int64_t Floor = (Len + 2 * Win.Pad[I] - Win.K[I]) / Win.S[I] + 1;
    if (Floor != Y[2 + I - Off])
      return "ceil_mode that changes the output size";
  }
  return "";
}

// A window cuDNN refuses, on our own kernel (Kernels/Pool.cu): the CPU
// kernel's geometry and per-output function, so the same positions count.
llvm::Error runDirectPool(const KernelContext &C, pool::Kind Kd) {
  const bool Max = Kd == pool::Kind::Max;
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (!C.N.getInts("kernel_shape"))
    return C.badInput("kernel_shape is required");
  if (Y.Dims.size() != X.Dims.size() || Y.Dims[0] != X.Dims[0] ||
      Y.Dims[1] != X.Dims[1])
    return C.badInput("Y's rank, batch or channels differ from X's");
  llvm::ArrayRef<int64_t> XD(X.Dims), YD(Y.Dims);
  cpu::WindowGeometry G;
  std::string Bad = cpu::windowGeometry(C.N, XD.drop_front(2), YD.drop_front(2),
                                        {}, false, G);
  if (!Bad.empty())
    return C.badInput(Bad);
  pool::Window W;
  if (!cpu::poolWindow(G, C.N, W))
    return C.unsupported("a window of rank " + llvm::Twine(G.rank()));
  int64_t *Indices = nullptr;
  if (Max && C.Outputs.size() > 1 && C.Outputs[1].present()) {
    if (C.Outputs[1].Type != ElementType::Int64)
      return C.badInput("Indices must be int64");
    Indices = C.Outputs[1].data<int64_t>();
  }
  return launched(C,
                  directPool(W, Kd, X.data<float>(), Y.data<float>(), Indices,
                             X.Dims[0] * X.Dims[1], context().Compute),
                  "pool kernel");
}

template <bool Max> llvm::Error runPool(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (X.Dims.size() < 3)
    return C.badInput("input rank below 3");
  Window Win;
  if (!poolRefusal(C.N, C.Inputs, C.Outputs, Win).empty())
    return runDirectPool(C, Max ? pool::Kind::Max : pool::Kind::Average);
  if (Y.numElements() == 0)
    return llvm::Error::success();
  Descs D;
  cudnnPoolingMode_t Mode =
      Max ? CUDNN_POOLING_MAX_DETERMINISTIC
          : (C.N.getInt("count_include_pad", 0)
                 ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                 : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
  cudnnStatus_t St = tensorDesc(D.X, X.Dims);
  if (!St)
    St = tensorDesc(D.Y, Y.Dims);
  if (!St)
    St = cudnnCreatePoolingDescriptor(&D.Pool);
  if (!St)
    St = cudnnSetPoolingNdDescriptor(D.Pool, Mode, CUDNN_NOT_PROPAGATE_NAN,
                                     int(Win.K.size()), Win.K.data(),
                                     Win.Pad.data(), Win.S.data());
  float One = 1, Zero = 0;
  if (!St)
    St = cudnnPoolingForward(context().Dnn, D.Pool, &One, D.X, X.Data, &Zero,
                             D.Y, Y.Data);
  if (St)
    return dnnFailure(C, St, "cudnnPoolingForward");
  return llvm::Error::success();
}
// LpPool: cuDNN has no Lp mode; our kernel, as the pools cuDNN refuses.
llvm::Error runLpPool(const KernelContext &C) {
  if (C.Inputs[0].Dims.size() < 3)
    return C.badInput("input rank below 3");
  return runDirectPool(C, pool::Kind::Lp);
}

// GlobalLpPool: one window over all of each plane's spatial dims, on the
// same kernel (the CPU's global pool sums |x|^p in double as pool::at does).
llvm::Error runGlobalLpPool(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (X.Dims.size() < 3 ||
      Y.numElements() != uint64_t(X.Dims[0]) * uint64_t(X.Dims[1]))
    return C.badInput("output must hold one value per (image, channel)");
  const int Rank = int(X.Dims.size()) - 2;
  if (Rank > pool::Window::MaxRank)
    return C.unsupported("a window of rank " + llvm::Twine(Rank));
  if (cpu::productOf(X.Dims, 2, X.Dims.size()) == 0)
    return C.badInput("empty spatial dims"); // the CPU kernel's refusal
  pool::Window W =
      thread::globalWindow(X.Dims.data() + 2, Rank, double(C.N.getInt("p", 2)));
  return launched(C,
                  directPool(W, pool::Kind::Lp, X.data<float>(),
                             Y.data<float>(), nullptr, X.Dims[0] * X.Dims[1],
                             context().Compute),
                  "global Lp pool kernel");
}
} // namespace

void cuda::registerDnnKernels(CUDAKernelTable &T) {
  addKernel(T, "Conv", {runConv, convWorkspace, F32, 0, convRefuses});
  addKernel(T, "MaxPool", {runPool<true>, nullptr, F32});
  addKernel(T, "AveragePool", {runPool<false>, nullptr, F32});
  addKernel(T, "LpPool", {runLpPool, nullptr, F32});
  addKernel(T, "GlobalLpPool", {runGlobalLpPool, nullptr, F32});
}
