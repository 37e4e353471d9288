//===- RandomInputs.cpp - seeded values for inputs not given --------------===//
//
// SplitMix64, so values depend only on the seed, never on the platform's
// standard library (std::uniform_*_distribution is implementation-defined).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/RandomInputs.h"
#include <cmath>
#include <cstring>

using namespace oomplan;
using namespace oomplan::runtime;

namespace {
struct SplitMix64 {
  uint64_t State;
  uint64_t next() {
    uint64_t Z = (State += 0x9E3779B97F4A7C15ull);
    Z = (Z ^ (Z >> 30)) * 0xBF58476D1CE4E5B9ull;
    Z = (Z ^ (Z >> 27)) * 0x94D049BB133111EBull;
    return Z ^ (Z >> 31);
  }
  /// Uniform in [-1, 1), 24 random bits: exact in float.
  float unit() { return float(int64_t(next() >> 40) - (1 << 23)) / (1 << 23); }
};

// Round to nearest even; the values here are in [-1, 1), so no overflow.
uint16_t toHalf(float F) {
  uint32_t X;
  std::memcpy(&X, &F, 4);
  uint16_t Sign = (X >> 16) & 0x8000;
  int Exp = int((X >> 23) & 0xff) - 127 + 15;
  uint32_t Mant = X & 0x7fffff;
  if (Exp <= 0) {
    if (Exp < -10)
      return Sign;
    Mant |= 0x800000;
    uint32_t Shift = 14 - Exp;
    uint32_t H = Mant >> Shift, Rest = Mant & ((1u << Shift) - 1),
             Half = 1u << (Shift - 1);
    if (Rest > Half || (Rest == Half && (H & 1)))
      ++H;
    return Sign | uint16_t(H);
  }
  uint32_t H = (uint32_t(Exp) << 10) | (Mant >> 13), Rest = Mant & 0x1fff;
  if (Rest > 0x1000 || (Rest == 0x1000 && (H & 1)))
    ++H;
  return Sign | uint16_t(H);
}
} // namespace

int64_t
runtime::integerInputBound(const Graph &G, ValueId V,
                           llvm::function_ref<TensorRef(ValueId)> TensorOf) {
  int64_t Bound = 8;
  bool Found = false;
  for (NodeId N : G.Values[V].Users) {
    const Node &Nd = G.Nodes[N];
    if (Nd.OpType != "Gather" || Nd.input(1) != V || Nd.input(0) == NoId)
      continue;
    TensorRef Data = TensorOf(Nd.input(0));
    int64_t Rank = int64_t(Data.Dims.size());
    int64_t Axis = Nd.getInt("axis", 0);
    if (Axis < 0)
      Axis += Rank;
    if (Axis < 0 || Axis >= Rank)
      continue;
    int64_t Size = Data.Dims[Axis];
    Bound = Found ? std::min(Bound, Size) : Size;
    Found = true;
  }
  return std::max<int64_t>(Bound, 1);
}

// An 8-bit float (opset 19) of magnitude below 2 in every format: codes
// 0x00 to 0x3F, either sign; 0x80 (the "uz" formats' NaN) becomes 0.
static char randomFloat8(uint64_t Bits) {
  unsigned Code = unsigned(Bits >> 56) & 0xBF;
  return char(Code == 0x80 ? 0 : Code);
}

void runtime::fillRandom(const TensorRef &T, uint64_t Seed, uint64_t Salt,
                         int64_t Bound) {
  if (!T.present())
    return;
  SplitMix64 R{Seed * 0x100000001B3ull + Salt};
  uint64_t N = T.numElements();
  char *P = static_cast<char *>(T.Data);
  auto Int = [&]() { return int64_t(R.next() % uint64_t(Bound)); };
  for (uint64_t I = 0; I < N; ++I) {
    switch (T.Type) {
    case ElementType::Float: {
      float F = R.unit();
      std::memcpy(P + 4 * I, &F, 4);
      break;
    }
    case ElementType::Double: {
      double D = R.unit();
      std::memcpy(P + 8 * I, &D, 8);
      break;
    }
    case ElementType::Float16: {
      uint16_t H = toHalf(R.unit());
      std::memcpy(P + 2 * I, &H, 2);
      break;
    }
    case ElementType::BFloat16: {
      float F = R.unit(); // truncated to bfloat16's 8 bits
      uint32_t X;
      std::memcpy(&X, &F, 4);
      uint16_t H = uint16_t(X >> 16);
      std::memcpy(P + 2 * I, &H, 2);
      break;
    }
    case ElementType::Bool:
      P[I] = char(R.next() & 1);
      break;
    case ElementType::Int64: {
      int64_t V = Int();
      std::memcpy(P + 8 * I, &V, 8);
      break;
    }
    case ElementType::Int32:
    case ElementType::UInt32: {
      int32_t V = int32_t(Int());
      std::memcpy(P + 4 * I, &V, 4);
      break;
    }
    case ElementType::Int16:
    case ElementType::UInt16: {
      int16_t V = int16_t(Int());
      std::memcpy(P + 2 * I, &V, 2);
      break;
    }
    case ElementType::Int8:
    case ElementType::UInt8:
      P[I] = char(Int());
      break;
    case ElementType::UInt64: {
      uint64_t V = uint64_t(Int());
      std::memcpy(P + 8 * I, &V, 8);
      break;
    }
    case ElementType::Float8E4M3FN:
    case ElementType::Float8E4M3FNUZ:
    case ElementType::Float8E5M2:
    case ElementType::Float8E5M2FNUZ:
      P[I] = randomFloat8(R.next());
      break;
    default: // complex: bytes
      std::memset(P, 0, T.bytes());
      return;
    }
  }
}

void runtime::fillRandomWeight(const TensorRef &T, uint64_t Seed,
                               uint64_t Salt) {
  if (!T.present())
    return;
  uint64_t N = T.numElements();
  SplitMix64 R{Seed * 0x100000001B3ull + Salt + 0x5EED};
  // 8-bit integers are a quantized model's weights (MatMulInteger's,
  // QLinearConv's): every byte value, so that the products are not all
  // zero. Wider integers (indices, shapes, biases) stay zero: a random
  // index would be out of range.
  if (T.Type == ElementType::Int8 || T.Type == ElementType::UInt8) {
    char *P = static_cast<char *>(T.Data);
    for (uint64_t I = 0; I < N; ++I)
      P[I] = char(R.next() >> 56);
    return;
  }
  // FP8 weights (dequantized before use) likewise.
  if (isFloat8(T.Type)) {
    char *P = static_cast<char *>(T.Data);
    for (uint64_t I = 0; I < N; ++I)
      P[I] = randomFloat8(R.next());
    return;
  }
  if (T.Type != ElementType::Float) {
    std::memset(T.Data, 0, T.bytes());
    return;
  }
  float *P = T.data<float>();
  if (T.Dims.size() < 2) {
    for (uint64_t I = 0; I < N; ++I)
      P[I] = 1.0f + 0.5f * R.unit();
    return;
  }
  uint64_t Rest = N / uint64_t(std::max<int64_t>(T.Dims[0], 1));
  double F = double(std::max<uint64_t>(uint64_t(T.Dims[0]), Rest));
  float Bound = float(std::sqrt(6.0 / std::max(F, 1.0)));
  for (uint64_t I = 0; I < N; ++I)
    P[I] = Bound * R.unit();
}
