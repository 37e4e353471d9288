//===- GQAKernels.cpp - GroupQueryAttention on CUDA -----------------------===//
//
// ONNX Runtime's GroupQueryAttention (the GenAI model builder's attention),
// which ran as a host step: every layer of every token copied the whole
// past cache to the host and the present back. The static checks are the
// CPU kernel's own (cpu::gqaGeometry); those that read seqlens_k,
// total_sequence_length or position_ids happen on the device
// (Kernels/GQAMath.h). No workspace: the
// kernel keeps one query row per warp in registers.
//
//===----------------------------------------------------------------------===//
#include "../CPU/Kernels/TensorUtil.h"
#include "CUDAContext.h"
#include "CUDAKernels.h"
#include "Kernels/GQAMath.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {

const TensorRef *optIn(const KernelContext &C, unsigned I) {
  return cpu::hasInput(C, I) ? &C.Inputs[I] : nullptr;
}

// A head wider than a warp's registers hold runs on the host.
std::string gqaRefuses(const Node &N, llvm::ArrayRef<TensorRef> In,
                       llvm::ArrayRef<TensorRef> Out) {
  if (!In.empty() && cpu::gqaDims(N, In, Out).D > 32 * gqa::LaneSlots)
    return "GroupQueryAttention with head_size above " +
           std::to_string(32 * gqa::LaneSlots);
  return "";
}

} // namespace

llvm::Error cuda::gqaArgs(const KernelContext &C, gqa::GQAArgs &A, int &Type) {
  cpu::GQAGeometry G;
  if (llvm::Error E = cpu::gqaGeometry(C, G))
    return E;
  switch (C.Inputs[0].Type) {
  case ElementType::Float:
    Type = 0;
    break;
  case ElementType::Float16:
    Type = 1;
    break;
  case ElementType::BFloat16:
    Type = 2;
    break;
  default:
    return C.unsupported("query of type " + elementTypeName(C.Inputs[0].Type));
  }
  if (G.D > 32 * gqa::LaneSlots)
    return C.unsupported("head_size above " + llvm::Twine(32 * gqa::LaneSlots));
  const TensorRef *Pos = optIn(C, 9);
  if (Pos && Pos->Type != ElementType::Int64 && Pos->Type != ElementType::Int32)
    return C.unsupported("position_ids of type " + elementTypeName(Pos->Type));
  A = gqa::GQAArgs();
  A.B = G.B, A.S = G.S, A.Hq = G.Hq, A.Hkv = G.Hkv, A.D = G.D;
  A.Past = G.Past, A.Present = G.Present, A.Packed = G.Packed;
  A.Rotary = C.N.getInt("do_rotary", 0) != 0;
  A.Rot = A.Rotary ? G.Rot : 0;
  A.CosRows = A.Rotary ? C.Inputs[7].Dims[0] : 0;
  A.Q = C.Inputs[0].Data;
  A.K = G.Packed ? nullptr : C.Inputs[1].Data;
  A.V = G.Packed ? nullptr : C.Inputs[2].Data;
  A.PastK = A.Past > 0 ? C.Inputs[3].Data : nullptr;
  A.PastV = A.Past > 0 ? C.Inputs[4].Data : nullptr;
  A.Cos = A.Rotary ? C.Inputs[7].Data : nullptr;
  A.Sin = A.Rotary ? C.Inputs[8].Data : nullptr;
  A.PosIds = Pos ? Pos->Data : nullptr;
  A.PosCount = Pos ? int64_t(Pos->numElements()) : 0;
  A.Pos64 = Pos && Pos->Type == ElementType::Int64;
  A.Seqlens = C.Inputs[5].data<const int32_t>();
  A.Total = C.Inputs[6].data<const int32_t>();
  A.Y = C.Outputs[0].Data;
  A.PresentK = C.Outputs[1].Data;
  A.PresentV = C.Outputs[2].Data;
  A.Interleaved = C.N.getInt("rotary_interleaved", 0) != 0;
  A.Smooth = C.N.getInt("smooth_softmax", 0) != 0;
  A.Window = C.N.getInt("local_window_size", -1);
  A.Scale = float(C.N.getFloat("scale", 0.0));
  if (A.Scale == 0.0f)
    A.Scale = 1.0f / std::sqrt(float(A.D));
  A.Softcap = float(C.N.getFloat("softcap", 0.0));
  return llvm::Error::success();
}

namespace {

llvm::Error runGQA(const KernelContext &C) {
  gqa::GQAArgs A;
  int Type = 0;
  if (llvm::Error E = gqaArgs(C, A, Type))
    return E;
  return launched(
      C,
      gqa::groupQueryAttention(A, Type, context().BadIndex, context().Compute),
      "GroupQueryAttention kernel");
}

} // namespace

void cuda::registerGQAKernels(CUDAKernelTable &T) {
  addKernel(T, "GroupQueryAttention",
            {runGQA,
             nullptr,
             {ElementType::Float, ElementType::Float16, ElementType::BFloat16},
             0,
             gqaRefuses});
}
