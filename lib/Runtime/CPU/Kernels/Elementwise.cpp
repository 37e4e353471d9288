//===- Elementwise.cpp - broadcasting and small helpers ---------*- C++ -*-===//
//
// The broadcast walker behind every elementwise kernel: the output is split
// into chunks for the thread pool, and each chunk is visited in runs along
// the innermost dim, so that the kernel's inner loop is a plain strided loop
// the compiler vectorizes. Dims are not copied per element: an odometer over
// the outer dims advances each input's offset by its stride.
//
//===----------------------------------------------------------------------===//
#include "Elementwise.h"
#include <algorithm>

namespace oomplan {
namespace runtime {
namespace cpu {

llvm::SmallVector<ElementType, 4> typesOf(unsigned Set) {
  llvm::SmallVector<ElementType, 4> Out;
  if (Set & FloatTypes)
    Out.append({ElementType::Float, ElementType::Double, ElementType::Float16,
                ElementType::BFloat16});
  if (Set & SignedInts)
    Out.append({ElementType::Int8, ElementType::Int16, ElementType::Int32,
                ElementType::Int64});
  if (Set & UnsignedInts)
    Out.append({ElementType::UInt8, ElementType::UInt16, ElementType::UInt32,
                ElementType::UInt64});
  if (Set & BoolType)
    Out.push_back(ElementType::Bool);
  return Out;
}

bool broadcastsTo(llvm::ArrayRef<int64_t> InDims,
                  llvm::ArrayRef<int64_t> OutDims) {
  if (InDims.size() > OutDims.size())
    return false;
  size_t Shift = OutDims.size() - InDims.size();
  for (size_t I = 0; I < InDims.size(); ++I)
    if (InDims[I] != 1 && InDims[I] != OutDims[I + Shift])
      return false;
  return true;
}

llvm::SmallVector<int64_t, 6>
broadcastStrides(llvm::ArrayRef<int64_t> InDims,
                 llvm::ArrayRef<int64_t> OutDims) {
  llvm::SmallVector<int64_t, 6> S(OutDims.size(), 0);
  size_t Shift = OutDims.size() - InDims.size();
  int64_t Stride = 1;
  for (size_t I = InDims.size(); I-- > 0;) {
    S[I + Shift] = InDims[I] == 1 ? 0 : Stride;
    Stride *= InDims[I];
  }
  return S;
}

namespace {
/// Dims and per-input strides after merging adjacent dims that every input
/// walks contiguously (same-shape inputs become one long run).
struct Walk {
  llvm::SmallVector<int64_t, 6> Dims;
  llvm::SmallVector<llvm::SmallVector<int64_t, 6>, 4> Strides;
};

Walk coalesce(llvm::ArrayRef<int64_t> OutDims,
              llvm::ArrayRef<llvm::ArrayRef<int64_t>> InDims) {
  Walk W;
  size_t K = InDims.size();
  llvm::SmallVector<llvm::SmallVector<int64_t, 6>, 4> Full;
  for (llvm::ArrayRef<int64_t> D : InDims)
    Full.push_back(broadcastStrides(D, OutDims));
  W.Strides.resize(K);
  for (size_t I = 0; I < OutDims.size(); ++I) {
    if (OutDims[I] == 1)
      continue; // A size-1 dim moves nothing.
    bool Merge = !W.Dims.empty();
    for (size_t J = 0; J < K && Merge; ++J)
      Merge = W.Strides[J].back() == Full[J][I] * OutDims[I];
    if (Merge) {
      W.Dims.back() *= OutDims[I];
      for (size_t J = 0; J < K; ++J)
        W.Strides[J].back() = Full[J][I];
      continue;
    }
    W.Dims.push_back(OutDims[I]);
    for (size_t J = 0; J < K; ++J)
      W.Strides[J].push_back(Full[J][I]);
  }
  if (W.Dims.empty()) {
    W.Dims.push_back(1);
    for (size_t J = 0; J < K; ++J)
      W.Strides[J].push_back(0);
  }
  return W;
}
} // namespace

void forEachBroadcastRun(llvm::ArrayRef<int64_t> OutDims,
                         llvm::ArrayRef<llvm::ArrayRef<int64_t>> InDims,
                         ThreadPool &Pool,
                         llvm::function_ref<void(const BroadcastRun &)> Fn) {
  int64_t Total = 1;
  for (int64_t D : OutDims)
    Total *= D;
  if (Total == 0)
    return;
  Walk W = coalesce(OutDims, InDims);
  size_t K = InDims.size(), R = W.Dims.size();
  Pool.parallelFor(Total, ElementwiseGrain, [&](int64_t Begin, int64_t End) {
    llvm::SmallVector<int64_t, 6> Idx(R, 0);
    llvm::SmallVector<int64_t, 4> Offs(K, 0), Steps(K, 0);
    // The multi-index of Begin, and each input's offset there.
    int64_t Rem = Begin;
    for (size_t I = R; I-- > 0;) {
      Idx[I] = Rem % W.Dims[I];
      Rem /= W.Dims[I];
      for (size_t J = 0; J < K; ++J)
        Offs[J] += Idx[I] * W.Strides[J][I];
    }
    for (size_t J = 0; J < K; ++J)
      Steps[J] = W.Strides[J][R - 1];
    int64_t Pos = Begin;
    while (Pos < End) {
      int64_t Len = std::min(End - Pos, W.Dims[R - 1] - Idx[R - 1]);
      Fn(BroadcastRun{Pos, Len, Offs.data(), Steps.data()});
      Pos += Len;
      if (Pos >= End)
        break;
      // Advance the odometer by Len along the innermost dim, carrying.
      for (size_t J = 0; J < K; ++J)
        Offs[J] += Len * Steps[J];
      Idx[R - 1] += Len;
      for (size_t I = R; I-- > 1 && Idx[I] == W.Dims[I];) {
        for (size_t J = 0; J < K; ++J)
          Offs[J] += W.Strides[J][I - 1] - Idx[I] * W.Strides[J][I];
        Idx[I] = 0;
        ++Idx[I - 1];
      }
    }
  });
}

void copyUnlessAliased(const TensorRef &In, const TensorRef &Out) {
  if (In.Data == Out.Data || !Out.present())
    return;
  std::memmove(Out.Data, In.Data, std::min(In.bytes(), Out.bytes()));
}

bool readInt(const TensorRef &T, uint64_t I, int64_t &Out) {
  return dispatchType<IntTypes | BoolType>(T.Type, [&](auto Tag) {
    using C = typename decltype(Tag)::type;
    Out = int64_t(T.data<C>()[I]);
  });
}

bool readDouble(const TensorRef &T, uint64_t I, double &Out) {
  return dispatchType<AllTypes>(T.Type, [&](auto Tag) {
    using C = typename decltype(Tag)::type;
    Out = double(load(T.data<C>()[I]));
  });
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
