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
// What each (row, unit) computes from its gates is RecurrentCell.h, which
// the CUDA kernel runs too; the checks and attributes (recurrentSetup) are
// shared with it as well.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Gemm.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

using recurrent::Act;
using recurrent::Cell;

namespace {

Cell cellOf(const Node &N) {
  return N.OpType == "GRU"    ? Cell::GRU
         : N.OpType == "LSTM" ? Cell::LSTM
                              : Cell::RNN;
}

/// Sizes read from X and R; false unless both are 3-D.
bool recDims(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
             recurrent::Layout &D) {
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
  return recurrentStateBytes(N, Inputs);
}

/// The activations per direction (F, G[, H]), from the attributes or the
/// defaults. Empty string when fine, else the unsupported name.
std::string readActivations(const Node &N, Cell K, int64_t Dirs,
                            llvm::SmallVectorImpl<Act> &Out) {
  const size_t PerDir = size_t(recurrent::activationsOf(K));
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
  const RecurrentSetup &S;
  float *Gates, *Hs, *Cs, *Tmp, *Tmp2;

  int64_t seqLen(int64_t Bi) const {
    return hasInput(C, 4) ? intAt(C.Inputs[4], uint64_t(Bi)) : S.L.T;
  }
  /// Row b of X at time t.
  const float *xRow(int64_t T, int64_t Bi) const {
    const recurrent::Layout &D = S.L;
    const float *X = C.Inputs[0].data<const float>();
    return D.BatchMajor ? X + (Bi * D.T + T) * D.I : X + (T * D.B + Bi) * D.I;
  }

  void direction(int64_t Dir, bool Reverse);
  void cellStep(const recurrent::CellParams &P, const float *R, int64_t Dir,
                int64_t T);
};

void RecRun::direction(int64_t Dir, bool Reverse) {
  const recurrent::Layout &D = S.L;
  const int64_t G = recurrent::gatesOf(S.K), GH = G * D.H, H = D.H;
  const float *W = C.Inputs[1].data<const float>() + Dir * GH * D.I;
  const float *R = C.Inputs[2].data<const float>() + Dir * GH * H;
  recurrent::CellParams P = S.cell(
      Dir, hasInput(C, 3) ? C.Inputs[3].data<const float>() : nullptr,
      S.K == Cell::LSTM && hasInput(C, 7) ? C.Inputs[7].data<const float>()
                                          : nullptr);
  for (int64_t Bi = 0; Bi < D.B; ++Bi)
    for (int64_t J = 0; J < H; ++J) {
      Hs[Bi * H + J] =
          hasInput(C, 5) ? C.Inputs[5].data<const float>()[D.state(Dir, Bi) + J]
                         : 0.0f;
      Cs[Bi * H + J] =
          S.K == Cell::LSTM && hasInput(C, 6)
              ? C.Inputs[6].data<const float>()[D.state(Dir, Bi) + J]
              : 0.0f;
    }
  for (int64_t St = 0; St < D.T; ++St) {
    const int64_t T = Reverse ? D.T - 1 - St : St;
    // Input part for all gates: Gates = X_t W^T.
    const int64_t Ldx = D.BatchMajor ? D.T * D.I : D.I;
    gemm<float>(false, true, D.B, GH, D.I, 1.0f, xRow(T, 0), Ldx, W, D.I, 0.0f,
                Gates, GH);
    // Recurrent part; GRU's h gate waits for the reset gate.
    const int64_t RecGates = S.K == Cell::GRU ? 2 : G;
    gemm<float>(false, true, D.B, RecGates * H, H, 1.0f, Hs, H, R, H, 1.0f,
                Gates, GH);
    cellStep(P, R, Dir, T);
  }
  for (unsigned O = 1; O < 3; ++O)
    if (hasOutput(C, O) && (O == 1 || S.K == Cell::LSTM))
      for (int64_t Bi = 0; Bi < D.B; ++Bi)
        std::memcpy(C.Outputs[O].data<float>() + D.state(Dir, Bi),
                    (O == 1 ? Hs : Cs) + Bi * H, size_t(H) * sizeof(float));
}

void RecRun::cellStep(const recurrent::CellParams &P, const float *R,
                      int64_t Dir, int64_t T) {
  const recurrent::Layout &D = S.L;
  const int64_t GH = recurrent::gatesOf(S.K) * D.H, H = D.H;
  if (S.K == Cell::GRU) {
    for (int64_t Bi = 0; Bi < D.B; ++Bi)
      for (int64_t J = 0; J < H; ++J)
        recurrent::gruReset(P, Gates + Bi * GH, Hs + Bi * H, Tmp + Bi * H, J);
    gemm<float>(false, true, D.B, H, H, 1.0f, Tmp, H, R + 2 * H * H, H, 0.0f,
                Tmp2, H);
  }
  float *Y = hasOutput(C, 0) ? C.Outputs[0].data<float>() : nullptr;
  for (int64_t Bi = 0; Bi < D.B; ++Bi) {
    const bool Valid = T < seqLen(Bi);
    float *Hr = Hs + Bi * H;
    for (int64_t J = 0; J < H && Valid; ++J)
      recurrent::update(P, Gates + Bi * GH, Hr, Cs + Bi * H, Tmp2 + Bi * H, J);
    if (Y) {
      float *YR = Y + D.y(T, Dir, Bi);
      if (Valid)
        std::memcpy(YR, Hr, size_t(H) * sizeof(float));
      else
        std::fill(YR, YR + H, 0.0f);
    }
  }
}

llvm::Error runRecurrent(const KernelContext &C) {
  RecurrentSetup S;
  if (llvm::Error E = recurrentSetup(C, S))
    return E;
  const recurrent::Layout &D = S.L;
  if (hasInput(C, 4))
    if (llvm::Error E = recurrentLengths(C, C.Inputs[4], D))
      return E;
  const uint64_t BH = uint64_t(D.B * D.H);
  if (C.WorkspaceBytes < recurrentStateBytes(C.N, C.Inputs))
    return C.badInput("the plan gave too little workspace");
  RecRun Run{C, S, nullptr, nullptr, nullptr, nullptr, nullptr};
  Run.Gates = static_cast<float *>(C.Workspace);
  Run.Hs = Run.Gates + BH * uint64_t(recurrent::gatesOf(S.K));
  Run.Cs = Run.Hs + BH;
  Run.Tmp = Run.Cs + BH;
  Run.Tmp2 = Run.Tmp + BH;
  useBlasThreads(C.Pool.threads());
  for (int64_t Di = 0; Di < D.Dirs; ++Di)
    Run.direction(Di, S.Reverse || Di == 1);
  return llvm::Error::success();
}

} // namespace

