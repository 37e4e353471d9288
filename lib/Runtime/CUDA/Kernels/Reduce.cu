//===- Reduce.cu - row reductions: softmax, norms, reduce, gather ---------===//
//
// A row of a [Outer, Axis, Inner] tensor with Inner = 1 is contiguous: one
// block per row, a block-wide tree reduction in shared memory (softmax in
// float; sums and LayerNormalization's statistics in double, as the CPU
// accumulates them). With Inner > 1 each thread walks its own strided row.
//
//===----------------------------------------------------------------------===//
#include "BlockReduce.cuh"
#include "Launching.cuh"
#include "ThreadMath.h"
#include <cfloat>
#include <cuda_runtime.h>
#include <math_constants.h>
#include <type_traits>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
__global__ void softmaxRows(const float *In, float *Out, int64_t Cols,
                            bool Log) {
  __shared__ float Shared[32];
  const float *X = In + blockIdx.x * Cols;
  float *Y = Out + blockIdx.x * Cols;
  float M = -FLT_MAX;
  for (int64_t C = threadIdx.x; C < Cols; C += blockDim.x)
    M = fmaxf(M, X[C]);
  M = blockReduce<true>(M, Shared);
  float S = 0;
  for (int64_t C = threadIdx.x; C < Cols; C += blockDim.x)
    S += expf(X[C] - M);
  S = blockReduce<false>(S, Shared);
  float LogS = logf(S);
  for (int64_t C = threadIdx.x; C < Cols; C += blockDim.x)
    Y[C] = Log ? X[C] - M - LogS : expf(X[C] - M) / S;
}

__global__ void softmaxStrided(const float *In, float *Out, int64_t Outer,
                               int64_t Axis, int64_t Inner, bool Log) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       I < Outer * Inner; I += int64_t(gridDim.x) * blockDim.x) {
    const float *X = In + (I / Inner) * Axis * Inner + I % Inner;
    float *Y = Out + (I / Inner) * Axis * Inner + I % Inner;
    float M = -FLT_MAX, S = 0;
    for (int64_t A = 0; A < Axis; ++A)
      M = fmaxf(M, X[A * Inner]);
    for (int64_t A = 0; A < Axis; ++A)
      S += expf(X[A * Inner] - M);
    for (int64_t A = 0; A < Axis; ++A)
      Y[A * Inner] =
          Log ? X[A * Inner] - M - logf(S) : expf(X[A * Inner] - M) / S;
  }
}

// Two passes over the row (mean, then the centred variance), in double as
// the CPU kernel: one-pass E[x^2] - E[x]^2 cancels badly, and a float mean
// is off by enough to show after the division by a small deviation.
// ScaleStep, BiasStep: 1 for one value per column, 0 for one value in all
// (the CPU kernel's two forms of Scale and B). An empty row (Cols 0) has
// mean 0 and 1/sqrt(Eps), as on the CPU. PerRow > 0 (InstanceNormalization,
// GroupNormalization): the parameters are per row instead, index row %
// PerRow; with Plane > 0 (GroupNormalization per channel) the row holds
// PerGroup channels of Plane columns each, index (row % PerRow) * PerGroup
// + column / Plane.
__global__ void layerNormRows(const float *X, const float *Scale,
                              const float *Bias, float *Y, float *Mean,
                              float *InvStd, int64_t Cols, float Eps,
                              int ScaleStep, int BiasStep, int64_t PerRow,
                              int64_t PerGroup = 0, int64_t Plane = 0) {
  __shared__ double Shared[32];
  const float *R = X + blockIdx.x * Cols;
  float *W = Y + blockIdx.x * Cols;
  double S = 0;
  for (int64_t C = threadIdx.x; C < Cols; C += blockDim.x)
    S += R[C];
  double Mu = Cols ? blockSumDouble(S, Shared) / double(Cols) : 0.0;
  double V = 0;
  for (int64_t C = threadIdx.x; C < Cols; C += blockDim.x) {
    double D = double(R[C]) - Mu;
    V += D * D;
  }
  double Var = Cols ? blockSumDouble(V, Shared) / double(Cols) : 0.0;
  double Inv = 1.0 / sqrt(Var + double(Eps));
  const int64_t P = PerRow ? int64_t(blockIdx.x) % PerRow : 0;
  for (int64_t C = threadIdx.x; C < Cols; C += blockDim.x) {
    const int64_t At = !PerRow ? C : Plane ? P * PerGroup + C / Plane : P;
    W[C] = float((double(R[C]) - Mu) * Inv * double(Scale[At * ScaleStep]) +
                 (Bias ? double(Bias[At * BiasStep]) : 0.0));
  }
  if (threadIdx.x == 0) {
    if (Mean)
      Mean[blockIdx.x] = float(Mu);
    if (InvStd)
      InvStd[blockIdx.x] = float(Inv);
  }
}

