//===- CPUKernelsElementwiseTest.cpp - unary, binary and cast kernels -----===//
//
// Values worked out by hand from the ONNX operator documents and numpy's
// semantics (integer wrap, truncating Div, Mod's sign, NaN in Max), plus the
// broadcast walker checked against a naive index computation.
//
//===----------------------------------------------------------------------===//
#include "KernelHarness.h"
#include "Kernels/Elementwise.h"
#include <cmath>
#include <limits>
#include <random>

using namespace oomplan;
using namespace oomplan::test;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cpu;
using ET = ElementType;

namespace {

#define ASSERT_OK(E)                                                           \
  do {                                                                         \
    llvm::Error Err = (E);                                                     \
    ASSERT_FALSE(bool(Err)) << llvm::toString(std::move(Err));                 \
  } while (0)

TEST(CPUKernelsElementwise, HalfRoundsToNearestEven) {
  EXPECT_EQ(toHalf(1.0).Bits, 0x3C00);
  EXPECT_EQ(toHalf(-2.0).Bits, 0xC000);
  EXPECT_EQ(toHalf(65504.0).Bits, 0x7BFF); // largest half
  EXPECT_EQ(toHalf(65520.0).Bits, 0x7C00); // halfway to 65536: even is inf
  EXPECT_EQ(toHalf(std::ldexp(1.0, -24)).Bits, 0x0001); // smallest subnormal
  EXPECT_EQ(toHalf(std::ldexp(1.0, -25)).Bits, 0x0000); // tie to even 0
  EXPECT_EQ(toHalf(3 * std::ldexp(1.0, -25)).Bits, 0x0002); // 1.5 -> 2
  EXPECT_EQ(toHalf(1 + std::ldexp(1.0, -11)).Bits, 0x3C00); // tie, even
  EXPECT_EQ(toHalf(1 + 3 * std::ldexp(1.0, -11)).Bits, 0x3C02);
  EXPECT_EQ(toHalf(INFINITY).Bits, 0x7C00);
  EXPECT_EQ(toHalf(NAN).Bits & 0x7C00, 0x7C00);
  EXPECT_NE(toHalf(NAN).Bits & 0x03FF, 0);
  EXPECT_EQ(toFloat(Half{0x3555}), 0.333251953125f);
  EXPECT_EQ(toFloat(Half{0x0001}), std::ldexp(1.0f, -24));
  EXPECT_EQ(toFloat(Half{0xFC00}), -INFINITY);
}

TEST(CPUKernelsElementwise, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(toBFloat16(1.0).Bits, 0x3F80);
  EXPECT_EQ(toBFloat16(1 + std::ldexp(1.0, -8)).Bits, 0x3F80); // tie, even
  EXPECT_EQ(toBFloat16(1 + 3 * std::ldexp(1.0, -8)).Bits, 0x3F82);
  EXPECT_EQ(toBFloat16(-3.0).Bits, 0xC040);
  EXPECT_EQ(toFloat(BFloat16{0x4049}), 3.140625f);
}

TEST(CPUKernelsElementwise, ReluInPlace) {
  std::vector<float> X = {-1.5f, 0.0f, 2.5f, -0.0f};
  KernelHarness H("Relu");
  ASSERT_OK(H.run({ref(X, ET::Float, {4})}, {ref(X, ET::Float, {4})}));
  EXPECT_EQ(X, (std::vector<float>{0, 0, 2.5f, 0}));
}

TEST(CPUKernelsElementwise, ActivationsWithAttributes) {
  std::vector<float> X = {-2, 1}, Y(2);
  KernelHarness H("LeakyRelu");
  H.setFloat("alpha", 0.5);
  ASSERT_OK(H.run({ref(X, ET::Float, {2})}, {ref(Y, ET::Float, {2})}));
  EXPECT_EQ(Y, (std::vector<float>{-1, 1}));
  KernelHarness HS("HardSigmoid"); // max(0, min(1, 0.2 x + 0.5))
  ASSERT_OK(HS.run({ref(X, ET::Float, {2})}, {ref(Y, ET::Float, {2})}));
  EXPECT_FLOAT_EQ(Y[0], 0.1f);
  EXPECT_FLOAT_EQ(Y[1], 0.7f);
  // NaN stays NaN, as numpy's clip (and the CUDA kernel); 10 saturates.
  std::vector<float> XN = {NAN, 10};
  ASSERT_OK(HS.run({ref(XN, ET::Float, {2})}, {ref(Y, ET::Float, {2})}));
  EXPECT_TRUE(std::isnan(Y[0]));
  EXPECT_EQ(Y[1], 1);
  KernelHarness HE("Elu"); // alpha (exp(x) - 1) for x < 0
  ASSERT_OK(HE.run({ref(X, ET::Float, {2})}, {ref(Y, ET::Float, {2})}));
  EXPECT_FLOAT_EQ(Y[0], std::exp(-2.0f) - 1);
  EXPECT_FLOAT_EQ(Y[1], 1);
}

TEST(CPUKernelsElementwise, RoundHalvesToEven) {
  std::vector<float> X = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f}, Y(6);
  KernelHarness H("Round");
  ASSERT_OK(H.run({ref(X, ET::Float, {6})}, {ref(Y, ET::Float, {6})}));
  EXPECT_EQ(Y, (std::vector<float>{0, 2, 2, -0.0f, -2, 2}));
}

