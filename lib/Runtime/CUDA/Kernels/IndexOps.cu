//===- IndexOps.cu - ArgMax/ArgMin, CumSum, Trilu and TopK ----------------===//
//
// Ops whose result at an element depends on its index along an axis. The
// first two walk one line of [Outer, Len, Inner] per thread, in order, as
// the CPU kernels do (AxisOps.cpp), so ties and NaN resolve the same way
// and a running sum rounds the same way; these lines are short in the
// models that use them (a vocabulary, a sequence), so a thread per line is
// enough. Trilu is a masked copy over the last two dims. TopK takes one
// block per line and picks its k elements one at a time, each the first
// after the previous one in the CPU kernel's order (value, then index), by
// a block-wide reduction: no scratch, so no workspace to plan.
//
//===----------------------------------------------------------------------===//
#include "BlockReduce.cuh"
#include "Launching.cuh"
#include "ThreadMath.h"
#include <cstdint>
#include <cstring>
#include <cuda_runtime.h>
#include <type_traits>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
template <typename T> __device__ bool isNaN(T V) {
  if constexpr (std::is_floating_point<T>::value)
    return V != V;
  else
    return false;
}

// numpy's argmax/argmin: a NaN wins over every number, and the first NaN
// wins unless Last asks for the last (the CPU kernel's rules).
template <typename T>
__global__ void argKernel(const T *X, int64_t *Y, int64_t Outer, int64_t Len,
                          int64_t Inner, bool IsMax, bool Last) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       I < Outer * Inner; I += int64_t(gridDim.x) * blockDim.x) {
    const T *L = X + (I / Inner) * Len * Inner + I % Inner;
    T Best = L[0];
    int64_t BestK = 0;
    for (int64_t K = 1; K < Len; ++K) {
      T V = L[K * Inner];
      bool Take;
      if (isNaN(Best))
        Take = Last && isNaN(V);
      else if (isNaN(V))
        Take = true;
      else
        Take = IsMax ? (Last ? V >= Best : V > Best)
                     : (Last ? V <= Best : V < Best);
      if (Take) {
        Best = V;
        BestK = K;
      }
    }
    Y[I] = BestK;
  }
}

template <typename T>
__global__ void cumSumKernel(const T *X, T *Y, int64_t Outer, int64_t Len,
                             int64_t Inner, bool Exclusive, bool Reverse) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       I < Outer * Inner; I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t Base = (I / Inner) * Len * Inner + I % Inner;
    T Acc = T(0);
    for (int64_t J = 0; J < Len; ++J) {
      const int64_t Off = Base + (Reverse ? Len - 1 - J : J) * Inner;
      T V = X[Off]; // read first: Y may alias X
      if (Exclusive) {
        Y[Off] = Acc;
        Acc = T(Acc + V);
      } else {
        Acc = T(Acc + V);
        Y[Off] = Acc;
      }
    }
  }
}

// Upper keeps columns j >= r + K, lower keeps j <= r + K; the rest is 0.
template <typename T>
__global__ void triluKernel(const T *X, T *Y, int64_t N, int64_t Rows,
                            int64_t Cols, int64_t K, bool Upper) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t J = I % Cols, R = (I / Cols) % Rows;
    const bool Keep = Upper ? J >= R + K : J <= R + K;
    Y[I] = Keep ? X[I] : T(0);
  }
}

template <typename T>
__global__ void eyeLikeKernel(T *Y, int64_t N, int64_t Cols, int64_t K, T One) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x)
    Y[I] = I % Cols - I / Cols == K ? One : T(0);
}

template <typename V>
__global__ void reverseSequenceKernel(const V *X, V *Y, const int64_t *Len,
                                      int64_t N, int64_t T, int64_t B,
                                      int64_t Inner, bool TimeMajor,
                                      int *BadIndex) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    Y[I] = X[thread::reversedSource(I, Len, T, B, Inner, TimeMajor, BadIndex)];
  }
}

// The CPU kernel's order (TopK.cpp): larger (smaller) values first, NaN
// after every number, equal values and NaNs by index: a total order, so
// every pick finds a candidate while k <= the line's length. Combining keeps
// the earlier of two candidates; -1 is none.
template <typename T> struct TopKOrder {
  const T *Src;
  int64_t Inner;
  bool Largest;
  __device__ bool before(long long A, long long B) const {
    T VA = Src[A * Inner], VB = Src[B * Inner];
    const bool NA = VA != VA, NB = VB != VB; // NaN after every number
    if (NA || NB)
      return NA == NB ? A < B : NB;
    if (VA != VB)
      return Largest ? VA > VB : VA < VB;
    return A < B;
  }
  __device__ long long operator()(long long A, long long B) const {
    if (A < 0)
      return B;
    if (B < 0)
      return A;
    return before(B, A) ? B : A;
  }
};

