//===- Scatter.cu - element and ND gathers and scatters, OneHot -----------===//
//
// One thread per index (GatherElements, ScatterElements) or per updated or
// gathered element (ScatterND, GatherND, OneHot). An index is normalized as the
// CPU kernels do (negative counts from the end); one out of range is skipped
// and raises the device flag (*BadIndex), which the executor turns into an
// error after the run, as Gather's. Reductions use atomics: add's sum is
// exact up to the order of its terms, max and min exact. Without a reduction,
// duplicate indices leave one of their updates, unspecified which (ONNX leaves
// that case undefined; the CPU kernel keeps the last).
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include <cstdint>
#include <cuda_runtime.h>
#include <type_traits>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
__device__ inline int64_t indexAt(const void *Index, bool Index64, int64_t I) {
  return Index64 ? static_cast<const int64_t *>(Index)[I]
                 : int64_t(static_cast<const int32_t *>(Index)[I]);
}

// In range after normalization: writes the index to V.
__device__ inline bool fixIndex(int64_t &V, int64_t Dim) {
  if (V < 0)
    V += Dim;
  return V >= 0 && V < Dim;
}

// The element of data that index element I names (ElementsArgs), or -1.
__device__ int64_t elementOffset(const ElementsArgs &A, const void *Index,
                                 bool Index64, int64_t I) {
  int64_t V = indexAt(Index, Index64, I);
  if (!fixIndex(V, A.AxisDim))
    return -1;
  int64_t Off = 0, Rem = I;
  for (int D = A.Rank - 1; D >= 0; --D) {
    const int64_t C = Rem % A.IdxDims[D];
    Rem /= A.IdxDims[D];
    Off += (D == A.Axis ? V : C) * A.DataStride[D];
  }
  return Off;
}

template <typename T>
__global__ void gatherElementsKernel(ElementsArgs A, const T *Data,
                                     const void *Index, bool Index64, T *Out,
                                     int64_t N, int *Bad) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t Off = elementOffset(A, Index, Index64, I);
    if (Off < 0) {
      *Bad = 1;
      Out[I] = T(0);
    } else {
      Out[I] = Data[Off];
    }
  }
}

template <typename T> __device__ void addTo(T *Dst, T V) {
  if constexpr (sizeof(T) == 8 && !std::is_floating_point<T>::value)
    atomicAdd(reinterpret_cast<unsigned long long *>(Dst),
              static_cast<unsigned long long>(V));
  else
    atomicAdd(Dst, V);
}

// Max (Max true) or min of *Dst and V, atomically: the CPU's std::max(Dst,
// V) (V when Dst < V) and std::min; exact in any order, as both are.
// Integers through atomicMax/atomicMin, floats through a compare-and-swap
// of their bits.
template <bool Max, typename T> __device__ void extremeTo(T *Dst, T V) {
  if constexpr (std::is_same<T, int32_t>::value) {
    Max ? atomicMax(Dst, V) : atomicMin(Dst, V);
  } else if constexpr (std::is_same<T, int64_t>::value) {
    auto *P = reinterpret_cast<long long *>(Dst);
    Max ? atomicMax(P, (long long)V) : atomicMin(P, (long long)V);
  } else {
    using Bits = typename std::conditional<sizeof(T) == 4, unsigned int,
                                           unsigned long long>::type;
    Bits *P = reinterpret_cast<Bits *>(Dst);
    Bits Old = *P, Seen;
    do {
      Seen = Old;
      T Cur;
      memcpy(&Cur, &Seen, sizeof(T));
      const T New = Max ? (Cur < V ? V : Cur) : (V < Cur ? V : Cur);
      Bits NewBits;
      memcpy(&NewBits, &New, sizeof(T));
      if (NewBits == Seen)
        return;
      Old = atomicCAS(P, Seen, NewBits);
    } while (Old != Seen);
  }
}

// Reduction codes: 0 none, 1 add, 3 max, 4 min (the CPU kernel's, which
// has 2 for mul, refused on the device).
template <int Op, typename T> __device__ void reduceTo(T *Dst, T V) {
  if constexpr (Op == 1)
    addTo(Dst, V);
  else if constexpr (Op == 3)
    extremeTo<true>(Dst, V);
  else if constexpr (Op == 4)
    extremeTo<false>(Dst, V);
  else
    *Dst = V;
}

template <typename T, int Op>
__global__ void scatterElementsKernel(ElementsArgs A, T *Out, const void *Index,
                                      bool Index64, const T *Upd, int64_t N,
                                      int *Bad) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t Off = elementOffset(A, Index, Index64, I);
    if (Off < 0)
      *Bad = 1;
    else
      reduceTo<Op>(Out + Off, Upd[I]);
  }
}

template <typename T, int Op>
__global__ void scatterNDKernel(NDArgs A, T *Out, const int64_t *Index,
                                const T *Upd, int64_t N, int *Bad) {
  for (int64_t E = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; E < N;
       E += int64_t(gridDim.x) * blockDim.x) {
    const int64_t T0 = E / A.Slice;
    int64_t Off = E % A.Slice;
    bool Ok = true;
    for (int J = 0; J < A.K; ++J) {
      int64_t V = Index[T0 * A.K + J];
      Ok = Ok && fixIndex(V, A.Dims[J]);
      Off += V * A.Stride[J];
    }
    if (!Ok)
      *Bad = 1;
    else
      reduceTo<Op>(Out + Off, Upd[E]);
  }
}