TEST(CPUKernelsElementwise, IntegerNegAndAbsWrap) {
  std::vector<int8_t> X = {-128, -5, 7}, Y(3);
  KernelHarness H("Abs");
  ASSERT_OK(H.run({ref(X, ET::Int8, {3})}, {ref(Y, ET::Int8, {3})}));
  EXPECT_EQ(Y, (std::vector<int8_t>{-128, 5, 7})); // numpy: abs(-128) wraps
}

TEST(CPUKernelsElementwise, IsInfDirections) {
  std::vector<float> X = {INFINITY, -INFINITY, NAN, 1};
  std::vector<uint8_t> Y(4);
  KernelHarness H("IsInf");
  H.setInt("detect_positive", 0);
  ASSERT_OK(H.run({ref(X, ET::Float, {4})}, {ref(Y, ET::Bool, {4})}));
  EXPECT_EQ(Y, (std::vector<uint8_t>{0, 1, 0, 0}));
}

TEST(CPUKernelsElementwise, AddBroadcastsRowAndColumn) {
  std::vector<int64_t> A = {10, 20}, B = {1, 2, 3}, Y(6);
  KernelHarness H("Add");
  ASSERT_OK(H.run({ref(A, ET::Int64, {2, 1}), ref(B, ET::Int64, {3})},
                  {ref(Y, ET::Int64, {2, 3})}));
  EXPECT_EQ(Y, (std::vector<int64_t>{11, 12, 13, 21, 22, 23}));
}

TEST(CPUKernelsElementwise, UInt8ArithmeticWraps) {
  std::vector<uint8_t> A = {250, 3}, B = {10, 5}, Y(2);
  KernelHarness H("Add");
  ASSERT_OK(H.run({ref(A, ET::UInt8, {2}), ref(B, ET::UInt8, {2})},
                  {ref(Y, ET::UInt8, {2})}));
  EXPECT_EQ(Y, (std::vector<uint8_t>{4, 8}));
  KernelHarness S("Sub");
  ASSERT_OK(S.run({ref(A, ET::UInt8, {2}), ref(B, ET::UInt8, {2})},
                  {ref(Y, ET::UInt8, {2})}));
  EXPECT_EQ(Y, (std::vector<uint8_t>{240, 254}));
}

TEST(CPUKernelsElementwise, IntegerDivTruncatesAndNeverTraps) {
  std::vector<int32_t> A = {7, -7, 5, INT32_MIN}, B = {2, 2, 0, -1}, Y(4);
  KernelHarness H("Div");
  ASSERT_OK(H.run({ref(A, ET::Int32, {4}), ref(B, ET::Int32, {4})},
                  {ref(Y, ET::Int32, {4})}));
  EXPECT_EQ(Y, (std::vector<int32_t>{3, -3, 0, INT32_MIN}));
}

