//===- ConvDirect.cpp - convolutions of few input channels, direct --------===//
//
// See ConvDirect.h. A task is one output row of one image, every channel.
// Its taps come from a buffer on the stack that holds, for each input
// channel and window row, the input row between zero margins, split by the
// column stride into phases: phase p, position j is the padded row's
// column S * j + p, so the tap at window column kw of sixteen consecutive
// outputs is sixteen consecutive floats of phase kw % S from kw / S on.
// Padding taps read zeros: a zero times the weight, as im2col computes
// them. A tile is six output channels by sixteen columns, twelve
// accumulators, the window's taps in im2col's order (channel, row, column)
// from the bias (or the output, accumulating), as convGemm sums its rows.
//
//===----------------------------------------------------------------------===//
#include "ConvDirect.h"
#include "Elementwise.h"
#include "TensorUtil.h"
#include "Vector8.h"
#include <algorithm>
#include <cstring>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

constexpr int MR = 6;
constexpr int64_t NR = 16;
constexpr int64_t MaxTaps = 256;
/// The row buffer (32 KiB, L1-sized) and the packed weights (64 KiB).
constexpr int64_t BufFloats = 8192;
constexpr int64_t PackedFloats = 16384;

/// The buffer's layout for a geometry: Len floats a phase row, the
/// (channel, window row, phase) rows one after another.
struct Layout {
  int64_t ORound, Len, Floats;
};

Layout layoutFor(const WindowGeometry &G, int64_t Channels) {
  Layout L;
  L.ORound = (G.Out[1] + NR - 1) / NR * NR;
  L.Len = L.ORound + (G.K[1] - 1) / G.S[1] + 1;
  L.Floats = Channels * G.K[0] * G.S[1] * L.Len;
  return L;
}

/// Rows (1 to 6) output channels by 16 columns from Col on: Acc = Y (Load)
/// or 0, plus the bias, plus each tap's weights (Wp: six a tap) times its
/// sixteen inputs (Buf + Off[t] + Col); Cols of the sixteen stored, at Y
/// (channel rows YStride apart), clamped when Clamp is given. A last,
/// partial block of columns goes through Edge (MR x NR floats; its lanes
/// past Cols hold whatever the last such block left, summed and never
/// stored).
template <int Rows>
inline __attribute__((always_inline)) void
directTile(const float *Buf, const int32_t *Off, int64_t Taps, const float *Wp,
           int64_t Col, int64_t Cols, float *Y, int64_t YStride, bool Load,
           const float *Bias, const ConvClamp *Clamp, float *Edge) {
  const bool Whole = Cols == NR;
  V8 Acc[Rows][2];
#pragma GCC unroll 6
  for (int I = 0; I < Rows; ++I) {
    if (Load && !Whole)
      std::copy(Y + I * YStride, Y + I * YStride + Cols, Edge + I * NR);
    const float *Src = Whole ? Y + I * YStride : Edge + I * NR;
#pragma GCC unroll 2
    for (int V = 0; V < 2; ++V) {
      Acc[I][V] = Load ? *reinterpret_cast<const V8U *>(Src + 8 * V) : V8{};
      if (Bias)
        Acc[I][V] += Bias[I];
    }
  }
  for (int64_t T = 0; T < Taps; ++T) {
    const float *P = Buf + Off[T] + Col;
    const V8 X0 = *reinterpret_cast<const V8U *>(P);
    const V8 X1 = *reinterpret_cast<const V8U *>(P + 8);
#pragma GCC unroll 6
    for (int I = 0; I < Rows; ++I) {
      const float WV = Wp[T * MR + I];
      Acc[I][0] += WV * X0;
      Acc[I][1] += WV * X1;
    }
  }
#pragma GCC unroll 6
  for (int I = 0; I < Rows; ++I)
#pragma GCC unroll 2
    for (int V = 0; V < 2; ++V) {
      if (Clamp) { // convGemm's comparisons: NaN stays NaN
        const V8 Lo = V8{} + Clamp->Lo, Hi = V8{} + Clamp->Hi;
        Acc[I][V] = Acc[I][V] < Lo ? Lo : Acc[I][V];
        Acc[I][V] = Hi < Acc[I][V] ? Hi : Acc[I][V];
      }
      float *Dst = Whole ? Y + I * YStride : Edge + I * NR;
      *reinterpret_cast<V8U *>(Dst + 8 * V) = Acc[I][V];
    }
  if (!Whole)
    for (int I = 0; I < Rows; ++I)
      std::copy(Edge + I * NR, Edge + I * NR + Cols, Y + I * YStride);
}