// The accumulator of a reduction of T, as the CPU kernel's: double for the
// floating types, int64 for the integers (a product or sum wraps as the
// CPU's does).
template <typename T> struct AccOf { using type = double; };
template <> struct AccOf<int32_t> { using type = int64_t; };
template <> struct AccOf<int64_t> { using type = int64_t; };

// -inf and +inf as the CPU kernel: an all -inf row (or an empty axis) is
// -inf, not -FLT_MAX; the integers' extremes for an integer accumulator.
template <typename A> __device__ A reduceInit(ReduceOp Op) {
  switch (Op) {
  case ReduceOp::Max:
    if constexpr (std::is_integral<A>::value)
      return A(INT64_MIN);
    else
      return A(-CUDART_INF);
  case ReduceOp::Min:
    if constexpr (std::is_integral<A>::value)
      return A(INT64_MAX);
    else
      return A(CUDART_INF);
  case ReduceOp::Prod:
    return A(1);
  default:
    return A(0);
  }
}

// One value into a reduction's accumulator, so that a long axis loses
// nothing (double for floats).
template <typename A> __device__ A reduceStep(ReduceOp Op, A Acc, A V) {
  switch (Op) {
  case ReduceOp::Max: // NaN propagates (the CPU's; fmax would drop it)
    return (V != V || V > Acc) ? V : Acc;
  case ReduceOp::Min:
    return (V != V || V < Acc) ? V : Acc;
  case ReduceOp::Prod:
    return Acc * V;
  case ReduceOp::SumSquare:
  case ReduceOp::L2:
    return Acc + V * V;
  case ReduceOp::L1:
    return Acc + (V < A(0) ? A(0) - V : V);
  case ReduceOp::LogSumExp: // as the CPU: no shift by the max, in double
    return Acc + A(exp(double(V)));
  default:
    return Acc + V;
  }
}

// The reduction of Count values from its accumulator, as T. An integer
// mean divides (truncating) and is 0 over no values, as the CPU's.
template <typename T, typename A>
__device__ T reduceEnd(ReduceOp Op, A Acc, int64_t Count) {
  if (Op == ReduceOp::Mean) {
    if constexpr (std::is_integral<A>::value)
      return Count ? T(Acc / A(Count)) : T(0);
    else
      return T(Acc / A(Count));
  }
  if (Op == ReduceOp::L2)
    return T(A(sqrt(double(Acc))));
  if (Op == ReduceOp::LogSumExp || Op == ReduceOp::LogSum)
    return T(A(log(double(Acc))));
  return T(Acc);
}

template <typename T>
__global__ void reduceStrided(ReduceOp Op, const T *In, T *Out, int64_t Outer,
                              int64_t Axis, int64_t Inner) {
  using A = typename AccOf<T>::type;
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       I < Outer * Inner; I += int64_t(gridDim.x) * blockDim.x) {
    const T *X = In + (I / Inner) * Axis * Inner + I % Inner;
    // A serial walk per thread.
    A Acc = reduceInit<A>(Op);
    for (int64_t K = 0; K < Axis; ++K)
      Acc = reduceStep<A>(Op, Acc, A(X[K * Inner]));
    Out[I] = reduceEnd<T, A>(Op, Acc, Axis);
  }
}

// Reduced axes apart from each other: a thread per output walks every
// reduced position, both decomposed in row-major order over their axes.
template <typename T>
__global__ void reduceScattered(ReduceOp Op, const T *In, T *Out,
                                ReduceAxes Ax) {
  using A = typename AccOf<T>::type;
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       I < Ax.Outputs; I += int64_t(gridDim.x) * blockDim.x) {
    const int64_t Base = thread::keptOffset(Ax, I);
    A Acc = reduceInit<A>(Op);
    for (int64_t R = 0; R < Ax.Reduced; ++R)
      Acc = reduceStep<A>(Op, Acc, A(In[Base + thread::reducedOffset(Ax, R)]));
    Out[I] = reduceEnd<T, A>(Op, Acc, Ax.Reduced);
  }
}

// Inner == 1 and a sum or mean: one block per row.
// Accumulated in double, as the CPU kernel and reduceStrided.
__global__ void sumRows(const float *In, float *Out, int64_t Cols, bool Mean) {
  __shared__ double Shared[32];
  const float *R = In + blockIdx.x * Cols;
  double S = 0;
  for (int64_t C = threadIdx.x; C < Cols; C += blockDim.x)
    S += R[C];
  S = blockSumDouble(S, Shared);
  if (threadIdx.x == 0)
    Out[blockIdx.x] = float(Mean ? S / double(Cols) : S);
}

