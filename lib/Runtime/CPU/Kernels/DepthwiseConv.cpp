//===- DepthwiseConv.cpp - depthwise convolutions, plane by plane --------===//
//
// See DepthwiseConv.h. One input channel per group skips GEMM, whose
// per-call cost dwarfs a 3x3 window: each output plane is a direct loop over
// its taps, planes in parallel, unless the channel-blocked path
// (DepthwiseBlocked.cpp) takes the convolution.
//
//===----------------------------------------------------------------------===//
#include "DepthwiseConv.h"
#include "DepthwiseBlocked.h"
#include "Elementwise.h"
#include "TensorUtil.h"
#include "Vector8.h"
#include <algorithm>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// Adds W (a KH x KW filter) slid over one 2-D plane X (H x W) into Y: row
/// by row, with each filter tap's valid output range computed once, so the
/// inner loop is a branch-free axpy the compiler vectorizes.
template <typename T>
OOMPLAN_SIMD_CLONES void depthwisePlane2D(const T *X, const T *Wt, T *Y,
                                          const WindowGeometry &G) {
  const int64_t H = G.In[0], Wd = G.In[1], OH = G.Out[0], OW = G.Out[1];
  const int64_t SH = G.S[0], SW = G.S[1], PH = G.PadBegin[0],
                PW = G.PadBegin[1];
  for (int64_t KW = 0; KW < G.K[1]; ++KW) {
    // Outputs whose input column ow*SW - PW + KW*DW lies in [0, Wd).
    const int64_t Shift = KW * G.D[1] - PW;
    int64_t Lo = Shift >= 0 ? 0 : (-Shift + SW - 1) / SW;
    int64_t Hi = Wd - 1 - Shift < 0 ? -1 : (Wd - 1 - Shift) / SW;
    Hi = std::min(Hi, OW - 1);
    if (Lo > Hi)
      continue;
    for (int64_t OHi = 0; OHi < OH; ++OHi)
      for (int64_t KH = 0; KH < G.K[0]; ++KH) {
        const int64_t IH = OHi * SH - PH + KH * G.D[0];
        if (IH < 0 || IH >= H)
          continue;
        const T Wv = Wt[KH * G.K[1] + KW];
        const T *XR = X + IH * Wd + Shift;
        T *YR = Y + OHi * OW;
        if (SW == 1)
          for (int64_t O = Lo; O <= Hi; ++O)
            YR[O] += Wv * XR[O];
        else
          for (int64_t O = Lo; O <= Hi; ++O)
            YR[O] += Wv * XR[O * SW];
      }
  }
}

/// Y[O] = Bias + the three taps of each of the NRows input rows Rows[r]
/// (already shifted by the padding) with weights Wr[r][0..2], for O in
/// [Lo, Hi], plus Y[O]'s own value when Keep (a fused residual): all taps
/// summed in a register and Y written once, where the tap-by-tap loop
/// above reads and writes Y nine times.
template <typename T, int NRows, int S, bool Keep>
OOMPLAN_SIMD_CLONES void depthwise3Row(const T *const *Rows, const T *const *Wr,
                                       T Bias, T *__restrict Y, int64_t Lo,
                                       int64_t Hi) {
  // Locals, so that the compiler knows Y aliases none of them and keeps
  // the weights in registers.
  const T *__restrict R0 = Rows[0];
  const T *__restrict R1 = Rows[NRows > 1 ? 1 : 0];
  const T *__restrict R2 = Rows[NRows > 2 ? 2 : 0];
  const T A0 = Wr[0][0], A1 = Wr[0][1], A2 = Wr[0][2];
  const T B0 = NRows > 1 ? Wr[1][0] : T(0), B1 = NRows > 1 ? Wr[1][1] : T(0),
          B2 = NRows > 1 ? Wr[1][2] : T(0);
  const T C0 = NRows > 2 ? Wr[2][0] : T(0), C1 = NRows > 2 ? Wr[2][1] : T(0),
          C2 = NRows > 2 ? Wr[2][2] : T(0);
  for (int64_t O = Lo; O <= Hi; ++O) {
    const int64_t I = O * S;
    T Acc = (Keep ? Y[O] + Bias : Bias) +
            (A0 * R0[I] + A1 * R0[I + 1] + A2 * R0[I + 2]);
    if constexpr (NRows > 1)
      Acc += B0 * R1[I] + B1 * R1[I + 1] + B2 * R1[I + 2];
    if constexpr (NRows > 2)
      Acc += C0 * R2[I] + C1 * R2[I + 1] + C2 * R2[I + 2];
    Y[O] = Acc;
  }
}

