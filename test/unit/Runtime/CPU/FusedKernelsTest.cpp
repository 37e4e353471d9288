//===- FusedKernelsTest.cpp - OomplanAttention, OomplanConv, OomplanMatMul
//-===//
//
// Each fused kernel against the unfused ops, run by the existing CPU kernels
// on the same random inputs (rtol 1e-4): attention as MatMul, Mul, Add,
// Where, Softmax, MatMul; conv as Conv, Add, Relu/Clip; matmul as MatMul or
// Gemm, Add and the activation. Plus one tiny case per kernel whose values
// were worked out by hand (in the comments), and the workspace formula.
//
//===----------------------------------------------------------------------===//
#include "OpRunner.h"
#include "oomplan/IR/FusedOps.h"
#include <cmath>
#include <random>

using namespace oomplan;
using namespace oomplan::test;

namespace {

using Dims = std::vector<int64_t>;

int64_t numel(const Dims &D) {
  int64_t N = 1;
  for (int64_t X : D)
    N *= X;
  return N;
}

/// numpy broadcast of two shapes.
Dims bcast(Dims A, Dims B) {
  while (A.size() < B.size())
    A.insert(A.begin(), 1);
  while (B.size() < A.size())
    B.insert(B.begin(), 1);
  for (size_t I = 0; I < A.size(); ++I)
    A[I] = std::max(A[I], B[I]);
  return A;
}

/// MatMul's output dims for operands of rank 2 or more.
Dims matmulDims(const Dims &A, const Dims &B) {
  Dims Out = bcast(Dims(A.begin(), A.end() - 2), Dims(B.begin(), B.end() - 2));
  Out.push_back(A[A.size() - 2]);
  Out.push_back(B.back());
  return Out;
}

std::vector<float> random(int64_t N, unsigned Seed, float Lo = -1,
                          float Hi = 1) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> U(Lo, Hi);
  std::vector<float> V(static_cast<size_t>(N));
  for (float &X : V)
    X = U(Gen);
  return V;
}

/// Runs R on Ins into a fresh output of OutDims; empty on error (reported).
std::vector<float> runTo(OpRunner &R, std::vector<runtime::TensorRef> Ins,
                         const Dims &OutDims) {
  std::vector<float> Out(size_t(numel(OutDims)));
  llvm::Error E = R.run(std::move(Ins), {f32(Out, OutDims)});
  if (E) {
    ADD_FAILURE() << R.G.Nodes[0].OpType << ": "
                  << llvm::toString(std::move(E));
    return {};
  }
  return Out;
}

void expectClose(const std::vector<float> &Got, const std::vector<float> &Want,
                 double RTol = 1e-4, double ATol = 1e-5) {
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Got.size(); ++I) {
    if (std::isnan(Want[I])) {
      EXPECT_TRUE(std::isnan(Got[I])) << "at " << I;
      continue;
    }
    EXPECT_NEAR(Got[I], Want[I], ATol + RTol * std::fabs(Want[I]))
        << "at " << I;
  }
}

//===-- Attention ---------------------------------------------------------===//

struct AttnCase {
  Dims Q, KT, V;   // KT: K already transposed, [..., D, Sk]
  Dims Bias, Mask; // empty: absent
  float Scale = 0.125f;
  int FillWhere = 1;
  float Fill = -INFINITY;
  bool Causal = false; // the mask is j > i (else random)
};

