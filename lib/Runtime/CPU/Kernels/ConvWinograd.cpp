//===- ConvWinograd.cpp - 3x3 convolutions as Winograd F(2x2, 3x3) --------===//
//
// See ConvWinograd.h. The workspace holds U (16 x M x C: position, output
// channel, input channel), transformed once per run, then Slots blocks of
// TileBlock tiles, each V (16 x C x TileBlock) and its products Mo (16 x M x
// TileBlock). Tiles are numbered over every image, row-major, so a block
// covers runs of tiles along tile rows; each run's input rows are copied
// once per channel into zero-padded rows, so that the transform reads no
// edge case and vectorizes over the run's tiles. The 16 products of a
// block are convGemm's (sums over the input channels in order: results do
// not depend on the thread count).
//
//===----------------------------------------------------------------------===//
#include "ConvWinograd.h"
#include "ConvGemm.h"
#include "Elementwise.h"
#include "TensorUtil.h"
#include "Vector8.h"
#include <algorithm>
#include <atomic>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// Tiles per block: the 16 products are M x 64 x C, wide enough for
/// convGemm's 16-column panels.
constexpr int64_t TileBlock = 64;
/// Blocks in flight at most (threads beyond it wait).
constexpr int64_t MaxSlots = 8;
/// A padded input row's floats (on the stack): maps up to about 2,000 wide.
constexpr int64_t MaxRow = 2048;
/// Floats past a run's padded row that its last vector loads may read.
constexpr int64_t RowSlack = 16;
/// Fewer channels than this leave the transforms the larger part.
constexpr int64_t MinChannels = 8;

struct Tiling {
  int64_t TH, TW, PerImage, Total, Blocks;
};

Tiling tiling(const WindowGeometry &G, int64_t Batch) {
  Tiling T;
  T.TH = (G.Out[0] + 1) / 2;
  T.TW = (G.Out[1] + 1) / 2;
  T.PerImage = T.TH * T.TW;
  T.Total = Batch * T.PerImage;
  T.Blocks = (T.Total + TileBlock - 1) / TileBlock;
  return T;
}

/// The even and odd floats of the 16 at P: columns 2k and 2k + 1 of eight
/// consecutive tiles.
inline __attribute__((always_inline)) void evenOdd(const float *P, V8 &E,
                                                   V8 &O) {
  const V8 A = *reinterpret_cast<const V8U *>(P);
  const V8 B = *reinterpret_cast<const V8U *>(P + 8);
  E = OOMPLAN_SHUFFLE8(A, B, 0, 2, 4, 6, 8, 10, 12, 14);
  O = OOMPLAN_SHUFFLE8(A, B, 1, 3, 5, 7, 9, 11, 13, 15);
}

/// V for Len tiles along padded rows R[0..3], tile k's patch at columns
/// 2k .. 2k + 3: position p of tile k goes to Out[p * Stride + k]. Eight
/// tiles a vector, the last group too: its lanes past Len are stored
/// whole where they stay inside Room floats of the row (tiles of later
/// runs, written after, or columns the product does not read), else
/// through a buffer. The rows hold 2 * Len + 2 floats and 16 more, so
/// every lane reads a written float. (Scalar, a 14x14 map's runs of 7
/// tiles took all their time there.)
OOMPLAN_SIMD_CLONES void inputRun(const float *const *R, int64_t Len,
                                  float *Out, int64_t Stride, int64_t Room) {
  for (int64_t K = 0; K < Len; K += 8) {
    V8 T[4][4];
    for (int Rr = 0; Rr < 4; ++Rr) { // d B, row by row
      V8 D0, D1, D2, D3;
      evenOdd(R[Rr] + 2 * K, D0, D1);
      evenOdd(R[Rr] + 2 * K + 2, D2, D3);
      T[Rr][0] = D0 - D2;
      T[Rr][1] = D1 + D2;
      T[Rr][2] = D2 - D1;
      T[Rr][3] = D1 - D3;
    }
    V8 Res[16];
    for (int J = 0; J < 4; ++J) { // B^T (d B), column by column
      Res[0 + J] = T[0][J] - T[2][J];
      Res[4 + J] = T[1][J] + T[2][J];
      Res[8 + J] = T[2][J] - T[1][J];
      Res[12 + J] = T[1][J] - T[3][J];
    }
    if (K + 8 <= Room) {
      for (int P = 0; P < 16; ++P)
        *reinterpret_cast<V8U *>(Out + P * Stride + K) = Res[P];
      continue;
    }
    for (int P = 0; P < 16; ++P) {
      alignas(32) float Lanes[8];
      *reinterpret_cast<V8 *>(Lanes) = Res[P];
      std::copy(Lanes, Lanes + (Len - K), Out + P * Stride + K);
    }
  }
}

