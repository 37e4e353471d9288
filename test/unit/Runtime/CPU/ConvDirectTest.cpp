//===- ConvDirectTest.cpp - convolutions of few input channels -----------===//
//
// The direct path (lib/Runtime/CPU/Kernels/ConvDirect.cpp) takes float
// convolutions of 1 to 4 input channels: an image's first layer. Against a
// double-precision loop over the zero-padded input: strides 1 to 3 with
// different row and column strides, asymmetric padding, rows whose last
// block of 16 columns is partial, output channels that leave a partial
// tile of six, a pointwise layer, a window that ends at the plane's last
// element; then fused with a residual and Clip, with an infinite weight
// whose padding taps are 0 * inf = NaN as for im2col. 1 and 3 threads.
//
//===----------------------------------------------------------------------===//
#include "Kernels/ConvDirect.h"
#include "OpRunner.h"
#include <cmath>
#include <limits>
#include <random>

using namespace oomplan;
using namespace oomplan::test;

namespace {

struct Case {
  int64_t C, M, KH, KW, SH, SW, PT, PL, PB, PR, H, W;
};

/// Y[n][m][oh][ow] = sum over (c, kh, kw) of W times the zero-padded input,
/// in double.
std::vector<float> directLoop(const Case &T, int64_t N,
                              const std::vector<float> &X,
                              const std::vector<float> &W, int64_t OH,
                              int64_t OW) {
  std::vector<float> Y(size_t(N * T.M * OH * OW));
  for (int64_t B = 0; B < N; ++B)
    for (int64_t M = 0; M < T.M; ++M)
      for (int64_t Oh = 0; Oh < OH; ++Oh)
        for (int64_t Ow = 0; Ow < OW; ++Ow) {
          double Acc = 0;
          for (int64_t C = 0; C < T.C; ++C)
            for (int64_t Kh = 0; Kh < T.KH; ++Kh)
              for (int64_t Kw = 0; Kw < T.KW; ++Kw) {
                const int64_t Ih = Oh * T.SH - T.PT + Kh,
                              Iw = Ow * T.SW - T.PL + Kw;
                const bool In = Ih >= 0 && Ih < T.H && Iw >= 0 && Iw < T.W;
                const double V =
                    In ? X[size_t(((B * T.C + C) * T.H + Ih) * T.W + Iw)] : 0.0;
                Acc +=
                    double(W[size_t(((M * T.C + C) * T.KH + Kh) * T.KW + Kw)]) *
                    V;
              }
          Y[size_t(((B * T.M + M) * OH + Oh) * OW + Ow)] = float(Acc);
        }
  return Y;
}

TEST(ConvDirect, MatchesALoopOverThePaddedInput) {
  const Case Cases[] = {
      {3, 32, 3, 3, 2, 2, 1, 1, 1, 1, 37, 40}, // the stem: 20 wide, 32 out
      {3, 7, 7, 7, 2, 2, 3, 3, 3, 3, 23, 45},  // ResNet's stem, 7 out
      {1, 13, 5, 5, 1, 1, 2, 2, 2, 2, 9, 33},  // gray, stride 1
      {4, 6, 3, 3, 1, 3, 0, 2, 1, 0, 8, 50},   // strides 1 x 3, uneven pads
      {2, 5, 1, 1, 1, 1, 0, 0, 0, 0, 3, 16},   // pointwise
      {3, 4, 3, 3, 2, 2, 0, 0, 0, 0, 9, 35},   // last tap: the last element
  };
  std::mt19937 Gen(7);
  std::uniform_real_distribution<float> Dist(-1.0f, 1.0f);
  auto Values = [&](int64_t Count) {
    std::vector<float> V(static_cast<size_t>(Count));
    for (float &F : V)
      F = Dist(Gen);
    return V;
  };
  const float Inf = std::numeric_limits<float>::infinity();
  for (const Case &T : Cases)
    for (bool Fused : {false, true})
      for (unsigned Threads : {1u, 3u}) {
        const int64_t N = 2;
        const int64_t OH = (T.H + T.PT + T.PB - T.KH) / T.SH + 1;
        const int64_t OW = (T.W + T.PL + T.PR - T.KW) / T.SW + 1;
        runtime::cpu::WindowGeometry G;
        G.In = {T.H, T.W};
        G.Out = {OH, OW};
        G.K = {T.KH, T.KW};
        G.S = {T.SH, T.SW};
        G.D = {1, 1};
        G.PadBegin = {T.PT, T.PL};
        G.PadEnd = {T.PB, T.PR};
        ASSERT_TRUE(
            runtime::cpu::directConvApplies(G, ElementType::Float, 1, T.C, T.M))
            << "case with " << T.C << " channels, " << T.W << " wide";
        std::vector<float> X = Values(N * T.C * T.H * T.W);
        std::vector<float> W = Values(T.M * T.C * T.KH * T.KW);
        std::vector<float> B = Values(T.M);
        std::vector<float> Res = Values(N * T.M * OH * OW);
        // A corner weight of channel 1 infinite (fused runs): its padding
        // taps are 0 * inf, NaN, wherever the corner falls outside.
        if (Fused && T.M > 1)
          W[size_t(1 * T.C * T.KH * T.KW)] = Inf;
        std::vector<float> Want = directLoop(T, N, X, W, OH, OW);
        for (size_t I = 0; I < Want.size(); ++I) {
          float V = Want[I] + B[I / size_t(OH * OW) % size_t(T.M)];
          if (Fused) {
            V += Res[I];
            V = V < -0.5f ? -0.5f : V;
            V = 0.5f < V ? 0.5f : V;
          }
          Want[I] = V;
        }
        OpRunner R(Fused ? "OomplanConv" : "Conv", 17, Threads);
        R.ints("strides", {T.SH, T.SW})
            .ints("pads", {T.PT, T.PL, T.PB, T.PR})
            .ints("kernel_shape", {T.KH, T.KW});
        if (Fused)
          R.s("activation", "Clip")
              .f("activation_min", -0.5)
              .f("activation_max", 0.5);
        std::vector<runtime::TensorRef> In{f32(X, {N, T.C, T.H, T.W}),
                                           f32(W, {T.M, T.C, T.KH, T.KW}),
                                           f32(B, {T.M})};
        if (Fused)
          In.push_back(f32(Res, {N, T.M, OH, OW}));
        std::vector<float> Y(Res.size());
        RUN_OK(R, In, {f32(Y, {N, T.M, OH, OW})});
        SCOPED_TRACE(testing::Message()
                     << T.C << " channels, " << T.KH << "x" << T.KW
                     << " window, " << T.H << "x" << T.W
                     << (Fused ? " fused" : "") << ", threads " << Threads);
        for (size_t I = 0; I < Y.size(); ++I) {
          if (std::isnan(Want[I])) {
            ASSERT_TRUE(std::isnan(Y[I])) << "at " << I;
            continue;
          }
          ASSERT_NEAR(Y[I], Want[I], 1e-5f * (1 + std::fabs(Want[I])))
              << "at " << I;
        }
      }
}

TEST(ConvDirect, TakesOnlyImagesFirstLayers) {
  runtime::cpu::WindowGeometry G;
  G.In = {64, 64};
  G.Out = {32, 32};
  G.K = {3, 3};
  G.S = {2, 2};
  G.D = {1, 1};
  G.PadBegin = {1, 1};
  G.PadEnd = {1, 1};
  EXPECT_TRUE(runtime::cpu::directConvApplies(G, ElementType::Float, 1, 3, 32));
  // Five channels, a group, half floats, dilation, rows under 16 outputs.
  EXPECT_FALSE(
      runtime::cpu::directConvApplies(G, ElementType::Float, 1, 5, 32));
  EXPECT_FALSE(runtime::cpu::directConvApplies(G, ElementType::Float, 3, 3, 3));
  EXPECT_FALSE(
      runtime::cpu::directConvApplies(G, ElementType::Float16, 1, 3, 32));
  runtime::cpu::WindowGeometry D = G;
  D.D = {2, 2};
  EXPECT_FALSE(
      runtime::cpu::directConvApplies(D, ElementType::Float, 1, 3, 32));
  runtime::cpu::WindowGeometry Narrow = G;
  Narrow.Out = {32, 15};
  EXPECT_FALSE(
      runtime::cpu::directConvApplies(Narrow, ElementType::Float, 1, 3, 32));
}

} // namespace
