//===- Elementwise.cu - elementwise, broadcast and copy kernels -----------===//
//
// One thread per output element in grid-stride loops. Broadcasting is a
// stride of 0 (Launch.h's Strided), so one kernel serves every shape; the
// index arithmetic is cheap next to the memory traffic of these ops.
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math_constants.h>
#include <type_traits>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
// Element offsets of the operands at dense index I.
__device__ inline void offsetsAt(const Strided &S, int64_t I, int Ops,
                                 int64_t *Off) {
  for (int O = 0; O < Ops; ++O)
    Off[O] = 0;
  for (int D = S.Rank - 1; D >= 0; --D) {
    int64_t C = I % S.Dims[D];
    I /= S.Dims[D];
    for (int O = 0; O < Ops; ++O)
      Off[O] += C * S.Stride[O][D];
  }
}

int64_t countOf(const Strided &S) {
  int64_t N = 1;
  for (int D = 0; D < S.Rank; ++D)
    N *= S.Dims[D];
  return N;
}

// The 16-bit floats are storage: arithmetic is in float, and each result
// is rounded once to nearest even, as the CPU kernels do (ComputeOf in
// CPU/Kernels/Elementwise.h).
template <typename S> struct Store {
  using C = S;
  static __device__ C load(S V) { return V; }
  static __device__ S store(C V) { return V; }
};
template <> struct Store<__half> {
  using C = float;
  static __device__ float load(__half V) { return __half2float(V); }
  static __device__ __half store(float V) { return __float2half_rn(V); }
};
template <> struct Store<__nv_bfloat16> {
  using C = float;
  static __device__ float load(__nv_bfloat16 V) { return __bfloat162float(V); }
  static __device__ __nv_bfloat16 store(float V) {
    return __float2bfloat16_rn(V);
  }
};