/// The 2x2 outputs of Len tiles from their products (position p of tile k
/// at In[p * Stride + k]) plus Bias: tile k's top row to Top[2k], Top[2k +
/// 1], its bottom row to Bottom[2k], Bottom[2k + 1] (both with 16 floats
/// of room past 2 * Len). Eight tiles a vector, the last group too: its
/// loads read whole vectors where they stay inside Room floats of the
/// row, else go through a zero-padded buffer.
OOMPLAN_SIMD_CLONES void outputRun(const float *In, int64_t Stride, int64_t Len,
                                   int64_t Room, float Bias, float *Top,
                                   float *Bottom) {
  const V8 BiasV = V8{} + Bias;
  for (int64_t K = 0; K < Len; K += 8) {
    V8 Mv[16];
    if (K + 8 <= Room) {
      for (int P = 0; P < 16; ++P)
        Mv[P] = *reinterpret_cast<const V8U *>(In + P * Stride + K);
    } else {
      for (int P = 0; P < 16; ++P) {
        alignas(32) float Lanes[8] = {};
        std::copy(In + P * Stride + K, In + P * Stride + Len, Lanes);
        Mv[P] = *reinterpret_cast<const V8 *>(Lanes);
      }
    }
    V8 S[4][2];
    for (int R = 0; R < 4; ++R) { // m A, row by row
      S[R][0] = Mv[4 * R] + Mv[4 * R + 1] + Mv[4 * R + 2];
      S[R][1] = Mv[4 * R + 1] - Mv[4 * R + 2] - Mv[4 * R + 3];
    }
    V8 Y[2][2]; // A^T (m A): rows, then columns
    for (int J = 0; J < 2; ++J) {
      Y[0][J] = S[0][J] + S[1][J] + S[2][J] + BiasV;
      Y[1][J] = S[1][J] - S[2][J] - S[3][J] + BiasV;
    }
    for (int R = 0; R < 2; ++R) { // columns 2k, 2k + 1 interleaved
      float *Dst = (R == 0 ? Top : Bottom) + 2 * K;
      *reinterpret_cast<V8U *>(Dst) =
          OOMPLAN_SHUFFLE8(Y[R][0], Y[R][1], 0, 8, 1, 9, 2, 10, 3, 11);
      *reinterpret_cast<V8U *>(Dst + 8) =
          OOMPLAN_SHUFFLE8(Y[R][0], Y[R][1], 4, 12, 5, 13, 6, 14, 7, 15);
    }
  }
}

/// Dst[i] = Src[i] (or Dst[i] + Src[i] when Accumulate), clamped when
/// Clamp is given (the unfused kernels' comparisons: NaN stays NaN).
/// One loop per case, so that each vectorizes.
OOMPLAN_SIMD_CLONES void storeRow(const float *Src, float *Dst, int64_t N,
                                  bool Accumulate, const ConvClamp *Clamp) {
  if (!Clamp) {
    if (Accumulate)
      for (int64_t I = 0; I < N; ++I)
        Dst[I] += Src[I];
    else
      std::copy(Src, Src + N, Dst);
    return;
  }
  const float Lo = Clamp->Lo, Hi = Clamp->Hi;
  for (int64_t I = 0; I < N; ++I) {
    float V = Accumulate ? Dst[I] + Src[I] : Src[I];
    V = V < Lo ? Lo : V;
    Dst[I] = Hi < V ? Hi : V;
  }
}