/// The unfused graph: MatMul, Mul, Add, Where, Softmax, MatMul.
std::vector<float> attentionUnfused(const AttnCase &A, std::vector<float> &Q,
                                    std::vector<float> &KT,
                                    std::vector<float> &V,
                                    std::vector<float> &Bias,
                                    std::vector<uint8_t> &Mask) {
  Dims SD = matmulDims(A.Q, A.KT);
  OpRunner MM("MatMul");
  std::vector<float> S = runTo(MM, {f32(Q, A.Q), f32(KT, A.KT)}, SD);
  std::vector<float> Scale{A.Scale};
  OpRunner Mul("Mul");
  S = runTo(Mul, {f32(S, SD), f32(Scale, {})}, SD);
  if (!A.Bias.empty()) {
    Dims Out = bcast(SD, A.Bias);
    OpRunner Add("Add");
    S = runTo(Add, {f32(S, SD), f32(Bias, A.Bias)}, Out);
    SD = Out;
  }
  if (!A.Mask.empty()) {
    Dims Out = bcast(SD, A.Mask);
    std::vector<float> Fill{A.Fill};
    OpRunner Where("Where");
    auto Cond = tensor(Mask, ElementType::Bool, A.Mask);
    S = A.FillWhere ? runTo(Where, {Cond, f32(Fill, {}), f32(S, SD)}, Out)
                    : runTo(Where, {Cond, f32(S, SD), f32(Fill, {})}, Out);
    SD = Out;
  }
  OpRunner Soft("Softmax", 13);
  S = runTo(Soft, {f32(S, SD)}, SD);
  OpRunner PV("MatMul");
  return runTo(PV, {f32(S, SD), f32(V, A.V)}, matmulDims(SD, A.V));
}

/// K^T's last two dims swapped back: K [..., Sk, D].
std::vector<float> untranspose(const std::vector<float> &KT, const Dims &D) {
  const int64_t Rows = D[D.size() - 2], Cols = D.back();
  std::vector<float> K(KT.size());
  for (int64_t B = 0; B < numel(D) / (Rows * Cols); ++B)
    for (int64_t I = 0; I < Rows; ++I)
      for (int64_t J = 0; J < Cols; ++J)
        K[B * Rows * Cols + J * Rows + I] = KT[B * Rows * Cols + I * Cols + J];
  return K;
}

void checkAttention(const AttnCase &A, unsigned Seed) {
  std::vector<float> Q = random(numel(A.Q), Seed, -2, 2);
  std::vector<float> KT = random(numel(A.KT), Seed + 1, -2, 2);
  std::vector<float> V = random(numel(A.V), Seed + 2);
  std::vector<float> Bias = random(numel(A.Bias), Seed + 3);
  std::vector<uint8_t> Mask(size_t(A.Mask.empty() ? 0 : numel(A.Mask)));
  std::mt19937 Gen(Seed + 4);
  for (size_t I = 0; I < Mask.size(); ++I) {
    const int64_t Sk = A.Mask.back(),
                  Row = int64_t(I) / Sk % A.Mask[A.Mask.size() - 2];
    Mask[I] = A.Causal ? uint8_t((int64_t(I) % Sk > Row) == bool(A.FillWhere))
                       : uint8_t(Gen() % 4 == 0);
  }
  if (A.Bias.empty())
    Bias.clear();
  std::vector<float> Want = attentionUnfused(A, Q, KT, V, Bias, Mask);
  const Dims YD = matmulDims(matmulDims(A.Q, A.KT), A.V);
  for (int KTransposed : {0, 1}) {
    SCOPED_TRACE("k_transposed " + std::to_string(KTransposed));
    std::vector<float> K = KTransposed ? KT : untranspose(KT, A.KT);
    Dims KD = A.KT;
    if (!KTransposed)
      std::swap(KD[KD.size() - 1], KD[KD.size() - 2]);
    OpRunner R("OomplanAttention");
    R.f("scale", A.Scale).i("k_transposed", KTransposed);
    R.i("mask_fill_where", A.FillWhere).f("mask_fill", A.Fill);
    std::vector<float> NoBias;
    std::vector<uint8_t> NoMask;
    std::vector<runtime::TensorRef> Ins{
        f32(Q, A.Q), f32(K, KD), f32(V, A.V),
        f32(A.Bias.empty() ? NoBias : Bias, A.Bias),
        tensor(A.Mask.empty() ? NoMask : Mask, ElementType::Bool, A.Mask)};
    std::vector<float> Got = runTo(R, Ins, YD);
    expectClose(Got, Want);
    // The declared scratch is the shared formula, never Sq x Sk.
    const int64_t Sq = YD[YD.size() - 2], Dv = YD.back();
    EXPECT_EQ(R.WorkspaceBytes,
              fused::attentionWorkspaceBytes(
                  uint64_t(numel(YD) / (Sq * Dv)), uint64_t(Sq),
                  uint64_t(A.V[A.V.size() - 2]), uint64_t(Dv)));
  }
}

} // namespace