recurrent::CellParams RecurrentSetup::cell(int64_t Dir, const float *B,
                                           const float *P) const {
  recurrent::CellParams Cp;
  Cp.K = K;
  Cp.H = L.H;
  const int64_t GH = recurrent::gatesOf(K) * L.H;
  Cp.Wb = B ? B + Dir * 2 * GH : nullptr;
  Cp.P = K == Cell::LSTM && P ? P + Dir * 3 * L.H : nullptr;
  const int PerDir = recurrent::activationsOf(K);
  for (int I = 0; I < PerDir; ++I)
    Cp.A[I] = Acts[size_t(Dir * PerDir + I)];
  Cp.Clip = Clip;
  Cp.LinearBeforeReset = LinearBeforeReset;
  Cp.InputForget = InputForget;
  return Cp;
}

llvm::Error recurrentSetup(const KernelContext &C, RecurrentSetup &S) {
  S.K = cellOf(C.N);
  if (!recDims(C.N, C.Inputs, S.L))
    return C.badInput("X, W and R must be 3-D");
  const recurrent::Layout &D = S.L;
  for (unsigned I = 0; I < 8 && I < C.Inputs.size(); ++I)
    if (I != 4 && hasInput(C, I) && C.Inputs[I].Type != ElementType::Float)
      return C.unsupported("a recurrent op on " +
                           elementTypeName(C.Inputs[I].Type));
  const int64_t G = recurrent::gatesOf(S.K);
  if (C.Inputs[1].Dims[0] != D.Dirs || C.Inputs[1].Dims[1] != G * D.H ||
      C.Inputs[1].Dims[2] != D.I || C.Inputs[2].Dims[1] != G * D.H)
    return C.badInput("W or R dims disagree with hidden_size and X");
  if (hasInput(C, 3) &&
      int64_t(C.Inputs[3].numElements()) != D.Dirs * 2 * G * D.H)
    return C.badInput("B must hold 2 * gates * hidden per direction");
  if (hasInput(C, 4) && int64_t(C.Inputs[4].numElements()) != D.B)
    return C.badInput("sequence_lens must hold one length per batch row");
  if (S.K == Cell::LSTM && hasInput(C, 7) &&
      int64_t(C.Inputs[7].numElements()) != D.Dirs * 3 * D.H)
    return C.badInput("P must hold 3 * hidden per direction");
  for (unsigned I : {5u, 6u})
    if ((I == 5 || S.K == Cell::LSTM) && hasInput(C, I) &&
        int64_t(C.Inputs[I].numElements()) != D.Dirs * D.B * D.H)
      return C.badInput(llvm::Twine(I == 5 ? "initial_h" : "initial_c") +
                        " must hold directions * batch * hidden values");
  std::string Dir = C.N.getString("direction", "forward");
  if ((Dir == "bidirectional") != (D.Dirs == 2) || D.Dirs > 2 ||
      (Dir != "forward" && Dir != "reverse" && Dir != "bidirectional"))
    return C.badInput("direction '" + Dir + "' disagrees with W's " +
                      llvm::Twine(D.Dirs) + " direction(s)");
  S.Reverse = Dir == "reverse";
  std::string Why = readActivations(C.N, S.K, D.Dirs, S.Acts);
  if (!Why.empty())
    return C.unsupported(Why);
  S.Clip = float(C.N.getFloat("clip", 0));
  S.LinearBeforeReset = C.N.getInt("linear_before_reset", 0) != 0;
  S.InputForget = C.N.getInt("input_forget", 0) != 0;
  return llvm::Error::success();
}

llvm::Error recurrentLengths(const KernelContext &C, const TensorRef &Lens,
                             const recurrent::Layout &L) {
  for (int64_t Bi = 0; Bi < L.B; ++Bi)
    if (intAt(Lens, uint64_t(Bi)) < 0 || intAt(Lens, uint64_t(Bi)) > L.T)
      return C.badInput("a sequence length is outside [0, seq_length]");
  return llvm::Error::success();
}

uint64_t recurrentStateBytes(const Node &N, llvm::ArrayRef<TensorRef> Inputs) {
  recurrent::Layout D;
  if (!recDims(N, Inputs, D))
    return 0;
  // Gates (B x G*H), hidden, cell and two temporaries (B x H each).
  const uint64_t G = uint64_t(recurrent::gatesOf(cellOf(N)));
  return uint64_t(D.B) * uint64_t(D.H) * (G + 4) * sizeof(float);
}

void registerRecurrentKernels(CPUKernelTable &T) {
  for (const char *Op : {"RNN", "GRU", "LSTM"})
    addKernel(T, Op,
              Kernel{&runRecurrent, &recurrentWorkspace, {ElementType::Float}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
