//===- LowBitThreadTest.cpp - int4 LLM kernels' threads on the host -------===//
//
// MatMulNBits, GatherBlockQuantized, 4-bit DequantizeLinear and
// GroupQueryAttention on CUDA (LowBit.cu, GroupQueryAttention.cu): their
// argument builders given host pointers, then every thread of each launch
// run on the host (Kernels/LowBitMath.h, Kernels/GQAMath.h), against the
// CPU kernels of the same nodes. Runs without a GPU.
//
// The MatMulNBits cases use scales that are powers of two and small
// integer activations, so every product and sum is exact in float and the
// CUDA paths must give the CPU's bytes whatever their summation order;
// GroupQueryAttention's caches must be the CPU's bytes, its output equal
// within float rounding (an online softmax in float against the CPU's
// sums in double).
//
//===----------------------------------------------------------------------===//
#include "../../../../lib/Runtime/CUDA/CUDAContext.h"
#include "../../../../lib/Runtime/CUDA/CUDAKernels.h"
#include "NodeCall.h"
#include "oomplan/Runtime/CUDA.h"
#include "oomplan/Runtime/CUDAWorkspaces.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;
using namespace oomplan::runtime::unit;

namespace {

std::vector<float> floatsOf(std::mt19937 &Rng, size_t N, float Lo, float Hi) {
  std::uniform_real_distribution<float> U(Lo, Hi);
  std::vector<float> V(N);
  for (float &X : V)
    X = U(Rng);
  return V;
}

template <typename T> std::vector<T> valuesOf(const std::vector<char> &B) {
  std::vector<T> V(B.size() / sizeof(T));
  std::memcpy(V.data(), B.data(), V.size() * sizeof(T));
  return V;
}

// LowBit.cu's MatMulNBits on the host: up to GemvRows rows, a warp (32
// lanes, summed) per column; beyond, the tiles of W dequantized by
// nbitsDequantize's threads, then the product (exact here: see above).
// Words: the GEMV's word path (gemvKernel<true>), taken where
// nbitsWordPath holds; both lane functions are run on every GEMV case.
std::vector<float> emulateNBits(lowbit::NBitsArgs P, bool Words) {
  std::vector<float> Y(size_t(P.M * P.N), -7.0f);
  P.Y = Y.data();
  if (P.M <= lowbit::GemvRows) {
    for (int64_t N = 0; N < P.N; ++N) {
      float Sum[lowbit::GemvRows] = {};
      for (int Lane = 0; Lane < 32; ++Lane) {
        float Acc[lowbit::GemvRows];
        if (Words)
          lowbit::nbitsGemvLaneWords(P, N, Lane, 32, Acc);
        else
          lowbit::nbitsGemvLane(P, N, Lane, 32, Acc);
        for (int64_t M = 0; M < P.M; ++M)
          Sum[M] += Acc[M];
      }
      for (int64_t M = 0; M < P.M; ++M)
        Y[size_t(M * P.N + N)] = P.Bias ? Sum[M] + P.Bias[N] : Sum[M];
    }
    return Y;
  }
  for (int64_t N0 = 0; N0 < P.N; N0 += lowbit::TileRows) {
    const int64_t Rows = std::min(lowbit::TileRows, P.N - N0);
    std::vector<float> Tile(size_t(Rows * P.K));
    for (int64_t I = 0; I < Rows * P.K; ++I) // the dequantizing threads
      Tile[size_t(I)] = lowbit::nbitsWeight(P, N0 + I / P.K, I % P.K);
    for (int64_t M = 0; M < P.M; ++M) // cuBLAS
      for (int64_t R = 0; R < Rows; ++R) {
        float S = 0;
        for (int64_t K = 0; K < P.K; ++K)
          S += P.A[M * P.K + K] * Tile[size_t(R * P.K + K)];
        Y[size_t(M * P.N + N0 + R)] = S;
      }
  }
  if (P.Bias) // the bias kernel
    for (int64_t I = 0; I < P.M * P.N; ++I)
      Y[size_t(I)] += P.Bias[I % P.N];
  return Y;
}

// MatMulNBits' two CUDA paths give the CPU kernel's bytes: 2, 4 and 8
// bits; K not a multiple of the block (the last block padded); zero points
// packed, float (not integers), or absent; a bias; 1, 8 and 11 rows of A
// (the GEMV path twice, the tiled path once); N beyond one GEMV block.
TEST(LowBitThreads, MatMulNBitsIsTheCPUs) {
  std::mt19937 Rng(11);
  struct Case {
    int64_t M, N, K, Bits, Block;
    int Zp; // 0 none, 1 packed, 2 float
    bool Bias;
  };
  // GEMV (M <= 8) cases cover each bit width and zero-point form, and a K
  // that leaves the last block mostly padding (17 of 32; 40 of 48).
  const Case Cases[] = {
      {1, 37, 40, 4, 16, 1, true},  {8, 5, 32, 2, 16, 0, false},
      {11, 9, 48, 8, 32, 2, true},  {3, 70, 17, 4, 16, 2, false},
      {11, 6, 64, 2, 32, 1, false}, {2, 33, 40, 8, 16, 1, false},
      {5, 11, 72, 2, 64, 2, true},  {1, 64, 256, 4, 32, 0, true}};
  for (const Case &K : Cases) {
    const int64_t Blocks = (K.K + K.Block - 1) / K.Block,
                  Blob = K.Block * K.Bits / 8;
    std::vector<Operand> In;
    std::vector<float> A(size_t(K.M * K.K));
    for (float &V : A)
      V = float(int(Rng() % 9) - 4);
    In.push_back(operandOf(ElementType::Float, {K.M, K.K}, A));
    In.push_back(
        operandOf(ElementType::UInt8, {K.N, Blocks, Blob},
                  randomOf<uint8_t>(Rng, size_t(K.N * Blocks * Blob), 0, 255)));
    std::vector<float> Scales(size_t(K.N * Blocks));
    for (float &S : Scales)
      S = std::ldexp(1.0f, int(Rng() % 5) - 3);
    In.push_back(operandOf(ElementType::Float, {K.N * Blocks}, Scales));
    const int64_t ZpRow = (Blocks * K.Bits + 7) / 8;
    if (K.Zp == 1)
      In.push_back(
          operandOf(ElementType::UInt8, {K.N * ZpRow},
                    randomOf<uint8_t>(Rng, size_t(K.N * ZpRow), 0, 255)));
    else if (K.Zp == 2) {
      std::vector<float> Z(size_t(K.N * Blocks));
      for (float &V : Z)
        V = float(int(Rng() % 16)) + 0.5f;
      In.push_back(operandOf(ElementType::Float, {K.N * Blocks}, Z));
    } else
      In.push_back(Operand());
    In.push_back(Operand()); // g_idx
    if (K.Bias) {
      std::vector<float> B(size_t(K.N));
      for (float &V : B)
        V = float(int(Rng() % 7) - 3) * 0.5f;
      In.push_back(operandOf(ElementType::Float, {K.N}, B));
    }
    NodeCall Q("MatMulNBits", In, ElementType::Float, {K.M, K.N},
               {intAttr("K", K.K), intAttr("N", K.N), intAttr("bits", K.Bits),
                intAttr("block_size", K.Block)});
    ASSERT_TRUE(Q.runCPU());
    lowbit::NBitsArgs P;
    llvm::Error E = nbitsArgs(*Q.C, P);
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    EXPECT_EQ(emulateNBits(P, false), valuesOf<float>(Q.Want))
        << "M " << K.M << " bits " << K.Bits << " zp " << K.Zp;
    if (K.M <= lowbit::GemvRows) {
      ASSERT_TRUE(lowbit::nbitsWordPath(P)) << "bits " << K.Bits;
      EXPECT_EQ(emulateNBits(P, true), valuesOf<float>(Q.Want))
          << "words: M " << K.M << " bits " << K.Bits << " zp " << K.Zp;
    }
  }
}

// MatMulNBits' CUDA workspace is what its path needs, from A's rows when
// the plan is made: none up to GemvRows rows, else one tile of TileRows
// rows of W (or all N, when fewer) in float, 256-aligned, plus cuBLAS's
// (the device's size once a test has made a CUDA context, else the most).
TEST(LowBitThreads, MatMulNBitsWorkspaceFollowsTheRows) {
  const std::optional<Kernel> &K =
      cudaKernelTable().get(ops::opCode(*ops::lookupOp("MatMulNBits")));
  ASSERT_TRUE(K && K->Workspace);
  Node N;
  N.OpType = "MatMulNBits";
  N.Attrs = {intAttr("K", 4096), intAttr("N", 14336), intAttr("bits", 4),
             intAttr("block_size", 32)};
  std::vector<TensorRef> In(3), Out(1);
  In[0].Type = ElementType::Float;
  In[0].Dims = {1, 8, 4096};
  EXPECT_EQ(K->Workspace(N, In, Out), 0u);
  In[0].Dims = {1, 9, 4096};
  EXPECT_EQ(K->Workspace(N, In, Out),
            1024u * 4096 * 4 + cuda::blasWorkspaceBytes());
  N.Attrs[1] = intAttr("N", 33); // 33 * 4096 * 4 bytes is 256-aligned
  N.Attrs[0] = intAttr("K", 3);  // 33 * 3 * 4 = 396 bytes: 512
  In[0].Dims = {20, 3};
  EXPECT_EQ(K->Workspace(N, In, Out), 512u + cuda::blasWorkspaceBytes());
}

// GatherBlockQuantized's threads give the CPU's bytes: 2, 4 and 8 bits,
// with packed zero points or without, int32 and int64 indices (one
// negative), a middle axis; an index out of range is flagged.
TEST(LowBitThreads, GatherBlockQuantizedIsTheCPUs) {
  std::mt19937 Rng(12);
  for (int64_t Bits : {2, 4, 8})
    for (bool Zp : {false, true})
      for (bool Idx64 : {false, true}) {
        const int64_t V = 5, Rows = 2, P = 12, Block = 16;
        const int64_t Width = P * (8 / Bits),
                      Blocks = (Width + Block - 1) / Block,
                      ZpRow = (Blocks * Bits + 7) / 8;
        std::vector<Operand> In;
        In.push_back(
            operandOf(ElementType::UInt8, {V, Rows, P},
                      randomOf<uint8_t>(Rng, size_t(V * Rows * P), 0, 255)));
        const std::vector<int64_t> Idx = {3, -1, 0, 4};
        if (Idx64)
          In.push_back(operandOf(ElementType::Int64, {2, 2}, Idx));
        else
          In.push_back(operandOf(ElementType::Int32, {2, 2},
                                 std::vector<int32_t>(Idx.begin(), Idx.end())));
        In.push_back(
            operandOf(ElementType::Float, {V, Rows, Blocks},
                      floatsOf(Rng, size_t(V * Rows * Blocks), 0.01f, 0.5f)));
        if (Zp)
          In.push_back(operandOf(
              ElementType::UInt8, {V, Rows, ZpRow},
              randomOf<uint8_t>(Rng, size_t(V * Rows * ZpRow), 0, 255)));
        NodeCall Q("GatherBlockQuantized", In, ElementType::Float,
                   {2, 2, Rows, Width},
                   {intAttr("bits", Bits), intAttr("block_size", Block)});
        ASSERT_TRUE(Q.runCPU());
        lowbit::GBQArgs A;
        int ScaleType = -1;
        llvm::Error E = gbqArgs(*Q.C, A, ScaleType);
        ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
        EXPECT_EQ(ScaleType, 0);
        const float *S = static_cast<const float *>(A.Scales);
        std::vector<float> Y(size_t(A.NIdx * A.Rows * A.Width));
        for (int64_t I = 0; I < int64_t(Y.size()); ++I) {
          lowbit::GBQPoint Pt = lowbit::gbqAt(A, I);
          ASSERT_FALSE(Pt.Bad);
          Y[size_t(I)] = Pt.QLessZero * S[Pt.ScaleIndex];
        }
        EXPECT_EQ(Y, valuesOf<float>(Q.Want))
            << "bits " << Bits << " zp " << Zp << " int64 " << Idx64;
        // 5 and -6 are outside [-5, 5).
        for (int64_t Bad : {5, -6}) {
          const int64_t Ix[4] = {0, Bad, 1, 2};
          const int32_t Ix32[4] = {0, int32_t(Bad), 1, 2};
          A.Idx = Idx64 ? static_cast<const void *>(Ix)
                        : static_cast<const void *>(Ix32);
          EXPECT_FALSE(lowbit::gbqAt(A, 0).Bad);
          EXPECT_TRUE(lowbit::gbqAt(A, A.Rows * A.Width).Bad) << Bad;
        }
      }
}

// 4-bit DequantizeLinear's device arithmetic (nibbleAt, then the CPU's
// quant::dequantize) gives the CPU kernel's values: int4 with a negative
// zero point and uint4, per tensor, an odd count (the last byte half used).
TEST(LowBitThreads, Dequantize4IsTheCPUs) {
  std::mt19937 Rng(13);
  for (ElementType T : {ElementType::Int4, ElementType::UInt4}) {
    const bool Signed = T == ElementType::Int4;
    std::vector<uint8_t> X = randomOf<uint8_t>(Rng, 4, 0, 255);
    X.back() &= 0x0F; // 7 values: the high half of the last byte unused
    std::vector<Operand> In;
    In.push_back(operandOf(T, {7}, X));
    In.push_back(operandOf(ElementType::Float, {}, std::vector<float>{0.37f}));
    In.push_back(
        operandOf(T, {}, std::vector<uint8_t>{uint8_t(Signed ? 0x0D : 0x06)}));
    NodeCall Q("DequantizeLinear", In, ElementType::Float, {7}, {});
    ASSERT_TRUE(Q.runCPU());
    std::vector<float> Y(7);
    const int64_t Z = lowbit::nibbleAt(
        In[2].Bytes.size()
            ? reinterpret_cast<const uint8_t *>(In[2].Bytes.data())
            : nullptr,
        0, Signed);
    EXPECT_EQ(Z, Signed ? -3 : 6);
    for (int64_t I = 0; I < 7; ++I)
      Y[size_t(I)] =
          quant::dequantize(lowbit::nibbleAt(X.data(), I, Signed), Z, 0.37f);
    EXPECT_EQ(Y, valuesOf<float>(Q.Want)) << elementTypeName(T).str();
  }
}

// One GroupQueryAttention node and its CPU run.
struct GQACase {
  const char *What;
  int64_t B, S, Hq, Hkv, D, Past, Present;
  std::vector<int32_t> Seqlens;
  int32_t Total;
  bool Packed = false, Rotary = false, Interleaved = false, Smooth = false,
       PosIds = false;
  int64_t Rot = 0, CosRows = 0, Window = -1;
  float Softcap = 0;
};

// GQAMath.h's threads on the host: presentAt for every cache element, then
// for every query row with one lane holding all of head_size, attendRow
// (Parts 1: the warp-per-row kernel), or its keys in Parts parts merged in
// order as the block-per-row kernel's warp 0 merges its warps' parts
// (smooth softmax's zero logit in part 0 only).
void emulateGQA(const gqa::GQAArgs &A, std::vector<float> &Y,
                std::vector<float> &PK, std::vector<float> &PV, bool &Bad,
                int Parts = 1) {
  gqa::GQAArgs P = A;
  P.Y = Y.data();
  P.PresentK = PK.data();
  P.PresentV = PV.data();
  const gqa::Mode M = gqa::modeOf(P);
  Bad = false;
  for (int64_t E = 0; E < int64_t(PK.size()); ++E) {
    float K, V;
    Bad |= !gqa::presentAt<float>(P, M, E, K, V);
    PK[size_t(E)] = K;
    PV[size_t(E)] = V;
  }
  auto One = [](float V) { return V; };
  for (int64_t B = 0; B < P.B; ++B)
    for (int64_t S = 0; S < P.S; ++S)
      for (int64_t H = 0; H < P.Hq; ++H)
        if (Parts == 1) {
          Bad |= !gqa::attendRow<float, 64>(P, M, B, S, H, 0, 1, One);
        } else {
          gqa::Softmax Sm(P.Smooth);
          float Acc[64];
          bool Ok = gqa::attendPart<float, 64>(P, M, B, S, H, 0, 1, 0, Parts,
                                               One, Sm, Acc);
          for (int Part = 1; Ok && Part < Parts; ++Part) {
            gqa::Softmax From(false);
            float FromAcc[64];
            Ok = gqa::attendPart<float, 64>(P, M, B, S, H, 0, 1, Part, Parts,
                                            One, From, FromAcc);
            gqa::mergePart<64>(Sm, Acc, From, FromAcc);
          }
          if (Ok)
            gqa::writeRow<float, 64>(P, B, S, H, 0, 1, Sm, Acc);
          Bad |= !Ok;
        }
}

// GroupQueryAttention's CUDA threads give the CPU's present caches to the
// byte and its output within float rounding: the first prompt in a batch
// of two, decode steps with ragged seqlens_k after a past, several new
// tokens after a past, rotary (half split, interleaved, partial, with
// position_ids), packed QKV, a local window, softcap and smooth softmax.
TEST(LowBitThreads, GroupQueryAttentionIsTheCPUs) {
  std::vector<GQACase> Cases;
  GQACase C1{"first prompt, rotary", 2, 3, 4, 2, 8, 0, 3, {2, 2}, 3};
  C1.Rotary = true, C1.Rot = 8, C1.CosRows = 6;
  Cases.push_back(C1);
  GQACase C2{"decode, ragged past", 2, 1, 4, 1, 8, 4, 5, {4, 2}, 5};
  Cases.push_back(C2);
  GQACase C3{"decode, interleaved partial rotary, position ids, window",
             2,
             1,
             2,
             2,
             8,
             5,
             6,
             {5, 3},
             6};
  C3.Rotary = true, C3.Interleaved = true, C3.Rot = 4, C3.CosRows = 8;
  C3.PosIds = true, C3.Window = 3;
  Cases.push_back(C3);
  GQACase C4{"packed, softcap, smooth", 1, 2, 4, 2, 16, 0, 2, {1}, 2};
  C4.Packed = true, C4.Softcap = 2.5f, C4.Smooth = true;
  Cases.push_back(C4);
  GQACase C5{"three tokens after a past of two", 1, 3, 2, 1, 8, 2, 5, {4}, 5};
  C5.Rotary = true, C5.Rot = 8, C5.CosRows = 5;
  Cases.push_back(C5);
  std::mt19937 Rng(14);
  const ElementType F = ElementType::Float;
  for (const GQACase &K : Cases) {
    std::vector<Operand> In;
    const int64_t Tokens = K.B * K.S;
    const int64_t QWidth = (K.Packed ? K.Hq + 2 * K.Hkv : K.Hq) * K.D;
    In.push_back(operandOf(F, {K.B, K.S, QWidth},
                           floatsOf(Rng, size_t(Tokens * QWidth), -1, 1)));
    if (K.Packed) {
      In.push_back(Operand());
      In.push_back(Operand());
    } else
      for (int I = 0; I < 2; ++I)
        In.push_back(
            operandOf(F, {K.B, K.S, K.Hkv * K.D},
                      floatsOf(Rng, size_t(Tokens * K.Hkv * K.D), -1, 1)));
    for (int I = 0; I < 2; ++I)
      In.push_back(
          K.Past ? operandOf(
                       F, {K.B, K.Hkv, K.Past, K.D},
                       floatsOf(Rng, size_t(K.B * K.Hkv * K.Past * K.D), -1, 1))
                 : Operand());
    In.push_back(operandOf(ElementType::Int32, {K.B}, K.Seqlens));
    In.push_back(
        operandOf(ElementType::Int32, {1}, std::vector<int32_t>{K.Total}));
    if (K.Rotary) {
      std::vector<float> Cos(size_t(K.CosRows * K.Rot / 2)), Sin(Cos.size());
      for (size_t I = 0; I < Cos.size(); ++I) {
        Cos[I] = std::cos(0.3f * float(I));
        Sin[I] = std::sin(0.3f * float(I));
      }
      In.push_back(operandOf(F, {K.CosRows, K.Rot / 2}, Cos));
      In.push_back(operandOf(F, {K.CosRows, K.Rot / 2}, Sin));
    } else {
      In.push_back(Operand());
      In.push_back(Operand());
    }
    if (K.PosIds) {
      std::vector<int64_t> Pos(static_cast<size_t>(Tokens));
      for (int64_t B = 0; B < K.B; ++B)
        Pos[size_t(B)] = K.Seqlens[size_t(B)] + 1; // one past the new row
      In.push_back(operandOf(ElementType::Int64, {K.B, K.S}, Pos));
    }
    std::vector<Attribute> Attrs = {
        intAttr("num_heads", K.Hq),
        intAttr("kv_num_heads", K.Hkv),
        intAttr("do_rotary", K.Rotary),
        intAttr("rotary_interleaved", K.Interleaved),
        intAttr("smooth_softmax", K.Smooth),
        intAttr("local_window_size", K.Window)};
    if (K.Softcap > 0)
      Attrs.push_back(floatAttr("softcap", K.Softcap));
    std::vector<Operand> Outs = {{F, {K.B, K.S, K.Hq * K.D}, {}},
                                 {F, {K.B, K.Hkv, K.Present, K.D}, {}},
                                 {F, {K.B, K.Hkv, K.Present, K.D}, {}}};
    NodeCall Q("GroupQueryAttention", In, Outs, Attrs);
    ASSERT_TRUE(Q.runCPU()) << K.What;
    gqa::GQAArgs A;
    int Type = -1;
    llvm::Error E = gqaArgs(*Q.C, A, Type);
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    EXPECT_EQ(Type, 0);
    // One part (a warp a row), and a row's keys split in 2, 3 and 8 parts
    // (a block a row; with these few keys some parts are empty).
    for (int Parts : {1, 2, 3, 8}) {
      std::vector<float> Y(size_t(Tokens * K.Hq * K.D), -9.0f),
          PK(size_t(K.B * K.Hkv * K.Present * K.D), -9.0f), PV(PK);
      bool Bad;
      emulateGQA(A, Y, PK, PV, Bad, Parts);
      EXPECT_FALSE(Bad) << K.What;
      EXPECT_EQ(PK, valuesOf<float>(Q.Wants[1])) << K.What;
      EXPECT_EQ(PV, valuesOf<float>(Q.Wants[2])) << K.What;
      std::vector<float> Want = valuesOf<float>(Q.Wants[0]);
      ASSERT_EQ(Y.size(), Want.size());
      for (size_t I = 0; I < Y.size(); ++I)
        EXPECT_NEAR(Y[I], Want[I], 1e-6 + 1e-5 * std::fabs(Want[I]))
            << K.What << ", " << Parts << " parts [" << I << "]";
    }
  }
}

// What the CPU kernel refuses before it runs, the device threads flag:
// seqlens_k beyond the cache, a position past cos_cache's rows, two new
// tokens after a past in a batch of two.
TEST(LowBitThreads, GroupQueryAttentionFlagsWhatTheCPURefuses) {
  std::vector<float> Q(2 * 2 * 8, 0.5f), KV(2 * 2 * 8, 0.25f),
      Past(2 * 1 * 3 * 8, 0.125f), Cos(4 * 4, 1.0f), Sin(4 * 4, 0.0f);
  std::vector<int32_t> Seq = {3, 3}, Total = {4};
  gqa::GQAArgs A;
  A.Q = Q.data(), A.K = KV.data(), A.V = KV.data();
  A.PastK = Past.data(), A.PastV = Past.data();
  A.Seqlens = Seq.data(), A.Total = Total.data();
  A.B = 1, A.S = 1, A.Hq = 1, A.Hkv = 1, A.D = 8, A.Past = 3, A.Present = 4;
  std::vector<float> Y(8), PK(4 * 8), PV(4 * 8);
  bool Bad;
  emulateGQA(A, Y, PK, PV, Bad);
  EXPECT_FALSE(Bad) << "seqlens 3 + 1 = 4 rows fit a cache of 4";
  Seq[0] = 4;
  emulateGQA(A, Y, PK, PV, Bad);
  EXPECT_TRUE(Bad) << "5 rows in a cache of 4";
  Seq[0] = 3;
  A.Rotary = true, A.Rot = 8, A.CosRows = 3, A.Cos = Cos.data(),
  A.Sin = Sin.data();
  emulateGQA(A, Y, PK, PV, Bad);
  EXPECT_TRUE(Bad) << "position 3 past cos_cache's 3 rows";
  A.CosRows = 4;
  emulateGQA(A, Y, PK, PV, Bad);
  EXPECT_FALSE(Bad);
  A.Rotary = false;
  A.B = 2, A.S = 2, Total[0] = 5; // subsequent tokens in a batch of 2
  std::vector<float> Y2(2 * 2 * 8), PK2(2 * 4 * 8), PV2(PK2);
  emulateGQA(A, Y2, PK2, PV2, Bad);
  EXPECT_TRUE(Bad);
}

// The int4 LLM ops have CUDA kernels, so a GenAI model's steps run on the
// device (they were host steps): the table lists them, 4-bit
// DequantizeLinear included, which sends what it cannot read to the host.
TEST(LowBitThreads, TheTableHasTheLLMOps) {
  const KernelTable &T = cudaKernelTable();
  for (const char *Op :
       {"MatMulNBits", "GatherBlockQuantized", "GroupQueryAttention"})
    EXPECT_TRUE(T.get(ops::opCode(*ops::lookupOp(Op)))) << Op;
  const std::optional<Kernel> &DQ =
      T.get(ops::opCode(*ops::lookupOp("DequantizeLinear")));
  ASSERT_TRUE(DQ.has_value());
  EXPECT_TRUE(llvm::is_contained(DQ->Types, ElementType::Int4));
  EXPECT_TRUE(llvm::is_contained(DQ->Types, ElementType::UInt4));
  // A float16 scale goes to the host (the kernel reads float), a float one
  // stays on the device.
  ASSERT_TRUE(DQ->Refuses);
  std::vector<TensorRef> In(2), Out(1);
  In[0].Type = ElementType::Int4;
  In[1].Type = ElementType::Float16;
  Out[0].Type = ElementType::Float;
  EXPECT_EQ(DQ->Refuses(Node(), In, Out),
            "DequantizeLinear with a scale of float16");
  In[1].Type = ElementType::Float;
  EXPECT_EQ(DQ->Refuses(Node(), In, Out), "");
}

} // namespace