TEST(FusedAttentionKernel, HandComputedTwoRows) {
  // Q rows (1,0) and (0,1); K = I (k_transposed 0); V = [[1,2],[3,4]];
  // scale ln 3. Row 0: scores (ln3, 0), softmax (3/4, 1/4), output
  // 0.75*(1,2) + 0.25*(3,4) = (1.5, 2.5). Row 1: scores (0, ln3) but the
  // mask is true at key 1 (mask_fill_where 1, fill -inf): softmax (1, 0),
  // output (1, 2). A third row masked everywhere: 0/0 = NaN, as the
  // unfused Softmax gives.
  std::vector<float> Q{1, 0, 0, 1, 1, 1}, K{1, 0, 0, 1}, V{1, 2, 3, 4}, Y(6);
  std::vector<float> NoBias;
  std::vector<uint8_t> Mask{0, 0, 0, 1, 1, 1};
  OpRunner R("OomplanAttention");
  R.f("scale", std::log(3.0)).i("k_transposed", 0).i("mask_fill_where", 1);
  RUN_OK(R,
         {f32(Q, {3, 2}), f32(K, {2, 2}), f32(V, {2, 2}), f32(NoBias, {}),
          tensor(Mask, ElementType::Bool, {3, 2})},
         {f32(Y, {3, 2})});
  expectNear({Y[0], Y[1], Y[2], Y[3]}, {1.5f, 2.5f, 1, 2});
  EXPECT_TRUE(std::isnan(Y[4]) && std::isnan(Y[5]));
  // Br = 3, Bc = 2, one task, one worker: 4 * (3*2 + 3*2 + 2*3) bytes.
  EXPECT_EQ(R.WorkspaceBytes, 72u);
}

TEST(FusedAttentionKernel, WorkspaceFormulaByHand) {
  // Output [4, 70, 24], Sk 130: Br = Bc = 64, tasks 4 * 2 = 8, 8 workers,
  // per worker 64*64 + 64*24 + 2*64 = 5760 floats: 8 * 4 * 5760 bytes.
  EXPECT_EQ(fused::attentionWorkspaceBytes(4, 70, 130, 24), 184320u);
  // 40 tasks share the 16 slots.
  EXPECT_EQ(fused::attentionWorkspaceBytes(20, 70, 130, 24), 16u * 4 * 5760);
}

TEST(FusedAttentionKernel, MatchesUnfusedBiasCausalMaskOddSizes) {
  AttnCase A;
  A.Q = {2, 3, 70, 16};
  A.KT = {2, 3, 16, 130};
  A.V = {2, 3, 130, 24};
  A.Bias = {2, 1, 1, 130}; // additive padding mask per batch
  A.Mask = {70, 130};
  A.Causal = true;
  checkAttention(A, 1);
}

TEST(FusedAttentionKernel, MatchesUnfusedBroadcastBatchAndMaskPolarity) {
  // K shared across the batch, V across heads, random mask with both
  // polarities and a finite fill; Sq > Sk.
  for (int Where : {0, 1}) {
    SCOPED_TRACE("mask_fill_where " + std::to_string(Where));
    AttnCase A;
    A.Q = {2, 5, 67, 8};
    A.KT = {1, 5, 8, 45};
    A.V = {2, 1, 45, 9};
    A.Mask = {2, 1, 67, 45};
    A.FillWhere = Where;
    A.Fill = -10000.0f;
    A.Scale = 0.35f;
    checkAttention(A, 10 + Where);
  }
}

