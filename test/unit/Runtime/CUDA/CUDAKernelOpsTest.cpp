//===- CUDAKernelOpsTest.cpp - the CUDA kernels of exported models' ops ---===//
//
// The ops real exports use beyond the four test models (MobileNetV3's
// HardSwish, YOLO's and U-Net's Resize and Split, GroupNorm's
// InstanceNormalization, CLIP's ArgMax, position ids' CumSum, causal
// masks' Trilu, ...), each against the CPU backend (CUDAKernelCompare.h).
// Inputs are uniform in [-2, 2]; the models shape them into each op's
// domain (Acosh's [1, inf), Atanh's (-1, 1)) and make ties (Floor) and
// infinities (1 / 0) where a rule for them exists.
//
//===----------------------------------------------------------------------===//
#include "CUDAKernelCompare.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::unit;

namespace {

TEST(CUDAKernels, MoreActivationsAndMath) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,5,7] x) => (float[3,5,7] rd, float[3,5,7] tn, float[3,5,7] as,
    float[3,5,7] ac, float[3,5,7] at, float[3,5,7] sh, float[3,5,7] ch,
    float[3,5,7] ash, float[3,5,7] ach, float[3,5,7] ath, float[3,5,7] ss,
    float[3,5,7] hs, float[3,5,7] el, float[3,5,7] se,
    float[3,5,7] ce, float[3,5,7] tr, float[3,5,7] sk, bool[3,5,7] nan,
    bool[3,5,7] inf, bool[3,5,7] pinf, bool[3,5,7] ninf, bool[3,5,7] none)
    <float half = {0.5}, float two5 = {2.5}, float pt4 = {0.4}, float one = {1},
     float four = {4}> {
  x2 = Mul(x, two5)
  x4 = Mul(x, four)
  q = Floor(x4)
  halves = Mul(q, half)
  rd = Round(halves)
  tn = Tan(x)
  h = Mul(x, half)
  as = Asin(h)
  ac = Acos(h)
  at = Atan(x)
  sh = Sinh(x)
  ch = Cosh(x)
  ash = Asinh(x)
  ax = Abs(x)
  ge1 = Add(ax, one)
  ach = Acosh(ge1)
  small = Mul(x, pt4)
  ath = Atanh(small)
  ss = Softsign(x)
  hs = HardSwish(x2)
  el = Elu<alpha = 0.5>(x)
  se = Selu(x)
  ce = Celu<alpha = 2.0>(x)
  tr = ThresholdedRelu<alpha = 0.3>(x)
  sk = Shrink<lambd = 0.4, bias = 0.1>(x)
  lg = Log(x)
  nan = IsNaN(lg)
  fl = Floor(x)
  r = Reciprocal(fl)
  inf = IsInf(r)
  pinf = IsInf<detect_negative = 0>(r)
  nr = Neg(r)
  ninf = IsInf<detect_positive = 0>(nr)
  none = IsInf<detect_negative = 0>(nr)
})");
}

TEST(CUDAKernels, ModSumMeanCastLike) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] a, float[3,1] b, float[4] c) => (float[2,3,4] fm,
    float[2,3,4] nm, int64[2,3,4] im, int64[2,3,4] ifm, float[2,3,4] s3,
    float[2,3,4] m3, float[3,4] m2, float[2,3,4] s1, int64[2,3,4] cl)
    <float three = {3}, float one = {1}> {
  ab = Abs(b)
  den = Add(ab, one)
  fm = Mod<fmod = 1>(a, den)
  nb = Neg(den)
  nm = Mod(a, nb)
  a3 = Mul(a, three)
  fa = Floor(a3)
  ia = Cast<to = 7>(fa)
  fb = Floor(b)
  ib = Cast<to = 7>(fb)
  im = Mod(ia, ib)
  ifm = Mod<fmod = 1>(ia, ib)
  s3 = Sum(a, b, c)
  m3 = Mean(a, b, c)
  m2 = Mean(b, c)
  s1 = Sum(a)
  cl = CastLike(a3, ib)
})");
}

TEST(CUDAKernels, SplitTileDepthSpace) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,6,4] x, float[1,8,2,3] d) => (float[2,1,4] p0, float[2,3,4] p1,
    float[2,2,4] p2, float[2,6,2] q0, float[2,6,2] q1, float[4,6,12] tl,
    float[2,12,4] tl2, float[1,2,4,6] dcr, float[1,2,4,6] crd,
    float[1,8,2,3] s2d, float[2,2,3,6,2,4] tl6)
    <int64[3] split = {1, 3, 2}, int64[3] reps = {2, 1, 3},
     int64[3] reps2 = {1, 2, 1}, int64[6] shape6 = {2, 1, 3, 2, 2, 2},
     int64[6] reps6 = {1, 2, 1, 3, 1, 2}> {
  p0, p1, p2 = Split<axis = 1>(x, split)
  q0, q1 = Split<axis = -1>(x)
  tl = Tile(x, reps)
  tl2 = Tile(x, reps2)
  dcr = DepthToSpace<blocksize = 2>(d)
  crd = DepthToSpace<blocksize = 2, mode = "CRD">(d)
  s2d = SpaceToDepth<blocksize = 2>(dcr)
  x6 = Reshape(x, shape6)
  tl6 = Tile(x6, reps6)
})");
}

