//===- FastMathTest.cpp - fastExp, fastErf and fastTanh against libm ------===//
//
// The float formulas of lib/Runtime/CPU/Kernels/FastMath.h against libm's
// double-precision functions on a walk over float bit patterns (every 61st
// float from 1e-9 to 10, every 4099th elsewhere, both signs), at the
// error bounds the
// header states; the specials (NaN, infinities, signed zeros, subnormals);
// and the Erf, Tanh and Gelu kernels, whose loops are the vectorized clones
// (FMA-contracted where the CPU has it), over a million values against the
// same references.
//
//===----------------------------------------------------------------------===//
#include "Kernels/FastMath.h"
#include "KernelHarness.h"
#include <cmath>
#include <cstring>
#include <limits>

using namespace oomplan;
using namespace oomplan::runtime::cpu;
using namespace oomplan::test;

namespace {

float fromBits(uint32_t B) {
  float F;
  std::memcpy(&F, &B, sizeof(F));
  return F;
}

/// The largest error of Fast against Ref over the walk: absolute, and
/// relative where |X| < RelBelow.
struct Worst {
  double Abs = 0, Rel = 0;
  float AbsAt = 0, RelAt = 0;
};

template <typename FastT, typename RefT>
Worst walk(FastT Fast, RefT Ref, double RelBelow) {
  Worst W;
  // 0x30800000 is 9.3e-10, 0x41200000 is 10.
  for (uint32_t B = 0; B < 0x7f800000u;
       B += B >= 0x30800000u && B < 0x41200000u ? 61 : 4099)
    for (float X : {fromBits(B), -fromBits(B)}) {
      const double R = Ref(double(X));
      const double E = std::fabs(double(Fast(X)) - R);
      if (E > W.Abs) {
        W.Abs = E;
        W.AbsAt = X;
      }
      // Relative only where the result is a normal float: a subnormal
      // has fewer bits than the bound.
      if (std::fabs(X) < RelBelow &&
          std::fabs(R) >= std::numeric_limits<float>::min() &&
          E / std::fabs(R) > W.Rel) {
        W.Rel = E / std::fabs(R);
        W.RelAt = X;
      }
    }
  return W;
}

TEST(FastMath, ErfWithinTwoUlpsOfLibm) {
  Worst W = walk(
      fastErf, [](double X) { return std::erf(X); }, 0.875);
  EXPECT_LE(W.Abs, 2e-7) << "at " << W.AbsAt;
  EXPECT_LE(W.Rel, 2e-7) << "at " << W.RelAt;
}

TEST(FastMath, TanhWithinTwoUlpsOfLibm) {
  Worst W = walk(
      fastTanh, [](double X) { return std::tanh(X); },
      std::numeric_limits<double>::infinity());
  EXPECT_LE(W.Rel, 2e-7) << "at " << W.RelAt;
}

TEST(FastMath, ExpWithinThreeTenthsOfAMillionthOfLibm) {
  // Relative error over the range where the result is a normal float.
  double Worst = 0;
  float At = 0;
  for (uint32_t B = 0; B < 0x42b00000u; // up to 88
       B += B >= 0x30800000u ? 61 : 4099)
    for (float X : {fromBits(B), -fromBits(B)}) {
      if (X < -87.3f || X > 88.3f)
        continue;
      const double R = std::exp(double(X));
      const double E = std::fabs(double(fastExp(X)) - R) / R;
      if (E > Worst) {
        Worst = E;
        At = X;
      }
    }
  EXPECT_LE(Worst, 3e-7) << "at " << At;
}

TEST(FastMath, SpecialValues) {
  const float Inf = std::numeric_limits<float>::infinity();
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(fastErf(NaN)));
  EXPECT_TRUE(std::isnan(fastTanh(NaN)));
  EXPECT_TRUE(std::isnan(fastExp(NaN)));
  EXPECT_EQ(fastErf(Inf), 1.f);
  EXPECT_EQ(fastErf(-Inf), -1.f);
  EXPECT_EQ(fastTanh(Inf), 1.f);
  EXPECT_EQ(fastTanh(-Inf), -1.f);
  EXPECT_EQ(fastErf(1e30f), 1.f);
  EXPECT_EQ(fastTanh(-1e30f), -1.f);
  // Odd functions keep the zero's sign; tiny arguments are their own slope.
  EXPECT_TRUE(std::signbit(fastErf(-0.f)) && fastErf(-0.f) == 0.f);
  EXPECT_TRUE(std::signbit(fastTanh(-0.f)) && fastTanh(-0.f) == 0.f);
  const float Tiny = 1e-40f;                                       // subnormal
  EXPECT_NEAR(fastErf(Tiny), 1.1283791670955126 * 1e-40, 1.5e-45); // 1 ulp
  EXPECT_EQ(fastTanh(Tiny), Tiny);
  // 2^n stays normal at the clamps.
  EXPECT_GT(fastExp(-1000.f), 0.f);
  EXPECT_LT(fastExp(1000.f), Inf);
}

/// Runs the float kernel of Op on X (attributes from Set) and returns the
/// largest relative-or-absolute error against Ref: |got - ref| /
/// max(1, |ref|).
template <typename SetT, typename RefT>
double kernelError(llvm::StringRef Op, SetT Set, RefT Ref) {
  const int64_t N = 1 << 20;
  std::vector<float> X(N), Y(N);
  for (int64_t I = 0; I < N; ++I)
    X[I] = float(I - N / 2) * (12.f / N); // [-6, 6)
  KernelHarness H(Op, 20);
  Set(H);
  llvm::Error E = H.run({ref(X, ElementType::Float, {N})},
                        {ref(Y, ElementType::Float, {N})});
  EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
  double Worst = 0;
  for (int64_t I = 0; I < N; ++I) {
    const double R = Ref(double(X[I]));
    Worst = std::max(Worst,
                     std::fabs(double(Y[I]) - R) / std::max(1.0, std::fabs(R)));
  }
  return Worst;
}

TEST(FastMath, VectorizedKernelsMatchLibm) {
  auto None = [](KernelHarness &) {};
  EXPECT_LE(kernelError("Erf", None, [](double X) { return std::erf(X); }),
            2e-7);
  EXPECT_LE(kernelError("Tanh", None, [](double X) { return std::tanh(X); }),
            2e-7);
  // GELU's own float rounding (the multiply by 1/sqrt(2), the products)
  // adds a few ulps of the result to erf's error.
  EXPECT_LE(kernelError("Gelu", None,
                        [](double X) {
                          return 0.5 * X * (1 + std::erf(X / std::sqrt(2.0)));
                        }),
            1e-6);
  EXPECT_LE(kernelError(
                "Gelu",
                [](KernelHarness &H) { H.setString("approximate", "tanh"); },
                [](double X) {
                  return 0.5 * X *
                         (1 + std::tanh(std::sqrt(2 / M_PI) *
                                        (X + 0.044715 * X * X * X)));
                }),
            1e-6);
}

} // namespace