TEST(FusedAttentionKernel, MatchesUnfusedNoBiasNoMaskRank3) {
  AttnCase A;
  A.Q = {3, 1, 33};
  A.KT = {3, 33, 200};
  A.V = {3, 200, 5};
  A.Scale = 1.0f;
  checkAttention(A, 20);
  AttnCase B; // bias only, full [B, H, Sq, Sk], more tasks than slots
  B.Q = {20, 65, 4};
  B.KT = {20, 4, 65};
  B.V = {20, 65, 4};
  B.Bias = {20, 65, 65};
  checkAttention(B, 30);
}

TEST(FusedAttentionKernel, NaNAmongMaskedScoresMakesTheRowNaN) {
  // Sk 130 walks three key blocks of 64. Every score is -inf (the bias)
  // but key 129's (0), and row 0 has a NaN at key 64, alone with -inf
  // scores in the second block, row 1 at key 0, in the first: both rows
  // are NaN, as the unfused Softmax gives (a block whose max is -inf was
  // once dropped whole, its NaN with it). Row 2 has no NaN: exactly V's
  // key 129.
  AttnCase A;
  A.Q = {3, 1};
  A.KT = {1, 130};
  A.V = {130, 2};
  A.Bias = {3, 130};
  A.Scale = 1.0f;
  std::vector<float> Q{1, 1, 1}, KT(130, 0.5f), V = random(260, 40);
  std::vector<float> Bias(3 * 130, -INFINITY);
  std::vector<uint8_t> NoMask;
  for (int Row = 0; Row < 3; ++Row)
    Bias[size_t(Row * 130 + 129)] = 0;
  Bias[64] = NAN;
  Bias[130] = NAN;
  std::vector<float> Want = attentionUnfused(A, Q, KT, V, Bias, NoMask);
  ASSERT_EQ(Want.size(), 6u);
  EXPECT_TRUE(std::isnan(Want[0]) && std::isnan(Want[2]));
  OpRunner R("OomplanAttention");
  R.f("scale", 1.0f).i("k_transposed", 1);
  std::vector<runtime::TensorRef> Ins{f32(Q, A.Q), f32(KT, A.KT), f32(V, A.V),
                                      f32(Bias, A.Bias)};
  std::vector<float> Got = runTo(R, Ins, {3, 2});
  for (int I = 0; I < 4; ++I)
    EXPECT_TRUE(std::isnan(Got[size_t(I)])) << "at " << I;
  expectNear({Got[4], Got[5]}, {V[258], V[259]});
  expectClose(Got, Want);
}

//===-- Conv + residual ---------------------------------------------------===//

TEST(FusedConvKernel, HandComputedInPlaceRelu) {
  // X = 1..9 (3x3), W = ones 2x2, bias -20: windows 1+2+4+5 = 12, 16, 24,
  // 28, minus 20 = -8, -4, 4, 8; plus residual (1, 1, 1, 1): -7, -3, 5, 9;
  // Relu: 0, 0, 5, 9. The output is the residual's buffer.
  std::vector<float> X{1, 2, 3, 4, 5, 6, 7, 8, 9}, W(4, 1.0f), B{-20};
  std::vector<float> Res{1, 1, 1, 1};
  OpRunner R("OomplanConv");
  R.s("activation", "Relu");
  RUN_OK(R,
         {f32(X, {1, 1, 3, 3}), f32(W, {1, 1, 2, 2}), f32(B, {1}),
          f32(Res, {1, 1, 2, 2})},
         {f32(Res, {1, 1, 2, 2})});
  expectNear(Res, {0, 0, 5, 9});
}