template <typename T>
__device__ T unaryOp(UnaryOp Op, T X, double A, double B) {
  switch (Op) {
  case UnaryOp::Relu: // NaN stays NaN, as the CPU kernel and numpy
    return X < T(0) ? T(0) : X;
  case UnaryOp::Sigmoid: {
    // Split by sign as the CPU kernel: 1 / (1 + exp(-x)) underflows to 0
    // for x < -88 (float) where the CPU gives the tiny exact value.
    if (X >= T(0))
      return T(1) / (T(1) + exp(-X));
    T E = exp(X);
    return E / (T(1) + E);
  }
  case UnaryOp::Tanh:
    return tanh(X);
  case UnaryOp::Erf:
    return erf(X);
  case UnaryOp::Exp:
    return exp(X);
  case UnaryOp::Log:
    return log(X);
  case UnaryOp::Sqrt:
    return sqrt(X);
  case UnaryOp::Neg:
    return -X;
  case UnaryOp::Abs:
    return X < T(0) ? -X : X;
  case UnaryOp::Reciprocal:
    return T(1) / X;
  case UnaryOp::Floor:
    return floor(X);
  case UnaryOp::Ceil:
    return ceil(X);
  case UnaryOp::Sin:
    return sin(X);
  case UnaryOp::Cos:
    return cos(X);
  case UnaryOp::Clip: {
    // In this order, as the CPU kernel (numpy.clip): min > max gives max.
    T Y = X < T(A) ? T(A) : X;
    return Y > T(B) ? T(B) : Y;
  }
  case UnaryOp::LeakyRelu:
    return X >= T(0) ? X : T(A) * X;
  case UnaryOp::HardSigmoid: {
    T Y = T(A) * X + T(B);
    return Y < T(0) ? T(0) : (Y > T(1) ? T(1) : Y);
  }
  case UnaryOp::Softplus: // log(1 + exp(x)) without overflow for large x
    return X > T(0) ? X + log1p(exp(-X)) : log1p(exp(X));
  case UnaryOp::Gelu:
    return T(0.5) * X * (T(1) + erf(X * T(0.70710678118654752440)));
  case UnaryOp::Sign:
    return X > T(0) ? T(1) : (X < T(0) ? T(-1) : T(0));
  case UnaryOp::PowScalar: // in double, as the CPU's Pow of mixed types
    return A == 2 ? X * X : T(::pow(double(X), A));
  case UnaryOp::Round: // halves to even, as numpy.round and the CPU's
    return rint(X);
  case UnaryOp::Tan:
    return tan(X);
  case UnaryOp::Asin:
    return asin(X);
  case UnaryOp::Acos:
    return acos(X);
  case UnaryOp::Atan:
    return atan(X);
  case UnaryOp::Sinh:
    return sinh(X);
  case UnaryOp::Cosh:
    return cosh(X);
  case UnaryOp::Asinh:
    return asinh(X);
  case UnaryOp::Acosh:
    return acosh(X);
  case UnaryOp::Atanh:
    return atanh(X);
  case UnaryOp::Softsign:
    return X / (T(1) + fabs(X));
  case UnaryOp::HardSwish: {
    // std::max(0, std::min(1, x / 6 + 0.5)) as the CPU writes it, so that
    // NaN goes the same way through both comparisons.
    T Y = X / T(6) + T(0.5);
    T M = Y < T(1) ? Y : T(1);
    return X * (T(0) < M ? M : T(0));
  }
  case UnaryOp::Elu:
    return X < T(0) ? T(A) * (exp(X) - T(1)) : X;
  case UnaryOp::Selu: // A alpha, B gamma
    return X > T(0) ? T(B) * X : T(B) * (T(A) * exp(X) - T(A));
  case UnaryOp::Celu: { // std::max(0, x) + std::min(0, a (exp(x / a) - 1))
    T E = T(A) * (exp(X / T(A)) - T(1));
    return (T(0) < X ? X : T(0)) + (E < T(0) ? E : T(0));
  }
  case UnaryOp::ThresholdedRelu:
    return X > T(A) ? X : T(0);
  case UnaryOp::Shrink: { // compared in double, as the CPU's
    double D = double(X);
    return D < -A ? T(D + B) : (D > A ? T(D - B) : T(0));
  }
  case UnaryOp::DivScalar:
    return X / T(A);
  case UnaryOp::GeluTanh: {            // the CPU kernel's formula
    const T K = T(0.7978845608028654); // sqrt(2 / pi)
    return T(0.5) * X * (T(1) + tanh(K * (X + T(0.044715) * X * X * X)));
  }
  case UnaryOp::Mish: { // x tanh(softplus(x)), softplus as above
    const T Sp = X > T(0) ? X + log1p(exp(-X)) : log1p(exp(X));
    return X * tanh(Sp);
  }
  default:
    return X;
  }
}

template <typename T> __device__ T intUnaryOp(UnaryOp Op, T X) {
  switch (Op) {
  case UnaryOp::Relu:
    return X > T(0) ? X : T(0);
  case UnaryOp::Neg:
    return -X;
  case UnaryOp::Abs:
    return X < T(0) ? -X : X;
  case UnaryOp::Sign:
    return X > T(0) ? T(1) : (X < T(0) ? T(-1) : T(0));
  default:
    return X;
  }
}

template <typename T>
__global__ void unaryKernel(UnaryOp Op, const T *In, T *Out, int64_t N,
                            double A, double B) {
  using St = Store<T>;
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x)
    Out[I] = St::store(unaryOp<typename St::C>(Op, St::load(In[I]), A, B));
}

template <typename T>
__global__ void intUnaryKernel(UnaryOp Op, const T *In, T *Out, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x)
    Out[I] = intUnaryOp<T>(Op, In[I]);
}

template <typename T>
__global__ void classifyKernel(FloatClass What, int Flags, const T *In,
                               bool *Out, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    auto X = Store<T>::load(In[I]);
    Out[I] = What == FloatClass::NaN
                 ? X != X
                 : isinf(X) && (X > 0 ? (Flags & 1) : (Flags & 2));
  }
}