/// Fills Buf for output row OH of the image at X (C planes H x W).
OOMPLAN_SIMD_CLONES void fillRows(const float *X, const WindowGeometry &G,
                                  int64_t C, const Layout &L, int64_t OH,
                                  float *Buf) {
  const int64_t H = G.In[0], W = G.In[1], KH = G.K[0], S = G.S[1];
  const int64_t PL = G.PadBegin[1];
  for (int64_t Ci = 0; Ci < C; ++Ci)
    for (int64_t Kh = 0; Kh < KH; ++Kh) {
      const int64_t IH = OH * G.S[0] - G.PadBegin[0] + Kh;
      const bool Inside = IH >= 0 && IH < H;
      const float *Src = X + (Ci * H + (Inside ? IH : 0)) * W;
      float *Phase0 = Buf + (Ci * KH + Kh) * S * L.Len;
      // Stride 2, eight positions of both phases from two loads: the
      // even and odd floats split within 128-bit halves (a scalar copy of
      // every other float was a third of this path's time).
      int64_t J0 = 0, J1 = 0; // [J0, J1): positions the vectors filled
      if (S == 2 && Inside) {
        J0 = (PL + 1) / 2; // 2 * J0 - PL >= 0
        J1 = J0;
        for (; 2 * J1 - PL + 16 <= W && J1 + 8 <= L.Len; J1 += 8) {
          const float *At = Src + 2 * J1 - PL;
          const V8 A = *reinterpret_cast<const V8U *>(At);
          const V8 B = *reinterpret_cast<const V8U *>(At + 8);
          V8 Ev = OOMPLAN_SHUFFLE8(A, B, 0, 2, 8, 10, 4, 6, 12, 14);
          V8 Od = OOMPLAN_SHUFFLE8(A, B, 1, 3, 9, 11, 5, 7, 13, 15);
          swapMiddlePairs(Ev);
          swapMiddlePairs(Od);
          // Float 2m of the pair is column 2(J1 + m) - PL: phase 0's
          // position J1 + m; float 2m + 1 phase 1's.
          *reinterpret_cast<V8U *>(Phase0 + J1) = Ev;
          *reinterpret_cast<V8U *>(Phase0 + L.Len + J1) = Od;
        }
      }
      for (int64_t P = 0; P < S; ++P) {
        float *Dst = Buf + ((Ci * KH + Kh) * S + P) * L.Len;
        // Positions j whose column S * j + P - PL lies in [0, W).
        const int64_t Lo =
            std::min(L.Len, std::max<int64_t>(0, (PL - P + S - 1) / S));
        const int64_t Hi =
            Inside && W - 1 + PL - P >= 0
                ? std::clamp<int64_t>((W - 1 + PL - P) / S + 1, Lo, L.Len)
                : Lo;
        std::fill(Dst, Dst + Lo, 0.0f);
        for (int64_t J = Lo; J < std::min(Hi, J0); ++J)
          Dst[J] = Src[S * J + P - PL];
        for (int64_t J = std::max(Lo, J1); J < Hi; ++J)
          Dst[J] = Src[S * J + P - PL];
        std::fill(Dst + Hi, Dst + L.Len, 0.0f);
      }
    }
}