/// Square K x K windows (K = 3; 5 x 5 measured slower this way on small
/// maps, so it stays on the tap-by-tap loop), stride 1 or 2 on both axes, no
/// dilation: columns whose K taps are all inside the row go through the
/// register-summing row kernels; the few at the edges through a
/// tap-by-tap loop. False for any other geometry.
template <typename T, int K>
bool depthwisePlaneSquare(const T *X, const T *Wt, T Bias, bool Keep, T *Y,
                          const WindowGeometry &G) {
  const int64_t SW = G.S[1];
  if (G.K[0] != K || G.K[1] != K || G.D[0] != 1 || G.D[1] != 1 ||
      G.S[0] != SW || (SW != 1 && SW != 2))
    return false;
  const int64_t H = G.In[0], Wd = G.In[1], OH = G.Out[0], OW = G.Out[1];
  const int64_t PH = G.PadBegin[0], PW = G.PadBegin[1];
  // Interior columns: O * SW - PW >= 0 and O * SW - PW + K - 1 <= Wd - 1.
  const int64_t Lo = (PW + SW - 1) / SW;
  const int64_t Hi =
      std::min(OW - 1, Wd - K + PW < 0 ? int64_t(-1) : (Wd - K + PW) / SW);
  for (int64_t OHi = 0; OHi < OH; ++OHi) {
    const T *Rows[K];
    const T *Wr[K];
    int N = 0;
    for (int64_t KH = 0; KH < K; ++KH) {
      const int64_t IH = OHi * SW - PH + KH;
      if (IH < 0 || IH >= H)
        continue;
      Rows[N] = X + IH * Wd - PW;
      Wr[N] = Wt + KH * K;
      ++N;
    }
    T *YR = Y + OHi * OW;
    if (N == 0) { // every row in the padding: the bias alone
      for (int64_t O = 0; O < OW; ++O)
        YR[O] = Keep ? YR[O] + Bias : Bias;
      continue;
    }
    if (Lo <= Hi) {
      auto Run = [&](auto NRows) {
        constexpr int NR = decltype(NRows)::value;
        if constexpr (NR <= K) {
          if (SW == 1 && Keep)
            depthwise3Row<T, NR, 1, true>(Rows, Wr, Bias, YR, Lo, Hi);
          else if (SW == 1)
            depthwise3Row<T, NR, 1, false>(Rows, Wr, Bias, YR, Lo, Hi);
          else if (Keep)
            depthwise3Row<T, NR, 2, true>(Rows, Wr, Bias, YR, Lo, Hi);
          else
            depthwise3Row<T, NR, 2, false>(Rows, Wr, Bias, YR, Lo, Hi);
        }
      };
      switch (N) {
      case 1:
        Run(std::integral_constant<int, 1>());
        break;
      case 2:
        Run(std::integral_constant<int, 2>());
        break;
      case 3:
        Run(std::integral_constant<int, 3>());
        break;
      default:
        break;
      }
    }
    // The edge columns, tap by tap.
    for (int64_t O = 0; O < OW; ++O) {
      if (O == Lo && Lo <= Hi)
        O = Hi + 1; // skip the interior
      if (O >= OW)
        break;
      T Acc = Keep ? YR[O] + Bias : Bias;
      for (int R = 0; R < N; ++R)
        for (int64_t KW = 0; KW < K; ++KW) {
          const int64_t IW = O * SW - PW + KW;
          if (IW >= 0 && IW < Wd)
            Acc += Wr[R][KW] * Rows[R][PW + IW];
        }
      YR[O] = Acc;
    }
  }
  return true;
}