__global__ void notKernel(const bool *In, bool *Out, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x)
    Out[I] = !In[I];
}

template <typename T> __device__ T arith(BinaryOp Op, T X, T Y) {
  switch (Op) {
  case BinaryOp::Add:
    return X + Y;
  case BinaryOp::Sub:
    return X - Y;
  case BinaryOp::Mul:
    return X * Y;
  case BinaryOp::Div:
    return X / Y;
  case BinaryOp::Max:
    if constexpr (std::is_floating_point<T>::value)
      if (X != X || Y != Y) // NaN propagates (numpy.maximum, the CPU's)
        return X != X ? X : Y;
    return X < Y ? Y : X;
  case BinaryOp::Min:
    if constexpr (std::is_floating_point<T>::value)
      if (X != X || Y != Y)
        return X != X ? X : Y;
    return Y < X ? Y : X;
  case BinaryOp::PRelu:
    return X >= T(0) ? X : X * Y;
  default:
    return X;
  }
}
__device__ inline float powOf(float X, float Y) { return powf(X, Y); }
__device__ inline double powOf(double X, double Y) { return ::pow(X, Y); }
__device__ inline float modOf(float X, float Y) { return fmodf(X, Y); }
__device__ inline double modOf(double X, double Y) { return ::fmod(X, Y); }
template <typename T> __device__ T floatOnly(BinaryOp Op, T X, T Y) {
  if (Op == BinaryOp::Pow)
    return powOf(X, Y);
  if (Op == BinaryOp::FMod)
    return modOf(X, Y);
  if (Op == BinaryOp::Mod) { // numpy.mod: the divisor's sign, as the CPU's
    T R = modOf(X, Y);
    return (R != T(0) && ((R < T(0)) != (Y < T(0)))) ? R + Y : R;
  }
  return arith(Op, X, Y);
}
template <typename T> __device__ T intOnly(BinaryOp Op, T X, T Y) {
  if (Op == BinaryOp::Mod || Op == BinaryOp::FMod) {
    // A zero divisor gives 0, and -1 gives 0 (INT_MIN % -1 overflows), as
    // the CPU kernel; Mod takes the divisor's sign, FMod the dividend's.
    if (Y == T(0) || Y == T(-1))
      return T(0);
    T R = X % Y;
    if (Op == BinaryOp::FMod)
      return R;
    return (R != T(0) && ((R < T(0)) != (Y < T(0)))) ? R + Y : R;
  }
  if (Op == BinaryOp::Div && Y == T(0))
    return T(0); // undefined in ONNX; not a trap on the device
  if (Op == BinaryOp::Div && Y == T(-1)) // INT_MIN / -1 wraps, as the CPU's
    return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(X));
  if (Op == BinaryOp::Pow) {
    T R = 1;
    for (T E = 0; E < Y; ++E)
      R *= X;
    return R;
  }
  return arith(Op, X, Y);
}
template <typename T> __device__ bool compare(BinaryOp Op, T X, T Y) {
  switch (Op) {
  case BinaryOp::Equal:
    return X == Y;
  case BinaryOp::Greater:
    return X > Y;
  case BinaryOp::Less:
    return X < Y;
  case BinaryOp::GreaterOrEqual:
    return X >= Y;
  case BinaryOp::LessOrEqual:
    return X <= Y;
  case BinaryOp::And:
    return bool(X) && bool(Y);
  case BinaryOp::Or:
    return bool(X) || bool(Y);
  case BinaryOp::Xor:
    return bool(X) != bool(Y);
  default:
    return false;
  }
}

bool isCompare(BinaryOp Op) {
  return Op >= BinaryOp::Equal && Op <= BinaryOp::Xor;
}