// Floor makes ties (ArgMax's first index, select_last_index's last);
// CumSum runs along a middle axis, exclusive and reversed.
TEST(CUDAKernels, ArgCumSumTriluInstanceNorm) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,5,6] x, float[2,3,4,5] y) => (int64[2,1,6] amx, int64[2,5] amn,
    float[2,5,6] cs, float[2,5,6] cse, int64[2,5,6] ics,
    float[2,5,6] up, float[2,5,6] lo, float[2,5,6] up0, float[2,3,4,5] inn,
    int64[2,6] anan)
    <int64 ax = {1}, int64 k = {1}, int64 km = {-2},
     float[3] s = {1, 0.5, 2}, float[3] b = {0, 1, -1}> {
  fx = Floor(x)
  amx = ArgMax<axis = 1>(fx)
  amn = ArgMin<axis = -1, keepdims = 0, select_last_index = 1>(fx)
  lx = Log(x)
  anan = ArgMax<axis = 1, keepdims = 0>(lx)
  ix = Cast<to = 7>(fx)
  cs = CumSum(x, ax)
  cse = CumSum<exclusive = 1, reverse = 1>(x, ax)
  ics = CumSum<reverse = 1>(ix, ax)
  up = Trilu(x, k)
  lo = Trilu<upper = 0>(x, km)
  up0 = Trilu(x)
  inn = InstanceNormalization<epsilon = 1e-5>(y, s, b)
})");
}

// TopK: ties from Floor go by index; smallest along a middle axis; k = 0
// and k = the whole axis; a line of 300 (more than a block's 256 threads).
TEST(CUDAKernels, TopK) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,4,37] x, float[2,300] y) => (float[3,4,5] v, int64[3,4,5] i,
    float[3,2,37] sv, int64[3,2,37] si, float[3,4,0] zv, int64[3,4,37] ai,
    float[2,7] lv, int64[2,7] li)
    <int64[1] k5 = {5}, int64[1] k2 = {2}, int64[1] k0 = {0}, int64[1] k37 = {37},
     int64[1] k7 = {7}, float three = {3}> {
  x3 = Mul(x, three)
  fx = Floor(x3)
  v, i = TopK(fx, k5)
  sv, si = TopK<axis = 1, largest = 0>(x, k2)
  zv, zi = TopK(x, k0)
  av, ai = TopK(fx, k37)
  lv, li = TopK<largest = 0>(y, k7)
})");
}

// The element and ND gathers and scatters, with negative indices, int32
// indices, reduction add onto repeated indices (ix repeats in its first
// three columns of batch 0; the device adds in any order, within the
// tolerance), and ScatterND's slices (swin_t's masks, index_put).
TEST(CUDAKernels, GatherScatter) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 16]>
g (float[3,4,5] x, float[3,2,5] u) => (float[3,2,5] ge, float[3,4,5] se,
    float[3,4,5] sa, float[3,4,5] nd, float[3,4,5] nda, float[3,4,5] nde)
    <int64[3,2,5] ix = {0, 1, 2, 3, 0, 0, -3, 2, -4, 1, 3, 3, 0, 0, 1,
                        2, 2, 2, 2, 2, 1, 0, 3, 2, 1, 0, 1, 2, 3, -1},
     int32[3,2,5] iu = {0, 1, 2, 3, 0, 3, 2, 1, 0, 1, 1, 0, 3, 2, 3,
                        2, 3, 0, 1, 2, 1, 0, 3, 2, 1, 0, 2, 1, 3, 0},
     int64[2,1] nix = {2, -3}, int64[2,2] nix2 = {0, 3, 1, -2},
     int64[2,2] nrep = {1, 1, 1, 1}, float half = {0.5}, int64[1] s0 = {0},
     int64[1] e2 = {2}, int64 zero = {0}, int64 one = {1}> {
  ge = GatherElements<axis = 1>(x, ix)
  se = ScatterElements<axis = 1>(x, iu, u)
  fu = Floor(u)
  sa = ScatterElements<axis = 1, reduction = "add">(x, ix, fu)
  x2 = Slice(x, s0, e2, s0)
  u1 = Mul(x2, half)
  nd = ScatterND(x, nix, u1)
  fu2 = Gather<axis = 0>(fu, zero)
  nda = ScatterND<reduction = "add">(x, nrep, fu2)
  u2 = Gather<axis = 0>(u, one)
  nde = ScatterND(x, nix2, u2)
})");
}

