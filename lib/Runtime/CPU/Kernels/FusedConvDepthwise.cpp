//===- FusedConvDepthwise.cpp - CPU kernel: OomplanConvDepthwise ---------===//
//
// act2(DepthwiseConv3x3(act1(PointwiseConv(X, W1, B1)), W2, B2)) without the
// pointwise conv's output (IR/FusedOps.h). A task is one image, a block of
// channels and a run of output rows; it walks its rows in bands: convGemm
// writes the pointwise rows a band needs (bias and act1 folded in, the rows
// the previous band already made moved to the front, not recomputed) into
// a buffer on the stack that stays in L2, and the depthwise rows are summed
// from it. MobileNetV2's 96 x 112 x 112 expansion an image is never
// written to memory and read back. Every value is computed as the unfused
// kernels compute it up to the order of the nine taps' sum: convGemm's
// sums do not depend on how its columns are split, so neither does the
// output on the threads.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "ConvGemm.h"
#include "ConvGeometry.h"
#include "Elementwise.h"
#include "FusedKernels.h"
#include "TensorUtil.h"
#include "Vector8.h"
#include "oomplan/IR/FusedOps.h"
#include <algorithm>
#include <cstring>
#include <limits>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// The band buffer: 128 KiB of the thread's stack (convGemm's own packing
/// buffers are as large), L2-sized.
constexpr int64_t BandFloats = 32768;
/// Floats before and after the buffer's rows: the depthwise loads of a
/// row's first and last vectors reach past its ends (lanes that are masked
/// or never stored).
constexpr int64_t Margin = 32;
/// Pointwise columns a band aims for: enough for convGemm's panels.
constexpr int64_t BandColumns = 384;

/// A row of zeros, as wide as the widest input, with margins: the padding
/// rows above and below the plane.
alignas(32) const float ZeroRow[fused::ConvDepthwiseMaxWidth + 2 * Margin] = {};

/// The geometry of one OomplanConvDepthwise: X [N, C, H, W], Y [N, M, OH,
/// OW], stride S, padding Pt (top) and Pl (left).
struct Geometry {
  int64_t N, C, H, W, M, OH, OW, S, Pt, Pl;
};

/// Output rows a band, rows the buffer holds a channel, channels a block.
struct Bands {
  int64_t Rows, Cap, Block;
};

Bands bandsFor(const Geometry &G) {
  Bands B;
  B.Rows =
      std::clamp<int64_t>((BandColumns + G.S * G.W - 1) / (G.S * G.W), 1, G.OH);
  B.Cap = std::min(G.H, (B.Rows - 1) * G.S + 3);
  // Blocks of a multiple of six channels (convGemm's row tile) that fit,
  // then evened out over the channels.
  int64_t Most =
      std::max<int64_t>(6, (BandFloats - 2 * Margin) / (B.Cap * G.W) / 6 * 6);
  int64_t Count = (G.M + Most - 1) / Most;
  B.Block = std::min(G.M, ((G.M + Count - 1) / Count + 5) / 6 * 6);
  return B;
}

/// act2's clamp and the bias of one channel's depthwise rows.
struct DwChannel {
  const float *W9;
  float Bias;
  const ConvClamp *Clamp;
};