template <typename T, bool Float>
__global__ void binaryKernel(BinaryOp Op, const T *A, const T *B, T *Out,
                             Strided S, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    int64_t Off[2];
    offsetsAt(S, I, 2, Off);
    using St = Store<T>;
    if constexpr (Float)
      Out[I] = St::store(floatOnly<typename St::C>(Op, St::load(A[Off[0]]),
                                                   St::load(B[Off[1]])));
    else
      Out[I] = intOnly<T>(Op, A[Off[0]], B[Off[1]]);
  }
}

template <typename T>
__global__ void compareKernel(BinaryOp Op, const T *A, const T *B, bool *Out,
                              Strided S, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    int64_t Off[2];
    offsetsAt(S, I, 2, Off);
    Out[I] = compare(Op, Store<T>::load(A[Off[0]]), Store<T>::load(B[Off[1]]));
  }
}

template <typename T>
__global__ void whereKernel(const bool *C, const T *X, const T *Y, T *Out,
                            Strided S, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    int64_t Off[3];
    offsetsAt(S, I, 3, Off);
    Out[I] = C[Off[0]] ? X[Off[1]] : Y[Off[2]];
  }
}

template <typename T>
__global__ void bitShiftKernel(const T *A, const T *B, T *Out, bool Left,
                               Strided S, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    int64_t Off[2];
    offsetsAt(S, I, 2, Off);
    const T X = A[Off[0]], K = B[Off[1]];
    Out[I] = uint64_t(K) >= sizeof(T) * 8 ? T(0) : Left ? T(X << K) : T(X >> K);
  }
}

template <typename T>
__global__ void bitwiseKernel(int Op, const T *A, const T *B, T *Out, Strided S,
                              int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    if (Op == 3) {
      Out[I] = T(~A[I]);
      continue;
    }
    int64_t Off[2];
    offsetsAt(S, I, 2, Off);
    const T X = A[Off[0]], Y = B[Off[1]];
    Out[I] = Op == 0 ? T(X & Y) : Op == 1 ? T(X | Y) : T(X ^ Y);
  }
}

template <typename T>
__global__ void stridedKernel(const T *In, T *Out, Strided S, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    int64_t Off[1];
    offsetsAt(S, I, 1, Off);
    Out[I] = In[Off[0]];
  }
}

template <typename T>
__global__ void strided2Kernel(const T *In, T *Out, Strided S, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    int64_t Off[2];
    offsetsAt(S, I, 2, Off);
    Out[Off[1]] = In[Off[0]];
  }
}

// The CPU kernel's conversions (Cast.cpp): to bool, x != 0; a float to an
// integer truncates, saturates and takes NaN to 0 (C++ leaves out-of-range
// values undefined, so a plain To(x) on the device gives whatever the
// conversion instruction does, e.g. -1.0f to uint8); float16 via double,
// one rounding from the source value.
template <typename T> struct IntRange; // numeric_limits is host-only
template <> struct IntRange<int8_t> {
  static constexpr int8_t Lo = INT8_MIN, Hi = INT8_MAX;
};
template <> struct IntRange<uint8_t> {
  static constexpr uint8_t Lo = 0, Hi = UINT8_MAX;
};
template <> struct IntRange<int32_t> {
  static constexpr int32_t Lo = INT32_MIN, Hi = INT32_MAX;
};
template <> struct IntRange<int64_t> {
  static constexpr int64_t Lo = INT64_MIN, Hi = INT64_MAX;
};
template <typename To, typename V> __device__ inline To convertTo(V X) {
  if constexpr (std::is_same<To, bool>::value) {
    return X != V(0);
  } else if constexpr (std::is_same<To, __half>::value) {
    return __double2half(double(X));
  } else if constexpr (std::is_same<To, __nv_bfloat16>::value) {
    return __double2bfloat16(double(X));
  } else if constexpr (std::is_integral<To>::value &&
                       std::is_floating_point<V>::value) {
    const double D = double(X);
    if (D != D)
      return To(0);
    if (D <= double(IntRange<To>::Lo))
      return IntRange<To>::Lo;
    if (D >= double(IntRange<To>::Hi))
      return IntRange<To>::Hi;
    return To(D);
  } else {
    return To(X);
  }
}