// GatherND: whole rows (tuples of one index, one negative), single
// elements (tuples of three), and batch_dims 1 (per-batch tuples of two);
// OneHot over int64 indices from x (negatives wrap, one past depth gives
// all off values), over float indices (truncated toward zero), on axis 0
// and on the last axis. Before session 15 both ran as host steps on CUDA.
TEST(CUDAKernels, GatherNDOneHot) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 16]>
g (float[3,4,5] x, float[2,3] f) => (float[2,4,5] rows, float[3] elems,
    float[3,2,5] batched, float[5,2,3] oh0, float[2,3,4] ohf)
    <int64[2,1] r = {2, -3}, int64[3,3] e = {0, 0, 0, 2, 3, 4, 1, -1, -5},
     int64[3,2,2] b = {0, 1, 3, 4, 1, 1, 2, 2, 0, 0, 3, 0},
     int64 d5 = {5}, float d4 = {4}, float[2] onoff = {-1, 3}, float two = {2}> {
  rows = GatherND(x, r)
  elems = GatherND(x, e)
  batched = GatherND<batch_dims = 1>(x, b)
  f2 = Mul(f, two)
  fi = Cast<to = 7>(f2)
  oh0 = OneHot<axis = 0>(fi, d5, onoff)
  ohf = OneHot(f2, d4, onoff)
})");
}

// RoiAlign: average and max, sampling_ratio 0 (ceil of the bin size:
// grids of 1 to 3 samples a side) and 2, half_pixel and output_half_pixel,
// spatial_scale 0.5; regions inside, across the edge (samples below -1
// read 0), and smaller than a pixel, on both images of the batch.
TEST(CUDAKernels, RoiAlign) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 16]>
g (float[2,3,8,9] x) => (float[4,3,2,3] avg, float[4,3,3,2] mx, float[4,3,2,2] old)
    <float[4,4] r = {0, 0, 4, 4, 1.5, 2, 7.5, 6, -1, -1, 3, 10, 2, 2, 2.5, 2.5},
     int64[4] b = {0, 1, 1, 0}> {
  avg = RoiAlign<output_height = 2, output_width = 3>(x, r, b)
  mx = RoiAlign<mode = "max", output_height = 3, output_width = 2, sampling_ratio = 2>(x, r, b)
  old = RoiAlign<coordinate_transformation_mode = "output_half_pixel", output_height = 2, output_width = 2, spatial_scale = 0.5>(x, r, b)
})");
}

// Pools cuDNN cannot express, on the direct kernel (PoolPoint.h shared
// with the CPU): dilations, asymmetric padding, a ceil_mode that adds a
// window (count_include_pad on and off: the overhang past pad_end does
// not count), MaxPool's Indices in both storage orders, 1-d and 3-d.
TEST(CUDAKernels, PoolsOffCuDNN) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,9,10] x, float[2,3,11] v, float[1,2,6,6,7] u) =>
    (float[2,3,5,6] dil, float[2,3,4,5] asym, float[2,3,5,6] ceil0,
     float[2,3,5,6] ceil1, float[2,3,4,5] mi, int64[2,3,4,5] ir,
     int64[2,3,4,5] ic, float[2,3,5] one, float[1,2,3,3,4] three) {
  dil = MaxPool<kernel_shape = [3, 3], dilations = [2, 2]>(x)
  asym = AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [0, 1, 1, 0]>(x)
  ceil0 = AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = 1>(x)
  ceil1 = AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = 1, count_include_pad = 1>(x)
  mi, ir = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(x)
  mi2, ic = MaxPool<kernel_shape = [2, 2], strides = [2, 2], storage_order = 1>(x)
  one = MaxPool<kernel_shape = [3], strides = [2], dilations = [2], pads = [1, 2]>(v)
  three = AveragePool<kernel_shape = [3, 2, 2], strides = [2, 2, 2], ceil_mode = 1>(u)
})");
}

// Scatter, ScatterElements' name at opsets 9 and 10.
TEST(CUDAKernels, ScatterOpset10) {
  compareBackends(R"(<ir_version: 5, opset_import: ["" : 10]>
g (float[3,4] x, float[3,2] u) => (float[3,4] y)
    <int64[3,2] i = {1, 3, 0, 2, 3, 1}> {
  y = Scatter<axis = 1>(x, i, u)
})");
}

