//===- HalfInFloat.cpp - float16/bfloat16 through a float kernel ---------===//
//
// The workspace holds, in this order, a float copy of every half input,
// one of every half output, then the kernel's own workspace, each at a
// 256-byte boundary (cuBLAS's and cuDNN's workspace alignment; the arena
// places the workspace itself at the plan's alignment). The layout is a
// function of the operands' dims and types only, so the planner's query and
// the run carve the same bytes.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/HalfInFloat.h"
#include "CPU/Kernels/Elementwise.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>
#include <vector>

using namespace oomplan;
using namespace oomplan::runtime;

bool runtime::isHalfType(ElementType T) {
  return T == ElementType::Float16 || T == ElementType::BFloat16;
}

bool runtime::widensHalf(const Kernel &K, ElementType InType) {
  return isHalfType(InType) && !K.Types.empty() &&
         !llvm::is_contained(K.Types, InType) &&
         llvm::is_contained(K.Types, ElementType::Float);
}

uint64_t runtime::halfCopyBytes(uint64_t Elements) {
  constexpr uint64_t Align = 256;
  return (Elements * 4 + Align - 1) / Align * Align;
}

namespace {

/// The refs the float kernel sees (half ones retyped to Float, Data not
/// yet set) and each widened operand's offset in the workspace.
struct Layout {
  llvm::SmallVector<TensorRef, 6> In, Out;
  llvm::SmallVector<int64_t, 6> InAt, OutAt; ///< -1: passed as it is
  uint64_t CopyBytes = 0;                    ///< the copies, aligned
};

Layout layoutOf(llvm::ArrayRef<TensorRef> In, llvm::ArrayRef<TensorRef> Out) {
  Layout L;
  auto Add = [&](llvm::ArrayRef<TensorRef> Refs,
                 llvm::SmallVectorImpl<TensorRef> &To,
                 llvm::SmallVectorImpl<int64_t> &At) {
    for (const TensorRef &R : Refs) {
      To.push_back(R);
      At.push_back(-1);
      if (!isHalfType(R.Type))
        continue;
      To.back().Type = ElementType::Float;
      At.back() = int64_t(L.CopyBytes);
      L.CopyBytes += halfCopyBytes(R.numElements());
    }
  };
  Add(In, L.In, L.InAt);
  Add(Out, L.Out, L.OutAt);
  return L;
}
} // namespace

uint64_t runtime::kernelWorkspace(const Kernel &K, const Node &N,
                                  llvm::ArrayRef<TensorRef> In,
                                  llvm::ArrayRef<TensorRef> Out,
                                  unsigned Roomy) {
  if (In.empty() || !widensHalf(K, In[0].Type)) {
    const uint64_t Own = K.Workspace ? K.Workspace(N, In, Out) : 0;
    if (Roomy >= 2 && K.RoomierWorkspace)
      return std::max(Own, K.RoomierWorkspace(N, In, Out));
    if (Roomy == 0 || !K.RoomyWorkspace)
      return Own;
    return std::max(Own, K.RoomyWorkspace(N, In, Out));
  }
  Layout L = layoutOf(In, Out);
  uint64_t Inner = K.Workspace ? K.Workspace(N, L.In, L.Out) : 0;
  return Inner ? L.CopyBytes + Inner : L.CopyBytes;
}

llvm::Error runtime::runHalfInFloat(const KernelContext &C, const Kernel &K,
                                    const Kernel &Cast) {
  Layout L = layoutOf(C.Inputs, C.Outputs);
  uint64_t Inner = K.Workspace ? K.Workspace(C.N, L.In, L.Out) : 0;
  uint64_t Need = Inner ? L.CopyBytes + Inner : L.CopyBytes;
  if (C.WorkspaceBytes < Need || (Need && !C.Workspace))
    return makeInternalError(
        C.G.describeNode(NodeId(&C.N - C.G.Nodes.data())) +
        ": the float copies of its half operands need " + llvm::Twine(Need) +
        " bytes of workspace; the plan gave " + llvm::Twine(C.WorkspaceBytes));
  char *Base = static_cast<char *>(C.Workspace);
  // Cast one ref into another with the backend's kernel; the context names
  // this step's node in any error.
  auto Convert = [&](const TensorRef &From, const TensorRef &To) {
    TensorRef Src = From, Dst = To;
    KernelContext X{
        C.G, C.N,   llvm::makeArrayRef(Src), llvm::makeArrayRef(Dst), nullptr,
        0,   C.Pool};
    return Cast.Run(X);
  };
  for (size_t I = 0; I < L.In.size(); ++I) {
    if (L.InAt[I] < 0 || !C.Inputs[I].present())
      continue;
    L.In[I].Data = Base + L.InAt[I];
    if (llvm::Error E = Convert(C.Inputs[I], L.In[I]))
      return E;
  }
  for (size_t I = 0; I < L.Out.size(); ++I)
    if (L.OutAt[I] >= 0 && C.Outputs[I].present())
      L.Out[I].Data = Base + L.OutAt[I];
  // Values the kernel reads on the host (Clip's bounds, a Pad value) are
  // converted there.
  llvm::SmallVector<TensorRef, 4> HostIn(C.HostInputs.begin(),
                                         C.HostInputs.end());
  std::vector<std::vector<float>> HostCopies;
  for (TensorRef &H : HostIn) {
    if (!H.Data || !isHalfType(H.Type))
      continue;
    std::vector<float> &V = HostCopies.emplace_back(H.numElements());
    const uint16_t *Bits = H.data<const uint16_t>();
    for (size_t I = 0; I < V.size(); ++I)
      V[I] = cpu::halfBitsToFloat(H.Type, Bits[I]);
    H.Data = V.data();
    H.Type = ElementType::Float;
  }
  KernelContext F{
      C.G,   C.N,   L.In, L.Out, Inner ? Base + L.CopyBytes : nullptr,
      Inner, C.Pool};
  F.HostInputs = HostIn;
  F.ActualDims = C.ActualDims;
  if (llvm::Error E = K.Run(F))
    return E;
  for (size_t I = 0; I < L.Out.size(); ++I) {
    if (L.OutAt[I] < 0 || !C.Outputs[I].present())
      continue;
    // A data-dependent output holds its produced dims, packed densely.
    TensorRef Src = L.Out[I], Dst = C.Outputs[I];
    if (C.ActualDims)
      Src.Dims = Dst.Dims = C.ActualDims[I];
    if (llvm::Error E = Convert(Src, Dst))
      return E;
  }
  return llvm::Error::success();
}
