//===- WindowTest.cpp - Conv, ConvTranspose, pools, Resize ----------------===//
//
// Small windows over inputs such as 0..8, with every expected value summed
// by hand (the sums are in the comments).
//
//===----------------------------------------------------------------------===//
#include "OpRunner.h"
#include <cmath>
#include <limits>
#include <random>

using namespace oomplan;
using namespace oomplan::test;

TEST(ConvKernel, ThreeByThreeOnesPadOneDeclaresIm2colWorkspace) {
  std::vector<float> X{0, 1, 2, 3, 4, 5, 6, 7, 8}, W(9, 1.0f), Y(9);
  OpRunner R("Conv");
  R.ints("pads", {1, 1, 1, 1});
  RUN_OK(R, {f32(X, {1, 1, 3, 3}), f32(W, {1, 1, 3, 3})},
         {f32(Y, {1, 1, 3, 3})});
  // Corner (0,0): 0+1+3+4; edge (0,1): 0+1+2+3+4+5; centre: 0+...+8.
  expectNear(Y, {8, 15, 12, 21, 36, 27, 20, 33, 24});
  EXPECT_EQ(R.WorkspaceBytes, 9u * 9u * 4u); // C*kh*kw rows, 9 columns
}

TEST(ConvKernel, TwoByTwoWithBias) {
  std::vector<float> X{0, 1, 2, 3, 4, 5, 6, 7, 8}, W(4, 1.0f), B{1}, Y(4);
  OpRunner R("Conv");
  RUN_OK(R, {f32(X, {1, 1, 3, 3}), f32(W, {1, 1, 2, 2}), f32(B, {1})},
         {f32(Y, {1, 1, 2, 2})});
  expectNear(Y, {9, 13, 21, 25}); // 0+1+3+4 + 1, ...
}

TEST(ConvKernel, AutoPadSameUpperAndLowerWithStride) {
  // Length 4, kernel 3, stride 2: output 2, total padding 1.
  std::vector<float> X{1, 2, 3, 4}, W{1, 1, 1}, Y(2);
  OpRunner Up("Conv");
  Up.s("auto_pad", "SAME_UPPER").ints("strides", {2});
  RUN_OK(Up, {f32(X, {1, 1, 4}), f32(W, {1, 1, 3})}, {f32(Y, {1, 1, 2})});
  expectNear(Y, {6, 7}); // pad at the end: 1+2+3, 3+4+0
  OpRunner Lo("Conv");
  Lo.s("auto_pad", "SAME_LOWER").ints("strides", {2});
  RUN_OK(Lo, {f32(X, {1, 1, 4}), f32(W, {1, 1, 3})}, {f32(Y, {1, 1, 2})});
  expectNear(Y, {3, 9}); // pad at the start: 0+1+2, 2+3+4
}

TEST(ConvKernel, DilationGroupsAndDepthwise) {
  std::vector<float> X{1, 2, 3, 4, 5}, W{1, 1}, Y(3);
  OpRunner D("Conv");
  D.ints("dilations", {2});
  RUN_OK(D, {f32(X, {1, 1, 5}), f32(W, {1, 1, 2})}, {f32(Y, {1, 1, 3})});
  expectNear(Y, {4, 6, 8}); // x[i] + x[i+2]

  std::vector<float> G{1, 2, 3, 4}, GW{1, 1, 1, -1}, GY(2);
  OpRunner Grp("Conv");
  Grp.i("group", 2);
  RUN_OK(Grp, {f32(G, {1, 4, 1, 1}), f32(GW, {2, 2, 1, 1})},
         {f32(GY, {1, 2, 1, 1})});
  expectNear(GY, {3, -1}); // 1+2, 3-4

  std::vector<float> DX{1, 2, 3, 4}, DW{10, 100}, DB{1, 2}, DY(4);
  OpRunner Dw("Conv");
  Dw.i("group", 2);
  RUN_OK(Dw, {f32(DX, {1, 2, 1, 2}), f32(DW, {2, 1, 1, 1}), f32(DB, {2})},
         {f32(DY, {1, 2, 1, 2})});
  expectNear(DY, {11, 21, 302, 402});
  EXPECT_EQ(Dw.WorkspaceBytes, 0u); // depthwise runs directly
}

TEST(ConvTransposeKernel, StridesAndPads) {
  std::vector<float> X{1, 2}, W{1, 1}, Y(3);
  OpRunner S1("ConvTranspose");
  RUN_OK(S1, {f32(X, {1, 1, 2}), f32(W, {1, 1, 2})}, {f32(Y, {1, 1, 3})});
  expectNear(Y, {1, 3, 2}); // x0*w at 0,1; x1*w at 1,2
  std::vector<float> Y2(4);
  OpRunner S2("ConvTranspose");
  S2.ints("strides", {2});
  RUN_OK(S2, {f32(X, {1, 1, 2}), f32(W, {1, 1, 2})}, {f32(Y2, {1, 1, 4})});
  expectNear(Y2, {1, 1, 2, 2});
  std::vector<float> Y3(3);
  OpRunner S3("ConvTranspose");
  S3.ints("strides", {2}).ints("pads", {1, 0});
  RUN_OK(S3, {f32(X, {1, 1, 2}), f32(W, {1, 1, 2})}, {f32(Y3, {1, 1, 3})});
  expectNear(Y3, {1, 2, 2}); // the full [1,1,2,2] less its first element
  EXPECT_EQ(S3.WorkspaceBytes, 2u * 2u * 4u); // M*k rows, 2 input columns
}

