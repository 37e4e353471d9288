//===- GroupQueryAttention.cpp - CPU kernel: ONNX Runtime's GQA -----------===//
//
// GroupQueryAttention (com.microsoft), as ONNX Runtime's CPU kernel defines
// it (contrib_ops/cpu/bert/gqa_attention_base.h): batch row b has
// total_b = seqlens_k[b] + 1 tokens, of which the last S are new; its past
// is the first total_b - S rows of the cache (0 on the first prompt, when
// S equals total_sequence_length). The present cache is zeroed, the past's
// rows copied, the new keys (rotated when do_rotary) and values written
// after them. Query i of row b attends causally to keys [0, past + i] (the
// last local_window_size of them when a window is set: ONNX Runtime 1.30;
// its older CPU kernels took one key more), scores scaled,
// soft-capped when softcap > 0, softmax (smooth_softmax: with an extra 1 in
// the denominator), in float whatever the storage type.
//
// Memory: one query row and one row of scores per query head, in the
// step's workspace (num_heads * (head_size + cache length) floats), never
// the [S, T] scores ONNX Runtime's CPU kernel allocates per head: the plan
// of an attention holds what a fused kernel holds.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

/// Whether ref I is given: by its type, since a workspace query's refs
/// carry no data.
static bool given(llvm::ArrayRef<TensorRef> Refs, size_t I) {
  return I < Refs.size() && Refs[I].Type != ElementType::Undefined;
}

GQAGeometry gqaDims(const Node &N, llvm::ArrayRef<TensorRef> In,
                    llvm::ArrayRef<TensorRef> Out) {
  GQAGeometry G;
  G.Hq = N.getInt("num_heads", 1);
  G.Hkv = N.getInt("kv_num_heads", 1);
  G.Packed = !given(In, 1);
  const TensorRef &Q = In[0];
  G.B = Q.Dims.size() == 3 ? Q.Dims[0] : 0;
  G.S = Q.Dims.size() == 3 ? Q.Dims[1] : 0;
  const int64_t Hidden = Q.Dims.size() == 3 ? Q.Dims[2] : 0;
  const int64_t Heads = G.Packed ? G.Hq + 2 * G.Hkv : G.Hq;
  G.D = Heads > 0 ? Hidden / Heads : 0;
  G.Past = given(In, 3) && In[3].Dims.size() == 4 ? In[3].Dims[2] : 0;
  G.Present = Out.size() > 1 && Out[1].Dims.size() == 4 ? Out[1].Dims[2] : 0;
  G.Rot = given(In, 7) && In[7].Dims.size() == 2 ? 2 * In[7].Dims[1] : 0;
  return G;
}

