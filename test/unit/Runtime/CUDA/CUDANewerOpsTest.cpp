//===- CUDANewerOpsTest.cpp - ops that were host steps, on CUDA ----------===//
//
// Ops of newer opsets that exporters write and that ran as host steps on
// CUDA until session 21: Gelu (opset 20, both forms), Mish (18), the
// bitwise ops (18), GroupNormalization (18 and 21), TensorScatter (24),
// AffineGrid (20), Col2Im and CenterCropPad (18), DeformConv (19), Pad's
// edge, reflect and wrap modes, the scatters' max and min reductions, DFT
// and STFT (17), run by
// the CUDA backend against the CPU backend (CUDAKernelCompare.h). Without a
// GPU the plan made with the CUDA table must find a device kernel for each
// step (Executor::create with the table alone), then the test skips.
//
//===----------------------------------------------------------------------===//
#include "CUDAKernelCompare.h"

using namespace oomplan::runtime::unit;

namespace {

// Gelu's erf and tanh forms, Mish, and the four bitwise ops on int32
// (negative values: the sign bit) and uint8 (broadcast), cast from floats.
TEST(CUDAKernels, GeluMishBitwise) {
  compareBackends(R"(<ir_version: 9, opset_import: ["" : 20]>
g (float[2,3,8] x) => (float[2,3,8] ge, float[2,3,8] gt, float[2,3,8] mi,
    int32[2,3,8] an, int32[2,3,8] or, int32[2,3,8] xo, int32[2,3,8] no,
    uint8[2,3,8] ua) <int32[8] m = {1, -1, 255, -256, 7, 0, 1024, -2},
    uint8[1,8] um = {1, 3, 7, 15, 31, 63, 127, 255}, float k = {100}> {
  ge = Gelu(x)
  gt = Gelu<approximate = "tanh">(x)
  mi = Mish(x)
  xs = Mul(x, k)
  xi = Cast<to = 6>(xs)
  an = BitwiseAnd(xi, m)
  or = BitwiseOr(xi, m)
  xo = BitwiseXor(xi, m)
  no = BitwiseNot(xi)
  xa = Abs(xs)
  xu = Cast<to = 2>(xa)
  ua = BitwiseAnd(xu, um)
})");
}

// GroupNormalization: opset 18 (scale and bias per group, 2 groups of 3
// channels) and opset 21 (per channel, 3 groups of 2), over 4 x 5 planes.
TEST(CUDAKernels, GroupNormalization) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[2,6,4,5] x) => (float[2,6,4,5] y)
    <float[2] s = {1.5, -0.5}, float[2] b = {0.25, 2}> {
  y = GroupNormalization<num_groups = 2, epsilon = 0.001>(x, s, b)
})");
  compareBackends(R"(<ir_version: 10, opset_import: ["" : 21]>
g (float[2,6,4,5] x) => (float[2,6,4,5] y)
    <float[6] s = {1, 2, 3, -1, 0.5, 0}, float[6] b = {0, 1, -1, 2, 0, 3}> {
  y = GroupNormalization<num_groups = 3>(x, s, b)
})");
}

// TensorScatter into a [2, 3, 6, 4] cache, linear at rows 1 and 4 and
// circular from row 5 (wrapping); AffineGrid 2-D and 3-D feeding nothing
// else; Col2Im with stride, dilation and pads; CenterCropPad cropping one
// axis and padding another.
TEST(CUDAKernels, TensorScatterAffineGridCol2ImCrop) {
  compareBackends(R"(<ir_version: 11, opset_import: ["" : 24]>
g (float[2,3,6,4] past, float[2,3,2,4] upd, float[2,2,3] th,
   float[1,3,4] th3, float[2,6,16] col, float[3,5,4] x)
   => (float[2,3,6,4] lin, float[2,3,6,4] cir, float[2,4,5,2] grid,
       float[1,2,3,4,3] grid3, float[2,3,5,6] img, float[3,3,7] crop)
    <int64[2] wi = {1, 4}, int64[2] wc = {5, 2}, int64[4] sz = {2, 1, 4, 5},
     int64[5] sz3 = {1, 1, 2, 3, 4}, int64[2] ims = {5, 6},
     int64[2] blk = {2, 1}, int64[2] cs = {3, 7}> {
  lin = TensorScatter(past, upd, wi)
  cir = TensorScatter<mode = "circular">(past, upd, wc)
  grid = AffineGrid(th, sz)
  grid3 = AffineGrid<align_corners = 1>(th3, sz3)
  img = Col2Im<strides = [1, 2], dilations = [2, 1], pads = [1, 0, 0, 1]>(col, ims, blk)
  crop = CenterCropPad<axes = [1, 2]>(x, cs)
})");
}