/// U = G g G^T for every (output, input) channel pair: position p of pair
/// (m, c) at U[(p * M + m) * C + c]. Runs of up to 64 input channels are
/// transformed into a buffer, position by position, and each position's
/// run copied out whole: written pair by pair, the 16 values went to 16
/// cache lines M * C floats apart, and this transform (once per run) took
/// as long as a sixth of the convolution on ResNet-50's 256-channel layers.
void transformWeights(const KernelContext &KC, const float *W, int64_t M,
                      int64_t C, float *U) {
  constexpr int64_t Run = 64;
  KC.Pool.parallelFor(M, 1, [&](int64_t M0, int64_t M1) {
    float Buf[16][Run];
    for (int64_t Mo = M0; Mo < M1; ++Mo)
      for (int64_t C0 = 0; C0 < C; C0 += Run) {
        const int64_t Len = std::min(Run, C - C0);
        for (int64_t K = 0; K < Len; ++K) {
          const float *G = W + (Mo * C + C0 + K) * 9;
          float Gg[4][3]; // G g: rows g0, (g0+g1+g2)/2, (g0-g1+g2)/2, g2
          for (int J = 0; J < 3; ++J) {
            Gg[0][J] = G[J];
            Gg[1][J] = 0.5f * (G[J] + G[3 + J] + G[6 + J]);
            Gg[2][J] = 0.5f * (G[J] - G[3 + J] + G[6 + J]);
            Gg[3][J] = G[6 + J];
          }
          for (int I = 0; I < 4; ++I) { // (G g) G^T, row by row
            const float A = Gg[I][0], B = Gg[I][1], Cc = Gg[I][2];
            Buf[4 * I][K] = A;
            Buf[4 * I + 1][K] = 0.5f * (A + B + Cc);
            Buf[4 * I + 2][K] = 0.5f * (A - B + Cc);
            Buf[4 * I + 3][K] = Cc;
          }
        }
        for (int P = 0; P < 16; ++P)
          std::copy(Buf[P], Buf[P] + Len, U + (P * M + Mo) * C + C0);
      }
  });
}

/// Calls F(N, TH, TW0, Len, K0) for each run of a block's tiles [G0, G1)
/// along one tile row: image N, tile row TH, tiles TW0 .. TW0 + Len - 1,
/// the first at index K0 in the block.
template <typename FnT>
void forEachRun(const Tiling &T, int64_t G0, int64_t G1, FnT F) {
  for (int64_t Gi = G0; Gi < G1;) {
    const int64_t N = Gi / T.PerImage, Rem = Gi % T.PerImage;
    const int64_t TH = Rem / T.TW, TW0 = Rem % T.TW;
    const int64_t Len = std::min(T.TW - TW0, G1 - Gi);
    F(N, TH, TW0, Len, Gi - G0);
    Gi += Len;
  }
}

} // namespace

WinogradPlan winogradPlan(const WindowGeometry &G, int64_t Batch, int64_t C,
                          int64_t M, int64_t Group, uint64_t Im2colBytes) {
  WinogradPlan P;
  if (G.rank() != 2 || Group != 1 || G.K[0] != 3 || G.K[1] != 3 ||
      G.S[0] != 1 || G.S[1] != 1 || G.D[0] != 1 || G.D[1] != 1)
    return P;
  if (C < MinChannels || M < MinChannels || Batch < 1 || G.Out[0] < 1 ||
      G.Out[1] < 1)
    return P;
  const Tiling T = tiling(G, Batch);
  if (2 * T.TW + 2 > MaxRow)
    return P;
  const uint64_t UBytes = 16 * uint64_t(M) * uint64_t(C) * sizeof(float);
  const uint64_t SlotBytes =
      16 * uint64_t(C + M) * uint64_t(TileBlock) * sizeof(float);
  if (Im2colBytes <= UBytes + SlotBytes)
    return P;
  const int64_t Fit = int64_t((Im2colBytes - UBytes) / SlotBytes);
  P.Slots = std::min({MaxSlots, T.Blocks, Fit});
  // Two blocks at once at least where there are two, or the threads of a
  // two-core machine would take turns.
  if (P.Slots < std::min<int64_t>(2, T.Blocks))
    return P;
  P.Use = true;
  P.Bytes = UBytes + uint64_t(P.Slots) * SlotBytes;
  return P;
}

WinogradPlan roomyWinogradPlan(const WindowGeometry &G, int64_t Batch,
                               int64_t C, int64_t M, int64_t Group,
                               bool SmallMaps) {
  const bool Small = G.outSize() < WinogradSmallMap;
  if (Small && !SmallMaps)
    return WinogradPlan();
  // Room for every slot: MaxSlots or one per block, whichever is fewer.
  const WinogradPlan P = winogradPlan(G, Batch, C, M, Group, uint64_t(1) << 62);
  return Small && P.Slots < 2 ? WinogradPlan() : P;
}