template <typename From, typename To>
__global__ void castKernel(const From *In, To *Out, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x)
    Out[I] = convertTo<To>(Store<From>::load(In[I]));
}

template <typename T> __global__ void fillKernel(T *Out, int64_t N, T Value) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x)
    Out[I] = Value;
}

__global__ void bytesKernel(unsigned char *Out, SmallBytes V) {
  for (uint32_t I = threadIdx.x; I < V.N; I += blockDim.x)
    Out[I] = V.B[I];
}

__global__ void intsKernel(int64_t *Out, SmallInts V) {
  if (threadIdx.x < V.N)
    Out[threadIdx.x] = V.V[threadIdx.x];
}

template <typename T>
__global__ void rangeKernel(const T *Start, const T *Delta, T *Out, int64_t N) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x)
    Out[I] = T(Start[0] + T(I) * Delta[0]);
}

__device__ inline float sigmoidOf(float X) {
  if (X >= 0)
    return 1.f / (1.f + expf(-X));
  float E = expf(X);
  return E / (1.f + E);
}

__device__ float activate(Act A, float X, float Min, float Max, float Alpha) {
  switch (A) {
  case Act::Relu:
    return X < 0 ? 0.f : X;
  case Act::Clip: { // std::min(std::max(x, lo), hi) as the CPU: NaN stays NaN
    float V = X < Min ? Min : X;
    return Max < V ? Max : V;
  }
  case Act::LeakyRelu:
    return X < 0 ? Alpha * X : X;
  case Act::Gelu:
    return 0.5f * X * (1.f + erff(X * 0.7071067811865476f));
  case Act::GeluTanh:
    return 0.5f * X *
           (1.f + tanhf(0.7978845608028654f * (X + 0.044715f * X * X * X)));
  case Act::Sigmoid:
    return sigmoidOf(X);
  case Act::SiLU:
    return X * sigmoidOf(X);
  case Act::Tanh:
    return tanhf(X);
  case Act::HardSwish: { // x * relu6(x + 3) / 6, as the CPU
    float V = X + 3.f;
    V = V < 0.f ? 0.f : (6.f < V ? 6.f : V);
    return X * V / 6.f;
  }
  default:
    return X;
  }
}

__global__ void epilogueKernel(Act A, float *Y, const float *Bias, Strided S,
                               int64_t N, float Min, float Max, float Alpha) {
  for (int64_t I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; I < N;
       I += int64_t(gridDim.x) * blockDim.x) {
    float V = Y[I];
    if (Bias) {
      int64_t Off[1];
      offsetsAt(S, I, 1, Off);
      V += Bias[Off[0]];
    }
    Y[I] = activate(A, V, Min, Max, Alpha);
  }
}

} // namespace

int unary(UnaryOp Op, DType T, const void *In, void *Out, int64_t N, double A,
          double B, cudaStream_t Stream) {
  if (N == 0)
    return 0;
  int G = gridFor(N);
  switch (T) {
  case DType::F32:
    unaryKernel<float><<<G, Block, 0, Stream>>>(
        Op, static_cast<const float *>(In), static_cast<float *>(Out), N, A, B);
    break;
  case DType::F64:
    unaryKernel<double>
        <<<G, Block, 0, Stream>>>(Op, static_cast<const double *>(In),
                                  static_cast<double *>(Out), N, A, B);
    break;
  case DType::F16:
    unaryKernel<__half>
        <<<G, Block, 0, Stream>>>(Op, static_cast<const __half *>(In),
                                  static_cast<__half *>(Out), N, A, B);
    break;
  case DType::BF16:
    unaryKernel<__nv_bfloat16>
        <<<G, Block, 0, Stream>>>(Op, static_cast<const __nv_bfloat16 *>(In),
                                  static_cast<__nv_bfloat16 *>(Out), N, A, B);
    break;
  case DType::I32:
    intUnaryKernel<int32_t><<<G, Block, 0, Stream>>>(
        Op, static_cast<const int32_t *>(In), static_cast<int32_t *>(Out), N);
    break;
  case DType::I64:
    intUnaryKernel<int64_t><<<G, Block, 0, Stream>>>(
        Op, static_cast<const int64_t *>(In), static_cast<int64_t *>(Out), N);
    break;
  case DType::Bool:
    notKernel<<<G, Block, 0, Stream>>>(static_cast<const bool *>(In),
                                       static_cast<bool *>(Out), N);
    break;
  default:
    return int(cudaErrorInvalidValue);
  }
  return lastError();
}

