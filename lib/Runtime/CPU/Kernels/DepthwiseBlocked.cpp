//===- DepthwiseBlocked.cpp - depthwise Conv eight channels at a time -----===//
//
// See DepthwiseBlocked.h. The buffers are fixed-size locals (at most 40 KiB
// of the thread's stack, L1- and L2-sized), so the path needs no workspace
// in the plan and allocates nothing.
//
//===----------------------------------------------------------------------===//
#include "DepthwiseBlocked.h"
#include "Elementwise.h"
#include "TensorUtil.h"
#include "Vector8.h"
#include <algorithm>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

constexpr int Lanes = 8;

/// Input tile positions (each eight channels): 1024 x 32 bytes, L1-sized.
constexpr int64_t MaxInTile = 1024;
/// Output columns per tile (one row of accumulators is written at a time).
constexpr int64_t MaxOutCols = 64;
/// Taps held for one block of channels.
constexpr int64_t MaxTaps = 64;

/// Output rows and columns of a tile, and the input extent they read.
struct Tile {
  int64_t Rows, Cols, InRows, InCols;
};

Tile tileFor(const WindowGeometry &G) {
  auto InExtent = [&](int64_t Out, unsigned A) {
    return (Out - 1) * G.S[A] + (G.K[A] - 1) * G.D[A] + 1;
  };
  Tile T;
  T.Cols = std::min(G.Out[1], MaxOutCols);
  while (T.Cols > 1 && InExtent(1, 0) * InExtent(T.Cols, 1) > MaxInTile)
    T.Cols = (T.Cols + 1) / 2;
  T.InCols = InExtent(T.Cols, 1);
  T.Rows = 1;
  while (T.Rows < G.Out[0] && InExtent(T.Rows + 1, 0) * T.InCols <= MaxInTile)
    ++T.Rows;
  T.InRows = InExtent(T.Rows, 0);
  return T;
}

/// Acc[o] for NB output columns from O on, the window's size and column
/// stride known at compile time: each weight vector is loaded once for NB
/// independent sums (eight cover the FMA units' latency; the generic loop's
/// four left half of them idle).
template <int KH, int KW, int SW, int NB>
inline __attribute__((always_inline)) void
rowBlock(const V8 *XT, int64_t InCols, const V8 *WT, const V8 &Bias, int64_t O,
         V8 *Acc) {
  // Unrolled whole (GCC unrolls no constant-count loop at -O2), so that
  // the sums live in registers.
  V8 A[NB];
#pragma GCC unroll 8
  for (int B = 0; B < NB; ++B)
    A[B] = Bias;
#pragma GCC unroll 5
  for (int I = 0; I < KH; ++I) {
    const V8 *Row = XT + I * InCols + O * SW;
#pragma GCC unroll 5
    for (int J = 0; J < KW; ++J) {
      const V8 Wv = WT[I * KW + J];
#pragma GCC unroll 8
      for (int B = 0; B < NB; ++B)
        A[B] += Wv * Row[J + B * SW];
    }
  }
#pragma GCC unroll 8
  for (int B = 0; B < NB; ++B)
    Acc[O + B] = A[B];
}

/// tileRow for a KH x KW window of column stride SW, undilated.
template <int KH, int KW, int SW>
inline __attribute__((always_inline)) void
tileRowFixed(const V8 *XT, int64_t InCols, const V8 *WT, const V8 &Bias,
             int64_t Cols, V8 *Acc) {
  int64_t O = 0;
  for (; O + 8 <= Cols; O += 8)
    rowBlock<KH, KW, SW, 8>(XT, InCols, WT, Bias, O, Acc);
  for (; O + 4 <= Cols; O += 4)
    rowBlock<KH, KW, SW, 4>(XT, InCols, WT, Bias, O, Acc);
  for (; O < Cols; ++O)
    rowBlock<KH, KW, SW, 1>(XT, InCols, WT, Bias, O, Acc);
}