TEST(CPUKernelsElementwise, ModSignFollowsDivisorUnlessFmod) {
  std::vector<int32_t> A = {-4, 7, 4}, B = {3, -3, 3}, Y(3);
  KernelHarness H("Mod");
  ASSERT_OK(H.run({ref(A, ET::Int32, {3}), ref(B, ET::Int32, {3})},
                  {ref(Y, ET::Int32, {3})}));
  EXPECT_EQ(Y, (std::vector<int32_t>{2, -2, 1})); // Python: -4 % 3 == 2
  KernelHarness F("Mod");
  F.setInt("fmod", 1);
  ASSERT_OK(F.run({ref(A, ET::Int32, {3}), ref(B, ET::Int32, {3})},
                  {ref(Y, ET::Int32, {3})}));
  EXPECT_EQ(Y, (std::vector<int32_t>{-1, 1, 1})); // C fmod
  std::vector<float> FA = {-4.5f, 5.5f}, FB = {2, -2}, FY(2);
  ASSERT_OK(F.run({ref(FA, ET::Float, {2}), ref(FB, ET::Float, {2})},
                  {ref(FY, ET::Float, {2})}));
  EXPECT_EQ(FY, (std::vector<float>{-0.5f, 1.5f}));
}

TEST(CPUKernelsElementwise, MaxPropagatesNaNAndFoldsManyInputs) {
  std::vector<float> A = {1, NAN, 3}, B = {2}, C = {0, 0, 5}, Y(3);
  KernelHarness H("Max");
  ASSERT_OK(H.run(
      {ref(A, ET::Float, {3}), ref(B, ET::Float, {1}), ref(C, ET::Float, {3})},
      {ref(Y, ET::Float, {3})}));
  EXPECT_EQ(Y[0], 2);
  EXPECT_TRUE(std::isnan(Y[1]));
  EXPECT_EQ(Y[2], 5);
  // The output aliasing the last input is still read first.
  KernelHarness M("Mean");
  ASSERT_OK(M.run(
      {ref(A, ET::Float, {3}), ref(B, ET::Float, {1}), ref(C, ET::Float, {3})},
      {ref(C, ET::Float, {3})}));
  EXPECT_EQ(C[0], 1);
  EXPECT_EQ(C[2], 10.0f / 3);
}

TEST(CPUKernelsElementwise, PowIntegerAndMixedTypes) {
  std::vector<int64_t> A = {2, 3, -2}, B = {10, 3, 3}, Y(3);
  KernelHarness H("Pow");
  ASSERT_OK(H.run({ref(A, ET::Int64, {3}), ref(B, ET::Int64, {3})},
                  {ref(Y, ET::Int64, {3})}));
  EXPECT_EQ(Y, (std::vector<int64_t>{1024, 27, -8}));
  std::vector<float> FA = {4, 9}, FY(2);
  std::vector<int32_t> IB = {2, -1};
  ASSERT_OK(H.run({ref(FA, ET::Float, {2}), ref(IB, ET::Int32, {2})},
                  {ref(FY, ET::Float, {2})}));
  EXPECT_EQ(FY, (std::vector<float>{16, 1.0f / 9}));
}

TEST(CPUKernelsElementwise, ComparisonsAndLogic) {
  std::vector<float> A = {1, 2, 3}, B = {2};
  std::vector<uint8_t> Y(3), P = {1, 0, 1}, Q = {1, 1, 0};
  KernelHarness H("GreaterOrEqual");
  ASSERT_OK(H.run({ref(A, ET::Float, {3}), ref(B, ET::Float, {1})},
                  {ref(Y, ET::Bool, {3})}));
  EXPECT_EQ(Y, (std::vector<uint8_t>{0, 1, 1}));
  KernelHarness X("Xor");
  ASSERT_OK(X.run({ref(P, ET::Bool, {3}), ref(Q, ET::Bool, {3})},
                  {ref(Y, ET::Bool, {3})}));
  EXPECT_EQ(Y, (std::vector<uint8_t>{0, 1, 1}));
}