int classify(FloatClass What, int Flags, DType T, const void *In, bool *Out,
             int64_t N, cudaStream_t Stream) {
  if (N == 0)
    return 0;
  int G = gridFor(N);
  if (T == DType::F32)
    classifyKernel<float><<<G, Block, 0, Stream>>>(
        What, Flags, static_cast<const float *>(In), Out, N);
  else if (T == DType::F64)
    classifyKernel<double><<<G, Block, 0, Stream>>>(
        What, Flags, static_cast<const double *>(In), Out, N);
  else if (T == DType::F16)
    classifyKernel<__half><<<G, Block, 0, Stream>>>(
        What, Flags, static_cast<const __half *>(In), Out, N);
  else if (T == DType::BF16)
    classifyKernel<__nv_bfloat16><<<G, Block, 0, Stream>>>(
        What, Flags, static_cast<const __nv_bfloat16 *>(In), Out, N);
  else
    return int(cudaErrorInvalidValue);
  return lastError();
}

int binary(BinaryOp Op, DType T, const void *A, const void *B, void *Out,
           const Strided &S, cudaStream_t Stream) {
  int64_t N = countOf(S);
  if (N == 0)
    return 0;
  int G = gridFor(N);
#define OOMPLAN_BINARY(CT, FLOAT)                                              \
  if (isCompare(Op))                                                           \
    compareKernel<CT><<<G, Block, 0, Stream>>>(                                \
        Op, static_cast<const CT *>(A), static_cast<const CT *>(B),            \
        static_cast<bool *>(Out), S, N);                                       \
  else                                                                         \
    binaryKernel<CT, FLOAT><<<G, Block, 0, Stream>>>(                          \
        Op, static_cast<const CT *>(A), static_cast<const CT *>(B),            \
        static_cast<CT *>(Out), S, N);
  switch (T) {
  case DType::F32:
    OOMPLAN_BINARY(float, true)
    break;
  case DType::F64:
    OOMPLAN_BINARY(double, true)
    break;
  case DType::F16:
    OOMPLAN_BINARY(__half, true)
    break;
  case DType::BF16:
    OOMPLAN_BINARY(__nv_bfloat16, true)
    break;
  case DType::I32:
    OOMPLAN_BINARY(int32_t, false)
    break;
  case DType::I64:
    OOMPLAN_BINARY(int64_t, false)
    break;
  case DType::Bool:
    if (!isCompare(Op))
      return int(cudaErrorInvalidValue);
    compareKernel<bool><<<G, Block, 0, Stream>>>(
        Op, static_cast<const bool *>(A), static_cast<const bool *>(B),
        static_cast<bool *>(Out), S, N);
    break;
  case DType::U8: // Equal takes every type (the CPU kernel's AllTypes)
    if (!isCompare(Op))
      return int(cudaErrorInvalidValue);
    compareKernel<uint8_t><<<G, Block, 0, Stream>>>(
        Op, static_cast<const uint8_t *>(A), static_cast<const uint8_t *>(B),
        static_cast<bool *>(Out), S, N);
    break;
  case DType::I8:
    if (!isCompare(Op))
      return int(cudaErrorInvalidValue);
    compareKernel<int8_t><<<G, Block, 0, Stream>>>(
        Op, static_cast<const int8_t *>(A), static_cast<const int8_t *>(B),
        static_cast<bool *>(Out), S, N);
    break;
  default:
    return int(cudaErrorInvalidValue);
  }
#undef OOMPLAN_BINARY
  return lastError();
}