// ConvTranspose on cuDNN's data gradient: 2-d with stride, padding and
// output_padding, grouped with dilation, 1-d, 3-d, output_shape with
// its odd pad at the beginning (pads 1 and 0), and a bias.
TEST(CUDAKernels, ConvTranspose) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4,5,6] x, float[2,2,9] s, float[1,2,3,4,4] v) => (float[2,3,10,12] a,
    float[2,6,7,8] b, float[2,3,19] c, float[1,2,6,8,8] d, float[2,3,10,12] e)
    <float[4,3,3,3] w = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9, 1.0, -1.1, 1.2,
                         0.1, 0.2, 0.3, -0.4, 0.5, 0.6, -0.7, 0.8, 0.9, -1.0, 1.1, 1.2,
                         -0.1, 0.2, 0.3, 0.4, -0.5, 0.6, 0.7, 0.8, -0.9, 1.0, 1.1, -1.2,
                         0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8, 0.9, -1.0, 1.1, 1.2,
                         0.1, -0.2, 0.3, 0.4, 0.5, 0.6, -0.7, 0.8, 0.9, 1.0, -1.1, 1.2,
                         -0.1, 0.2, 0.3, -0.4, 0.5, 0.6, 0.7, -0.8, 0.9, 1.0, 1.1, -1.2,
                         0.1, 0.2, 0.3, 0.4, -0.5, -0.6, 0.7, 0.8, 0.9, -1.0, -1.1, 1.2,
                         0.1, -0.2, -0.3, 0.4, 0.5, 0.6, 0.7, -0.8, -0.9, 1.0, 1.1, 1.2,
                         -0.1, -0.2, 0.3, 0.4, 0.5, 0.6, -0.7, -0.8, 0.9, 1.0, -1.1, -1.2},
     float[3] bias = {0.5, -1, 2},
     float[4,3,2,2] wg = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2,
                          -0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.7, -0.8, -0.9, -1.0, -1.1, -1.2,
                          0.2, 0.4, 0.6, 0.8, 1.0, 1.2, -0.2, -0.4, -0.6, -0.8, -1.0, -1.2,
                          0.3, -0.3, 0.3, -0.3, 0.3, -0.3, 0.3, -0.3, 0.3, -0.3, 0.3, -0.3},
     float[2,3,3] w1 = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,
                        -0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.7, -0.8, -0.9},
     float[2,2,2,2,2] w3 = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6,
                            -0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.7, -0.8, -0.9, -1.0, -1.1, -1.2, -1.3, -1.4, -1.5, -1.6}> {
  a = ConvTranspose<strides = [2, 2], pads = [1, 1, 1, 1], output_padding = [1, 1]>(x, w, bias)
  b = ConvTranspose<group = 2, dilations = [2, 2]>(x, wg)
  c = ConvTranspose<strides = [2], pads = [0, 0]>(s, w1)
  d = ConvTranspose<strides = [2, 2, 2]>(v, w3)
  e = ConvTranspose<strides = [2, 2], output_shape = [10, 12]>(x, w)
})");
}

// Einsum, the CPU's loop on the device: a batched product (T5's scores),
// a contraction (MoE's gate), a diagonal, the implicit output (a
// transpose), a sum over every label, three operands, and a batch label of
// size 1 broadcast against 2.
TEST(CUDAKernels, Einsum) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 12]>
g (float[2,3,4,5] q, float[2,3,6,5] k, float[2,7,5] x, float[4,5] e,
   float[5,5] m, float[1,3,4] p1, float[2,4,5] p2) => (float[2,3,4,6] s,
   float[2,7,4] g, float[5] d, float[5,4] t, float r, float[2,3,4] three,
   float[2,3,5] bc) {
  s = Einsum<equation = "bnqd,bnkd->bnqk">(q, k)
  g = Einsum<equation = "bsd,ed->bse">(x, e)
  d = Einsum<equation = "ii->i">(m)
  t = Einsum<equation = "ji">(e)
  r = Einsum<equation = "ij->">(m)
  three = Einsum<equation = "bnqd,bnkd,ed->bne">(q, k, e)
  bc = Einsum<equation = "bij,bjk->bik">(p1, p2)
})");
}

// GridSample, the CPU's per-point function on the device: the three modes
// and the three paddings, align_corners both ways, with grid points past
// [-1, 1] (the inputs reach 2) so that padding and reflection matter.
TEST(CUDAKernels, GridSample) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 16]>
g (float[2,3,5,6] x, float[2,4,7,2] grid) => (float[2,3,4,7] bl,
    float[2,3,4,7] nz, float[2,3,4,7] cb, float[2,3,4,7] br,
    float[2,3,4,7] rf, float[2,3,4,7] ra) {
  bl = GridSample(x, grid)
  nz = GridSample<mode = "nearest", padding_mode = "border">(x, grid)
  cb = GridSample<mode = "bicubic", align_corners = 1>(x, grid)
  br = GridSample<padding_mode = "border", align_corners = 1>(x, grid)
  rf = GridSample<padding_mode = "reflection">(x, grid)
  ra = GridSample<mode = "bicubic", padding_mode = "reflection", align_corners = 1>(x, grid)
})");
}