/// Depthwise output rows [Oy0, Oy1) of one channel into Y (the channel's
/// plane) from the pointwise rows from H0 on at Slab (W floats a row; the
/// rows the outputs read are there), at stride S. Eight outputs at a time:
/// at stride 1 the taps are three loads a row, at stride 2 two pairs of
/// loads split into even and odd columns; each row of taps is its own sum
/// (three chains of FMAs, not one of nine). In the first and last eight,
/// the taps whose column is outside the row are masked to zero (their loads
/// read the buffer's neighbouring row or margin), so every padding tap is a
/// zero times its weight, as im2col computes it; the lanes past the row's
/// end are never stored. Everything the loop reads is a local: a store to Y
/// could otherwise alias the bias or the geometry, and the compiler reloads
/// them each time.
template <int S, bool Clamped>
inline __attribute__((always_inline)) void
depthwiseRowsAt(const float *Slab, int64_t H0, int64_t Oy0, int64_t Oy1,
                const DwChannel &D, const Geometry &G, float *Y) {
  const int64_t H = G.H, W = G.W, OW = G.OW, Pt = G.Pt, Pl = G.Pl;
  V8 Wv[9];
  for (int K = 0; K < 9; ++K)
    Wv[K] = V8{} + D.W9[K];
  const V8 Bias = V8{} + D.Bias;
  const V8 Lo = V8{} + (Clamped ? D.Clamp->Lo : 0.0f),
           Hi = V8{} + (Clamped ? D.Clamp->Hi : 0.0f);
  // Tap Kx's columns in the first and the last eight outputs, in range.
  // At stride 2 the lanes hold the outputs in the order of the in-lane
  // even/odd split below, (0, 1, 4, 5, 2, 3, 6, 7).
  const int64_t Last = (OW - 1) / 8 * 8;
  const V8I Lane =
      S == 1 ? V8I{0, 1, 2, 3, 4, 5, 6, 7} : V8I{0, 1, 4, 5, 2, 3, 6, 7};
  const V8I WdV = V8I{} + int(W);
  V8I First[3], End[3];
  for (int Kx = 0; Kx < 3; ++Kx) {
    const V8I C0 = Lane * S + int(Kx - Pl);
    const V8I C1 = C0 + int(Last * S);
    First[Kx] = (C0 >= 0) & (C0 < WdV);
    End[Kx] = (C1 >= 0) & (C1 < WdV);
  }
  const float *Zero = ZeroRow + Margin;
  for (int64_t Oy = Oy0; Oy < Oy1; ++Oy) {
    const float *R[3];
    for (int Ky = 0; Ky < 3; ++Ky) {
      const int64_t Iy = Oy * S - Pt + Ky;
      R[Ky] = (Iy >= 0 && Iy < H ? Slab + (Iy - H0) * W : Zero) - Pl;
    }
    float *Yr = Y + Oy * OW;
    for (int64_t Ox = 0; Ox < OW; Ox += 8) {
      const bool AtFirst = Ox == 0, AtLast = Ox == Last;
      V8 Part[3];
#pragma GCC unroll 3
      for (int Ky = 0; Ky < 3; ++Ky) {
        const float *Src = R[Ky] + Ox * S;
        V8 T0, T1, T2;
        if constexpr (S == 1) {
          T0 = *reinterpret_cast<const V8U *>(Src);
          T1 = *reinterpret_cast<const V8U *>(Src + 1);
          T2 = *reinterpret_cast<const V8U *>(Src + 2);
        } else {
          // Even and odd columns split within each 128-bit half (one
          // vshufps each): lanes crossing the halves took two vpermd and
          // a blend a tap, and vpermd is a slow, multi-uop instruction on
          // some cores (first-generation Zen: four cycles each, which made
          // these taps five times the FMAs' time). The outputs come out in
          // the order (0, 1, 4, 5, 2, 3, 6, 7), put back once per eight.
          const V8 A = *reinterpret_cast<const V8U *>(Src);
          const V8 B = *reinterpret_cast<const V8U *>(Src + 8);
          const V8 A2 = *reinterpret_cast<const V8U *>(Src + 2);
          const V8 B2 = *reinterpret_cast<const V8U *>(Src + 10);
          T0 = OOMPLAN_SHUFFLE8(A, B, 0, 2, 8, 10, 4, 6, 12, 14);
          T1 = OOMPLAN_SHUFFLE8(A, B, 1, 3, 9, 11, 5, 7, 13, 15);
          T2 = OOMPLAN_SHUFFLE8(A2, B2, 0, 2, 8, 10, 4, 6, 12, 14);
        }
        if (AtFirst) {
          T0 = V8(V8I(T0) & First[0]);
          T1 = V8(V8I(T1) & First[1]);
          T2 = V8(V8I(T2) & First[2]);
        }
        if (AtLast) {
          T0 = V8(V8I(T0) & End[0]);
          T1 = V8(V8I(T1) & End[1]);
          T2 = V8(V8I(T2) & End[2]);
        }
        Part[Ky] = Wv[3 * Ky] * T0;
        Part[Ky] += Wv[3 * Ky + 1] * T1;
        Part[Ky] += Wv[3 * Ky + 2] * T2;
      }
      V8 Acc = Bias + Part[0];
      Acc += Part[1];
      Acc += Part[2];
      if constexpr (Clamped) { // the unfused kernels' comparisons: NaN stays
        Acc = Acc < Lo ? Lo : Acc;
        Acc = Hi < Acc ? Hi : Acc;
      }
      if constexpr (S == 2) // the split's order undone
        swapMiddlePairs(Acc);
      if (Ox + 8 <= OW) {
        *reinterpret_cast<V8U *>(Yr + Ox) = Acc;
      } else {
        alignas(32) float Out[8];
        *reinterpret_cast<V8 *>(Out) = Acc;
        std::copy(Out, Out + (OW - Ox), Yr + Ox);
      }
    }
  }
}