/// The same for any spatial rank: every output position visits every tap.
template <typename T>
void depthwisePlane(const T *X, const T *Wt, T *Y, const WindowGeometry &G) {
  const int64_t R = int64_t(G.rank()), KSize = G.kernelSize();
  const int64_t OutSize = G.outSize();
  DimVector InStr = stridesOf(G.In), KK, OC(R);
  for (int64_t O = 0; O < OutSize; ++O) {
    int64_t Rem = O;
    for (int64_t I = R - 1; I >= 0; --I) {
      OC[I] = Rem % G.Out[I];
      Rem /= G.Out[I];
    }
    T Acc = 0;
    for (int64_t K = 0; K < KSize; ++K) {
      kernelOffsets(G, K, KK);
      int64_t Off = 0;
      bool Inside = true;
      for (int64_t I = 0; I < R && Inside; ++I) {
        int64_t Xi = OC[I] * G.S[I] - G.PadBegin[I] + KK[I] * G.D[I];
        Inside = Xi >= 0 && Xi < G.In[I];
        Off += Xi * InStr[I];
      }
      if (Inside)
        Acc += Wt[K] * X[Off];
    }
    Y[O] += Acc;
  }
}

/// A 3x3, stride-1, "same" (one pixel of zero padding) plane this small
/// is convolved flat (depthwiseFlat3x3).
constexpr int64_t FlatMaxPlane = 4096;
/// Planes this large and larger are read in place, all but their edges:
/// 28 x 28 measured 19% faster; 14 x 14 no faster, 7 x 7 slower (the
/// three passes' set-up outweighs the copy of an L1-sized plane).
constexpr int64_t InPlaceMinPlane = 512;

bool flatApplies(const WindowGeometry &G) {
  return G.rank() == 2 && G.K[0] == 3 && G.K[1] == 3 && G.S[0] == 1 &&
         G.S[1] == 1 && G.D[0] == 1 && G.D[1] == 1 && G.PadBegin[0] == 1 &&
         G.PadBegin[1] == 1 && G.Out[0] == G.In[0] && G.Out[1] == G.In[1] &&
         G.In[1] >= 4 && G.In[1] < CompactRowLimit &&
         G.In[0] * G.In[1] <= FlatMaxPlane;
}

/// Outputs [O0, O1) of a depthwiseFlat3x3 plane, eight at a time, from the
/// plane at P (flat position o at P + o - Base; every load of the groups
/// lies in the memory there).
inline __attribute__((always_inline)) void
flatGroups(const float *P, int64_t Base, int64_t O0, int64_t O1, const V8 *Wv,
           float Bias, float *Y, int64_t N, int64_t Wd, bool Accumulate,
           const ConvClamp *Clamp) {
  const V8 Lo = V8{} + (Clamp ? Clamp->Lo : 0.0f),
           Hi = V8{} + (Clamp ? Clamp->Hi : 0.0f);
  const V8I Lane = {0, 1, 2, 3, 4, 5, 6, 7}, WdV = V8I{} + int(Wd);
  for (int64_t O = O0; O < O1; O += 8) {
    // The lanes' columns: O % Wd plus the lane, wrapped (twice at most,
    // as Wd >= 4).
    V8I Col = Lane + int(O % Wd);
    Col -= (Col >= WdV) & WdV;
    Col -= (Col >= WdV) & WdV;
    const V8I KeepL = Col != 0, KeepR = Col != WdV - 1;
    V8 Acc = V8{} + Bias;
    for (int Dy = 0; Dy < 3; ++Dy) {
      const float *R = P + (O - Base) + (Dy - 1) * Wd;
      const V8 L = V8(V8I(*reinterpret_cast<const V8U *>(R - 1)) & KeepL);
      const V8 M = *reinterpret_cast<const V8U *>(R);
      const V8 Rt = V8(V8I(*reinterpret_cast<const V8U *>(R + 1)) & KeepR);
      Acc += Wv[3 * Dy] * L + Wv[3 * Dy + 1] * M + Wv[3 * Dy + 2] * Rt;
    }
    const int64_t Count = std::min<int64_t>(8, N - O);
    if (Accumulate) { // Y's own values, the lanes past the plane's end 0
      alignas(32) float Old[8] = {};
      std::copy(Y + O, Y + O + Count, Old);
      Acc += *reinterpret_cast<const V8 *>(Old);
    }
    if (Clamp) { // the unfused kernels' comparisons: NaN stays NaN
      Acc = Acc < Lo ? Lo : Acc;
      Acc = Hi < Acc ? Hi : Acc;
    }
    if (Count == 8) {
      *reinterpret_cast<V8U *>(Y + O) = Acc;
    } else {
      alignas(32) float Out[8];
      *reinterpret_cast<V8 *>(Out) = Acc;
      std::copy(Out, Out + Count, Y + O);
    }
  }
}