TEST(PoolKernels, MaxPoolWithIndicesBothStorageOrders) {
  std::vector<float> X{1, 5, 2, 4, 0, 3, 7, 8, 6}, Y(4);
  std::vector<int64_t> I(4);
  OpRunner R("MaxPool");
  R.ints("kernel_shape", {2, 2});
  RUN_OK(R, {f32(X, {1, 1, 3, 3})},
         {f32(Y, {1, 1, 2, 2}), i64(I, {1, 1, 2, 2})});
  expectNear(Y, {5, 5, 8, 8});
  EXPECT_EQ(I, (std::vector<int64_t>{1, 1, 7, 7}));
  OpRunner C("MaxPool");
  C.ints("kernel_shape", {2, 2}).i("storage_order", 1);
  RUN_OK(C, {f32(X, {1, 1, 3, 3})},
         {f32(Y, {1, 1, 2, 2}), i64(I, {1, 1, 2, 2})});
  // (0,1) is 0 + 1*3 column-major; (2,1) is 2 + 1*3.
  EXPECT_EQ(I, (std::vector<int64_t>{3, 3, 5, 5}));
}

TEST(PoolKernels, MaxPool2DFastPathMatchesANaiveWindowLoop) {
  // The 2-D path updates runs of outputs tap by tap (Pool.cpp): against a
  // loop over each window here, with pads on either side, strides 1 to 3,
  // windows wider than the stride and narrower, ceil_mode's partial last
  // windows, and maps from 1 to 23 wide.
  struct Case {
    int64_t H, W, KH, KW, SH, SW, PT, PL, PB, PR, Ceil;
  } Cases[] = {{112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 0},
               {7, 9, 2, 3, 1, 2, 0, 1, 1, 0, 0},
               {13, 23, 5, 5, 3, 3, 2, 2, 2, 2, 1},
               {10, 10, 2, 2, 3, 3, 0, 0, 0, 0, 1},
               {1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0},
               {6, 5, 4, 1, 1, 2, 3, 0, 0, 0, 0}};
  std::mt19937 Gen(7);
  std::uniform_real_distribution<float> Dist(-4.0f, 4.0f);
  for (const Case &T : Cases) {
    auto Out = [&](int64_t In, int64_t K, int64_t S, int64_t P0, int64_t P1) {
      const int64_t Span = In + P0 + P1 - K;
      int64_t O = (T.Ceil ? (Span + S - 1) / S : Span / S) + 1;
      if (T.Ceil && (O - 1) * S >= In + P0) // no window starts in the end pad
        --O;
      return O;
    };
    const int64_t OH = Out(T.H, T.KH, T.SH, T.PT, T.PB);
    const int64_t OW = Out(T.W, T.KW, T.SW, T.PL, T.PR);
    const int64_t N = 2, Ch = 3;
    std::vector<float> X(N * Ch * T.H * T.W), Y(N * Ch * OH * OW);
    for (float &V : X)
      V = Dist(Gen);
    std::vector<float> Want(Y.size(), -INFINITY);
    for (int64_t P = 0; P < N * Ch; ++P)
      for (int64_t Oh = 0; Oh < OH; ++Oh)
        for (int64_t Ow = 0; Ow < OW; ++Ow)
          for (int64_t Kh = 0; Kh < T.KH; ++Kh)
            for (int64_t Kw = 0; Kw < T.KW; ++Kw) {
              const int64_t Ih = Oh * T.SH - T.PT + Kh,
                            Iw = Ow * T.SW - T.PL + Kw;
              if (Ih < 0 || Ih >= T.H || Iw < 0 || Iw >= T.W)
                continue;
              float &W = Want[(P * OH + Oh) * OW + Ow];
              W = std::max(W, X[(P * T.H + Ih) * T.W + Iw]);
            }
    OpRunner R("MaxPool");
    R.ints("kernel_shape", {T.KH, T.KW}).ints("strides", {T.SH, T.SW});
    R.ints("pads", {T.PT, T.PL, T.PB, T.PR}).i("ceil_mode", T.Ceil);
    RUN_OK(R, {f32(X, {N, Ch, T.H, T.W})}, {f32(Y, {N, Ch, OH, OW})});
    EXPECT_EQ(Y, Want) << T.H << "x" << T.W << " window " << T.KH << "x"
                       << T.KW;
  }
}

TEST(PoolKernels, AveragePoolPadsCeilAndCountIncludePad) {
  std::vector<float> X{1, 2, 3}, Y(2);
  OpRunner Ceil("AveragePool");
  Ceil.ints("kernel_shape", {2}).ints("strides", {2}).i("ceil_mode", 1);
  RUN_OK(Ceil, {f32(X, {1, 1, 3})}, {f32(Y, {1, 1, 2})});
  expectNear(Y, {1.5, 3}); // the last window holds only x2
  OpRunner Inc("AveragePool");
  Inc.ints("kernel_shape", {2}).ints("strides", {2}).ints("pads", {1, 1});
  Inc.i("count_include_pad", 1);
  RUN_OK(Inc, {f32(X, {1, 1, 3})}, {f32(Y, {1, 1, 2})});
  expectNear(Y, {0.5, 2.5}); // (pad+1)/2, (2+3)/2
  OpRunner Exc("AveragePool");
  Exc.ints("kernel_shape", {2}).ints("strides", {2}).ints("pads", {1, 1});
  RUN_OK(Exc, {f32(X, {1, 1, 3})}, {f32(Y, {1, 1, 2})});
  expectNear(Y, {1, 2.5});
}