TEST(CPUKernelsElementwise, BitShiftPastWidthIsZero) {
  std::vector<uint8_t> A = {1, 255, 16}, B = {3, 8, 2}, Y(3);
  KernelHarness H("BitShift");
  H.setString("direction", "LEFT");
  ASSERT_OK(H.run({ref(A, ET::UInt8, {3}), ref(B, ET::UInt8, {3})},
                  {ref(Y, ET::UInt8, {3})}));
  EXPECT_EQ(Y, (std::vector<uint8_t>{8, 0, 64}));
}

TEST(CPUKernelsElementwise, WhereBroadcastsCondition) {
  std::vector<uint8_t> Cond = {1, 0};
  std::vector<int64_t> X = {1, 2, 3, 4}, Yv = {-1}, Out(4);
  KernelHarness H("Where");
  ASSERT_OK(H.run({ref(Cond, ET::Bool, {2}), ref(X, ET::Int64, {2, 2}),
                   ref(Yv, ET::Int64, {1})},
                  {ref(Out, ET::Int64, {2, 2})}));
  EXPECT_EQ(Out, (std::vector<int64_t>{1, -1, 3, -1}));
}

TEST(CPUKernelsElementwise, PReluSlopePerChannel) {
  std::vector<float> X = {-1, -1, 2, -4}, S = {0.5f, 0.25f}, Y(4);
  KernelHarness H("PRelu");
  ASSERT_OK(H.run({ref(X, ET::Float, {2, 2}), ref(S, ET::Float, {2})},
                  {ref(Y, ET::Float, {2, 2})}));
  EXPECT_EQ(Y, (std::vector<float>{-0.5f, -0.25f, 2, -1}));
}

TEST(CPUKernelsElementwise, CastSaturatesAndRounds) {
  std::vector<float> X = {1.7f, -1.7f, NAN, 1e10f};
  std::vector<int32_t> Y(4);
  KernelHarness H("Cast");
  H.setInt("to", 6);
  ASSERT_OK(H.run({ref(X, ET::Float, {4})}, {ref(Y, ET::Int32, {4})}));
  EXPECT_EQ(Y, (std::vector<int32_t>{1, -1, 0, INT32_MAX}));
  std::vector<uint16_t> Hf(4);
  KernelHarness H16("Cast");
  H16.setInt("to", 10);
  ASSERT_OK(H16.run({ref(X, ET::Float, {4})}, {ref(Hf, ET::Float16, {4})}));
  EXPECT_EQ(Hf[0], 0x3ECD); // 1.7 -> 1.7001953125
  EXPECT_EQ(Hf[3], 0x7C00); // out of range -> inf
  std::vector<uint8_t> B(4);
  ASSERT_OK(H.run({ref(X, ET::Float, {4})}, {ref(B, ET::Bool, {4})}));
  EXPECT_EQ(B, (std::vector<uint8_t>{1, 1, 1, 1}));
}

TEST(CPUKernelsElementwise, ClipBoundsFromInputsOrAttributes) {
  std::vector<float> X = {-5, 0.5f, 5, NAN}, Lo = {-1}, Hi = {1}, Y(4);
  KernelHarness H("Clip", 13);
  ASSERT_OK(H.run(
      {ref(X, ET::Float, {4}), ref(Lo, ET::Float, {}), ref(Hi, ET::Float, {})},
      {ref(Y, ET::Float, {4})}));
  EXPECT_EQ(Y[0], -1);
  EXPECT_EQ(Y[1], 0.5f);
  EXPECT_EQ(Y[2], 1);
  EXPECT_TRUE(std::isnan(Y[3]));
  KernelHarness Old("Clip", 6);
  Old.setFloat("max", 0);
  ASSERT_OK(Old.run({ref(X, ET::Float, {4})}, {ref(Y, ET::Float, {4})}));
  EXPECT_EQ(Y[0], -5);
  EXPECT_EQ(Y[2], 0);
  // An absent bound is no bound: -inf and +inf pass the missing side
  // unchanged (numpy.clip with None), not clipped to -FLT_MAX / FLT_MAX.
  std::vector<float> Inf = {-INFINITY, INFINITY}, YI(2);
  KernelHarness OnlyMax("Clip", 13);
  ASSERT_OK(OnlyMax.run(
      {ref(Inf, ET::Float, {2}), TensorRef(), ref(Hi, ET::Float, {})},
      {ref(YI, ET::Float, {2})}));
  EXPECT_EQ(YI[0], -INFINITY);
  EXPECT_EQ(YI[1], 1);
  KernelHarness OnlyMin("Clip", 13);
  ASSERT_OK(OnlyMin.run({ref(Inf, ET::Float, {2}), ref(Lo, ET::Float, {})},
                        {ref(YI, ET::Float, {2})}));
  EXPECT_EQ(YI[0], -1);
  EXPECT_EQ(YI[1], INFINITY);
}