template <typename T>
__global__ void topKKernel(const T *X, T *Vals, int64_t *Idx, int64_t Lines,
                           int64_t Len, int64_t Inner, int64_t K,
                           bool Largest) {
  __shared__ long long Shared[32];
  for (int64_t L = blockIdx.x; L < Lines; L += gridDim.x) {
    const int64_t O = L / Inner, I = L % Inner;
    const TopKOrder<T> Ord{X + O * Len * Inner + I, Inner, Largest};
    long long Prev = -1;
    for (int64_t J = 0; J < K; ++J) {
      long long Best = -1;
      for (long long C = threadIdx.x; C < Len; C += blockDim.x)
        if (Prev < 0 || Ord.before(Prev, C))
          Best = Ord(Best, C);
      Best = blockCombine<long long>(Best, Shared, -1LL, Ord);
      if (Best < 0) // cannot happen with k <= Len; never read before data
        break;
      if (threadIdx.x == 0) {
        const int64_t At = (O * K + J) * Inner + I;
        if (Vals)
          Vals[At] = Ord.Src[Best * Inner];
        if (Idx)
          Idx[At] = Best;
      }
      Prev = Best;
    }
  }
}

} // namespace

int argReduce(bool IsMax, bool Last, DType T, const void *In, int64_t *Out,
              int64_t Outer, int64_t Len, int64_t Inner, cudaStream_t Stream) {
  if (Outer * Inner == 0)
    return 0;
  return byNumberType(T, [&](auto Z) {
    using V = decltype(Z);
    argKernel<V><<<gridFor(Outer * Inner), Block, 0, Stream>>>(
        static_cast<const V *>(In), Out, Outer, Len, Inner, IsMax, Last);
    return lastError();
  });
}

int cumSum(DType T, const void *In, void *Out, int64_t Outer, int64_t Len,
           int64_t Inner, bool Exclusive, bool Reverse, cudaStream_t Stream) {
  if (Outer * Inner == 0 || Len == 0)
    return 0;
  return byNumberType(T, [&](auto Z) {
    using V = decltype(Z);
    cumSumKernel<V><<<gridFor(Outer * Inner), Block, 0, Stream>>>(
        static_cast<const V *>(In), static_cast<V *>(Out), Outer, Len, Inner,
        Exclusive, Reverse);
    return lastError();
  });
}

int topK(DType T, const void *In, void *Values, int64_t *Indices, int64_t Outer,
         int64_t Len, int64_t Inner, int64_t K, bool Largest,
         cudaStream_t Stream) {
  const int64_t Lines = Outer * Inner;
  if (Lines == 0 || K == 0)
    return 0;
  const int G = int(Lines < 65535 * 8 ? Lines : 65535 * 8);
  return byNumberType(T, [&](auto Z) {
    using V = decltype(Z);
    topKKernel<V><<<G, Block, 0, Stream>>>(static_cast<const V *>(In),
                                           static_cast<V *>(Values), Indices,
                                           Lines, Len, Inner, K, Largest);
    return lastError();
  });
}

int trilu(const void *In, void *Out, int ElemBytes, int64_t N, int64_t Rows,
          int64_t Cols, int64_t K, bool Upper, cudaStream_t Stream) {
  if (N == 0 || Rows == 0 || Cols == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using V = decltype(Z);
    triluKernel<V><<<gridFor(N), Block, 0, Stream>>>(static_cast<const V *>(In),
                                                     static_cast<V *>(Out), N,
                                                     Rows, Cols, K, Upper);
    return lastError();
  });
}

int reverseSequence(const void *X, void *Y, const int64_t *Len, int ElemBytes,
                    int64_t T, int64_t B, int64_t Inner, bool TimeMajor,
                    int *BadIndex, cudaStream_t Stream) {
  const int64_t N = T * B * Inner;
  if (N == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using V = decltype(Z);
    reverseSequenceKernel<V><<<gridFor(N), Block, 0, Stream>>>(
        static_cast<const V *>(X), static_cast<V *>(Y), Len, N, T, B, Inner,
        TimeMajor, BadIndex);
    return lastError();
  });
}

int eyeLike(void *Out, int ElemBytes, int64_t Rows, int64_t Cols, int64_t K,
            uint64_t One, cudaStream_t Stream) {
  const int64_t N = Rows * Cols;
  if (N == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using V = decltype(Z);
    V Bits;
    memcpy(&Bits, &One, sizeof(V)); // the low bytes: little-endian
    eyeLikeKernel<V><<<gridFor(N), Block, 0, Stream>>>(static_cast<V *>(Out), N,
                                                       Cols, K, Bits);
    return lastError();
  });
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