int bitShift(const void *A, const void *B, void *Out, int ElemBytes, bool Left,
             const Strided &S, cudaStream_t Stream) {
  int64_t N = countOf(S);
  if (N == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using T = decltype(Z); // unsigned: the shifts are logical
    bitShiftKernel<T><<<gridFor(N), Block, 0, Stream>>>(
        static_cast<const T *>(A), static_cast<const T *>(B),
        static_cast<T *>(Out), Left, S, N);
    return lastError();
  });
}

int bitwise(int Op, const void *A, const void *B, void *Out, int ElemBytes,
            const Strided &S, cudaStream_t Stream) {
  int64_t N = countOf(S);
  if (N == 0)
    return 0;
  if (Op < 0 || Op > 3)
    return int(cudaErrorInvalidValue);
  return byWidth(ElemBytes, [&](auto Z) {
    using T = decltype(Z);
    bitwiseKernel<T><<<gridFor(N), Block, 0, Stream>>>(
        Op, static_cast<const T *>(A), static_cast<const T *>(B),
        static_cast<T *>(Out), S, N);
    return lastError();
  });
}

int where(const bool *Cond, const void *X, const void *Y, void *Out,
          int ElemBytes, const Strided &S, cudaStream_t Stream) {
  int64_t N = countOf(S);
  if (N == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using T = decltype(Z);
    whereKernel<T><<<gridFor(N), Block, 0, Stream>>>(
        Cond, static_cast<const T *>(X), static_cast<const T *>(Y),
        static_cast<T *>(Out), S, N);
    return lastError();
  });
}

int stridedCopy(const void *In, int64_t InOffset, void *Out, int ElemBytes,
                const Strided &S, cudaStream_t Stream) {
  int64_t N = countOf(S);
  if (N == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using T = decltype(Z);
    stridedKernel<T><<<gridFor(N), Block, 0, Stream>>>(
        static_cast<const T *>(In) + InOffset, static_cast<T *>(Out), S, N);
    return lastError();
  });
}

int stridedCopy2(const void *In, int64_t InOffset, void *Out, int64_t OutOffset,
                 int ElemBytes, const Strided &S, cudaStream_t Stream) {
  int64_t N = countOf(S);
  if (N == 0)
    return 0;
  return byWidth(ElemBytes, [&](auto Z) {
    using T = decltype(Z);
    strided2Kernel<T><<<gridFor(N), Block, 0, Stream>>>(
        static_cast<const T *>(In) + InOffset,
        static_cast<T *>(Out) + OutOffset, S, N);
    return lastError();
  });
}

namespace {
template <typename From>
int castFrom(DType To, const From *In, void *Out, int64_t N, cudaStream_t St) {
  int G = gridFor(N);
  switch (To) {
  case DType::F32:
    castKernel<From, float><<<G, Block, 0, St>>>(In, (float *)Out, N);
    break;
  case DType::F64:
    castKernel<From, double><<<G, Block, 0, St>>>(In, (double *)Out, N);
    break;
  case DType::I32:
    castKernel<From, int32_t><<<G, Block, 0, St>>>(In, (int32_t *)Out, N);
    break;
  case DType::I64:
    castKernel<From, int64_t><<<G, Block, 0, St>>>(In, (int64_t *)Out, N);
    break;
  case DType::Bool:
    castKernel<From, bool><<<G, Block, 0, St>>>(In, (bool *)Out, N);
    break;
  case DType::U8:
    castKernel<From, uint8_t><<<G, Block, 0, St>>>(In, (uint8_t *)Out, N);
    break;
  case DType::I8:
    castKernel<From, int8_t><<<G, Block, 0, St>>>(In, (int8_t *)Out, N);
    break;
  case DType::F16:
    castKernel<From, __half><<<G, Block, 0, St>>>(In, (__half *)Out, N);
    break;
  case DType::BF16:
    castKernel<From, __nv_bfloat16>
        <<<G, Block, 0, St>>>(In, (__nv_bfloat16 *)Out, N);
    break;
  default:
    return int(cudaErrorInvalidValue);
  }
  return lastError();
}
} // namespace