void winogradConv(const KernelContext &KC, const WindowGeometry &G,
                  const WinogradPlan &P, bool Accumulate, ConvTileFn Post,
                  const ConvClamp *Clamp) {
  const TensorRef &X = KC.Inputs[0], &W = KC.Inputs[1], &Y = KC.Outputs[0];
  const int64_t Batch = X.Dims[0], C = X.Dims[1], M = W.Dims[0];
  const int64_t H = G.In[0], Wd = G.In[1], OH = G.Out[0], OW = G.Out[1];
  const int64_t PT = G.PadBegin[0], PL = G.PadBegin[1];
  const Tiling T = tiling(G, Batch);
  const float *Bias =
      hasInput(KC, 2) ? KC.Inputs[2].data<const float>() : nullptr;
  float *U = static_cast<float *>(KC.Workspace);
  transformWeights(KC, W.data<const float>(), M, C, U);
  const int64_t VFloats = 16 * C * TileBlock, MFloats = 16 * M * TileBlock;
  float *Slots = U + 16 * M * C;
  const float *Xd = X.data<const float>();
  float *Yd = Y.data<float>();
  std::atomic<int64_t> Next{0};
  const int64_t Workers = std::min<int64_t>(P.Slots, KC.Pool.threads());
  KC.Pool.parallelFor(Workers, 1, [&](int64_t S0, int64_t S1) {
    alignas(32) float Rows[4][MaxRow + RowSlack];
    alignas(32) float Top[2 * TileBlock + 16], Bottom[2 * TileBlock + 16];
    for (int64_t S = S0; S < S1; ++S) {
      float *V = Slots + S * (VFloats + MFloats), *Mo = V + VFloats;
      for (int64_t Task; (Task = Next.fetch_add(1)) < T.Blocks;) {
        const int64_t G0 = Task * TileBlock;
        const int64_t G1 = std::min(T.Total, G0 + TileBlock);
        // V: each run's four input rows per channel, zero outside the map.
        forEachRun(
            T, G0, G1,
            [&](int64_t N, int64_t TH, int64_t TW0, int64_t Len, int64_t K0) {
              // Padded columns [X0, X1) of the run (16 more for the last
              // vector's loads): zero, the map's columns in between.
              const int64_t X0 = 2 * TW0, X1 = 2 * (TW0 + Len) + 2 + RowSlack;
              const int64_t In0 = std::clamp<int64_t>(X0 - PL, 0, Wd);
              const int64_t In1 = std::clamp<int64_t>(X1 - PL, 0, Wd);
              const float *RowPtrs[4] = {Rows[0], Rows[1], Rows[2], Rows[3]};
              for (int64_t Ci = 0; Ci < C; ++Ci) {
                const float *Plane = Xd + (N * C + Ci) * H * Wd;
                for (int R = 0; R < 4; ++R) {
                  const int64_t IH = 2 * TH - PT + R;
                  float *Row = Rows[R];
                  if (IH < 0 || IH >= H || In0 >= In1) {
                    std::fill(Row, Row + (X1 - X0), 0.0f);
                    continue;
                  }
                  const int64_t Lead = In0 + PL - X0; // pad columns first
                  std::fill(Row, Row + Lead, 0.0f);
                  std::copy(Plane + IH * Wd + In0, Plane + IH * Wd + In1,
                            Row + Lead);
                  std::fill(Row + Lead + (In1 - In0), Row + (X1 - X0), 0.0f);
                }
                inputRun(RowPtrs, Len, V + Ci * TileBlock + K0, C * TileBlock,
                         TileBlock - K0);
              }
            });
        // The 16 products, M x Tiles x C each.
        for (int64_t Pos = 0; Pos < 16; ++Pos)
          convGemm(M, G1 - G0, C, U + Pos * M * C, C, V + Pos * C * TileBlock,
                   TileBlock, Mo + Pos * M * TileBlock, TileBlock, nullptr,
                   false);
        // Outputs: each run's two output rows per channel.
        forEachRun(
            T, G0, G1,
            [&](int64_t N, int64_t TH, int64_t TW0, int64_t Len, int64_t K0) {
              const int64_t Col0 = 2 * TW0,
                            Col1 = std::min(OW, 2 * (TW0 + Len));
              const int64_t Row0 = 2 * TH,
                            RowsOut = std::min<int64_t>(2, OH - Row0);
              for (int64_t Mi = 0; Mi < M; ++Mi) {
                outputRun(Mo + Mi * TileBlock + K0, M * TileBlock, Len,
                          TileBlock - K0, Bias ? Bias[Mi] : 0.0f, Top, Bottom);
                for (int64_t R = 0; R < RowsOut; ++R) {
                  const float *Src = R == 0 ? Top : Bottom;
                  storeRow(Src, Yd + ((N * M + Mi) * OH + Row0 + R) * OW + Col0,
                           Col1 - Col0, Accumulate, Clamp);
                }
              }
              if (Post && !Clamp)
                for (int64_t R = 0; R < RowsOut; ++R)
                  Post(N * M, (N + 1) * M, (Row0 + R) * OW + Col0,
                       (Row0 + R) * OW + Col1);
            });
      }
    }
  });
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