namespace {

struct ConvCase {
  Dims X, W;
  int64_t Group = 1;
  std::vector<int64_t> Strides, Pads;
  std::string Act; // "", "Relu", "Clip"
  bool Bias = true;
  bool NaN = false; ///< X[0] is NaN: the outputs it reaches stay NaN.
};

void setConvAttrs(OpRunner &R, const ConvCase &C) {
  R.i("group", C.Group);
  if (!C.Strides.empty())
    R.ints("strides", C.Strides);
  if (!C.Pads.empty())
    R.ints("pads", C.Pads);
}

void checkConv(const ConvCase &C, unsigned Seed) {
  const size_t R = C.X.size() - 2;
  Dims YD{C.X[0], C.W[0]};
  for (size_t I = 0; I < R; ++I) {
    int64_t S = C.Strides.empty() ? 1 : C.Strides[I];
    int64_t P = C.Pads.empty() ? 0 : C.Pads[I] + C.Pads[R + I];
    YD.push_back((C.X[2 + I] + P - C.W[2 + I]) / S + 1);
  }
  std::vector<float> X = random(numel(C.X), Seed),
                     W = random(numel(C.W), Seed + 1);
  if (C.NaN)
    X[0] = NAN;
  std::vector<float> B = random(C.Bias ? C.W[0] : 0, Seed + 2);
  std::vector<float> Res = random(numel(YD), Seed + 3);
  // Unfused: Conv, Add, then Relu or Clip(-0.5, 0.5).
  OpRunner Conv("Conv");
  setConvAttrs(Conv, C);
  std::vector<float> Want =
      runTo(Conv, {f32(X, C.X), f32(W, C.W), f32(B, {int64_t(B.size())})}, YD);
  OpRunner Add("Add");
  Want = runTo(Add, {f32(Want, YD), f32(Res, YD)}, YD);
  std::vector<float> Lo{-0.5f}, Hi{0.5f};
  if (C.Act == "Relu") {
    OpRunner Act("Relu");
    Want = runTo(Act, {f32(Want, YD)}, YD);
  } else if (C.Act == "Clip") {
    OpRunner Act("Clip", 13);
    Want = runTo(Act, {f32(Want, YD), f32(Lo, {}), f32(Hi, {})}, YD);
  }
  for (bool InPlace : {false, true}) {
    SCOPED_TRACE(InPlace ? "in place" : "into a new buffer");
    OpRunner F("OomplanConv");
    setConvAttrs(F, C);
    F.s("activation", C.Act);
    if (C.Act == "Clip")
      F.f("activation_min", -0.5).f("activation_max", 0.5);
    std::vector<float> ResIn = Res, Out(Res.size(), NAN);
    std::vector<float> &Y = InPlace ? ResIn : Out;
    RUN_OK(
        F,
        {f32(X, C.X), f32(W, C.W), f32(B, {int64_t(B.size())}), f32(ResIn, YD)},
        {f32(Y, YD)});
    expectClose(Y, Want);
    if (!InPlace) {
      EXPECT_EQ(ResIn, Res); // the residual is only read
    }
    // Same im2col as Conv: the fused node costs no extra scratch.
    EXPECT_EQ(F.WorkspaceBytes, Conv.WorkspaceBytes);
  }
}

} // namespace

TEST(FusedConvKernel, MatchesUnfusedIm2colStridePad) {
  ConvCase C;
  C.X = {2, 5, 9, 11};
  C.W = {7, 5, 3, 3};
  C.Strides = {2, 1};
  C.Pads = {1, 1, 1, 0};
  C.Act = "Relu";
  checkConv(C, 40);
}

TEST(FusedConvKernel, MatchesUnfusedGroupsPointwiseDepthwise) {
  ConvCase G; // grouped 3x3, Clip
  G.X = {1, 6, 7, 7};
  G.W = {4, 3, 3, 3};
  G.Group = 2;
  G.Pads = {1, 1, 1, 1};
  G.Act = "Clip";
  checkConv(G, 50);
  ConvCase P; // 1x1 unit stride: the input is the GEMM operand
  P.X = {2, 8, 5, 6};
  P.W = {12, 8, 1, 1};
  P.Act = "";
  P.Bias = false;
  checkConv(P, 60);
  ConvCase D; // depthwise, stride 2: the direct loop, which adds
  D.X = {2, 6, 10, 9};
  D.W = {6, 1, 3, 3};
  D.Group = 6;
  D.Strides = {2, 2};
  D.Pads = {1, 1, 1, 1};
  D.Act = "Relu";
  checkConv(D, 70);
}