// Resize's modes and coordinate transforms, each a path of the shared
// taps (ResizeTaps.h): nearest by scales (asymmetric, floor), linear by
// sizes (half_pixel), cubic (align_corners, exclude_outside),
// tf_crop_and_resize with an roi and an extrapolation value, nearest on
// int64 (the whole-element gather, zero outside the roi), the defaults,
// tf_half_pixel_for_nn, and align_corners from 7 to 3 with ceil, where a
// fused multiply-add would move a coordinate past an integer.
TEST(CUDAKernels, ResizeModes) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,2,5,6] x, float[1,1,7,7] r7) => (float[1,2,10,12] nn,
    float[1,2,7,9] lin, float[1,2,8,4] cub, float[1,2,4,4] crop,
    int64[1,2,9,13] inn, float[1,2,3,15] pt, float[1,2,4,4] dn,
    float[1,2,9,13] nh, float[1,1,3,3] ac, int64[1,2,4,4] bin)
    <float[0] noroi = {}, float[4] s2 = {1, 1, 2, 2},
     int64[4] sz = {1, 2, 7, 9}, int64[4] sz2 = {1, 2, 8, 4},
     float[8] roi = {0, 0, 0.1, -0.2, 1, 1, 0.8, 1.3},
     int64[4] sz3 = {1, 2, 4, 4}, int64[4] sz4 = {1, 2, 9, 13},
     float[4] s3 = {1, 1, 0.6, 2.5}, int64[4] sz5 = {1, 1, 3, 3},
     float hundred = {100}> {
  nn = Resize<mode = "nearest", coordinate_transformation_mode = "asymmetric",
              nearest_mode = "floor">(x, noroi, s2)
  lin = Resize<mode = "linear">(x, noroi, noroi, sz)
  cub = Resize<mode = "cubic", coordinate_transformation_mode = "align_corners",
               exclude_outside = 1>(x, noroi, noroi, sz2)
  crop = Resize<mode = "linear",
                coordinate_transformation_mode = "tf_crop_and_resize",
                extrapolation_value = 7.5>(x, roi, noroi, sz3)
  ix = Cast<to = 7>(x)
  inn = Resize<mode = "nearest", nearest_mode = "round_prefer_ceil">(ix, noroi, noroi, sz4)
  pt = Resize<mode = "linear",
              coordinate_transformation_mode = "pytorch_half_pixel">(x, noroi, s3)
  dn = Resize(x, noroi, noroi, sz3)
  nh = Resize<coordinate_transformation_mode = "tf_half_pixel_for_nn",
              nearest_mode = "ceil">(x, noroi, noroi, sz4)
  ac = Resize<coordinate_transformation_mode = "align_corners",
              nearest_mode = "ceil">(r7, noroi, noroi, sz5)
  big = Mul(x, hundred)
  bi = Cast<to = 7>(big)
  bin = Resize<mode = "nearest", coordinate_transformation_mode = "tf_crop_and_resize">(bi, roi, noroi, sz3)
})");
}

// The opsets before 11: Upsample (opset 9) and Resize-10 take the scales
// as input 1 and default to asymmetric coordinates with floor rounding.
TEST(CUDAKernels, UpsampleAndResize10) {
  compareBackends(R"(<ir_version: 5, opset_import: ["" : 9]>
g (float[1,2,5,6] x) => (float[1,2,10,18] up, float[1,2,10,12] ul)
    <float[4] s = {1, 1, 2, 3}, float[4] s2 = {1, 1, 2, 2}> {
  up = Upsample(x, s)
  ul = Upsample<mode = "linear">(x, s2)
})");
  compareBackends(R"(<ir_version: 5, opset_import: ["" : 10]>
g (float[1,2,5,6] x) => (float[1,2,7,9] r, float[1,2,7,9] rl)
    <float[4] s = {1, 1, 1.5, 1.5}> {
  r = Resize(x, s)
  rl = Resize<mode = "linear">(x, s)
})");
}

// The recurrent ops (cuBLAS products around RecurrentCell.h): a
// bidirectional LSTM with biases, peepholes, initial states and sequence
// lengths 5, 2 and 0 (rows past their length: state kept, Y zero); a
// forward LSTM with input_forget, clip and three other activations with
// their alpha and beta; GRU sequence-major and batch-major with
// linear_before_reset; a reverse RNN with Relu, clip and the lengths.
// Weights are the inputs scaled by 1/4 (the RNN's not: clip bounds it).
TEST(CUDAKernels, Recurrent) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[5,3,4] x, float[2,24,4] w, float[2,24,6] r, float[2,48] b,
   float[2,3,6] h0, float[2,3,6] c0, float[2,18] p, float[3,5,4] xb,
   float[1,18,4] gw, float[1,18,6] gr, float[1,36] gb, float[1,6,4] rw,
   float[1,6,6] rr) =>
    (float[5,2,3,6] ly, float[2,3,6] lh, float[2,3,6] lc, float[5,1,3,6] fy,
     float[1,3,6] fc, float[5,1,3,6] gy, float[3,5,1,6] by, float[3,1,6] bh,
     float[5,1,3,6] ry, float[1,3,6] rh)
    <int32[3] sl = {5, 2, 0}, float q = {0.25}, int64[1] zero = {0}, int64[1] one = {1}> {
  ws = Mul(w, q)
  rs = Mul(r, q)
  ly, lh, lc = LSTM<direction = "bidirectional", hidden_size = 6>(x, ws, rs, b, sl, h0, c0, p)
  w1 = Slice(ws, zero, one)
  r1 = Slice(rs, zero, one)
  fy, fh, fc = LSTM<hidden_size = 6, input_forget = 1, clip = 0.9, activations = ["HardSigmoid", "Softsign", "Elu"], activation_alpha = [0.3, 0.8], activation_beta = [0.4]>(x, w1, r1)
  gws = Mul(gw, q)
  grs = Mul(gr, q)
  gy, gh = GRU<hidden_size = 6>(x, gws, grs, gb)
  by, bh = GRU<hidden_size = 6, layout = 1, linear_before_reset = 1>(xb, gws, grs, gb)
  ry, rh = RNN<hidden_size = 6, direction = "reverse", clip = 1.5, activations = ["Relu"]>(x, rw, rr, , sl)
})");
}