template <typename T>
__global__ void gatherNDKernel(NDArgs A, const T *Data, const int64_t *Index,
                               T *Out, int64_t N, int *Bad) {
  for (int64_t E = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; E < N;
       E += int64_t(gridDim.x) * blockDim.x) {
    const int64_t T0 = E / A.Slice;
    int64_t Off = E % A.Slice + (A.Tuples ? T0 / A.Tuples * A.DataBatch : 0);
    bool Ok = true;
    for (int J = 0; J < A.K; ++J) {
      int64_t V = Index[T0 * A.K + J];
      Ok = Ok && fixIndex(V, A.Dims[J]);
      Off += V * A.Stride[J];
    }
    if (!Ok) {
      *Bad = 1;
      Out[E] = T(0);
    } else {
      Out[E] = Data[Off];
    }
  }
}

template <typename I, typename T>
__global__ void oneHotKernel(const I *Index, const T *OnOff, T *Out,
                             int64_t Depth, int64_t Inner, int64_t N) {
  for (int64_t E = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; E < N;
       E += int64_t(gridDim.x) * blockDim.x) {
    const int64_t In = E % Inner, D = E / Inner % Depth,
                  O = E / (Inner * Depth);
    int64_t V = static_cast<int64_t>(Index[O * Inner + In]);
    if (V < 0)
      V += Depth;
    Out[E] = OnOff[V == D ? 1 : 0];
  }
}

} // namespace

int gatherND(const NDArgs &A, const void *Data, const int64_t *Index, void *Out,
             int ElemBytes, int64_t N, int *BadIndex, cudaStream_t Stream) {
  if (N == 0 || A.Slice == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using V = decltype(Z);
    gatherNDKernel<V><<<gridFor(N), Block, 0, Stream>>>(
        A, static_cast<const V *>(Data), Index, static_cast<V *>(Out), N,
        BadIndex);
    return lastError();
  });
}

int oneHot(DType IndexType, const void *Index, const void *OnOff, void *Out,
           int ElemBytes, int64_t Outer, int64_t Depth, int64_t Inner,
           cudaStream_t Stream) {
  const int64_t N = Outer * Depth * Inner;
  if (N == 0)
    return 0;
  return byNumberType(IndexType, [&](auto IZ) {
    using I = decltype(IZ);
    return byWidth(ElemBytes, [&](auto Z) {
      using V = decltype(Z);
      oneHotKernel<I, V><<<gridFor(N), Block, 0, Stream>>>(
          static_cast<const I *>(Index), static_cast<const V *>(OnOff),
          static_cast<V *>(Out), Depth, Inner, N);
      return lastError();
    });
  });
}

int gatherElements(const ElementsArgs &A, const void *Data, const void *Index,
                   bool Index64, void *Out, int ElemBytes, int64_t N,
                   int *BadIndex, cudaStream_t Stream) {
  if (N == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using V = decltype(Z);
    gatherElementsKernel<V><<<gridFor(N), Block, 0, Stream>>>(
        A, static_cast<const V *>(Data), Index, Index64, static_cast<V *>(Out),
        N, BadIndex);
    return lastError();
  });
}

namespace {
// Fn(the reduction code as a constant, a value of T) for a reduction on
// F32, F64, I32 or I64; Fn(0, an unsigned integer of ElemBytes) without.
template <typename F>
int byReduction(int Reduce, DType T, int ElemBytes, F &&Fn) {
  auto Typed = [&](auto OpTag) {
    return byNumberType(T, [&](auto Z) { return Fn(OpTag, Z); });
  };
  switch (Reduce) {
  case 0:
    return byWidth(ElemBytes, [&](auto Z) {
      return Fn(std::integral_constant<int, 0>(), Z);
    });
  case 1:
    return Typed(std::integral_constant<int, 1>());
  case 3:
    return Typed(std::integral_constant<int, 3>());
  case 4:
    return Typed(std::integral_constant<int, 4>());
  }
  return int(cudaErrorInvalidValue);
}
} // namespace

int scatterElements(const ElementsArgs &A, void *Out, const void *Index,
                    bool Index64, const void *Updates, int Reduce, DType T,
                    int ElemBytes, int64_t N, int *BadIndex,
                    cudaStream_t Stream) {
  if (N == 0)
    return 0;
  return byReduction(Reduce, T, ElemBytes, [&](auto OpTag, auto Z) {
    using V = decltype(Z);
    scatterElementsKernel<V, decltype(OpTag)::value>
        <<<gridFor(N), Block, 0, Stream>>>(
            A, static_cast<V *>(Out), Index, Index64,
            static_cast<const V *>(Updates), N, BadIndex);
    return lastError();
  });
}

int scatterND(const NDArgs &A, void *Out, const int64_t *Index,
              const void *Updates, int Reduce, DType T, int ElemBytes,
              int64_t N, int *BadIndex, cudaStream_t Stream) {
  if (N == 0 || A.Slice == 0)
    return 0;
  return byReduction(Reduce, T, ElemBytes, [&](auto OpTag, auto Z) {
    using V = decltype(Z);
    scatterNDKernel<V, decltype(OpTag)::value>
        <<<gridFor(N), Block, 0, Stream>>>(A, static_cast<V *>(Out), Index,
                                           static_cast<const V *>(Updates), N,
                                           BadIndex);
    return lastError();
  });
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
