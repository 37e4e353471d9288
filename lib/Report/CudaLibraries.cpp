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
    if (isConv(St.Op) && C.ConvWorkspaceRatio > 0) {
      uint64_t Largest = 0;
      for (const std::vector<TensorId> *Ts : {&St.Reads, &St.Writes})
        for (TensorId T : *Ts)
          if (S.Tensors[T].Kind != TensorKind::Weight)
            Largest = std::max(Largest, S.Tensors[T].SizeBytes);
      uint64_t W = static_cast<uint64_t>(C.ConvWorkspaceRatio * Largest);
      if (C.ConvWorkspaceCapBytes)
        W = std::min(W, C.ConvWorkspaceCapBytes);
      if (W)
        Out.push_back({I, W, false, "cuDNN convolution workspace"});
    }
  }
  return Out;
}