// A QDQ model's Q and DQ nodes: uint8 per tensor (x / 0.05 + 128 stays in
// range) and int8 per axis, where the scale 0.01 saturates (|x| / 0.01 up
// to 200) and zero points shift; int32 biases dequantized. The integer
// outputs must be equal: both backends divide in IEEE float32 and round
// half to even (QuantizePoint.h).
TEST(CUDAKernels, QuantizeDequantize) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4,5] x, float[3,7] b) => (float[2,3,4,5] pt, float[2,3,4,5] pa, int8[2,3,4,5] q8, uint8[2,3,4,5] qt, float[3,7] bi)
    <float s = {0.05}, uint8 z = {128}, float[3] sa = {0.01, 0.1, 0.5}, int8[3] za = {0, -3, 5}, float bs = {0.001}, float k = {1000}> {
  qt = QuantizeLinear(x, s, z)
  pt = DequantizeLinear(qt, s, z)
  q8 = QuantizeLinear<axis = 1>(x, sa, za)
  pa = DequantizeLinear<axis = 1>(q8, sa, za)
  bk = Mul(b, k)
  b32 = Cast<to = 6>(bk)
  bi = DequantizeLinear(b32, bs)
})");
}

// Reductions over axes with a kept axis of size above 1 between them
// (before session 16 the CUDA kernel refused these mid-run): a thread per
// output walks its reduced positions (ReduceAxes), for each op, with and
// without keepdims, a negative axis; ReduceProd over one axis stays on the
// one-span kernel.
TEST(CUDAKernels, ReduceAxesApart) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x, float[2,3,4,5] y) => (float[1,3,1] mean, float[2,4] mx, float[1,3,4,1] ss, float[3] l2, float[3] lse, float[1,1,4,1] mn, float[2,1,4] pr) {
  mean = ReduceMean<axes = [0, 2]>(x)
  mx = ReduceMax<axes = [1, 3], keepdims = 0>(y)
  ss = ReduceSumSquare<axes = [0, 3]>(y)
  l2 = ReduceL2<axes = [0, 2], keepdims = 0>(x)
  lse = ReduceLogSumExp<axes = [-1, 0, 2], keepdims = 0>(y)
  mn = ReduceMin<axes = [0, 1, 3]>(y)
  pr = ReduceProd<axes = [1]>(x)
})");
}

// LRN (sizes 3 and 5, the window clipped at the first and last channels,
// other alpha, beta, bias; LRNPoint.h shared with the CPU), LpPool (p 2
// and 1, strided) and GlobalLpPool (p 3 over a plane, p 2 over a line) on
// the direct pool kernel (PoolPoint.h), and ReduceLogSum over axes apart.
TEST(CUDAKernels, LRNLpPoolsLogSum) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,7,5,6] x, float[2,3,11] v) => (float[2,7,5,6] l3, float[2,7,5,6] l5, float[2,7,2,3] lp2, float[2,7,3,3] lp1, float[2,7,1,1] glp, float[2,3,1] gl1, float[2,1,5,1] rls) {
  l3 = LRN<size = 3>(x)
  l5 = LRN<size = 5, alpha = 0.02, beta = 0.6, bias = 2.0>(x)
  lp2 = LpPool<kernel_shape = [2, 2], strides = [2, 2]>(x)
  lp1 = LpPool<kernel_shape = [3, 2], strides = [1, 2], pads = [0, 0, 0, 0], p = 1>(x)
  glp = GlobalLpPool<p = 3>(x)
  gl1 = GlobalLpPool(v)
  ax = Abs(x)
  rls = ReduceLogSum<axes = [1, 3]>(ax)
})");
}

// Reductions of integers and doubles (int64 in detection models'
// post-processing): int64 and int32 sums, truncating means, extremes,
// products, L1, L2 (sqrt truncated), SumSquare over everything, one over
// axes apart; double means and LogSumExp. Integers must be equal: both
// backends accumulate in int64 (doubles in double).
TEST(CUDAKernels, IntegerAndDoubleReductions) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,4,5] x) => (int64[3,1,5] s64, int64[3,5] mean64, int32[1,4,1] max32, int32[3,4] min32, int64[3,1,5] prod64, int64[1,4,5] l1, int32[3,5] l2, int64[1,1,1] sq, double[3,4] md, double[3,5] lsed, int64[1,4,1] apart) <float ten = {10}> {
  xt = Mul(x, ten)
  a = Cast<to = 7>(xt)
  b = Cast<to = 6>(xt)
  d = Cast<to = 11>(x)
  s64 = ReduceSum<axes = [1]>(a)
  mean64 = ReduceMean<axes = [1], keepdims = 0>(a)
  max32 = ReduceMax<axes = [0, 2]>(b)
  min32 = ReduceMin<axes = [2], keepdims = 0>(b)
  prod64 = ReduceProd<axes = [1]>(a)
  l1 = ReduceL1<axes = [0]>(a)
  l2 = ReduceL2<axes = [1], keepdims = 0>(b)
  sq = ReduceSumSquare(a)
  md = ReduceMean<axes = [2], keepdims = 0>(d)
  lsed = ReduceLogSumExp<axes = [1], keepdims = 0>(d)
  apart = ReduceSum<axes = [0, 2]>(a)
})");
}

