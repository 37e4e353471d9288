//===- RecurrentCell.h - one element of an RNN, GRU or LSTM step -*- C++
//-*-===//
//
// What a recurrent op computes at one (batch row, hidden unit) of one time
// step, once both products are in the gates (input times W^T plus previous
// hidden state times R^T): the biases, the activations with their alpha,
// beta and clip, LSTM's peepholes and coupled input-forget gate, GRU's reset
// gate and linear_before_reset. In plain types, so that the CPU kernel
// (Recurrent.cpp) and the CUDA kernel (CUDA/Kernels/Recurrent.cu) share one
// definition: the conformance suite's recurrent cases check the CUDA
// kernel's arithmetic too, and only the products differ between backends.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_RECURRENTCELL_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_RECURRENTCELL_H

#include <cstdint>
#include <math.h>

#ifdef __CUDACC__
#define OOMPLAN_REC_HD __host__ __device__
#else
#define OOMPLAN_REC_HD
#endif

namespace oomplan {
namespace runtime {
namespace recurrent {

enum class Cell : int { RNN, GRU, LSTM };

/// Gate blocks in W, R and each half of B: RNN 1, GRU 3 (z, r, h), LSTM 4
/// (i, o, f, c).
OOMPLAN_REC_HD inline int gatesOf(Cell K) {
  return K == Cell::GRU ? 3 : K == Cell::LSTM ? 4 : 1;
}
/// Activations per direction: RNN f; GRU f, g; LSTM f, g, h.
OOMPLAN_REC_HD inline int activationsOf(Cell K) {
  return K == Cell::RNN ? 1 : K == Cell::GRU ? 2 : 3;
}

/// One activation function with its alpha and beta (ONNX's recurrent
/// activation list). expf and tanhf on both sides: the host's are what
/// std::exp and std::tanh call for a float.
struct Act {
  enum Kind : int {
    Sigmoid,
    Tanh,
    Relu,
    Affine,
    LeakyRelu,
    ThresholdedRelu,
    ScaledTanh,
    HardSigmoid,
    Elu,
    Softsign,
    Softplus
  } K = Sigmoid;
  float Alpha = 0, Beta = 0;

  OOMPLAN_REC_HD float operator()(float X) const {
    switch (K) {
    case Sigmoid:
      return 1.0f / (1.0f + expf(-X));
    case Tanh:
      return tanhf(X);
    case Relu:
      return X > 0 ? X : 0;
    case Affine:
      return Alpha * X + Beta;
    case LeakyRelu:
      return X >= 0 ? X : Alpha * X;
    case ThresholdedRelu:
      return X > Alpha ? X : 0;
    case ScaledTanh:
      return Alpha * tanhf(Beta * X);
    case HardSigmoid: {
      float V = Alpha * X + Beta;
      return V < 0 ? 0.0f : V > 1 ? 1.0f : V;
    }
    case Elu:
      return X >= 0 ? X : Alpha * (expf(X) - 1);
    case Softsign:
      return X / (1 + fabsf(X));
    case Softplus:
      return log1pf(expf(X));
    }
    return X;
  }
};

/// The sizes, and where an element of Y (t, dir, b) and of Y_h or Y_c (dir,
/// b) starts: [T, dirs, B, H] and [dirs, B, H], or with layout 1 (batch
/// major) [B, T, dirs, H] and [B, dirs, H].
struct Layout {
  int64_t T = 0, B = 0, I = 0, H = 0, Dirs = 1;
  bool BatchMajor = false;

  OOMPLAN_REC_HD int64_t y(int64_t Ti, int64_t Dir, int64_t Bi) const {
    return BatchMajor ? ((Bi * T + Ti) * Dirs + Dir) * H
                      : ((Ti * Dirs + Dir) * B + Bi) * H;
  }
  OOMPLAN_REC_HD int64_t state(int64_t Dir, int64_t Bi) const {
    return BatchMajor ? (Bi * Dirs + Dir) * H : (Dir * B + Bi) * H;
  }
};

/// One direction's cell: its biases and peepholes (already offset to the
/// direction; null when the op has none) and its activations.
struct CellParams {
  Cell K = Cell::RNN;
  int64_t H = 0;
  const float *Wb = nullptr; ///< W's bias, then R's (Rb = Wb + gates * H).
  const float *P = nullptr;  ///< LSTM peepholes i, o, f.
  Act A[3];
  float Clip = 0; ///< 0: no clipping.
  bool LinearBeforeReset = false, InputForget = false;

  OOMPLAN_REC_HD float clip(float V) const {
    return Clip > 0 ? (V < -Clip ? -Clip : V > Clip ? Clip : V) : V;
  }
  /// Both biases of gate column Col.
  OOMPLAN_REC_HD float bias(int64_t Col) const {
    return Wb ? Wb[Col] + Wb[gatesOf(K) * H + Col] : 0.0f;
  }
};

/// GRU's reset gate at column J of a batch row: activates r in place in
/// the row's gates, and sets the row's Tmp to r * h (or h, with
/// linear_before_reset), the operand of the product with R's h block.
OOMPLAN_REC_HD inline void gruReset(const CellParams &P, float *Gates,
                                    const float *Hs, float *Tmp, int64_t J) {
  const int64_t H = P.H;
  float Rg = P.A[0](P.clip(Gates[H + J] + P.bias(H + J)));
  Gates[H + J] = Rg;
  Tmp[J] = P.LinearBeforeReset ? Hs[J] : Rg * Hs[J];
}

/// The new hidden (and LSTM cell) state at column J of a batch row that is
/// within its sequence length. Gates holds the row's products; GRU's Tmp2
/// the product of its Tmp with R's h block. Reads and writes only column J
/// of the states.
OOMPLAN_REC_HD inline void update(const CellParams &P, const float *Gates,
                                  float *Hs, float *Cs, const float *Tmp2,
                                  int64_t J) {
  const int64_t H = P.H;
  const Act *A = P.A;
  if (P.K == Cell::RNN) {
    Hs[J] = A[0](P.clip(Gates[J] + P.bias(J)));
  } else if (P.K == Cell::GRU) {
    float Z = A[0](P.clip(Gates[J] + P.bias(J)));
    float Rg = Gates[H + J];
    float WbH = P.Wb ? P.Wb[2 * H + J] : 0.0f,
          RbH = P.Wb ? P.Wb[5 * H + J] : 0.0f;
    float Rec = Tmp2[J] + RbH;
    float Ht = A[1](P.clip(Gates[2 * H + J] + WbH +
                           (P.LinearBeforeReset ? Rg * Rec : Rec)));
    Hs[J] = (1 - Z) * Ht + Z * Hs[J];
  } else {
    // Gate order in W, R, B: i, o, f, c; P: i, o, f.
    float Ig = Gates[J] + P.bias(J), Og = Gates[H + J] + P.bias(H + J),
          Fg = Gates[2 * H + J] + P.bias(2 * H + J),
          Cg = Gates[3 * H + J] + P.bias(3 * H + J);
    if (P.P) {
      Ig += P.P[J] * Cs[J];
      Fg += P.P[2 * H + J] * Cs[J];
    }
    float Iv = A[0](P.clip(Ig));
    float Fv = P.InputForget ? 1 - Iv : A[0](P.clip(Fg));
    float Cv = A[1](P.clip(Cg));
    Cs[J] = Fv * Cs[J] + Iv * Cv;
    if (P.P)
      Og += P.P[H + J] * Cs[J];
    Hs[J] = A[0](P.clip(Og)) * A[2](Cs[J]);
  }
}

} // namespace recurrent
} // namespace runtime
} // namespace oomplan

#endif