/// One plane of a flatApplies convolution, H x Wd, weights W9: the plane
/// (or, from InPlaceMinPlane on, the neighbourhoods of its first and last
/// rows) is copied between zero margins (a row and a float above, as much
/// and a vector below), and eight consecutive outputs of the flattened
/// plane at a time sum their nine taps from unaligned loads, the taps left and
/// right of the plane's edges masked to zero by column (those loads reach
/// into the neighbouring row). So every padding tap is a zero times its
/// weight, as in the channel-blocked path and im2col (an infinite weight
/// makes the padded outputs NaN). No transposes: on the 7- to 28-wide maps
/// of mobile networks the channel-blocked path spent most of its time
/// transposing eight planes in and out. Y = sum + Bias (plus Y's own value
/// when Accumulate), clamped when Clamp is given.
OOMPLAN_SIMD_CLONES void depthwiseFlat3x3(const float *X, const float *W9,
                                          float Bias, float *Y, int64_t H,
                                          int64_t Wd, bool Accumulate,
                                          const ConvClamp *Clamp) {
  const int64_t N = H * Wd, Margin = Wd + 1;
  V8 Wv[9];
  for (int K = 0; K < 9; ++K)
    Wv[K] = V8{} + W9[K];
  // The groups whose loads stay inside the plane, [Mid0, Mid1), read it in
  // place; only the first and the last rows' groups read copies between
  // zero margins. A copy of the whole plane (one more pass over every
  // input, and a stall on it before the first output) was a fifth of
  // this kernel's time on 28-wide maps.
  const int64_t Mid0 = (Margin + 7) / 8 * 8;
  const int64_t Mid1 =
      Mid0 + std::max<int64_t>(0, N - Margin - 8 - Mid0) / 8 * 8;
  // The edge copies: positions [-Margin, Span) for the groups before Mid0
  // (their last load ends at Mid0 + Wd + 8), and [Mid1 - Margin, N +
  // Margin + 8) for those from Mid1 on (zeros past N).
  const int64_t Span = Mid0 + Margin + 8;
  const bool Overlap = X < Y + N && Y < X + N;
  if (Overlap || N < InPlaceMinPlane || Mid1 <= Mid0 ||
      2 * Span > N) { // small or aliased: one copy
    alignas(32) float Buf[FlatMaxPlane + 2 * CompactRowLimit + 16];
    std::fill(Buf, Buf + Margin, 0.0f);
    std::copy(X, X + N, Buf + Margin);
    std::fill(Buf + Margin + N, Buf + 2 * Margin + N + 8, 0.0f);
    flatGroups(Buf + Margin, 0, 0, N, Wv, Bias, Y, N, Wd, Accumulate, Clamp);
    return;
  }
  // At most 2 * Margin + Mid0 + 8 and 3 * Margin + 23 floats (Margin <= 32).
  alignas(32) float Edge[4 * CompactRowLimit + 48];
  std::fill(Edge, Edge + Margin, 0.0f);
  std::copy(X, X + Span, Edge + Margin);
  flatGroups(Edge + Margin, 0, 0, Mid0, Wv, Bias, Y, N, Wd, Accumulate, Clamp);
  flatGroups(X, 0, Mid0, Mid1, Wv, Bias, Y, N, Wd, Accumulate, Clamp);
  const int64_t Tail0 = Mid1 - Margin;
  std::copy(X + Tail0, X + N, Edge);
  std::fill(Edge + (N - Tail0), Edge + (N - Tail0) + Margin + 8, 0.0f);
  flatGroups(Edge, Tail0, Mid1, N, Wv, Bias, Y, N, Wd, Accumulate, Clamp);
}

} // namespace