__global__ void batchNormKernel(const float *X, const float *Scale,
                                const float *Bias, const float *Mean,
                                const float *Var, float *Y, int64_t N,
                                int64_t C, int64_t Spatial, float Eps) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       I < N * C * Spatial; I += int64_t(gridDim.x) * blockDim.x) {
    int64_t Ch = (I / Spatial) % C;
    Y[I] = (X[I] - Mean[Ch]) * rsqrtf(Var[Ch] + Eps) * Scale[Ch] + Bias[Ch];
  }
}

__global__ void channelBiasKernel(float *Y, const float *Bias, int64_t N,
                                  int64_t C, int64_t Spatial) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       I < N * C * Spatial; I += int64_t(gridDim.x) * blockDim.x)
    Y[I] += Bias[(I / Spatial) % C];
}

template <typename T, typename Idx>
__global__ void gatherKernel(const T *Data, const Idx *Index, T *Out,
                             int64_t Outer, int64_t AxisDim, int64_t Inner,
                             int64_t NIdx, int *Bad) {
  int64_t Total = Outer * NIdx * Inner;
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Total;
       I += int64_t(gridDim.x) * blockDim.x) {
    int64_t In = I % Inner, J = (I / Inner) % NIdx, O = I / (Inner * NIdx);
    int64_t K = int64_t(Index[J]);
    if (K < 0)
      K += AxisDim;
    if (K < 0 || K >= AxisDim) {
      *Bad = 1;
      Out[I] = T(0);
      continue;
    }
    Out[I] = Data[(O * AxisDim + K) * Inner + In];
  }
}
} // namespace

namespace {
__global__ void hardmaxLines(const float *In, float *Out, int64_t Outer,
                             int64_t Axis, int64_t Inner) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       I < Outer * Inner; I += int64_t(gridDim.x) * blockDim.x)
    thread::hardmaxLine(In, Out, Axis, Inner, I);
}
} // namespace

int hardmax(const float *In, float *Out, int64_t Outer, int64_t Axis,
            int64_t Inner, cudaStream_t Stream) {
  if (Outer * Axis * Inner == 0)
    return 0;
  hardmaxLines<<<gridFor(Outer * Inner), Block, 0, Stream>>>(In, Out, Outer,
                                                             Axis, Inner);
  return lastError();
}

int softmax(const float *In, float *Out, int64_t Outer, int64_t Axis,
            int64_t Inner, bool Log, cudaStream_t Stream) {
  if (Outer * Axis * Inner == 0)
    return 0;
  if (Inner == 1 && Outer < (int64_t(1) << 31))
    softmaxRows<<<unsigned(Outer), Block, 0, Stream>>>(In, Out, Axis, Log);
  else
    softmaxStrided<<<gridFor(Outer * Inner), Block, 0, Stream>>>(
        In, Out, Outer, Axis, Inner, Log);
  return lastError();
}

int layerNorm(const float *X, const float *Scale, const float *Bias, float *Y,
              float *Mean, float *InvStd, int64_t Rows, int64_t Cols, float Eps,
              bool ScaleOne, bool BiasOne, cudaStream_t Stream) {
  if (Rows == 0) // Cols 0 still writes each row's Mean and InvStd
    return 0;
  if (Rows >= (int64_t(1) << 31))
    return int(cudaErrorInvalidValue);
  layerNormRows<<<unsigned(Rows), Block, 0, Stream>>>(
      X, Scale, Bias, Y, Mean, InvStd, Cols, Eps, ScaleOne ? 0 : 1,
      BiasOne ? 0 : 1, 0);
  return lastError();
}

int instanceNorm(const float *X, const float *Scale, const float *Bias,
                 float *Y, int64_t Planes, int64_t C, int64_t Size, float Eps,
                 cudaStream_t Stream) {
  if (Planes == 0)
    return 0;
  if (Planes >= (int64_t(1) << 31) || C <= 0)
    return int(cudaErrorInvalidValue);
  layerNormRows<<<unsigned(Planes), Block, 0, Stream>>>(
      X, Scale, Bias, Y, nullptr, nullptr, Size, Eps, 1, 1, C);
  return lastError();
}

int groupNorm(const float *X, const float *Scale, const float *Bias, float *Y,
              int64_t Groups, int64_t G, int64_t PerGroup, int64_t Plane,
              bool PerChannel, float Eps, cudaStream_t Stream) {
  if (Groups == 0)
    return 0;
  if (Groups >= (int64_t(1) << 31) || G <= 0 || PerGroup <= 0)
    return int(cudaErrorInvalidValue);
  layerNormRows<<<unsigned(Groups), Block, 0, Stream>>>(
      X, Scale, Bias, Y, nullptr, nullptr, PerGroup * Plane, Eps, 1, 1, G,
      PerChannel ? PerGroup : 0, PerChannel ? Plane : 0);
  return lastError();
}