// Hardmax along the last axis and a middle one, on values with ties
// (Floor(2x): the first largest wins); and at opset 11, where axis 1
// coerces [2, 3, 4] to a [2, 12] matrix.
TEST(CUDAKernels, Hardmax) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x) => (float[2,3,4] last, float[2,3,4] mid, float[2,3,4] ties) <float two = {2}> {
  last = Hardmax(x)
  mid = Hardmax<axis = 1>(x)
  x2 = Mul(x, two)
  f = Floor(x2)
  ties = Hardmax(f)
})");
}
TEST(CUDAKernels, HardmaxOpset11) {
  compareBackends(R"(<ir_version: 7, opset_import: ["" : 11]>
g (float[2,3,4] x) => (float[2,3,4] old) {
  old = Hardmax<axis = 1>(x)
})");
}

// The comparisons and boolean ops no other case here runs (Less,
// GreaterOrEqual, Or, Xor), broadcasting, on values with ties (Floor(2x)
// against Floor(2y)), and their results through Where.
TEST(CUDAKernels, ComparisonsAndLogic) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x, float[3,1] y) => (bool[2,3,4] lt, bool[2,3,4] ge, bool[2,3,4] o, bool[2,3,4] xo, float[2,3,4] w) <float two = {2}> {
  x2 = Mul(x, two)
  fx = Floor(x2)
  y2 = Mul(y, two)
  fy = Floor(y2)
  lt = Less(fx, fy)
  ge = GreaterOrEqual(fx, fy)
  eq = Equal(fx, fy)
  o = Or(lt, eq)
  xo = Xor(ge, eq)
  w = Where(xo, x, y)
})");
}

// The data-dependent sizes CUDA now reports itself (Kernel::ReportsSizes):
// Compress along an axis, with a condition shorter than it, and flattened;
// TopK with a k counted at run time (the positive elements of y). Their
// outputs' dims are compared too.
TEST(CUDAKernels, CompressAndRunTimeTopK) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,5] x, float[4] y) => (float[3,?] c1, float[?,5] c0, float[?] cf,
    float[?] tv, int64[?] ti)
    <float zero = {0}, int64[1] flat = {-1}, int64[1] s0 = {0}, int64[1] s3 = {3}> {
  m = Greater(y, zero)
  c1 = Compress<axis = 1>(x, m)
  m3 = Slice(m, s0, s3)
  c0 = Compress<axis = 0>(x, m3)
  px = Greater(x, zero)
  pf = Reshape(px, flat)
  cf = Compress(x, pf)
  mi = Cast<to = 7>(m)
  k = ReduceSum<keepdims = 1>(mi)
  xf = Reshape(x, flat)
  tv, ti = TopK(xf, k)
})");
}

// EyeLike in three output types and diagonals (one past the matrix), and
// the normalizations CUDA now runs: LpNormalization p 1 and 2,
// MeanVarianceNormalization over its default axes (a channel's elements
// spread over the batch) and over axes apart.
TEST(CUDAKernels, EyeLikeLpNormMVN) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,5] x, float[2,3,4,5] z) => (float[3,5] e, int64[3,5] ei,
    bool[3,5] eb, float[3,5] ef, float[2,3,4,5] l1, float[2,3,4,5] l2,
    float[2,3,4,5] mv, float[2,3,4,5] mv2) {
  e = EyeLike<k = 1>(x)
  ei = EyeLike<dtype = 7, k = -1>(x)
  eb = EyeLike<dtype = 9>(x)
  ef = EyeLike<k = 5>(x)
  l1 = LpNormalization<axis = 1, p = 1>(z)
  l2 = LpNormalization(z)
  mv = MeanVarianceNormalization(z)
  mv2 = MeanVarianceNormalization<axes = [1, 3]>(z)
})");
}

// Dynamic quantization (DynamicQuantizeLinear, then MatMulInteger) and
// QOperator products (QLinearMatMul), exact integers on both backends:
// per-column and per-row zero points, per-row and per-column scales,
// uint8 and int8 on either side, and a 2-D A against batched B.
TEST(CUDAKernels, QuantizedMatMuls) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,3,8] x, float[8,5] w, float[2,8,5] v, float[3,8] u) => (
    uint8[2,3,8] dq, float ds, uint8 dz, int32[2,3,5] mi, int32[2,3,5] mr,
    uint8[2,3,5] ql, int8[2,3,5] qs, int32[2,3,5] mb)
    <float sw = {0.02}, int8 zw = {3}, int8[5] zc = {1, -2, 0, 5, -7},
     uint8[3] zr = {120, 128, 131}, float ys = {0.5}, uint8 yz = {10},
     float sx = {0.03}, int8 zx = {-4}, float[3] sr = {0.03, 0.05, 0.02},
     float[5] sc = {0.02, 0.01, 0.04, 0.03, 0.02}, float ys2 = {0.2},
     int8 yz2 = {-5}> {
  dq, ds, dz = DynamicQuantizeLinear(x)
  wq = QuantizeLinear(w, sw, zw)
  mi = MatMulInteger(dq, wq, dz, zc)
  mr = MatMulInteger(dq, wq, zr, zw)
  ql = QLinearMatMul(dq, ds, dz, wq, sw, zw, ys, yz)
  xq = QuantizeLinear(x, sx, zx)
  qs = QLinearMatMul(xq, sr, zx, wq, sc, zw, ys2, yz2)
  vq = QuantizeLinear(v, sw, zw)
  uq, us, uz = DynamicQuantizeLinear(u)
  mb = MatMulInteger(uq, vq, uz)
})");
}