/// One row of a tile: Acc[o] = Bias + sum of the taps of output column o,
/// for o in [0, Cols), from the interleaved input rows of XT (InCols
/// positions each). The windows of mobile networks (3x3 and 5x5, stride 1
/// or 2, undilated) have their own unrolled loops; any other shares a
/// generic one, four columns at a time sharing each weight load.
OOMPLAN_SIMD_CLONES void tileRow(const V8 *XT, int64_t InCols, const V8 *WT,
                                 const V8 *BiasV, int64_t KH, int64_t KW,
                                 int64_t DH, int64_t DW, int64_t SW,
                                 int64_t Cols, V8 *Acc) {
  // Vectors go by pointer: a vector argument's ABI differs between the
  // clones.
  const V8 Bias = *BiasV;
  if (DH == 1 && DW == 1 && KH == KW && (KH == 3 || KH == 5) &&
      (SW == 1 || SW == 2)) {
    if (KH == 3 && SW == 1)
      tileRowFixed<3, 3, 1>(XT, InCols, WT, Bias, Cols, Acc);
    else if (KH == 3)
      tileRowFixed<3, 3, 2>(XT, InCols, WT, Bias, Cols, Acc);
    else if (SW == 1)
      tileRowFixed<5, 5, 1>(XT, InCols, WT, Bias, Cols, Acc);
    else
      tileRowFixed<5, 5, 2>(XT, InCols, WT, Bias, Cols, Acc);
    return;
  }
  int64_t O = 0;
  for (; O + 4 <= Cols; O += 4) {
    V8 A0 = Bias, A1 = Bias, A2 = Bias, A3 = Bias;
    for (int64_t I = 0; I < KH; ++I) {
      const V8 *Row = XT + I * DH * InCols + O * SW;
      const V8 *W = WT + I * KW;
      for (int64_t J = 0; J < KW; ++J) {
        const V8 Wv = W[J];
        const V8 *P = Row + J * DW;
        A0 += Wv * P[0];
        A1 += Wv * P[SW];
        A2 += Wv * P[2 * SW];
        A3 += Wv * P[3 * SW];
      }
    }
    Acc[O] = A0;
    Acc[O + 1] = A1;
    Acc[O + 2] = A2;
    Acc[O + 3] = A3;
  }
  for (; O < Cols; ++O) {
    V8 A = Bias;
    for (int64_t I = 0; I < KH; ++I)
      for (int64_t J = 0; J < KW; ++J)
        A += WT[I * KW + J] * XT[I * DH * InCols + O * SW + J * DW];
    Acc[O] = A;
  }
}