int reduce(ReduceOp Op, DType T, const void *In, void *Out, int64_t Outer,
           int64_t Axis, int64_t Inner, cudaStream_t Stream) {
  if (Outer * Inner == 0)
    return 0;
  if (T == DType::F32 && Inner == 1 && Axis > 0 && Outer < (int64_t(1) << 31) &&
      (Op == ReduceOp::Sum || Op == ReduceOp::Mean)) {
    sumRows<<<unsigned(Outer), Block, 0, Stream>>>(
        static_cast<const float *>(In), static_cast<float *>(Out), Axis,
        Op == ReduceOp::Mean);
    return lastError();
  }
  return byNumberType(T, [&](auto Tag) {
    using E = decltype(Tag);
    reduceStrided<E><<<gridFor(Outer * Inner), Block, 0, Stream>>>(
        Op, static_cast<const E *>(In), static_cast<E *>(Out), Outer, Axis,
        Inner);
    return lastError();
  });
}

namespace {
__global__ void lrnKernel(lrn::Params P, const float *X, float *Y,
                          int64_t Total) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < Total;
       I += int64_t(gridDim.x) * blockDim.x)
    Y[I] = lrn::at<float>(P, X, I);
}
} // namespace

int localResponseNorm(const lrn::Params &P, const float *X, float *Y,
                      int64_t Total, cudaStream_t Stream) {
  if (Total == 0)
    return 0;
  lrnKernel<<<gridFor(Total), Block, 0, Stream>>>(P, X, Y, Total);
  return lastError();
}

int reduceAxes(ReduceOp Op, DType T, const void *In, void *Out,
               const ReduceAxes &A, cudaStream_t Stream) {
  if (A.Outputs == 0)
    return 0;
  return byNumberType(T, [&](auto Tag) {
    using E = decltype(Tag);
    reduceScattered<E><<<gridFor(A.Outputs), Block, 0, Stream>>>(
        Op, static_cast<const E *>(In), static_cast<E *>(Out), A);
    return lastError();
  });
}

int batchNorm(const float *X, const float *Scale, const float *Bias,
              const float *Mean, const float *Var, float *Y, int64_t N,
              int64_t C, int64_t Spatial, float Eps, cudaStream_t Stream) {
  if (N * C * Spatial == 0)
    return 0;
  batchNormKernel<<<gridFor(N * C * Spatial), Block, 0, Stream>>>(
      X, Scale, Bias, Mean, Var, Y, N, C, Spatial, Eps);
  return lastError();
}

int addChannelBias(float *Y, const float *Bias, int64_t N, int64_t C,
                   int64_t Spatial, cudaStream_t Stream) {
  if (N * C * Spatial == 0)
    return 0;
  channelBiasKernel<<<gridFor(N * C * Spatial), Block, 0, Stream>>>(Y, Bias, N,
                                                                    C, Spatial);
  return lastError();
}

int gather(const void *Data, const void *Index, bool Index64, void *Out,
           int64_t Outer, int64_t AxisDim, int64_t Inner, int64_t NIdx,
           int ElemBytes, int *BadIndex, cudaStream_t Stream) {
  int64_t Total = Outer * NIdx * Inner;
  if (Total == 0)
    return 0;
  int G = gridFor(Total);
#define OOMPLAN_GATHER(T)                                                      \
  if (Index64)                                                                 \
    gatherKernel<T, int64_t><<<G, Block, 0, Stream>>>(                         \
        (const T *)Data, (const int64_t *)Index, (T *)Out, Outer, AxisDim,     \
        Inner, NIdx, BadIndex);                                                \
  else                                                                         \
    gatherKernel<T, int32_t><<<G, Block, 0, Stream>>>(                         \
        (const T *)Data, (const int32_t *)Index, (T *)Out, Outer, AxisDim,     \
        Inner, NIdx, BadIndex);
  switch (ElemBytes) {
  case 1:
    OOMPLAN_GATHER(uint8_t)
    break;
  case 2:
    OOMPLAN_GATHER(uint16_t)
    break;
  case 4:
    OOMPLAN_GATHER(uint32_t)
    break;
  case 8:
    OOMPLAN_GATHER(uint64_t)
    break;
  default:
    return int(cudaErrorInvalidValue);
  }
#undef OOMPLAN_GATHER
  return lastError();
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