// Relu and Clip are applied by convGemm as it stores a tile: only at the
// last of several k blocks (300 deep: 256 + 44; clamping a partial sum
// would be wrong), on pointwise and im2col products, NaN kept as the
// unfused kernels keep it, on partial tiles (13 output channels, 30
// columns).
TEST(FusedConvKernel, ClampInTheGemmMatchesUnfusedAcrossKBlocks) {
  for (const char *Act : {"Relu", "Clip"}) {
    SCOPED_TRACE(Act);
    ConvCase P; // pointwise, 300 deep
    P.X = {2, 300, 5, 6};
    P.W = {13, 300, 1, 1};
    P.Act = Act;
    P.NaN = true;
    checkConv(P, 80);
    ConvCase I; // im2col, 3x3 over 40 channels: 360 deep
    I.X = {2, 40, 6, 5};
    I.W = {13, 40, 3, 3};
    I.Pads = {1, 1, 1, 1};
    I.Act = Act;
    I.NaN = true;
    checkConv(I, 90);
  }
}

// The channel-blocked depthwise path clamps as it stores each row: on rows
// of 7, 11, 13 and 14 outputs (a tail of every length from the transposed
// block: 7, 3, 5, 6 columns, stored in pieces of four, two and one), 12
// channels (a block of eight and one of four lanes), with the residual
// added before the clamp, NaN kept.
TEST(FusedConvKernel, ClampInTheDepthwiseStoreMatchesUnfused) {
  for (const char *Act : {"Relu", "Clip"})
    for (int64_t Wd : {7, 11, 13, 14}) {
      SCOPED_TRACE(std::string(Act) + " width " + std::to_string(Wd));
      ConvCase D;
      D.X = {2, 12, 6, Wd};
      D.W = {12, 1, 3, 3};
      D.Group = 12;
      D.Pads = {1, 1, 1, 1};
      D.Act = Act;
      D.NaN = true;
      checkConv(D, unsigned(100 + Wd));
    }
}

//===-- MatMul + bias + activation ----------------------------------------===//

TEST(FusedMatMulKernel, HandComputedBiasRelu) {
  // [1, 2] @ [[1, 0], [0, -1]] = [1, -2]; + bias 0.5 = [1.5, -1.5]; Relu:
  // [1.5, 0].
  std::vector<float> A{1, 2}, B{1, 0, 0, -1}, Bias{0.5f, 0.5f}, Y(2);
  OpRunner R("OomplanMatMul");
  R.s("activation", "Relu");
  RUN_OK(R, {f32(A, {1, 2}), f32(B, {2, 2}), f32(Bias, {2})}, {f32(Y, {1, 2})});
  expectNear(Y, {1.5f, 0});
}

TEST(FusedMatMulKernel, HandComputedGemmTransB) {
  // Gemm, transB, alpha 2, beta 3: B^T = [[1, 3], [2, 4]], A = [1, 1]:
  // A B^T = [3, 7], times 2 = [6, 14], plus 3 * C (-1, -5) = [3, -1];
  // Tanh: [tanh 3, tanh -1].
  std::vector<float> A{1, 1}, B{1, 2, 3, 4}, C{-1, -5}, Y(2);
  OpRunner R("OomplanMatMul");
  R.i("gemm", 1).i("transB", 1).f("alpha", 2).f("beta", 3);
  R.s("activation", "Tanh");
  RUN_OK(R, {f32(A, {1, 2}), f32(B, {2, 2}), f32(C, {2})}, {f32(Y, {1, 2})});
  expectNear(Y, {std::tanh(3.0f), std::tanh(-1.0f)});
}