TEST(PoolKernels, LpAndGlobalPools) {
  std::vector<float> X{3, 4}, Y(1);
  OpRunner Lp("LpPool");
  Lp.ints("kernel_shape", {2});
  RUN_OK(Lp, {f32(X, {1, 1, 2})}, {f32(Y, {1, 1, 1})});
  expectNear(Y, {5});
  std::vector<float> G{1, 3, 2, -4}, GY(2);
  OpRunner Avg("GlobalAveragePool");
  RUN_OK(Avg, {f32(G, {1, 2, 2})}, {f32(GY, {1, 2, 1})});
  expectNear(GY, {2, -1});
  OpRunner Max("GlobalMaxPool");
  RUN_OK(Max, {f32(G, {1, 2, 2})}, {f32(GY, {1, 2, 1})});
  expectNear(GY, {3, 2});
  // A NaN anywhere in a plane is its max, as ReduceMax's (not only a first
  // NaN, as std::max's order would give).
  std::vector<float> GN{1, NAN, 3, 2};
  RUN_OK(Max, {f32(GN, {1, 1, 4})}, {f32(GY, {1, 1, 1})});
  EXPECT_TRUE(std::isnan(GY[0]));
  OpRunner L2("GlobalLpPool");
  RUN_OK(L2, {f32(G, {1, 2, 2})}, {f32(GY, {1, 2, 1})});
  expectNear(GY, {std::sqrt(10.0f), std::sqrt(20.0f)});
}

TEST(ResizeKernel, NearestAndLinearUpsampling) {
  std::vector<float> X{1, 2}, Roi, Sc{1, 1, 1, 2}, Y(4);
  // half_pixel: x_orig = (x + 0.5)/2 - 0.5 = -0.25, 0.25, 0.75, 1.25.
  OpRunner N("Resize", 13);
  RUN_OK(N, {f32(X, {1, 1, 1, 2}), f32(Roi, {0}), f32(Sc, {4})},
         {f32(Y, {1, 1, 1, 4})});
  expectNear(Y, {1, 1, 2, 2}); // round_prefer_floor of the clamped coords
  OpRunner L("Resize", 13);
  L.s("mode", "linear");
  RUN_OK(L, {f32(X, {1, 1, 1, 2}), f32(Roi, {0}), f32(Sc, {4})},
         {f32(Y, {1, 1, 1, 4})});
  expectNear(Y, {1, 1.25, 1.75, 2});
  std::vector<float> Y3(3);
  std::vector<int64_t> Sizes{1, 1, 1, 3};
  std::vector<float> NoScales;
  OpRunner A("Resize", 13);
  A.s("mode", "linear").s("coordinate_transformation_mode", "align_corners");
  RUN_OK(A,
         {f32(X, {1, 1, 1, 2}), f32(Roi, {0}), f32(NoScales, {0}),
          i64(Sizes, {4})},
         {f32(Y3, {1, 1, 1, 3})});
  expectNear(Y3, {1, 1.5, 2}); // x_orig = 0, 0.5, 1
}

namespace {
/// A direct 2-D convolution, written from the definition, against which
/// the im2col and depthwise paths are checked on awkward geometries.
std::vector<float> naiveConv2D(const std::vector<float> &X,
                               const std::vector<float> &W, int64_t N,
                               int64_t C, int64_t H, int64_t Wd, int64_t M,
                               int64_t KH, int64_t KW, int64_t Group, int64_t S,
                               int64_t P, int64_t D, int64_t OH, int64_t OW) {
  std::vector<float> Y(N * M * OH * OW, 0);
  const int64_t Cg = C / Group, Mg = M / Group;
  for (int64_t B = 0; B < N; ++B)
    for (int64_t Mo = 0; Mo < M; ++Mo)
      for (int64_t Oh = 0; Oh < OH; ++Oh)
        for (int64_t Ow = 0; Ow < OW; ++Ow) {
          double Acc = 0;
          for (int64_t Ci = 0; Ci < Cg; ++Ci)
            for (int64_t I = 0; I < KH; ++I)
              for (int64_t J = 0; J < KW; ++J) {
                int64_t Ih = Oh * S - P + I * D, Iw = Ow * S - P + J * D;
                if (Ih < 0 || Ih >= H || Iw < 0 || Iw >= Wd)
                  continue;
                int64_t Cin = (Mo / Mg) * Cg + Ci;
                Acc += X[((B * C + Cin) * H + Ih) * Wd + Iw] *
                       W[((Mo * Cg + Ci) * KH + I) * KW + J];
              }
          Y[((B * M + Mo) * OH + Oh) * OW + Ow] = float(Acc);
        }
  return Y;
}

/// N values uniform in [-1, 1) from Gen.
std::vector<float> uniformValues(std::mt19937 &Gen, size_t N) {
  std::uniform_real_distribution<float> Dist(-1.0f, 1.0f);
  std::vector<float> V(N);
  for (float &X : V)
    X = Dist(Gen);
  return V;
}

std::vector<float> ramp(size_t N, float Scale) {
  std::vector<float> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = float(int64_t(I * 7 % 11) - 5) * Scale;
  return V;
}
} // namespace