// Quantized convolutions, exact integers on both backends: ConvInteger
// with two groups, stride 2 and asymmetric pads, per-channel w zero
// points; QLinearConv with per-channel w_scale and an int32 bias into
// uint8; a depthwise QLinearConv into int8.
TEST(CUDAKernels, QuantizedConvs) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2,4,6,6] x, float[6,2,3,3] wf, float[4,1,3,3] df) => (
    int32[2,6,3,3] ci, uint8[2,6,6,6] qc, int8[2,4,6,6] dw)
    <float sx = {0.02}, uint8 zx = {128}, float sw = {0.01}, int8 zw = {0},
     int8[6] zc = {0, 1, -1, 2, 0, -3},
     float[6] sc = {0.01, 0.02, 0.01, 0.03, 0.01, 0.02}, float sy = {0.5},
     uint8 zy = {100}, int32[6] b = {10, -20, 300, 0, 5, -5},
     float sd = {0.03}, int8 zd = {0}, float sy2 = {0.1}, int8 zy2 = {-3}> {
  xq = QuantizeLinear(x, sx, zx)
  wq = QuantizeLinear(wf, sw, zw)
  ci = ConvInteger<group = 2, strides = [2, 2], pads = [1, 1, 0, 0]>(xq, wq, zx, zc)
  qc = QLinearConv<group = 2, pads = [1, 1, 1, 1]>(xq, sx, zx, wq, sc, zw, sy, zy, b)
  dq = QuantizeLinear(df, sd, zd)
  dw = QLinearConv<group = 4, pads = [1, 1, 1, 1]>(xq, sx, zx, dq, sd, zd, sy2, zy2)
})");
}

// ReverseSequence time-major (lengths 4, 1, 0: all, one row, none) and
// batch-major (5, 2, 3), on float and on int64 rows.
TEST(CUDAKernels, ReverseSequence) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4,3,2] x, float[3,5,2] y) => (float[4,3,2] tm, float[3,5,2] bm,
    int64[3,5,2] bi) <int64[3] lt = {4, 1, 0}, int64[3] lb = {5, 2, 3}> {
  tm = ReverseSequence<batch_axis = 1, time_axis = 0>(x, lt)
  bm = ReverseSequence<batch_axis = 0, time_axis = 1>(y, lb)
  yi = Cast<to = 7>(y)
  bi = ReverseSequence<batch_axis = 0, time_axis = 1>(yi, lb)
})");
}

// BitShift of the four unsigned widths, both directions, broadcast shift
// amounts up to and past the width (which give 0).
TEST(CUDAKernels, BitShift) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] r, uint8[2,4] l8, uint16[2,4] r16, uint32[2,4] l32,
    uint64[2,4] r64)
    <uint8[2,4] a8 = {1, 2, 3, 255, 128, 7, 0, 9}, uint8[4] s8 = {0, 1, 7, 9},
     uint16[2,4] a16 = {1, 65535, 300, 4096, 2, 3, 5, 7},
     uint16[4] s16 = {0, 3, 15, 16},
     uint32[2,4] a32 = {1, 4294967295, 65536, 77, 5, 6, 7, 8},
     uint32[1] s32 = {31},
     uint64[2,4] a64 = {1, 2, 1099511627776, 3, 9, 10, 11, 12},
     uint64[2,1] s64 = {1, 64}> {
  r = Relu(x)
  l8 = BitShift<direction = "LEFT">(a8, s8)
  r16 = BitShift<direction = "RIGHT">(a16, s16)
  l32 = BitShift<direction = "LEFT">(a32, s32)
  r64 = BitShift<direction = "RIGHT">(a64, s64)
})");
}

// MaxUnpool of MaxPool's own values and indices (a segmentation
// decoder's pattern), into the default dims and into a larger
// output_shape.
TEST(CUDAKernels, MaxUnpool) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,6,6] x) => (float[2,3,6,6] u, float[2,3,7,7] w)
    <int64[4] big = {2, 3, 7, 7}> {
  p, i = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(x)
  u = MaxUnpool<kernel_shape = [2, 2], strides = [2, 2]>(p, i)
  w = MaxUnpool<kernel_shape = [2, 2], strides = [2, 2]>(p, i, big)
})");
}

} // namespace