namespace {

uint64_t gqaWorkspace(const Node &N, llvm::ArrayRef<TensorRef> In,
                      llvm::ArrayRef<TensorRef> Out) {
  GQAGeometry G = gqaDims(N, In, Out);
  return uint64_t(G.Hq) * uint64_t(G.D + G.Present) * sizeof(float);
}

template <typename T> struct GQARun {
  const KernelContext &C;
  GQAGeometry G;
  bool FirstPrompt, Rotary, Interleaved, Smooth;
  int64_t Window;
  float Scale, Softcap;
  const int32_t *Seqlens;

  const T *at(size_t I) const { return C.Inputs[I].template data<const T>(); }

  /// Element offset of head H (of Heads per token) of token S of batch row
  /// B in a [B, S, Heads * D] input, or in the packed query.
  int64_t rowOf(int64_t B, int64_t S, int64_t Head, int64_t Slot) const {
    const int64_t Width =
        G.Packed ? (G.Hq + 2 * G.Hkv) * G.D : (Slot == 0 ? G.Hq : G.Hkv) * G.D;
    const int64_t Base = G.Packed ? (Slot == 0   ? 0
                                     : Slot == 1 ? G.Hq * G.D
                                                 : (G.Hq + G.Hkv) * G.D)
                                  : 0;
    return (B * G.S + S) * Width + Base + Head * G.D;
  }

  int64_t pastOf(int64_t B) const {
    return FirstPrompt ? 0 : int64_t(Seqlens[B]) + 1 - G.S;
  }

  int64_t position(int64_t B, int64_t S) const {
    if (C.Inputs.size() > 9 && C.Inputs[9].present()) {
      const TensorRef &P = C.Inputs[9];
      return FirstPrompt ? intAt(P, 0) + S : intAt(P, uint64_t(B * G.S + S));
    }
    return pastOf(B) + S;
  }

  /// Out[0, D) = X rotated to position Pos (the first Rot dims), rounded to
  /// T as ONNX Runtime's rotary output is.
  void rotate(const T *X, int64_t Pos, float *Out) const {
    if (!Rotary) {
      for (int64_t I = 0; I < G.D; ++I)
        Out[I] = load(X[I]);
      return;
    }
    const int64_t Half = G.Rot / 2;
    const TensorRef &Cos = C.Inputs[7], &Sin = C.Inputs[8];
    for (int64_t I = 0; I < G.D; ++I) {
      if (I >= G.Rot) {
        Out[I] = load(X[I]);
        continue;
      }
      int64_t Idx, J;
      float Sign;
      if (Interleaved) {
        Idx = I / 2, Sign = I % 2 == 0 ? -1.0f : 1.0f, J = I ^ 1;
      } else {
        Idx = I % Half, Sign = I < Half ? -1.0f : 1.0f;
        J = (I + Half) % G.Rot;
      }
      const uint64_t CI = uint64_t(Pos * Half + Idx);
      const float Cs = cacheAt(Cos, CI), Sn = cacheAt(Sin, CI);
      Out[I] = load(store<T>(load(X[I]) * Cs + Sign * load(X[J]) * Sn));
    }
  }

  static float cacheAt(const TensorRef &Cache, uint64_t I) {
    return load(Cache.template data<const T>()[I]);
  }

  llvm::Error check() const {
    if (C.Inputs.size() > 9 && C.Inputs[9].present() &&
        C.Inputs[9].numElements() < uint64_t(FirstPrompt ? 1 : G.B * G.S))
      return C.badInput("position_ids has too few values");
    for (int64_t B = 0; B < G.B; ++B) {
      const int64_t Total = int64_t(Seqlens[B]) + 1, Past = pastOf(B);
      if (Past < 0 || Total > G.Present || Past + G.S > G.Present ||
          (!FirstPrompt && Past > G.Past))
        return C.badInput(
            "seqlens_k[" + llvm::Twine(B) + "] = " + llvm::Twine(Seqlens[B]) +
            " does not fit " + llvm::Twine(G.S) + " new tokens in a cache of " +
            llvm::Twine(G.Present) + " (past " + llvm::Twine(G.Past) + ")");
      if (Rotary)
        for (int64_t S = 0; S < G.S; ++S) {
          const int64_t P = position(B, S);
          if (P < 0 || P >= C.Inputs[7].Dims[0])
            return C.badInput("position " + llvm::Twine(P) +
                              " is outside cos_cache's " +
                              llvm::Twine(C.Inputs[7].Dims[0]) + " rows");
        }
    }
    return llvm::Error::success();
  }

  /// The present caches: zeros, the past's rows, then the new keys
  /// (rotated) and values.
  void writePresent(float *Scratch) const {
    T *PK = C.Outputs[1].template data<T>(),
      *PV = C.Outputs[2].template data<T>();
    const uint64_t Cache = uint64_t(G.B * G.Hkv * G.Present * G.D);
    std::fill(PK, PK + Cache, store<T>(0.0f));
    std::fill(PV, PV + Cache, store<T>(0.0f));
    const T *K = G.Packed ? at(0) : at(1), *V = G.Packed ? at(0) : at(2);
    for (int64_t B = 0; B < G.B; ++B)
      for (int64_t H = 0; H < G.Hkv; ++H) {
        const int64_t Past = pastOf(B);
        const int64_t Dst = (B * G.Hkv + H) * G.Present * G.D;
        if (Past > 0) {
          const int64_t Src = (B * G.Hkv + H) * G.Past * G.D;
          std::copy(at(3) + Src, at(3) + Src + Past * G.D, PK + Dst);
          std::copy(at(4) + Src, at(4) + Src + Past * G.D, PV + Dst);
        }
        for (int64_t S = 0; S < G.S; ++S) {
          T *KOut = PK + Dst + (Past + S) * G.D;
          rotate(K + rowOf(B, S, H, 1), position(B, S), Scratch);
          for (int64_t I = 0; I < G.D; ++I)
            KOut[I] = store<T>(Scratch[I]);
          const T *VIn = V + rowOf(B, S, H, 2);
          std::copy(VIn, VIn + G.D, PV + Dst + (Past + S) * G.D);
        }
      }
  }

  /// Output row (B, S) of query head H; Work holds D + Present floats.
  void attend(int64_t B, int64_t S, int64_t H, float *Work) const {
    float *Q = Work, *P = Work + G.D;
    rotate(at(0) + rowOf(B, S, H, 0), position(B, S), Q);
    const int64_t KvHead = H / (G.Hq / G.Hkv);
    const T *K = C.Outputs[1].template data<const T>() +
                 (B * G.Hkv + KvHead) * G.Present * G.D;
    const T *V = C.Outputs[2].template data<const T>() +
                 (B * G.Hkv + KvHead) * G.Present * G.D;
    const int64_t Causal = pastOf(B) + S + 1;
    const int64_t Start = Window > 0 && Causal > Window ? Causal - Window : 0;
    float Max = -INFINITY;
    for (int64_t J = Start; J < Causal; ++J) {
      float Dot = 0;
      for (int64_t I = 0; I < G.D; ++I)
        Dot += Q[I] * load(K[J * G.D + I]);
      float X = Scale * Dot;
      if (Softcap > 0)
        X = Softcap * std::tanh(X / Softcap);
      P[J] = X;
      Max = std::max(Max, X);
    }
    if (Smooth)
      Max = std::max(Max, 0.0f);
    double Sum = Smooth ? std::exp(-double(Max)) : 0.0;
    for (int64_t J = Start; J < Causal; ++J) {
      P[J] = std::exp(P[J] - Max);
      Sum += P[J];
    }
    T *Y =
        C.Outputs[0].template data<T>() + (B * G.S + S) * G.Hq * G.D + H * G.D;
    for (int64_t I = 0; I < G.D; ++I) {
      double Acc = 0;
      for (int64_t J = Start; J < Causal; ++J)
        Acc += double(P[J]) * double(load(V[J * G.D + I]));
      Y[I] = store<T>(float(Acc / Sum));
    }
  }

  llvm::Error run() {
    if (llvm::Error E = check())
      return E;
    float *Work = static_cast<float *>(C.Workspace);
    writePresent(Work);
    for (int64_t B = 0; B < G.B; ++B)
      for (int64_t S = 0; S < G.S; ++S)
        C.Pool.parallelFor(G.Hq, 1, [&](int64_t H0, int64_t H1) {
          for (int64_t H = H0; H < H1; ++H)
            attend(B, S, H, Work + H * (G.D + G.Present));
        });
    return llvm::Error::success();
  }
};

} // namespace