int cast(DType From, DType To, const void *In, void *Out, int64_t N,
         cudaStream_t Stream) {
  if (N == 0)
    return 0;
  switch (From) {
  case DType::F32:
    return castFrom(To, (const float *)In, Out, N, Stream);
  case DType::F64:
    return castFrom(To, (const double *)In, Out, N, Stream);
  case DType::I32:
    return castFrom(To, (const int32_t *)In, Out, N, Stream);
  case DType::I64:
    return castFrom(To, (const int64_t *)In, Out, N, Stream);
  case DType::Bool:
    return castFrom(To, (const bool *)In, Out, N, Stream);
  case DType::U8:
    return castFrom(To, (const uint8_t *)In, Out, N, Stream);
  case DType::I8:
    return castFrom(To, (const int8_t *)In, Out, N, Stream);
  case DType::F16:
    return castFrom(To, (const __half *)In, Out, N, Stream);
  case DType::BF16:
    return castFrom(To, (const __nv_bfloat16 *)In, Out, N, Stream);
  default:
    return int(cudaErrorInvalidValue);
  }
}

int fill(void *Out, uint64_t Bytes, uint64_t Pattern, int PatternBytes,
         cudaStream_t Stream) {
  int64_t N = int64_t(Bytes / uint64_t(PatternBytes));
  if (N == 0)
    return 0;
  return byWidth(PatternBytes, [&](auto Z) {
    using T = decltype(Z);
    fillKernel<T><<<gridFor(N), Block, 0, Stream>>>(static_cast<T *>(Out), N,
                                                    T(Pattern));
    return lastError();
  });
}

int writeInts(int64_t *Out, const SmallInts &V, cudaStream_t Stream) {
  if (V.N == 0)
    return 0;
  intsKernel<<<1, MaxRank, 0, Stream>>>(Out, V);
  return lastError();
}

int writeBytes(void *Out, const SmallBytes &V, cudaStream_t Stream) {
  if (V.N == 0)
    return 0;
  bytesKernel<<<1, 128, 0, Stream>>>(static_cast<unsigned char *>(Out), V);
  return lastError();
}

int epilogue(Act A, float *Y, const float *Bias, const Strided &S, float Min,
             float Max, float Alpha, cudaStream_t Stream) {
  int64_t N = countOf(S);
  if (N == 0 || (A == Act::None && !Bias))
    return 0;
  epilogueKernel<<<gridFor(N), Block, 0, Stream>>>(A, Y, Bias, S, N, Min, Max,
                                                   Alpha);
  return lastError();
}

int range(DType T, const void *Start, const void *Delta, void *Out, int64_t N,
          cudaStream_t Stream) {
  if (N == 0)
    return 0;
  int G = gridFor(N);
  switch (T) {
  case DType::F32:
    rangeKernel<float><<<G, Block, 0, Stream>>>(
        (const float *)Start, (const float *)Delta, (float *)Out, N);
    break;
  case DType::F64:
    rangeKernel<double><<<G, Block, 0, Stream>>>(
        (const double *)Start, (const double *)Delta, (double *)Out, N);
    break;
  case DType::I32:
    rangeKernel<int32_t><<<G, Block, 0, Stream>>>(
        (const int32_t *)Start, (const int32_t *)Delta, (int32_t *)Out, N);
    break;
  case DType::I64:
    rangeKernel<int64_t><<<G, Block, 0, Stream>>>(
        (const int64_t *)Start, (const int64_t *)Delta, (int64_t *)Out, N);
    break;
  default:
    return int(cudaErrorInvalidValue);
  }
  return lastError();
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