TEST(ConvKernel, Im2colAndDepthwiseAgreeWithDirectLoops) {
  // Stride 2, pad 1, dilation 2 on 7x6 planes: every edge case of im2col.
  struct Case {
    int64_t C, M, Group, K, S, P, D;
  } Cases[] = {{4, 6, 2, 3, 2, 1, 2},  // grouped, im2col
               {3, 3, 3, 3, 2, 1, 1},  // depthwise, stride 2
               {3, 6, 3, 3, 1, 1, 1},  // depthwise, multiplier 2
               {2, 3, 1, 1, 1, 0, 1},  // pointwise: no im2col
               {3, 3, 3, 5, 1, 2, 2}}; // depthwise, dilated 5x5
  for (const Case &T : Cases) {
    const int64_t N = 2, H = 7, Wd = 6;
    const int64_t Ext = (T.K - 1) * T.D + 1;
    const int64_t OH = (H + 2 * T.P - Ext) / T.S + 1,
                  OW = (Wd + 2 * T.P - Ext) / T.S + 1;
    std::vector<float> X = ramp(N * T.C * H * Wd, 0.5f);
    std::vector<float> W = ramp(T.M * (T.C / T.Group) * T.K * T.K, 0.25f);
    std::vector<float> Y(N * T.M * OH * OW);
    OpRunner R("Conv");
    R.i("group", T.Group)
        .ints("strides", {T.S, T.S})
        .ints("pads", {T.P, T.P, T.P, T.P})
        .ints("dilations", {T.D, T.D});
    RUN_OK(R, {f32(X, {N, T.C, H, Wd}), f32(W, {T.M, T.C / T.Group, T.K, T.K})},
           {f32(Y, {N, T.M, OH, OW})});
    expectNear(Y,
               naiveConv2D(X, W, N, T.C, H, Wd, T.M, T.K, T.K, T.Group, T.S,
                           T.P, T.D, OH, OW),
               1e-4f);
  }
}

TEST(ConvKernel, StrideTwoIm2colRowsMatchADirectLoop) {
  // im2col copies a stride-2 row's inside columns eight at a time from two
  // vector loads (Conv.cpp, copyEvens) and the rest one by one: rows whose
  // inside part is 8, 9, 16 and 17 columns and more, 3x3 and 7x7 windows
  // with their padding (ResNet's stem), each row's last read ending at the
  // plane's last element (the tensor's, for the last image's last
  // channel). Against a direct loop. Five input channels: with at most four
  // the direct path (ConvDirect.cpp) would take the wider rows.
  struct Case {
    int64_t K, P, H, Wd;
  } Cases[] = {{3, 1, 5, 17}, {3, 1, 4, 18}, {3, 0, 5, 33},
               {3, 1, 3, 35}, {7, 3, 6, 38}, {7, 3, 7, 23}};
  for (const Case &T : Cases) {
    const int64_t N = 2, C = 5, M = 5;
    const int64_t OH = (T.H + 2 * T.P - T.K) / 2 + 1,
                  OW = (T.Wd + 2 * T.P - T.K) / 2 + 1;
    std::vector<float> X = ramp(N * C * T.H * T.Wd, 0.5f);
    std::vector<float> W = ramp(M * C * T.K * T.K, 0.25f);
    std::vector<float> Y(N * M * OH * OW);
    OpRunner R("Conv");
    R.ints("strides", {2, 2}).ints("pads", {T.P, T.P, T.P, T.P});
    RUN_OK(R, {f32(X, {N, C, T.H, T.Wd}), f32(W, {M, C, T.K, T.K})},
           {f32(Y, {N, M, OH, OW})});
    SCOPED_TRACE(testing::Message()
                 << "K " << T.K << " map " << T.H << "x" << T.Wd);
    expectNear(
        Y,
        naiveConv2D(X, W, N, C, T.H, T.Wd, M, T.K, T.K, 1, 2, T.P, 1, OH, OW),
        1e-4f);
  }
}

