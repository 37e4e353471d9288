//===- GQAKernels.cpp - GroupQueryAttention on CUDA -----------------------===//
//
// ONNX Runtime's GroupQueryAttention (the GenAI model builder's attention),
// which ran as a host step: every layer of every token copied the whole
// past cache to the host and the present back. The static checks are the
// CPU kernel's; those that read seqlens_k, total_sequence_length or
// position_ids happen on the device (Kernels/GQAMath.h). No workspace: the
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

int64_t headSize(const Node &N, llvm::ArrayRef<TensorRef> In) {
  const int64_t Hq = N.getInt("num_heads", 1),
                Hkv = N.getInt("kv_num_heads", 1);
  const bool Packed = In.size() < 2 || In[1].Type == ElementType::Undefined;
  if (In.empty() || In[0].Dims.size() != 3)
    return 0;
  const int64_t Heads = Packed ? Hq + 2 * Hkv : Hq;
  return Heads > 0 ? In[0].Dims[2] / Heads : 0;
}

// A head wider than a warp's registers hold runs on the host.
std::string gqaRefuses(const Node &N, llvm::ArrayRef<TensorRef> In,
                       llvm::ArrayRef<TensorRef>) {
  if (headSize(N, In) > 32 * gqa::LaneSlots)
    return "GroupQueryAttention with head_size above " +
           std::to_string(32 * gqa::LaneSlots);
  return "";
}

} // namespace

llvm::Error cuda::gqaArgs(const KernelContext &C, gqa::GQAArgs &A, int &Type) {
  if (C.Outputs.size() < 3 || !C.Outputs[1].present() ||
      !C.Outputs[2].present())
    return C.unsupported("present_key and present_value must be outputs");
  if (C.Inputs.size() < 7)
    return C.badInput("missing inputs");
  const TensorRef &Q = C.Inputs[0], &Seq = C.Inputs[5], &Total = C.Inputs[6];
  const TensorRef *K = optIn(C, 1), *V = optIn(C, 2), *PK = optIn(C, 3),
                  *PV = optIn(C, 4), *Cos = optIn(C, 7), *Sin = optIn(C, 8),
                  *Pos = optIn(C, 9);
  const ElementType T = Q.Type;
  switch (T) {
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
    return C.unsupported("query of type " + elementTypeName(T));
  }
  for (const TensorRef *R : {K, V, PK, PV, Cos, Sin})
    if (R && R->Type != T)
      return C.unsupported("inputs of mixed types");
  A = gqa::GQAArgs();
  A.Hq = C.N.getInt("num_heads", 1);
  A.Hkv = C.N.getInt("kv_num_heads", 1);
  A.Packed = !K;
  if (Q.Dims.size() != 3 || A.Hq <= 0 || A.Hkv <= 0 || A.Hq % A.Hkv)
    return C.badInput("query must be [batch, sequence, hidden] and "
                      "num_heads a multiple of kv_num_heads");
  A.B = Q.Dims[0];
  A.S = Q.Dims[1];
  A.D = headSize(C.N, C.Inputs);
  A.Past = PK && PK->Dims.size() == 4 ? PK->Dims[2] : 0;
  A.Present = C.Outputs[1].Dims.size() == 4 ? C.Outputs[1].Dims[2] : 0;
  A.Rotary = C.N.getInt("do_rotary", 0) != 0;
  A.Rot = A.Rotary && Cos && Cos->Dims.size() == 2 ? 2 * Cos->Dims[1] : 0;
  A.CosRows = A.Rot ? Cos->Dims[0] : 0;
  // The shape rule checked what it could; symbolic dims are checked here,
  // so that no index on the device leaves its tensor.
  auto Count = [](const TensorRef *R) {
    return R ? int64_t(R->numElements()) : 0;
  };
  const int64_t Tokens = A.B * A.S;
  if (A.D <= 0 || A.D > 32 * gqa::LaneSlots || A.Rot > A.D ||
      (!A.Packed && (Count(K) != Tokens * A.Hkv * A.D ||
                     Count(V) != Tokens * A.Hkv * A.D)) ||
      (A.Past > 0 &&
       (Count(PK) != A.B * A.Hkv * A.Past * A.D || Count(PV) != Count(PK))) ||
      Count(&C.Outputs[0]) != Tokens * A.Hq * A.D ||
      Count(&C.Outputs[1]) != A.B * A.Hkv * A.Present * A.D ||
      Count(&C.Outputs[2]) != Count(&C.Outputs[1]))
    return C.badInput("query, key, value, the caches and the outputs do not "
                      "agree on batch, sequence, heads and head size");
  if (Seq.Type != ElementType::Int32 || Total.Type != ElementType::Int32 ||
      int64_t(Seq.numElements()) != A.B || Total.numElements() != 1)
    return C.badInput("seqlens_k must be int32 [batch] and "
                      "total_sequence_length one int32");
  if (A.Rotary &&
      (!Cos || !Sin || A.Rot <= 0 || Sin->numElements() != Cos->numElements()))
    return C.badInput("do_rotary needs cos_cache and sin_cache of one shape, "
                      "[positions, at most head_size / 2]");
  if (Pos && Pos->Type != ElementType::Int64 && Pos->Type != ElementType::Int32)
    return C.unsupported("position_ids of type " + elementTypeName(Pos->Type));
  A.Q = Q.Data;
  A.K = K ? K->Data : nullptr;
  A.V = V ? V->Data : nullptr;
  A.PastK = A.Past > 0 ? PK->Data : nullptr;
  A.PastV = A.Past > 0 ? PV->Data : nullptr;
  A.Cos = A.Rotary ? Cos->Data : nullptr;
  A.Sin = A.Rotary ? Sin->Data : nullptr;
  A.PosIds = Pos ? Pos->Data : nullptr;
  A.PosCount = Count(Pos);
  A.Pos64 = Pos && Pos->Type == ElementType::Int64;
  A.Seqlens = Seq.data<const int32_t>();
  A.Total = Total.data<const int32_t>();
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