llvm::Error gqaGeometry(const KernelContext &C, GQAGeometry &G) {
  if (C.Outputs.size() < 3 || !C.Outputs[1].present() ||
      !C.Outputs[2].present())
    return C.unsupported("present_key and present_value must be outputs");
  if (C.Inputs.size() < 7 || !C.Inputs[0].present() || !C.Inputs[5].present() ||
      !C.Inputs[6].present())
    return C.badInput("needs query, seqlens_k and total_sequence_length");
  G = gqaDims(C.N, C.Inputs, C.Outputs);
  if (G.Hq <= 0 || G.Hkv <= 0 || G.Hq % G.Hkv != 0)
    return C.badInput("num_heads must be a multiple of kv_num_heads");
  // The shape rule checked what it could; symbolic dims are checked here,
  // so that no index leaves its tensor.
  auto Count = [&](const TensorRef &R) { return int64_t(R.numElements()); };
  const int64_t Tokens = G.B * G.S;
  if (G.D <= 0 || G.Rot > G.D ||
      (!G.Packed && (Count(C.Inputs[1]) != Tokens * G.Hkv * G.D ||
                     Count(C.Inputs[2]) != Tokens * G.Hkv * G.D)) ||
      (G.Past > 0 && (Count(C.Inputs[3]) != G.B * G.Hkv * G.Past * G.D ||
                      Count(C.Inputs[4]) != Count(C.Inputs[3]))) ||
      Count(C.Outputs[0]) != Tokens * G.Hq * G.D ||
      Count(C.Outputs[1]) != G.B * G.Hkv * G.Present * G.D ||
      Count(C.Outputs[2]) != Count(C.Outputs[1]))
    return C.badInput("query, key, value, the caches and the outputs do not "
                      "agree on batch, sequence, heads and head size");
  const TensorRef &Seq = C.Inputs[5], &Total = C.Inputs[6];
  if (Seq.Type != ElementType::Int32 || Total.Type != ElementType::Int32 ||
      int64_t(Seq.numElements()) != G.B || Total.numElements() != 1)
    return C.badInput("seqlens_k must be int32 [batch] and "
                      "total_sequence_length one int32");
  const ElementType T = C.Inputs[0].Type;
  for (size_t I : {1, 2, 3, 4, 7, 8})
    if (I < C.Inputs.size() && C.Inputs[I].present() && C.Inputs[I].Type != T)
      return C.unsupported("inputs of mixed types");
  if (C.N.getInt("do_rotary", 0) != 0 &&
      (C.Inputs.size() < 9 || !C.Inputs[7].present() ||
       !C.Inputs[8].present() || G.Rot <= 0 ||
       C.Inputs[8].numElements() != C.Inputs[7].numElements()))
    return C.badInput("do_rotary needs cos_cache and sin_cache of one shape, "
                      "[positions, at most head_size / 2]");
  return llvm::Error::success();
}

