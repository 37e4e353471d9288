//===- Recurrent.cpp - CPU kernels: RNN, GRU, LSTM ------------------------===//
//
// The three ONNX recurrent ops, one direction at a time (bidirectional runs
// forward, then reverse). Each time step computes its gate pre-activations
// with two GEMMs (input times W^T, previous hidden state times R^T), adds
// the biases, applies the activations (the defaults or the activations
// attribute, with activation_alpha/beta and clip), and updates the state.
// The gates, the hidden and cell states and GRU's temporaries live in the
// step's planned workspace (recurrentWorkspace): nothing is allocated.
// sequence_lens masks a batch row past its length (its state stays, its Y
// rows are zero), and layout 1 (batch-major) is read through strides.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Gemm.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

enum class Cell { RNN, GRU, LSTM };

Cell cellOf(const Node &N) {
  return N.OpType == "GRU"    ? Cell::GRU
         : N.OpType == "LSTM" ? Cell::LSTM
                              : Cell::RNN;
}
int gatesOf(Cell K) { return K == Cell::GRU ? 3 : K == Cell::LSTM ? 4 : 1; }

/// Sizes read from X and R.
struct RecDims {
  int64_t T = 0, B = 0, I = 0, H = 0, Dirs = 1;
  bool BatchMajor = false;
};

bool recDims(const Node &N, llvm::ArrayRef<TensorRef> Inputs, RecDims &D) {
  if (Inputs.size() < 3 || Inputs[0].Dims.size() != 3 ||
      Inputs[2].Dims.size() != 3)
    return false;
  D.BatchMajor = N.getInt("layout", 0) == 1;
  const TensorRef &X = Inputs[0];
  D.T = X.Dims[D.BatchMajor ? 1 : 0];
  D.B = X.Dims[D.BatchMajor ? 0 : 1];
  D.I = X.Dims[2];
  D.Dirs = Inputs[2].Dims[0];
  D.H = Inputs[2].Dims[2];
  return true;
}

uint64_t recurrentWorkspace(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                            llvm::ArrayRef<TensorRef>) {
  RecDims D;
  if (!recDims(N, Inputs, D))
    return 0;
  // Gates (B x G*H), hidden, cell and two temporaries (B x H each).
  const uint64_t G = uint64_t(gatesOf(cellOf(N)));
  return uint64_t(D.B) * uint64_t(D.H) * (G + 4) * sizeof(float);
}

/// One activation function with its alpha and beta.
struct Act {
  enum Kind {
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