OOMPLAN_SIMD_CLONES void depthwiseRows(const float *Slab, int64_t H0,
                                       int64_t Oy0, int64_t Oy1,
                                       const DwChannel &D, const Geometry &G,
                                       float *Y) {
  if (G.S == 1)
    D.Clamp ? depthwiseRowsAt<1, true>(Slab, H0, Oy0, Oy1, D, G, Y)
            : depthwiseRowsAt<1, false>(Slab, H0, Oy0, Oy1, D, G, Y);
  else
    D.Clamp ? depthwiseRowsAt<2, true>(Slab, H0, Oy0, Oy1, D, G, Y)
            : depthwiseRowsAt<2, false>(Slab, H0, Oy0, Oy1, D, G, Y);
}

/// Reads `<Prefix>activation`: none, Relu or Clip (the fusion makes no
/// other), as a clamp (Any false for none).
bool readClamp(const Node &N, llvm::StringRef Prefix, bool &Any, ConvClamp &C) {
  const std::string Act = N.getString((Prefix + "activation").str(), "");
  Any = !Act.empty();
  if (Act == "Relu") {
    C = {0.0f, std::numeric_limits<float>::infinity()};
    return true;
  }
  if (Act == "Clip") {
    C = {float(N.getFloat((Prefix + "activation_min").str(),
                          -std::numeric_limits<double>::infinity())),
         float(N.getFloat((Prefix + "activation_max").str(),
                          std::numeric_limits<double>::infinity()))};
    return true;
  }
  return Act.empty();
}

llvm::Error checkOperands(const KernelContext &C, Geometry &G) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  if (!hasInput(C, 3))
    return C.badInput("input 3 (the depthwise weight) is missing");
  const TensorRef &X = C.Inputs[0], &W1 = C.Inputs[1], &W2 = C.Inputs[3],
                  &Y = C.Outputs[0];
  if (X.Dims.size() != 4 || W1.Dims.size() != 4 || W2.Dims.size() != 4 ||
      Y.Dims.size() != 4)
    return C.badInput("X, both weights and Y must be 4-D");
  G.N = X.Dims[0];
  G.C = X.Dims[1];
  G.H = X.Dims[2];
  G.W = X.Dims[3];
  G.M = W1.Dims[0];
  if (W1.Dims[1] != G.C || W1.Dims[2] != 1 || W1.Dims[3] != 1 ||
      W2.Dims != llvm::SmallVector<int64_t, 4>{G.M, 1, 3, 3} ||
      Y.Dims[0] != G.N || Y.Dims[1] != G.M)
    return C.badInput("the weights must be [M, C, 1, 1] and [M, 1, 3, 3] for "
                      "X [N, C, H, W] and Y [N, M, ...]");
  for (unsigned I : {2u, 4u})
    if (hasInput(C, I) && int64_t(C.Inputs[I].numElements()) != G.M)
      return C.badInput("bias " + llvm::Twine(I) + " must hold " +
                        llvm::Twine(G.M) + " values");
  if (G.W > fused::ConvDepthwiseMaxWidth)
    return C.unsupported("inputs wider than " +
                         llvm::Twine(fused::ConvDepthwiseMaxWidth));
  WindowGeometry WG;
  llvm::ArrayRef<int64_t> XD(X.Dims), YD(Y.Dims), WD(W2.Dims);
  std::string Why = windowGeometry(C.N, XD.drop_front(2), YD.drop_front(2),
                                   WD.drop_front(2), false, WG);
  if (!Why.empty())
    return C.badInput(Why);
  if (WG.K[0] != 3 || WG.K[1] != 3 || WG.S[0] != WG.S[1] ||
      (WG.S[0] != 1 && WG.S[0] != 2) || WG.D[0] != 1 || WG.D[1] != 1 ||
      WG.PadBegin[0] > 1 || WG.PadBegin[1] > 1 || WG.PadEnd[0] > 1 ||
      WG.PadEnd[1] > 1)
    return C.unsupported("a depthwise window other than 3x3, stride 1 or 2, "
                         "undilated, padded at most 1 on each side");
  G.OH = WG.Out[0];
  G.OW = WG.Out[1];
  G.S = WG.S[0];
  G.Pt = WG.PadBegin[0];
  G.Pl = WG.PadBegin[1];
  return llvm::Error::success();
}