TEST(FusedMatMulKernel, MatchesUnfusedEveryEpilogue) {
  const Dims AD{2, 3, 17, 24}, BD{24, 40}, BiasD{40}, YD{2, 3, 17, 40};
  std::vector<float> A = random(numel(AD), 80, -2, 2),
                     B = random(numel(BD), 81);
  std::vector<float> Bias = random(40, 82);
  OpRunner MM("MatMul");
  std::vector<float> Sum = runTo(MM, {f32(A, AD), f32(B, BD)}, YD);
  OpRunner Add("Add");
  Sum = runTo(Add, {f32(Sum, YD), f32(Bias, BiasD)}, YD);
  for (const char *Act :
       {"", "Relu", "Gelu", "GeluTanh", "Sigmoid", "SiLU", "Tanh"}) {
    SCOPED_TRACE(Act);
    std::string Name = Act;
    std::vector<float> Want = Sum;
    if (Name == "Gelu" || Name == "GeluTanh") {
      OpRunner G("Gelu", 20);
      if (Name == "GeluTanh")
        G.s("approximate", "tanh");
      Want = runTo(G, {f32(Want, YD)}, YD);
    } else if (Name == "SiLU") {
      OpRunner S("Sigmoid"), M("Mul");
      std::vector<float> Sig = runTo(S, {f32(Want, YD)}, YD);
      Want = runTo(M, {f32(Want, YD), f32(Sig, YD)}, YD);
    } else if (!Name.empty()) {
      OpRunner U(Name);
      Want = runTo(U, {f32(Want, YD)}, YD);
    }
    OpRunner F("OomplanMatMul");
    F.s("activation", Name);
    expectClose(runTo(F, {f32(A, AD), f32(B, BD), f32(Bias, BiasD)}, YD), Want);
  }
}

TEST(FusedMatMulKernel, MatchesUnfusedBatchedBiasAndGemm) {
  // Batched B with a bias broadcast over rows ([17, 1]).
  const Dims AD{3, 17, 6}, BD{3, 6, 11}, BiasD{17, 1}, YD{3, 17, 11};
  std::vector<float> A = random(numel(AD), 90), B = random(numel(BD), 91);
  std::vector<float> Bias = random(17, 92);
  OpRunner MM("MatMul"), Add("Add"), Relu("Relu");
  std::vector<float> Want = runTo(MM, {f32(A, AD), f32(B, BD)}, YD);
  Want = runTo(Add, {f32(Want, YD), f32(Bias, BiasD)}, YD);
  Want = runTo(Relu, {f32(Want, YD)}, YD);
  OpRunner F("OomplanMatMul");
  F.s("activation", "Relu");
  expectClose(runTo(F, {f32(A, AD), f32(B, BD), f32(Bias, BiasD)}, YD), Want);

  // Gemm transB with a row of C, then Gelu.
  const Dims GA{9, 13}, GB{21, 13}, GC{21}, GY{9, 21};
  std::vector<float> X = random(numel(GA), 93), Wt = random(numel(GB), 94);
  std::vector<float> C = random(21, 95);
  OpRunner Gemm("Gemm"), Gelu("Gelu", 20);
  Gemm.i("transB", 1).f("alpha", 0.5).f("beta", 2);
  std::vector<float> GWant =
      runTo(Gemm, {f32(X, GA), f32(Wt, GB), f32(C, GC)}, GY);
  GWant = runTo(Gelu, {f32(GWant, GY)}, GY);
  OpRunner GF("OomplanMatMul");
  GF.i("gemm", 1).i("transB", 1).f("alpha", 0.5).f("beta", 2);
  GF.s("activation", "Gelu");
  expectClose(runTo(GF, {f32(X, GA), f32(Wt, GB), f32(C, GC)}, GY), GWant);
}

TEST(FusedKernels, UnknownActivationIsUnsupported) {
  std::vector<float> A{1}, B{1}, Y(1);
  OpRunner R("OomplanMatMul");
  R.s("activation", "Softplus");
  llvm::Error E = R.run({f32(A, {1, 1}), f32(B, {1, 1})}, {f32(Y, {1, 1})});
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("Softplus"), std::string::npos);
}