TEST(ConvKernel, BlockedDepthwiseAndBatchedPointwiseAgreeWithDirectLoops) {
  // The depthwise path with eight channels in a vector's lanes
  // (DepthwiseBlocked.cpp): channel counts that leave a partial block, a map
  // cut into column tiles (75 outputs, tiles of 64) and row tiles, stride 2,
  // dilation, bias, the 3x3 and 5x5 windows' own loops; then pointwise on
  // a 1x1 map (one GEMM for the whole batch), on small maps and on a map
  // cut into column tiles.
  struct Case {
    int64_t C, M, Group, K, S, P, D, H, Wd;
  } Cases[] = {
      {11, 11, 11, 5, 1, 2, 1, 9, 9},
      {11, 11, 11, 5, 2, 2, 1, 70, 150},
      {9, 9, 9, 3, 1, 1, 1, 12, 12},
      {16, 16, 16, 7, 1, 3, 2, 20, 40},
      // 3x3 at stride 1 and 2 on 14- and 7-wide maps: the unrolled loops
      // of 8, 4 and 1 columns, and rows whose last columns go through one
      // transpose (or, at a plane's end, element by element).
      {20, 20, 20, 3, 1, 1, 1, 14, 14},
      {20, 20, 20, 3, 2, 1, 1, 14, 14},
      {13, 13, 13, 3, 1, 1, 1, 7, 7},
      {10, 10, 10, 5, 2, 2, 1, 15, 13},
      {24, 40, 1, 1, 1, 0, 1, 1, 1},
      {8, 20, 1, 1, 1, 0, 1, 128, 150},
      // Pointwise on maps of at most 127 positions: each block of rows
      // over every image (convGemmImages), one and two groups, 49 and 90
      // columns (tails of one and ten).
      {24, 40, 1, 1, 1, 0, 1, 7, 7},
      {20, 130, 2, 1, 1, 0, 1, 9, 10},
      // im2col in two column tiles: every image's tiles from one counter
      // at 1 and 2 threads, tile by tile at 3 (two slots); and grouped.
      {16, 24, 1, 3, 1, 1, 1, 40, 40},
      {16, 24, 2, 3, 2, 1, 1, 79, 81}};
  for (unsigned Threads : {1u, 2u, 3u})
    for (const Case &T : Cases) {
      const int64_t N = 3, Ext = (T.K - 1) * T.D + 1;
      const int64_t OH = (T.H + 2 * T.P - Ext) / T.S + 1,
                    OW = (T.Wd + 2 * T.P - Ext) / T.S + 1;
      std::vector<float> X = ramp(N * T.C * T.H * T.Wd, 0.5f);
      std::vector<float> W = ramp(T.M * (T.C / T.Group) * T.K * T.K, 0.25f);
      std::vector<float> B = ramp(T.M, 0.125f), Y(N * T.M * OH * OW);
      OpRunner R("Conv", 17, Threads);
      R.i("group", T.Group)
          .ints("strides", {T.S, T.S})
          .ints("pads", {T.P, T.P, T.P, T.P})
          .ints("dilations", {T.D, T.D});
      RUN_OK(R,
             {f32(X, {N, T.C, T.H, T.Wd}),
              f32(W, {T.M, T.C / T.Group, T.K, T.K}), f32(B, {T.M})},
             {f32(Y, {N, T.M, OH, OW})});
      std::vector<float> Want =
          naiveConv2D(X, W, N, T.C, T.H, T.Wd, T.M, T.K, T.K, T.Group, T.S, T.P,
                      T.D, OH, OW);
      for (size_t I = 0; I < Want.size(); ++I)
        Want[I] += B[I / size_t(OH * OW) % size_t(T.M)];
      SCOPED_TRACE(testing::Message()
                   << "C " << T.C << " K " << T.K << " map " << T.H << "x"
                   << T.Wd << " threads " << Threads);
      expectNear(Y, Want, 1e-4f);
    }
}

