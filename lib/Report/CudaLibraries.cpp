//===- CudaLibraries.cpp - what PyTorch's CUDA libraries allocate ---------===//
//
// cuBLAS: PyTorch keeps one workspace per (cuBLAS handle, stream), and
// handles are per thread (at::cuda::getCurrentCUDABlasHandle's pool):
// the forward runs on the Python thread, the backward on autograd's device
// thread, so a training step that runs products in both holds two, from the
// first product of each on (measured on an H200, PyTorch 2.11: 68 to 77 MB
// beyond parameters, buffers, Adam's state and the inputs after a first
// step, CNN or transformer; two 32 MiB workspaces are 67.1 MB).
//
// cuDNN: with cudnn.benchmark off PyTorch runs the heuristics' plan for each
// convolution and allocates the plan's workspace for the kernel's duration.
// Its size is the library's choice and was not measured per kernel; the
// rule (a backward convolution takes its unfolded input, at most 64 MiB) is
// calibrated on the five CNNs of the shared H200 measurements, where it
// brings max_memory_allocated from -0.3%..-2.3% to +0.1%..+3.0%
// (docs/training.md). A forward workspace as well moved nothing closer.
// A convolution whose input takes no gradient (the stem on the image)
// computes only its weight's gradient, last in the backward when little is
// allocated; its workspace is the whole unfolded input, uncapped: it grows
// the reserved segments, not the allocated peak. Calibrated on the H200's
// resnet18 and resnet50 rows (reserved -18.4% and -0.7% capped, -3.2% and
// +5.7% uncapped), the only shared CNNs whose stem passes the cap.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/CudaLibraries.h"
#include "oomplan/Support/CheckedMath.h"
#include "llvm/ADT/StringRef.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::report;

// Ops whose forward or backward runs a cuBLAS product.
static bool runsProduct(llvm::StringRef Op) {
  Op.consume_back(".grad");
  return Op == "MatMul" || Op == "Gemm" || Op == "Einsum" ||
         Op == "OomplanMatMul";
}

static bool isConv(llvm::StringRef Op) {
  Op.consume_back(".grad");
  return Op == "Conv" || Op == "ConvTranspose" || Op == "OomplanConv";
}

std::vector<LibraryAllocation>
report::pytorchCudaLibraryAllocations(const Plan &P,
                                      const CudaLibraryConfig &C) {
  std::vector<LibraryAllocation> Out;
  bool ForwardBlas = false, BackwardBlas = false;
  const Schedule &S = P.Sched;
  for (uint64_t I = 0; I < S.Steps.size(); ++I) {
    const Step &St = S.Steps[I];
    bool Backward = St.Kind == StepKind::Backward;
    if (runsProduct(St.Op) && C.CublasWorkspaceBytes) {
      bool &Seen = Backward ? BackwardBlas : ForwardBlas;
      if (!Seen)
        Out.push_back({I, C.CublasWorkspaceBytes, true,
                       Backward ? "cuBLAS workspace (autograd's thread)"
                                : "cuBLAS workspace (forward thread)"});
      Seen = true;
    }
    if (isConv(St.Op) && Backward && St.Node != NoId &&
        St.Node < C.ConvUnfoldedBytes.size()) {
      bool WeightOnly = St.Node < C.ConvWeightGradOnly.size() &&
                        C.ConvWeightGradOnly[St.Node];
      uint64_t W = C.ConvUnfoldedBytes[St.Node];
      if (!WeightOnly)
        W = std::min(W, C.ConvWorkspaceCapBytes);
      if (W)
        Out.push_back({I, W, false, "cuDNN convolution workspace"});
    }
  }
  return Out;
}