TEST(CPUKernelsElementwise, DropoutInferenceMaskAllTrue) {
  std::vector<float> X = {1, 2}, Y(2);
  std::vector<uint8_t> Mask(2, 0);
  KernelHarness H("Dropout", 13);
  ASSERT_OK(H.run({ref(X, ET::Float, {2})},
                  {ref(Y, ET::Float, {2}), ref(Mask, ET::Bool, {2})}));
  EXPECT_EQ(Y, X);
  EXPECT_EQ(Mask, (std::vector<uint8_t>{1, 1}));
  std::vector<uint8_t> Training = {1};
  std::vector<float> Ratio = {0.5f};
  llvm::Error E = H.run({ref(X, ET::Float, {2}), ref(Ratio, ET::Float, {}),
                         ref(Training, ET::Bool, {})},
                        {ref(Y, ET::Float, {2})});
  EXPECT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("training-mode"),
            std::string::npos);
}

TEST(CPUKernelsElementwise, UnsupportedTypeIsAnErrorNotACrash) {
  std::vector<uint8_t> X = {1};
  KernelHarness H("Exp");
  llvm::Error E = H.run({ref(X, ET::Bool, {1})}, {ref(X, ET::Bool, {1})});
  EXPECT_TRUE(bool(E));
  llvm::consumeError(std::move(E));
}

// The walker against a naive per-element index computation, over shapes
// large enough that three threads split rows mid-way.
TEST(CPUKernelsElementwise, BroadcastWalkerMatchesNaiveIndexing) {
  ThreadPool Pool(3);
  std::mt19937 Rng(7);
  std::vector<std::vector<int64_t>> OutShapes = {
      {3, 70, 90}, {2, 1, 5, 4000}, {40000}, {7, 3, 1, 1000}};
  for (const auto &Out : OutShapes) {
    for (int Trial = 0; Trial < 6; ++Trial) {
      // Each input keeps a random suffix of Out with random dims set to 1.
      std::vector<std::vector<int64_t>> Ins(2);
      for (auto &In : Ins) {
        size_t Rank = Rng() % (Out.size() + 1);
        In.assign(Out.end() - Rank, Out.end());
        for (int64_t &D : In)
          if (Rng() % 3 == 0)
            D = 1;
      }
      int64_t Total = 1;
      for (int64_t D : Out)
        Total *= D;
      std::vector<int64_t> Got(size_t(Total) * 2, -1);
      llvm::ArrayRef<int64_t> Dims[] = {Ins[0], Ins[1]};
      forEachBroadcastRun(Out, Dims, Pool, [&](const BroadcastRun &R) {
        for (int64_t J = 0; J < R.Len; ++J)
          for (int K = 0; K < 2; ++K)
            Got[size_t(R.Out + J) * 2 + K] = R.Offs[K] + J * R.Steps[K];
      });
      for (int64_t I = 0; I < Total; ++I) {
        // Naive: the multi-index of I, then each input's row-major offset.
        std::vector<int64_t> Idx(Out.size());
        int64_t Rem = I;
        for (size_t D = Out.size(); D-- > 0;) {
          Idx[D] = Rem % Out[D];
          Rem /= Out[D];
        }
        for (int K = 0; K < 2; ++K) {
          int64_t Off = 0;
          size_t Shift = Out.size() - Ins[K].size();
          for (size_t D = 0; D < Ins[K].size(); ++D)
            Off = Off * Ins[K][D] + (Ins[K][D] == 1 ? 0 : Idx[D + Shift]);
          ASSERT_EQ(Got[size_t(I) * 2 + K], Off) << "element " << I;
        }
      }
    }
  }
}

} // namespace