template <typename T>
void depthwiseConv(const KernelContext &C, const WindowGeometry &G,
                   bool Accumulate, ConvTileFn Post, const ConvClamp *Clamp) {
  const TensorRef &X = C.Inputs[0], &W = C.Inputs[1], &Y = C.Outputs[0];
  const int64_t Ch = X.Dims[1], Mult = Y.Dims[1] / Ch, Batch = X.Dims[0];
  if constexpr (std::is_same<T, float>::value)
    if (Y.Dims[1] == Ch && flatApplies(G)) {
      const float *B =
          hasInput(C, 2) ? C.Inputs[2].data<const float>() : nullptr;
      const float *W = C.Inputs[1].data<const float>();
      const int64_t Size = G.inSize();
      C.Pool.parallelFor(Batch * Ch, 1, [&](int64_t Begin, int64_t End) {
        for (int64_t NC = Begin; NC < End; ++NC) {
          const int64_t Ci = NC % Ch;
          depthwiseFlat3x3(X.data<const float>() + NC * Size, W + Ci * 9,
                           B ? B[Ci] : 0.0f, Y.data<float>() + NC * Size,
                           G.In[0], G.In[1], Accumulate, Clamp);
          if (Post && !Clamp)
            Post(NC, NC + 1, 0, Size);
        }
      });
      return;
    }
  if (depthwiseBlockedApplies(G, X.Type, Ch, Y.Dims[1])) {
    depthwiseBlocked(C, G, Accumulate, Post, Clamp);
    return;
  }
  const int64_t KSize = G.kernelSize(), InSize = G.inSize(),
                OutSize = G.outSize();
  C.Pool.parallelFor(Batch * Ch * Mult, 1, [&](int64_t Begin, int64_t End) {
    for (int64_t NM = Begin; NM < End; ++NM) {
      const int64_t M = NM % (Ch * Mult), Cin = M / Mult;
      const T *Xc = X.data<const T>() + (NM / (Ch * Mult) * Ch + Cin) * InSize;
      const T *Wm = W.data<const T>() + M * KSize;
      T *Yc = Y.data<T>() + NM * OutSize;
      const T Bias = hasInput(C, 2) ? C.Inputs[2].data<const T>()[M] : T(0);
      // The 3x3 and 5x5 paths start each output from the bias itself; the
      // others accumulate onto a plane filled with it.
      if (G.rank() != 2 ||
          !depthwisePlaneSquare<T, 3>(Xc, Wm, Bias, Accumulate, Yc, G)) {
        if (!Accumulate)
          std::fill(Yc, Yc + OutSize, Bias);
        else if (Bias != T(0))
          for (T *P = Yc; P != Yc + OutSize; ++P)
            *P += Bias;
        if (G.rank() == 2)
          depthwisePlane2D(Xc, Wm, Yc, G);
        else
          depthwisePlane(Xc, Wm, Yc, G);
      }
      if (Post)
        Post(NM, NM + 1, 0, OutSize);
    }
  });
}

template void depthwiseConv<float>(const KernelContext &,
                                   const WindowGeometry &, bool, ConvTileFn,
                                   const ConvClamp *);
template void depthwiseConv<double>(const KernelContext &,
                                    const WindowGeometry &, bool, ConvTileFn,
                                    const ConvClamp *);

} // namespace cpu
} // namespace runtime
} // namespace oomplan