namespace {

llvm::Error runGQA(const KernelContext &C) {
  GQAGeometry G;
  if (llvm::Error E = gqaGeometry(C, G))
    return E;
  if (C.WorkspaceBytes < gqaWorkspace(C.N, C.Inputs, C.Outputs))
    return C.badInput("the plan gave too little workspace");
  const TensorRef &Seq = C.Inputs[5], &Total = C.Inputs[6];
  const ElementType T = C.Inputs[0].Type;
  const int64_t TotalLen = intAt(Total, 0);
  const bool Subsequent = G.S > 1 && G.S != TotalLen;
  if (Subsequent && G.B != 1)
    return C.badInput("batch must be 1 when several new tokens follow a past");
  const bool First = !Subsequent && G.S == TotalLen;
  if (!Subsequent && !First && G.S != 1)
    return C.badInput("sequence length must be 1 after the first prompt");
  const bool Rotary = C.N.getInt("do_rotary", 0) != 0;
  auto Run = [&](auto Tag) -> llvm::Error {
    using E = typename decltype(Tag)::type;
    GQARun<E> R{C,
                G,
                First,
                Rotary,
                C.N.getInt("rotary_interleaved", 0) != 0,
                C.N.getInt("smooth_softmax", 0) != 0,
                C.N.getInt("local_window_size", -1),
                float(C.N.getFloat("scale", 0.0)),
                float(C.N.getFloat("softcap", 0.0)),
                Seq.data<const int32_t>()};
    if (R.Scale == 0.0f)
      R.Scale = 1.0f / std::sqrt(float(G.D));
    return R.run();
  };
  switch (T) {
  case ElementType::Float:
    return Run(TypeTag<float>{});
  case ElementType::Float16:
    return Run(TypeTag<Half>{});
  case ElementType::BFloat16:
    return Run(TypeTag<BFloat16>{});
  default:
    return C.unsupported("query of type " + elementTypeName(T));
  }
}

} // namespace

void registerGroupQueryAttentionKernels(CPUKernelTable &T) {
  addKernel(T, "GroupQueryAttention",
            Kernel{&runGQA,
                   &gqaWorkspace,
                   {ElementType::Float, ElementType::Float16,
                    ElementType::BFloat16}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