  float operator()(float X) const {
    switch (K) {
    case Sigmoid:
      return 1.0f / (1.0f + std::exp(-X));
    case Tanh:
      return std::tanh(X);
    case Relu:
      return X > 0 ? X : 0;
    case Affine:
      return Alpha * X + Beta;
    case LeakyRelu:
      return X >= 0 ? X : Alpha * X;
    case ThresholdedRelu:
      return X > Alpha ? X : 0;
    case ScaledTanh:
      return Alpha * std::tanh(Beta * X);
    case HardSigmoid:
      return std::max(0.0f, std::min(1.0f, Alpha * X + Beta));
    case Elu:
      return X >= 0 ? X : Alpha * (std::exp(X) - 1);
    case Softsign:
      return X / (1 + std::fabs(X));
    case Softplus:
      return std::log1p(std::exp(X));
    }
    return X;
  }
};

/// The activations per direction (F, G[, H]), from the attributes or the
/// defaults. Empty string when fine, else the unsupported name.
std::string readActivations(const Node &N, Cell K, int64_t Dirs,
                            llvm::SmallVectorImpl<Act> &Out) {
  const size_t PerDir = K == Cell::RNN ? 1 : K == Cell::GRU ? 2 : 3;
  std::vector<std::string> Names;
  if (const Attribute *A = N.attr("activations"))
    Names = A->Strings;
  if (Names.empty())
    for (int64_t D = 0; D < Dirs; ++D)
      for (size_t I = 0; I < PerDir; ++I)
        Names.push_back(K == Cell::RNN ? "Tanh" : I == 0 ? "Sigmoid" : "Tanh");
  if (Names.size() != PerDir * size_t(Dirs))
    return "activations: " + std::to_string(Names.size()) + " names for " +
           std::to_string(Dirs) + " direction(s)";
  std::vector<double> Alphas, Betas;
  if (const Attribute *A = N.attr("activation_alpha"))
    Alphas = A->Floats;
  if (const Attribute *A = N.attr("activation_beta"))
    Betas = A->Floats;
  size_t AI = 0, BI = 0;
  static const struct {
    const char *Name;
    Act::Kind K;
    int Params; // 0 none, 1 alpha, 2 alpha and beta
    float A, B;
  } Table[] = {{"Sigmoid", Act::Sigmoid, 0, 0, 0},
               {"Tanh", Act::Tanh, 0, 0, 0},
               {"Relu", Act::Relu, 0, 0, 0},
               {"Affine", Act::Affine, 2, 1, 0},
               {"LeakyRelu", Act::LeakyRelu, 1, 0.01f, 0},
               {"ThresholdedRelu", Act::ThresholdedRelu, 1, 1, 0},
               {"ScaledTanh", Act::ScaledTanh, 2, 1, 1},
               {"HardSigmoid", Act::HardSigmoid, 2, 0.2f, 0.5f},
               {"Elu", Act::Elu, 1, 1, 0},
               {"Softsign", Act::Softsign, 0, 0, 0},
               {"Softplus", Act::Softplus, 0, 0, 0}};
  for (const std::string &Name : Names) {
    bool Found = false;
    for (const auto &E : Table)
      if (llvm::StringRef(Name).equals_insensitive(E.Name)) {
        Act A{E.K, E.A, E.B};
        if (E.Params >= 1 && AI < Alphas.size())
          A.Alpha = float(Alphas[AI++]);
        if (E.Params >= 2 && BI < Betas.size())
          A.Beta = float(Betas[BI++]);
        Out.push_back(A);
        Found = true;
      }
    if (!Found)
      return "activation '" + Name + "'";
  }
  return "";
}

struct RecRun {
  const KernelContext &C;
  Cell K;
  RecDims D;
  llvm::SmallVector<Act, 6> Acts;
  float Clip = 0; ///< 0: no clipping.
  bool LinearBeforeReset = false, InputForget = false;
  float *Gates, *Hs, *Cs, *Tmp, *Tmp2;

  float clip(float V) const {
    return Clip > 0 ? std::max(-Clip, std::min(Clip, V)) : V;
  }
  int64_t seqLen(int64_t Bi) const {
    return hasInput(C, 4) ? intAt(C.Inputs[4], uint64_t(Bi)) : D.T;
  }
  /// Row b of X at time t.
  const float *xRow(int64_t T, int64_t Bi) const {
    const float *X = C.Inputs[0].data<const float>();
    return D.BatchMajor ? X + (Bi * D.T + T) * D.I : X + (T * D.B + Bi) * D.I;
  }
  /// Output offset of (t, dir, b) in Y, and of (dir, b) in Y_h / Y_c.
  int64_t yAt(int64_t T, int64_t Dir, int64_t Bi) const {
    return D.BatchMajor ? ((Bi * D.T + T) * D.Dirs + Dir) * D.H
                        : ((T * D.Dirs + Dir) * D.B + Bi) * D.H;
  }
  int64_t hAt(int64_t Dir, int64_t Bi) const {
    return D.BatchMajor ? (Bi * D.Dirs + Dir) * D.H : (Dir * D.B + Bi) * D.H;
  }