llvm::Error runConvDepthwise(const KernelContext &C) {
  Geometry G;
  if (llvm::Error E = checkOperands(C, G))
    return E;
  bool Any1 = false, Any2 = false;
  ConvClamp Clamp1, Clamp2;
  if (!readClamp(C.N, "pointwise_", Any1, Clamp1) ||
      !readClamp(C.N, "", Any2, Clamp2))
    return C.unsupported("an activation other than Relu and Clip");
  if (C.Outputs[0].numElements() == 0)
    return llvm::Error::success();
  const Bands B = bandsFor(G);
  const float *X = C.Inputs[0].data<const float>();
  const float *W1 = C.Inputs[1].data<const float>();
  const float *B1 = hasInput(C, 2) ? C.Inputs[2].data<const float>() : nullptr;
  const float *W2 = C.Inputs[3].data<const float>();
  const float *B2 = hasInput(C, 4) ? C.Inputs[4].data<const float>() : nullptr;
  float *Y = C.Outputs[0].data<float>();
  const int64_t Blocks = (G.M + B.Block - 1) / B.Block;
  const int64_t BandCount = (G.OH + B.Rows - 1) / B.Rows;
  // Runs of bands a task: enough tasks for four a thread, each run's first
  // band making its own rows above.
  const int64_t Threads = int64_t(C.Pool.threads());
  const int64_t Runs = std::clamp<int64_t>(
      (4 * Threads + G.N * Blocks - 1) / (G.N * Blocks), 1, BandCount);
  const int64_t BandsPerRun = (BandCount + Runs - 1) / Runs;
  const int64_t Plane = G.H * G.W;
  C.Pool.parallelFor(G.N * Blocks * Runs, 1, [&](int64_t T0, int64_t T1) {
    alignas(32) float Buf[BandFloats];
    float *T = Buf + Margin;
    const int64_t Slab = B.Cap * G.W;
    for (int64_t Task = T0; Task < T1; ++Task) {
      const int64_t Img = Task / (Blocks * Runs);
      const int64_t M0 = Task / Runs % Blocks * B.Block;
      const int64_t Ms = std::min(B.Block, G.M - M0);
      const int64_t OyA = Task % Runs * BandsPerRun * B.Rows;
      const int64_t OyB = std::min(G.OH, OyA + BandsPerRun * B.Rows);
      int64_t H0 = 0, H1 = 0; // pointwise rows held: [H0, H1)
      for (int64_t Oy0 = OyA; Oy0 < OyB; Oy0 += B.Rows) {
        const int64_t Oy1 = std::min(OyB, Oy0 + B.Rows);
        const int64_t Need0 = std::max<int64_t>(0, Oy0 * G.S - G.Pt);
        const int64_t Need1 = std::min(G.H, (Oy1 - 1) * G.S - G.Pt + 3);
        if (Need0 < Need1) {
          if (Need0 >= H1 || Need0 < H0) {
            H0 = H1 = Need0;       // nothing to keep
          } else if (Need0 > H0) { // the rows kept, to the front
            for (int64_t M = 0; M < Ms; ++M)
              std::memmove(T + M * Slab, T + M * Slab + (Need0 - H0) * G.W,
                           size_t((H1 - Need0) * G.W) * sizeof(float));
            H0 = Need0;
          }
          if (H1 < Need1) {
            convGemm(Ms, (Need1 - H1) * G.W, G.C, W1 + M0 * G.C, G.C,
                     X + Img * G.C * Plane + H1 * G.W, Plane,
                     T + (H1 - H0) * G.W, Slab, B1 ? B1 + M0 : nullptr,
                     /*Accumulate=*/false, Any1 ? &Clamp1 : nullptr);
            H1 = Need1;
          }
        }
        for (int64_t M = 0; M < Ms; ++M) {
          const int64_t Ch = M0 + M;
          const DwChannel D{W2 + Ch * 9, B2 ? B2[Ch] : 0.0f,
                            Any2 ? &Clamp2 : nullptr};
          depthwiseRows(T + M * Slab, H0, Oy0, Oy1, D, G,
                        Y + (Img * G.M + Ch) * G.OH * G.OW);
        }
      }
    }
  });
  return llvm::Error::success();
}

} // namespace

void registerFusedConvDepthwiseKernel(CPUKernelTable &T) {
  addKernel(T, fused::ConvDepthwiseOp,
            Kernel{&runConvDepthwise, nullptr, {ElementType::Float}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