namespace {

TEST(CPUKernelsQuantize, QuantizeRoundsHalfToEvenAndSaturates) {
  std::vector<float> X = {0.25f, 0.75f, -3, 200}, Scale = {0.5f};
  std::vector<uint8_t> ZP = {1}, Y(4);
  KernelHarness H("QuantizeLinear", 13);
  // x / 0.5 = 0.5, 1.5, -6, 400 -> rint 0, 2, -6, 400 -> + 1, saturated.
  ASSERT_OK(H.run({ref(X, ET::Float, {4}), ref(Scale, ET::Float, {}),
                   ref(ZP, ET::UInt8, {})},
                  {ref(Y, ET::UInt8, {4})}));
  EXPECT_EQ(Y, (std::vector<uint8_t>{1, 3, 0, 255}));
}

TEST(CPUKernelsQuantize, DequantizePerAxis) {
  std::vector<uint8_t> X = {0, 10, 255, 20}, ZP = {10, 0};
  std::vector<float> Scale = {0.5f, 2}, Y(4);
  KernelHarness H("DequantizeLinear", 13);
  H.setInt("axis", 1); // columns: (x - 10) * 0.5, (x - 0) * 2
  ASSERT_OK(H.run({ref(X, ET::UInt8, {2, 2}), ref(Scale, ET::Float, {2}),
                   ref(ZP, ET::UInt8, {2})},
                  {ref(Y, ET::Float, {2, 2})}));
  EXPECT_EQ(Y, (std::vector<float>{-5, 20, 122.5f, 40}));
}

TEST(CPUKernelsQuantize, DynamicQuantizeIncludesZero) {
  // Range [-10, 245]: scale 1, zero point 10.
  std::vector<float> X = {-10, 0, 245}, Scale(1);
  std::vector<uint8_t> Y(3), ZP(1);
  KernelHarness H("DynamicQuantizeLinear", 13);
  ASSERT_OK(H.run({ref(X, ET::Float, {3})},
                  {ref(Y, ET::UInt8, {3}), ref(Scale, ET::Float, {}),
                   ref(ZP, ET::UInt8, {})}));
  EXPECT_EQ(Scale[0], 1);
  EXPECT_EQ(ZP[0], 10);
  EXPECT_EQ(Y, (std::vector<uint8_t>{0, 10, 255}));
}

} // namespace

namespace {

TEST(CPUKernelsSignalWindow, PeriodicAndSymmetric) {
  std::vector<int64_t> N = {4};
  std::vector<float> Y(4);
  KernelHarness Hann("HannWindow", 17); // 0.5 - 0.5 cos(pi n / 2)
  ASSERT_OK(Hann.run({ref(N, ET::Int64, {})}, {ref(Y, ET::Float, {4})}));
  EXPECT_NEAR(Y[0], 0, 1e-7);
  EXPECT_NEAR(Y[1], 0.5, 1e-7);
  EXPECT_NEAR(Y[2], 1, 1e-7);
  KernelHarness Black("BlackmanWindow", 17);
  ASSERT_OK(Black.run({ref(N, ET::Int64, {})}, {ref(Y, ET::Float, {4})}));
  EXPECT_NEAR(Y[0], 0, 1e-7);    // 0.42 - 0.5 + 0.08
  EXPECT_NEAR(Y[1], 0.34, 1e-7); // 0.42 - 0.08
  EXPECT_NEAR(Y[2], 1, 1e-7);    // 0.42 + 0.5 + 0.08
  std::vector<int64_t> Three = {3};
  std::vector<float> S(3);
  KernelHarness Sym("HannWindow", 17); // M = N - 1 = 2: 0, 1, 0
  Sym.setInt("periodic", 0);
  ASSERT_OK(Sym.run({ref(Three, ET::Int64, {})}, {ref(S, ET::Float, {3})}));
  EXPECT_NEAR(S[0], 0, 1e-7);
  EXPECT_NEAR(S[1], 1, 1e-7);
  EXPECT_NEAR(S[2], 0, 1e-7);
}

} // namespace