/// Output row OH of every channel (M, planes of OSize floats at Y) from
/// the filled Buf.
OOMPLAN_SIMD_CLONES void rowTiles(const float *Buf, const int32_t *Off,
                                  int64_t Taps, const float *Wp, int64_t M,
                                  int64_t OW, float *Y, int64_t OSize,
                                  bool Load, const float *Bias,
                                  const ConvClamp *Clamp) {
  alignas(32) float Edge[MR * NR] = {};
  for (int64_t M0 = 0; M0 < M; M0 += MR) {
    const int64_t Rows = std::min<int64_t>(MR, M - M0);
    const float *Wg = Wp + M0 * Taps;
    const float *Bg = Bias ? Bias + M0 : nullptr;
    for (int64_t Col = 0; Col < OW; Col += NR) {
      const int64_t Cols = std::min(NR, OW - Col);
      float *Yt = Y + M0 * OSize + Col;
      switch (Rows) {
      case 1:
        directTile<1>(Buf, Off, Taps, Wg, Col, Cols, Yt, OSize, Load, Bg, Clamp,
                      Edge);
        break;
      case 2:
        directTile<2>(Buf, Off, Taps, Wg, Col, Cols, Yt, OSize, Load, Bg, Clamp,
                      Edge);
        break;
      case 3:
        directTile<3>(Buf, Off, Taps, Wg, Col, Cols, Yt, OSize, Load, Bg, Clamp,
                      Edge);
        break;
      case 4:
        directTile<4>(Buf, Off, Taps, Wg, Col, Cols, Yt, OSize, Load, Bg, Clamp,
                      Edge);
        break;
      case 5:
        directTile<5>(Buf, Off, Taps, Wg, Col, Cols, Yt, OSize, Load, Bg, Clamp,
                      Edge);
        break;
      default:
        directTile<MR>(Buf, Off, Taps, Wg, Col, Cols, Yt, OSize, Load, Bg,
                       Clamp, Edge);
      }
    }
  }
}

} // namespace

bool directConvApplies(const WindowGeometry &G, ElementType Type, int64_t Group,
                       int64_t Channels, int64_t OutChannels) {
  if (Type != ElementType::Float || G.rank() != 2 || Group != 1 ||
      Channels < 1 || Channels > DirectMaxChannels || OutChannels < 1)
    return false;
  if (G.D[0] != 1 || G.D[1] != 1 || G.S[1] > 4 || G.Out[1] < NR)
    return false;
  const int64_t Taps = Channels * G.kernelSize();
  if (Taps > MaxTaps || (OutChannels + MR - 1) / MR * MR * Taps > PackedFloats)
    return false;
  return layoutFor(G, Channels).Floats <= BufFloats;
}

void directConv(const KernelContext &C, const WindowGeometry &G,
                bool Accumulate, ConvTileFn Post, const ConvClamp *Clamp) {
  const TensorRef &X = C.Inputs[0], &W = C.Inputs[1], &Y = C.Outputs[0];
  const int64_t Batch = X.Dims[0], Ch = X.Dims[1], M = W.Dims[0];
  const int64_t KH = G.K[0], KW = G.K[1], S = G.S[1];
  const int64_t Taps = Ch * KH * KW, OH = G.Out[0], OW = G.Out[1];
  const int64_t InSize = G.inSize(), OSize = G.outSize();
  const Layout L = layoutFor(G, Ch);
  // Each tap's row of the buffer, in im2col's order of W's taps.
  int32_t Off[MaxTaps];
  for (int64_t Ci = 0; Ci < Ch; ++Ci)
    for (int64_t Kh = 0; Kh < KH; ++Kh)
      for (int64_t Kw = 0; Kw < KW; ++Kw)
        Off[(Ci * KH + Kh) * KW + Kw] =
            int32_t(((Ci * KH + Kh) * S + Kw % S) * L.Len + Kw / S);
  // The weights six channels at a time, tap-major (zeros past M): the
  // six broadcasts of a tap are adjacent.
  alignas(32) float Wp[PackedFloats];
  const float *Wt = W.data<const float>();
  for (int64_t M0 = 0; M0 < M; M0 += MR)
    for (int64_t T = 0; T < Taps; ++T)
      for (int64_t I = 0; I < MR; ++I)
        Wp[M0 * Taps + T * MR + I] =
            M0 + I < M ? Wt[(M0 + I) * Taps + T] : 0.0f;
  const float *Bias =
      hasInput(C, 2) ? C.Inputs[2].data<const float>() : nullptr;
  C.Pool.parallelFor(Batch * OH, 1, [&](int64_t T0, int64_t T1) {
    alignas(32) float Buf[BufFloats];
    for (int64_t Task = T0; Task < T1; ++Task) {
      const int64_t N = Task / OH, Row = Task % OH;
      fillRows(X.data<const float>() + N * Ch * InSize, G, Ch, L, Row, Buf);
      rowTiles(Buf, Off, Taps, Wp, M, OW,
               Y.data<float>() + N * M * OSize + Row * OW, OSize, Accumulate,
               Bias, Clamp);
      if (Post && !Clamp)
        Post(N * M, (N + 1) * M, Row * OW, (Row + 1) * OW);
    }
  });
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