/// Out[j][i] = In[i][j] for an 8 x 8 block: the unpack, shuffle and lane
/// permute steps of the usual AVX transpose, 24 shuffles where the element
/// by element copy was 64 loads and 64 stores.
inline __attribute__((always_inline)) void transpose8(const V8 *In, V8 *Out) {
  V8 T[8], U[8];
  for (int I = 0; I < 8; I += 2) {
    T[I] = OOMPLAN_SHUFFLE8(In[I], In[I + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    T[I + 1] = OOMPLAN_SHUFFLE8(In[I], In[I + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int I = 0; I < 8; I += 4)
    for (int H = 0; H < 2; ++H) {
      U[I + 2 * H] =
          OOMPLAN_SHUFFLE8(T[I + H], T[I + H + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      U[I + 2 * H + 1] =
          OOMPLAN_SHUFFLE8(T[I + H], T[I + H + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int J = 0; J < 4; ++J) {
    Out[J] = OOMPLAN_SHUFFLE8(U[J], U[J + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    Out[J + 4] = OOMPLAN_SHUFFLE8(U[J], U[J + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

/// Interleaves input rows [R0, R0 + T.InRows) and columns [C0, C0 +
/// T.InCols) of the L planes at X (row length Wd, H rows; coordinates may
/// lie in the padding) into XT, zero outside the planes and in lanes >= L.
OOMPLAN_SIMD_CLONES void gatherTile(const float *const *X, int L, int64_t H,
                                    int64_t Wd, int64_t R0, int64_t C0,
                                    const Tile &T, V8 *XT) {
  std::fill(XT, XT + T.InRows * T.InCols, V8{});
  const int64_t CLo = std::max<int64_t>(0, -C0);
  const int64_t CHi = std::min(T.InCols, Wd - C0);
  if (CLo >= CHi)
    return;
  for (int64_t R = 0; R < T.InRows; ++R) {
    const int64_t IH = R0 + R;
    if (IH < 0 || IH >= H)
      continue;
    V8 *Row = XT + R * T.InCols;
    int64_t Col = CLo;
    for (; Col + 8 <= CHi; Col += 8) {
      V8 In[8];
      for (int Lane = 0; Lane < 8; ++Lane)
        In[Lane] = Lane < L ? V8(*reinterpret_cast<const V8U *>(
                                  X[Lane] + IH * Wd + C0 + Col))
                            : V8{};
      transpose8(In, Row + Col);
    }
    // The last columns (a 14- or 7-wide map's tail) through one more
    // transpose when eight floats from the first one stay inside every
    // plane (they run into the plane's next row), only the columns inside
    // kept; else element by element.
    if (Col < CHi && IH * Wd + C0 + Col + 8 <= H * Wd) {
      V8 In[8], Out[8];
      for (int Lane = 0; Lane < 8; ++Lane)
        In[Lane] = Lane < L ? V8(*reinterpret_cast<const V8U *>(
                                  X[Lane] + IH * Wd + C0 + Col))
                            : V8{};
      transpose8(In, Out);
      std::copy(Out, Out + (CHi - Col), Row + Col);
      continue;
    }
    float *Dst = reinterpret_cast<float *>(Row);
    for (int Lane = 0; Lane < L; ++Lane) {
      const float *Src = X[Lane] + IH * Wd + C0;
      for (int64_t C = Col; C < CHi; ++C)
        Dst[C * Lanes + Lane] = Src[C];
    }
  }
}

/// Makes V an output vector's final value: plus the old Y when Old,
/// clamped to [Lo, Hi] when Lo (the comparisons of the unfused Clip and
/// Relu, so that NaN stays NaN). In place: a vector is no value argument
/// or result (Vector8.h).
inline __attribute__((always_inline)) void
finalValue(V8 &V, const V8 *Old, const V8 *Lo, const V8 *Hi) {
  if (Old)
    V += *Old;
  if (Lo) {
    V = V < *Lo ? *Lo : V;
    V = *Hi < V ? *Hi : V;
  }
}

/// Writes (or, Accumulate, adds) Acc's Cols interleaved outputs into the
/// first L of the eight rows Dst, clamped to [Lo, Hi] when Lo is given.
/// Acc is read in whole blocks of eight vectors: it holds Cols rounded up
/// to eight.
OOMPLAN_SIMD_CLONES void scatterRow(const V8 *Acc, int64_t Cols,
                                    float *const *Dst, int L, bool Accumulate,
                                    const V8 *Lo, const V8 *Hi) {
  int64_t O = 0;
  for (; O + 8 <= Cols; O += 8) {
    V8 Out[8];
    transpose8(Acc + O, Out);
    for (int Lane = 0; Lane < L; ++Lane) {
      V8U *P = reinterpret_cast<V8U *>(Dst[Lane] + O);
      const V8 Old = Accumulate ? V8(*P) : V8{};
      finalValue(Out[Lane], Accumulate ? &Old : nullptr, Lo, Hi);
      *P = Out[Lane];
    }
  }
  // The last columns through one more transpose (Acc holds MaxOutCols
  // vectors, so eight from O are inside it), each lane's valid part
  // stored in pieces of four, two and one floats taken from the register:
  // copied float by float from the transposed vectors in memory, they
  // were a third of the path's time on 7- and 14-wide maps.
  const int64_t Rest = Cols - O;
  if (Rest == 0)
    return;
  V8 Out[8];
  transpose8(Acc + O, Out);
  typedef float V4 __attribute__((vector_size(16)));
  typedef float V4U __attribute__((vector_size(16), aligned(4)));
  typedef float V2U __attribute__((vector_size(8), aligned(4)));
  for (int Lane = 0; Lane < L; ++Lane) {
    float *P = Dst[Lane] + O;
    V8 Old{};
    if (Accumulate)
      for (int64_t C = 0; C < Rest; ++C)
        Old[C] = P[C];
    V8 &V = Out[Lane];
    finalValue(V, Accumulate ? &Old : nullptr, Lo, Hi);
    V4 Part = __builtin_shufflevector(V, V, 0, 1, 2, 3);
    int64_t C = 0;
    if (Rest >= 4) {
      *reinterpret_cast<V4U *>(P) = Part;
      Part = __builtin_shufflevector(V, V, 4, 5, 6, 7);
      C = 4;
    }
    if (Rest - C >= 2) {
      *reinterpret_cast<V2U *>(P + C) =
          __builtin_shufflevector(Part, Part, 0, 1);
      Part = __builtin_shufflevector(Part, Part, 2, 3, 2, 3);
      C += 2;
    }
    if (Rest - C == 1)
      P[C] = Part[0];
  }
}

} // namespace

bool depthwiseBlockedApplies(const WindowGeometry &G, ElementType Type,
                             int64_t Channels, int64_t OutChannels) {
  if (Type != ElementType::Float || G.rank() != 2 || Channels != OutChannels)
    return false;
  if (G.kernelSize() > MaxTaps)
    return false;
  const int64_t Window = std::max(G.K[0], G.K[1]);
  if (Window < 5 && G.Out[1] >= CompactRowLimit)
    return false;
  // One row of outputs must fit the input tile.
  const int64_t MinRows = (G.K[0] - 1) * G.D[0] + 1;
  const int64_t MinCols = (G.K[1] - 1) * G.D[1] + 1;
  return MinRows * MinCols <= MaxInTile;
}

void depthwiseBlocked(const KernelContext &C, const WindowGeometry &G,
                      bool Accumulate, ConvTileFn Post,
                      const ConvClamp *Clamp) {
  const TensorRef &X = C.Inputs[0], &W = C.Inputs[1], &Y = C.Outputs[0];
  const int64_t Ch = X.Dims[1], Batch = X.Dims[0];
  const int64_t Blocks = (Ch + Lanes - 1) / Lanes;
  const int64_t H = G.In[0], Wd = G.In[1], OH = G.Out[0], OW = G.Out[1];
  const int64_t KH = G.K[0], KW = G.K[1], Taps = KH * KW;
  const int64_t InSize = H * Wd, OutSize = OH * OW;
  const Tile T = tileFor(G);
  const float *Bias =
      hasInput(C, 2) ? C.Inputs[2].data<const float>() : nullptr;
  alignas(32) const V8 Lo = V8{} + (Clamp ? Clamp->Lo : 0.f),
                       Hi = V8{} + (Clamp ? Clamp->Hi : 0.f);
  C.Pool.parallelFor(Batch * Blocks, 1, [&](int64_t Begin, int64_t End) {
    alignas(32) V8 XT[MaxInTile];
    alignas(32) V8 WT[MaxTaps];
    alignas(32) V8 Acc[MaxOutCols] = {}; // scatterRow reads whole blocks
    for (int64_t NB = Begin; NB < End; ++NB) {
      const int64_t N = NB / Blocks, C0 = NB % Blocks * Lanes;
      const int L = int(std::min<int64_t>(Lanes, Ch - C0));
      const float *Planes[Lanes];
      float *Outs[Lanes];
      alignas(32) V8 B{};
      std::fill(WT, WT + Taps, V8{});
      for (int Lane = 0; Lane < L; ++Lane) {
        const int64_t Plane = N * Ch + C0 + Lane;
        Planes[Lane] = X.data<const float>() + Plane * InSize;
        Outs[Lane] = Y.data<float>() + Plane * OutSize;
        const float *Wc = W.data<const float>() + (C0 + Lane) * Taps;
        for (int64_t K = 0; K < Taps; ++K)
          WT[K][Lane] = Wc[K];
        B[Lane] = Bias ? Bias[C0 + Lane] : 0.0f;
      }
      for (int64_t OR = 0; OR < OH; OR += T.Rows) {
        const int64_t Rows = std::min(T.Rows, OH - OR);
        for (int64_t OC = 0; OC < OW; OC += T.Cols) {
          const int64_t Cols = std::min(T.Cols, OW - OC);
          gatherTile(Planes, L, H, Wd, OR * G.S[0] - G.PadBegin[0],
                     OC * G.S[1] - G.PadBegin[1], T, XT);
          for (int64_t R = 0; R < Rows; ++R) {
            tileRow(XT + R * G.S[0] * T.InCols, T.InCols, WT, &B, KH, KW,
                    G.D[0], G.D[1], G.S[1], Cols, Acc);
            float *Dst[Lanes];
            for (int Lane = 0; Lane < L; ++Lane)
              Dst[Lane] = Outs[Lane] + (OR + R) * OW + OC;
            scatterRow(Acc, Cols, Dst, L, Accumulate, Clamp ? &Lo : nullptr,
                       Clamp ? &Hi : nullptr);
          }
        }
      }
      if (Post && !Clamp)
        Post(N * Ch + C0, N * Ch + C0 + L, 0, OutSize);
    }
  });
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