TEST(ConvKernel, FlatDepthwiseMatchesADirectLoop) {
  // 3x3 depthwise at stride 1 with one pixel of padding on maps 4 to 31
  // wide run on flattened planes (DepthwiseConv.cpp, depthwiseFlat3x3):
  // a plane shorter than a vector (1x5), partial last vectors, vectors
  // that cross rows; NaN at a plane's first and last columns (the masked
  // taps of the neighbouring rows must not see it); a channel with an
  // infinite corner weight, whose padding taps are 0 * inf = NaN as for
  // im2col and the channel-blocked path (the direct loop runs on the
  // zero-padded input); fused with a residual and Clip, 1 and 2 threads.
  // Planes of 512 and more read their middle rows in place and copy only
  // the first and last rows' neighbourhoods: 28x28, exactly 512 (8 wide,
  // the middle starting at the second vector), 17x31 and 20x26 (the last
  // vector partial, the bottom copy starting mid-row).
  struct Case {
    int64_t H, Wd;
  } Cases[] = {{1, 5},  {3, 4},   {7, 7},  {5, 9},   {14, 14},
               {2, 31}, {28, 28}, {64, 8}, {17, 31}, {20, 26}};
  std::mt19937 Gen(31);
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  for (const Case &T : Cases)
    for (bool Fused : {false, true})
      for (unsigned Threads : {1u, 2u}) {
        const int64_t N = 2, C = 3, Size = T.H * T.Wd;
        std::vector<float> X = uniformValues(Gen, N * C * Size);
        std::vector<float> W = uniformValues(Gen, C * 9);
        std::vector<float> B = uniformValues(Gen, C);
        std::vector<float> Res = uniformValues(Gen, N * C * Size);
        X[Size + T.Wd - 1] = NaN;    // image 0, channel 1: last column, row 0
        X[Size + Size - T.Wd] = NaN; // first column of its last row
        if (Fused)
          W[2 * 9] = std::numeric_limits<float>::infinity(); // a corner tap
        const int64_t PH = T.H + 2, PW = T.Wd + 2;
        std::vector<float> Padded(N * C * PH * PW, 0.0f);
        for (int64_t P = 0; P < N * C; ++P)
          for (int64_t Row = 0; Row < T.H; ++Row)
            std::copy_n(X.begin() + (P * T.H + Row) * T.Wd, T.Wd,
                        Padded.begin() + (P * PH + Row + 1) * PW + 1);
        std::vector<float> Want = naiveConv2D(Padded, W, N, C, PH, PW, C, 3, 3,
                                              C, 1, 0, 1, T.H, T.Wd);
        for (size_t I = 0; I < Want.size(); ++I) {
          float V = Want[I] + B[I / size_t(Size) % size_t(C)];
          if (Fused) {
            V += Res[I];
            V = V < -0.5f ? -0.5f : V;
            V = 0.5f < V ? 0.5f : V;
          }
          Want[I] = V;
        }
        OpRunner R(Fused ? "OomplanConv" : "Conv", 17, Threads);
        R.i("group", C).ints("pads", {1, 1, 1, 1});
        if (Fused)
          R.s("activation", "Clip")
              .f("activation_min", -0.5)
              .f("activation_max", 0.5);
        std::vector<runtime::TensorRef> In{f32(X, {N, C, T.H, T.Wd}),
                                           f32(W, {C, 1, 3, 3}), f32(B, {C})};
        if (Fused)
          In.push_back(f32(Res, {N, C, T.H, T.Wd}));
        std::vector<float> Y(Res.size());
        RUN_OK(R, In, {f32(Y, {N, C, T.H, T.Wd})});
        SCOPED_TRACE(testing::Message()
                     << "map " << T.H << "x" << T.Wd << (Fused ? " fused" : "")
                     << " threads " << Threads);
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

TEST(ConvKernel, WinogradMatchesADirectLoop) {
  // 3x3 at stride 1 on maps wide enough for Winograd F(2x2, 3x3)
  // (ConvWinograd.cpp; the workspace says it was taken): odd output sizes
  // (a last tile half outside), no padding and padding 2, blocks of tiles
  // that cross tile rows and images, 1 to 3 threads, random values against
  // a double loop, with bias; fused with a residual and Relu or Clip, whose
  // clamp it applies as it stores.
  struct Case {
    int64_t C, M, P, H, Wd;
  } Cases[] = {{8, 8, 1, 41, 37},
               {8, 12, 0, 40, 34},
               {9, 16, 2, 23, 30},
               {32, 8, 1, 30, 29}};
  std::mt19937 Gen(11);
  auto Random = [&](size_t N) { return uniformValues(Gen, N); };
  for (unsigned Threads : {1u, 2u, 3u})
    for (const Case &T : Cases)
      for (const char *Act : {"", "Relu", "Clip"}) {
        const int64_t N = 3, OH = T.H + 2 * T.P - 2, OW = T.Wd + 2 * T.P - 2;
        std::vector<float> X = Random(N * T.C * T.H * T.Wd);
        std::vector<float> W = Random(T.M * T.C * 9), B = Random(T.M);
        std::vector<float> Res = Random(N * T.M * OH * OW);
        std::vector<float> Y(Res.size());
        std::vector<float> Want = naiveConv2D(X, W, N, T.C, T.H, T.Wd, T.M, 3,
                                              3, 1, 1, T.P, 1, OH, OW);
        const bool Fused = *Act != 0;
        for (size_t I = 0; I < Want.size(); ++I) {
          float V = Want[I] + B[I / size_t(OH * OW) % size_t(T.M)];
          if (Fused)
            V += Res[I];
          if (std::string(Act) == "Relu")
            V = V < 0 ? 0 : V;
          if (std::string(Act) == "Clip")
            V = std::min(std::max(V, -0.5f), 0.5f);
          Want[I] = V;
        }
        OpRunner R(Fused ? "OomplanConv" : "Conv", 17, Threads);
        R.ints("pads", {T.P, T.P, T.P, T.P});
        if (Fused)
          R.s("activation", Act);
        if (std::string(Act) == "Clip")
          R.f("activation_min", -0.5).f("activation_max", 0.5);
        std::vector<runtime::TensorRef> In{f32(X, {N, T.C, T.H, T.Wd}),
                                           f32(W, {T.M, T.C, 3, 3}),
                                           f32(B, {T.M})};
        if (Fused)
          In.push_back(f32(Res, {N, T.M, OH, OW}));
        RUN_OK(R, In, {f32(Y, {N, T.M, OH, OW})});
        SCOPED_TRACE(testing::Message()
                     << "C " << T.C << " M " << T.M << " map " << T.H << "x"
                     << T.Wd << " pad " << T.P << " threads " << Threads
                     << " activation '" << Act << "'");
        // U (16 x M x C floats), then whole slots of 64 tiles' V and M.
        const uint64_t U = 16 * uint64_t(T.M * T.C) * 4,
                       Slot = 16 * uint64_t(T.C + T.M) * 64 * 4;
        ASSERT_GT(R.WorkspaceBytes, U);
        EXPECT_EQ((R.WorkspaceBytes - U) % Slot, 0u) << R.WorkspaceBytes;
        for (size_t I = 0; I < Want.size(); ++I)
          ASSERT_NEAR(Y[I], Want[I], 1e-4f * (1 + std::fabs(Want[I])))
              << "at " << I;
      }
}

TEST(ConvKernel, RoomyWinogradMatchesADirectLoop) {
  // 64 channels on a 12x12 map (144 output positions): Winograd's workspace
  // (U, 262,144 bytes, and a slot of 524,288) is larger than im2col's
  // (576 x 144 floats), so a plain plan runs im2col; a roomy plan gives
  // Winograd its slots, one per block of 64 of the 108 tiles, and the
  // convolution must still match the direct loop (fused with a residual
  // and Relu too). On a 7x7 map the roomy plan is not Winograd's; the
  // roomier one is where its tiles make two blocks or more.
  const int64_t N = 3, C = 64, M = 64, H = 12;
  std::mt19937 Gen(29);
  auto Random = [&](size_t Count) { return uniformValues(Gen, Count); };
  std::vector<float> X = Random(N * C * H * H), W = Random(M * C * 9),
                     B = Random(M), Res = Random(N * M * H * H);
  const std::vector<float> Direct =
      naiveConv2D(X, W, N, C, H, H, M, 3, 3, 1, 1, 1, 1, H, H);
  for (unsigned Roomy : {0u, 1u})
    for (bool Fused : {false, true})
      for (unsigned Threads : {1u, 2u}) {
        OpRunner R(Fused ? "OomplanConv" : "Conv", 17, Threads);
        R.Roomy = Roomy;
        R.ints("pads", {1, 1, 1, 1});
        if (Fused)
          R.s("activation", "Relu");
        std::vector<runtime::TensorRef> In{f32(X, {N, C, H, H}),
                                           f32(W, {M, C, 3, 3}), f32(B, {M})};
        if (Fused)
          In.push_back(f32(Res, {N, M, H, H}));
        std::vector<float> Y(Res.size());
        RUN_OK(R, In, {f32(Y, {N, M, H, H})});
        SCOPED_TRACE(testing::Message()
                     << (Roomy ? "roomy" : "plain") << (Fused ? " fused" : "")
                     << " threads " << Threads);
        EXPECT_EQ(R.WorkspaceBytes, Roomy ? uint64_t(262144 + 2 * 524288)
                                          : uint64_t(C * 9 * H * H * 4));
        for (size_t I = 0; I < Y.size(); ++I) {
          float Want = Direct[I] + B[I / size_t(H * H) % size_t(M)];
          if (Fused)
            Want = std::max(Want + Res[I], 0.0f);
          ASSERT_NEAR(Y[I], Want, 1e-4f * (1 + std::fabs(Want))) << "at " << I;
        }
      }
  // 7x7 at 512 channels, 2 images: the batched path's room (its weights
  // are over 1 MiB), roomy or roomier: the 2 x 16 tiles are one block of
  // 64, which one thread would run alone.
  std::vector<float> X7 = Random(2 * 512 * 49), W7(512 * 512 * 9, 0.01f);
  std::vector<float> Y7(2 * 512 * 49);
  for (unsigned Roomy : {1u, 2u}) {
    OpRunner R7("Conv", 17, 1);
    R7.Roomy = Roomy;
    R7.ints("pads", {1, 1, 1, 1});
    RUN_OK(R7, {f32(X7, {2, 512, 7, 7}), f32(W7, {512, 512, 3, 3})},
           {f32(Y7, {2, 512, 7, 7})});
    EXPECT_EQ(R7.WorkspaceBytes, uint64_t(512 * 9 + 512) * 2 * 49 * 4);
  }
  // 7x7 at 64 channels, 5 images (147 KB of weights: no batched path):
  // im2col, plain or roomy; Winograd, roomier (U 262,144 bytes and two
  // slots of 524,288 for the 5 x 16 tiles' two blocks), matching the
  // direct loop either way.
  const int64_t N7 = 5;
  std::vector<float> X8 = Random(N7 * C * 49);
  const std::vector<float> Direct7 =
      naiveConv2D(X8, W, N7, C, 7, 7, M, 3, 3, 1, 1, 1, 1, 7, 7);
  for (unsigned Roomy : {0u, 1u, 2u})
    for (unsigned Threads : {1u, 2u}) {
      OpRunner R8("Conv", 17, Threads);
      R8.Roomy = Roomy;
      R8.ints("pads", {1, 1, 1, 1});
      std::vector<float> Y8(N7 * M * 49);
      RUN_OK(R8, {f32(X8, {N7, C, 7, 7}), f32(W, {M, C, 3, 3}), f32(B, {M})},
             {f32(Y8, {N7, M, 7, 7})});
      SCOPED_TRACE(testing::Message()
                   << "7x7 roomy level " << Roomy << " threads " << Threads);
      EXPECT_EQ(R8.WorkspaceBytes, Roomy == 2 ? uint64_t(262144 + 2 * 524288)
                                              : uint64_t(C * 9 * 49 * 4));
      for (size_t I = 0; I < Y8.size(); ++I) {
        const float Want = Direct7[I] + B[I / 49 % size_t(M)];
        ASSERT_NEAR(Y8[I], Want, 1e-4f * (1 + std::fabs(Want))) << "at " << I;
      }
    }
}

TEST(ConvKernel, BatchedIm2colMatchesADirectLoop) {
  // Convolutions on small maps (under 128 output positions an image) with
  // over 1 MiB of weights multiply every image's columns at once when the
  // workspace has room for them (Conv.cpp, im2colBatched): 3x3 at stride 2
  // over 64 channels (576 rows, OpenBLAS), 1x1 at stride 2 over 520
  // channels, pointwise over 300 (OpenBLAS) and 256 (convGemm) channels;
  // 1 to 3 threads, 3 images; fused with a residual and Clip. The roomy
  // workspace must be the batched one (every image's columns and their
  // product); with 55 KiB of weights there is none, the plain path runs.
  struct Case {
    int64_t C, M, K, S, H, Wd;
    bool Batched;
  } Cases[] = {{64, 512, 3, 2, 11, 9, true},
               {520, 512, 1, 2, 9, 13, true},
               {300, 1000, 1, 1, 6, 7, true},
               {256, 1100, 1, 1, 6, 7, true},
               {64, 24, 3, 2, 11, 9, false}};
  std::mt19937 Gen(23);
  auto Random = [&](size_t N) { return uniformValues(Gen, N); };
  for (const Case &T : Cases) {
    const int64_t N = 3, P = T.K / 2;
    const int64_t OH = (T.H + 2 * P - T.K) / T.S + 1;
    const int64_t OW = (T.Wd + 2 * P - T.K) / T.S + 1;
    std::vector<float> X = Random(N * T.C * T.H * T.Wd);
    std::vector<float> W = Random(T.M * T.C * T.K * T.K), B = Random(T.M);
    std::vector<float> Res = Random(N * T.M * OH * OW);
    // The direct loop once per case (its weights are large).
    const std::vector<float> Direct = naiveConv2D(
        X, W, N, T.C, T.H, T.Wd, T.M, T.K, T.K, 1, T.S, P, 1, OH, OW);
    for (unsigned Threads : {1u, 2u, 3u})
      for (bool Fused : {false, true}) {
        std::vector<float> Y(Res.size()), Want(Direct.size());
        for (size_t I = 0; I < Want.size(); ++I) {
          float V = Direct[I] + B[I / size_t(OH * OW) % size_t(T.M)];
          if (Fused)
            V = std::min(std::max(V + Res[I], -0.5f), 0.5f);
          Want[I] = V;
        }
        OpRunner R(Fused ? "OomplanConv" : "Conv", 17, Threads);
        R.Roomy = true;
        R.ints("pads", {P, P, P, P}).ints("strides", {T.S, T.S});
        if (Fused)
          R.s("activation", "Clip")
              .f("activation_min", -0.5)
              .f("activation_max", 0.5);
        std::vector<runtime::TensorRef> In{f32(X, {N, T.C, T.H, T.Wd}),
                                           f32(W, {T.M, T.C, T.K, T.K}),
                                           f32(B, {T.M})};
        if (Fused)
          In.push_back(f32(Res, {N, T.M, OH, OW}));
        RUN_OK(R, In, {f32(Y, {N, T.M, OH, OW})});
        SCOPED_TRACE(testing::Message()
                     << "C " << T.C << " K " << T.K << " stride " << T.S
                     << " threads " << Threads << (Fused ? " fused" : ""));
        if (T.Batched)
          EXPECT_EQ(R.WorkspaceBytes,
                    uint64_t(T.C * T.K * T.K + T.M) * N * OH * OW * 4);
        else
          EXPECT_EQ(R.WorkspaceBytes, uint64_t(T.C * T.K * T.K) * OH * OW * 4);
        for (size_t I = 0; I < Want.size(); ++I)
          ASSERT_NEAR(Y[I], Want[I], 1e-4f * (1 + std::fabs(Want[I])))
              << "at " << I;
      }
  }
}

TEST(PoolKernels, TwoDimensionalFastPathPadsAndCounts) {
  // 2x2 input, 2x2 windows at stride 2 with one pixel of padding all round:
  // each window holds one input pixel and three padded ones.
  std::vector<float> X{1, 2, 3, 4}, Y(4);
  OpRunner Inc("AveragePool");
  Inc.ints("kernel_shape", {2, 2}).ints("strides", {2, 2});
  Inc.ints("pads", {1, 1, 1, 1}).i("count_include_pad", 1);
  RUN_OK(Inc, {f32(X, {1, 1, 2, 2})}, {f32(Y, {1, 1, 2, 2})});
  expectNear(Y, {0.25, 0.5, 0.75, 1});
  OpRunner Exc("AveragePool");
  Exc.ints("kernel_shape", {2, 2}).ints("strides", {2, 2});
  Exc.ints("pads", {1, 1, 1, 1});
  RUN_OK(Exc, {f32(X, {1, 1, 2, 2})}, {f32(Y, {1, 1, 2, 2})});
  expectNear(Y, {1, 2, 3, 4});
  std::vector<float> M{1, 5, 2, 4, 0, 3, 7, 8, 6}, MY(4);
  OpRunner Max("MaxPool");
  Max.ints("kernel_shape", {2, 2});
  RUN_OK(Max, {f32(M, {1, 1, 3, 3})}, {f32(MY, {1, 1, 2, 2})});
  expectNear(MY, {5, 5, 8, 8});
}