// DeformConv (torchvision's deform_conv2d): 2 groups, 2 offset groups,
// stride 2, a 3 x 3 window with pads, offsets and a mask from the inputs
// (offsets of up to 2 pixels, taps falling outside the image), a bias.
TEST(CUDAKernels, DeformConv) {
  compareBackends(R"(<ir_version: 9, opset_import: ["" : 19]>
g (float[2,4,7,6] x, float[6,2,3,3] w, float[2,36,4,3] off,
   float[2,18,4,3] mask, float[6] b) => (float[2,6,4,3] y) {
  y = DeformConv<group = 2, offset_group = 2, strides = [2, 2],
                 pads = [1, 1, 1, 1]>(x, w, off, b, mask)
})");
}

// Pad's edge, reflect (pads longer than the axis: repeated reflections)
// and wrap modes (opset 19), with axes (opset 18): CUDA's gather (Pad.cu),
// a host step before session 21.
TEST(CUDAKernels, PadModes) {
  compareBackends(R"(<ir_version: 9, opset_import: ["" : 19]>
g (float[2,3,4] x) => (float[2,8,9] e, float[2,8,9] r, float[2,8,9] w,
    float[2,3,12] a) <int64[6] p = {0, 2, 5, 0, 3, 0}, int64[2] pa = {3, 5},
    int64[1] ax = {2}> {
  e = Pad<mode = "edge">(x, p)
  r = Pad<mode = "reflect">(x, p)
  w = Pad<mode = "wrap">(x, p)
  a = Pad<mode = "reflect">(x, pa, , ax)
})");
}

// ScatterElements and ScatterND with reduction max and min (opset 18), on
// repeated indices (the device's atomics, exact in any order), float and
// int32 (cast from the inputs): host steps before session 21.
TEST(CUDAKernels, ScatterMaxMin) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 18]>
g (float[3,4] x, float[3,2] u, float[2,4] v) => (float[3,4] emax,
    float[3,4] emin, float[3,4] ndmax, int32[3,4] imin)
    <int64[3,2] i = {1, 1, 0, 2, 3, 3}, int64[2,1] nd = {2, 2},
     float k = {10}> {
  emax = ScatterElements<axis = 1, reduction = "max">(x, i, u)
  emin = ScatterElements<axis = 1, reduction = "min">(x, i, u)
  ndmax = ScatterND<reduction = "max">(x, nd, v)
  xs = Mul(x, k)
  us = Mul(u, k)
  xi = Cast<to = 6>(xs)
  ui = Cast<to = 6>(us)
  imin = ScatterElements<axis = 1, reduction = "min">(xi, i, ui)
})");
}

// DFT (a real signal, onesided; a complex one, inverse, padded by
// dft_length) and STFT (a Hann-like window, frame step 3) at opset 17: the
// CPU kernels' direct sums, a thread per bin (Signal.cu).
TEST(CUDAKernels, DFTAndSTFT) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,8,1] x, float[2,6,2] c, float[1,20,1] s) => (float[2,5,2] y,
    float[2,10,2] z, float[1,5,5,2] f)
    <int64 n = {10}, int64 st = {3},
     float[8] w = {0, 0.15, 0.5, 0.85, 1, 0.85, 0.5, 0.15}> {
  y = DFT<onesided = 1>(x)
  z = DFT<inverse = 1>(c, n)
  f = STFT<onesided = 1>(s, st, w)
})");
}

} // namespace