  void direction(int64_t Dir, bool Reverse);
  void cellStep(int64_t Dir, const float *Wb, const float *Rb, const float *R,
                const float *P, const Act *A, int64_t T);
};

void RecRun::direction(int64_t Dir, bool Reverse) {
  const int64_t G = gatesOf(K), GH = G * D.H, H = D.H;
  const float *W = C.Inputs[1].data<const float>() + Dir * GH * D.I;
  const float *R = C.Inputs[2].data<const float>() + Dir * GH * H;
  const float *Wb =
      hasInput(C, 3) ? C.Inputs[3].data<const float>() + Dir * 2 * GH : nullptr;
  const float *Rb = Wb ? Wb + GH : nullptr;
  const float *P = K == Cell::LSTM && hasInput(C, 7)
                       ? C.Inputs[7].data<const float>() + Dir * 3 * H
                       : nullptr;
  const Act *A = &Acts[size_t(Dir) * (K == Cell::RNN   ? 1
                                      : K == Cell::GRU ? 2
                                                       : 3)];
  for (int64_t Bi = 0; Bi < D.B; ++Bi)
    for (int64_t J = 0; J < H; ++J) {
      Hs[Bi * H + J] = hasInput(C, 5)
                           ? C.Inputs[5].data<const float>()[hAt(Dir, Bi) + J]
                           : 0.0f;
      Cs[Bi * H + J] = K == Cell::LSTM && hasInput(C, 6)
                           ? C.Inputs[6].data<const float>()[hAt(Dir, Bi) + J]
                           : 0.0f;
    }
  for (int64_t S = 0; S < D.T; ++S) {
    const int64_t T = Reverse ? D.T - 1 - S : S;
    // Input part for all gates: Gates = X_t W^T.
    const int64_t Ldx = D.BatchMajor ? D.T * D.I : D.I;
    gemm<float>(false, true, D.B, GH, D.I, 1.0f, xRow(T, 0), Ldx, W, D.I, 0.0f,
                Gates, GH);
    // Recurrent part; GRU's h gate waits for the reset gate.
    const int64_t RecGates = K == Cell::GRU ? 2 : G;
    gemm<float>(false, true, D.B, RecGates * H, H, 1.0f, Hs, H, R, H, 1.0f,
                Gates, GH);
    cellStep(Dir, Wb, Rb, R, P, A, T);
  }
  for (unsigned O = 1; O < 3; ++O)
    if (hasOutput(C, O) && (O == 1 || K == Cell::LSTM))
      for (int64_t Bi = 0; Bi < D.B; ++Bi)
        std::memcpy(C.Outputs[O].data<float>() + hAt(Dir, Bi),
                    (O == 1 ? Hs : Cs) + Bi * H, size_t(H) * sizeof(float));
}

void RecRun::cellStep(int64_t Dir, const float *Wb, const float *Rb,
                      const float *R, const float *P, const Act *A, int64_t T) {
  const int64_t G = gatesOf(K), GH = G * D.H, H = D.H;
  auto Bias = [&](int64_t Col) { return Wb ? Wb[Col] + Rb[Col] : 0.0f; };
  if (K == Cell::GRU) {
    // Tmp = r (.) H_{t-1} (linear_before_reset 0) or H_{t-1} for the GEMM.
    for (int64_t Bi = 0; Bi < D.B; ++Bi)
      for (int64_t J = 0; J < H; ++J) {
        float Rg = A[0](clip(Gates[Bi * GH + H + J] + Bias(H + J)));
        Gates[Bi * GH + H + J] = Rg;
        Tmp[Bi * H + J] =
            LinearBeforeReset ? Hs[Bi * H + J] : Rg * Hs[Bi * H + J];
      }
    gemm<float>(false, true, D.B, H, H, 1.0f, Tmp, H, R + 2 * H * H, H, 0.0f,
                Tmp2, H);
  }
  float *Y = hasOutput(C, 0) ? C.Outputs[0].data<float>() : nullptr;
  for (int64_t Bi = 0; Bi < D.B; ++Bi) {
    const bool Valid = T < seqLen(Bi);
    float *Gr = Gates + Bi * GH, *Hr = Hs + Bi * H, *Cr = Cs + Bi * H;
    for (int64_t J = 0; J < H && Valid; ++J) {
      if (K == Cell::RNN) {
        Hr[J] = A[0](clip(Gr[J] + Bias(J)));
      } else if (K == Cell::GRU) {
        float Z = A[0](clip(Gr[J] + Bias(J)));
        float Rg = Gr[H + J];
        float WbH = Wb ? Wb[2 * H + J] : 0.0f, RbH = Rb ? Rb[2 * H + J] : 0.0f;
        float Rec = Tmp2[Bi * H + J] + RbH;
        float Ht = A[1](
            clip(Gr[2 * H + J] + WbH + (LinearBeforeReset ? Rg * Rec : Rec)));
        Hr[J] = (1 - Z) * Ht + Z * Hr[J];
      } else {
        // Gate order in W, R, B: i, o, f, c; P: i, o, f.
        float Ig = Gr[J] + Bias(J), Og = Gr[H + J] + Bias(H + J),
              Fg = Gr[2 * H + J] + Bias(2 * H + J),
              Cg = Gr[3 * H + J] + Bias(3 * H + J);
        if (P) {
          Ig += P[J] * Cr[J];
          Fg += P[2 * H + J] * Cr[J];
        }
        float Iv = A[0](clip(Ig));
        float Fv = InputForget ? 1 - Iv : A[0](clip(Fg));
        float Cv = A[1](clip(Cg));
        Cr[J] = Fv * Cr[J] + Iv * Cv;
        if (P)
          Og += P[H + J] * Cr[J];
        Hr[J] = A[0](clip(Og)) * A[2](Cr[J]);
      }
    }
    if (Y) {
      float *YR = Y + yAt(T, Dir, Bi);
      if (Valid)
        std::memcpy(YR, Hr, size_t(H) * sizeof(float));
      else
        std::fill(YR, YR + H, 0.0f);
    }
  }
}

llvm::Error runRecurrent(const KernelContext &C) {
  Cell K = cellOf(C.N);
  RecRun Run{C,     K,       {},      {},      0,       false,
             false, nullptr, nullptr, nullptr, nullptr, nullptr};
  if (!recDims(C.N, C.Inputs, Run.D))
    return C.badInput("X, W and R must be 3-D");
  RecDims &D = Run.D;
  for (unsigned I = 0; I < 8 && I < C.Inputs.size(); ++I)
    if (I != 4 && hasInput(C, I) && C.Inputs[I].Type != ElementType::Float)
      return C.unsupported("a recurrent op on " +
                           elementTypeName(C.Inputs[I].Type));
  const int64_t G = gatesOf(K);
  if (C.Inputs[1].Dims[0] != D.Dirs || C.Inputs[1].Dims[1] != G * D.H ||
      C.Inputs[1].Dims[2] != D.I || C.Inputs[2].Dims[1] != G * D.H)
    return C.badInput("W or R dims disagree with hidden_size and X");
  if (hasInput(C, 3) &&
      int64_t(C.Inputs[3].numElements()) != D.Dirs * 2 * G * D.H)
    return C.badInput("B must hold 2 * gates * hidden per direction");
  if (hasInput(C, 4) && int64_t(C.Inputs[4].numElements()) != D.B)
    return C.badInput("sequence_lens must hold one length per batch row");
  if (hasInput(C, 4))
    for (int64_t Bi = 0; Bi < D.B; ++Bi)
      if (intAt(C.Inputs[4], uint64_t(Bi)) < 0 ||
          intAt(C.Inputs[4], uint64_t(Bi)) > D.T)
        return C.badInput("a sequence length is outside [0, seq_length]");
  std::string Dir = C.N.getString("direction", "forward");
  if ((Dir == "bidirectional") != (D.Dirs == 2) || D.Dirs > 2 ||
      (Dir != "forward" && Dir != "reverse" && Dir != "bidirectional"))
    return C.badInput("direction '" + Dir + "' disagrees with W's " +
                      llvm::Twine(D.Dirs) + " direction(s)");
  std::string Why = readActivations(C.N, K, D.Dirs, Run.Acts);
  if (!Why.empty())
    return C.unsupported(Why);
  Run.Clip = float(C.N.getFloat("clip", 0));
  Run.LinearBeforeReset = C.N.getInt("linear_before_reset", 0) != 0;
  Run.InputForget = C.N.getInt("input_forget", 0) != 0;
  const uint64_t BH = uint64_t(D.B * D.H);
  if (C.WorkspaceBytes < BH * uint64_t(G + 4) * sizeof(float))
    return C.badInput("the plan gave too little workspace");
  Run.Gates = static_cast<float *>(C.Workspace);
  Run.Hs = Run.Gates + BH * uint64_t(G);
  Run.Cs = Run.Hs + BH;
  Run.Tmp = Run.Cs + BH;
  Run.Tmp2 = Run.Tmp + BH;
  useBlasThreads(C.Pool.threads());
  for (int64_t Di = 0; Di < D.Dirs; ++Di)
    Run.direction(Di, Dir == "reverse" || Di == 1);
  return llvm::Error::success();
}

} // namespace

void registerRecurrentKernels(CPUKernelTable &T) {
  for (const char *Op : {"RNN", "GRU", "LSTM"})
    addKernel(T, Op,
              Kernel{&runRecurrent, &recurrentWorkspace, {ElementType::Float}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
