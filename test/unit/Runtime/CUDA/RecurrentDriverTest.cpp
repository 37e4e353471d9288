//===- RecurrentDriverTest.cpp - the CUDA recurrent kernel on the host ----===//
//
// The CUDA RNN/GRU/LSTM kernel's host side (queueRecurrent: offsets,
// leading dimensions, the order of products and cell updates) run with a
// queue that executes each call on the host: the products as a column-major
// SGEMM that reads its arguments the way cuBLAS documents them, the
// elementwise kernels as their per-element bodies (Kernels/ThreadMath.h),
// one element after another. Its outputs must match the CPU kernel's
// (products summed in another order: within 1e-5). Runs without a GPU; a
// GPU run compares the real kernel (CUDAKernels.Recurrent).
//
//===----------------------------------------------------------------------===//
#include "../../../../lib/Runtime/CUDA/RecurrentDriver.h"
#include "../../../../lib/Runtime/CUDA/Kernels/ThreadMath.h"
#include "oomplan/Runtime/Backend.h"
#include "gtest/gtest.h"
#include <random>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

namespace {

class HostQueue final : public RecurrentQueue {
public:
  int Bad = 0;
  unsigned Products = 0, Steps = 0;

  llvm::Error sgemm(const SgemmArgs &G) override {
    ++Products;
    // cuBLAS: C (M x N, column-major, ldc) = op(A) op(B) + beta C; op(A)
    // is A (M x K, lda) or, transposed, A stored as K x M.
    for (int64_t J = 0; J < G.N; ++J)
      for (int64_t I = 0; I < G.M; ++I) {
        double Acc = 0;
        for (int64_t K = 0; K < G.K; ++K) {
          float OA = G.TransA ? G.A[K + I * G.LdA] : G.A[I + K * G.LdA];
          float OB = G.TransB ? G.B[J + K * G.LdB] : G.B[K + J * G.LdB];
          Acc += double(OA) * double(OB);
        }
        float &Cv = G.C[I + J * G.LdC];
        Cv = float(Acc) + (G.Beta != 0 ? G.Beta * Cv : 0.0f);
      }
    return llvm::Error::success();
  }
  llvm::Error zero(float *Y, int64_t Rows, int64_t Cols, int64_t Ld) override {
    for (int64_t R = 0; R < Rows; ++R)
      for (int64_t C = 0; C < Cols; ++C)
        Y[R * Ld + C] = 0;
    return llvm::Error::success();
  }
  llvm::Error start(const RecurrentArgs &A, const float *H0,
                    const float *C0) override {
    for (int64_t I = 0; I < A.L.B * A.L.H; ++I)
      thread::recurrentStartAt(A, H0, C0, I);
    return llvm::Error::success();
  }
  llvm::Error reset(const RecurrentArgs &A) override {
    for (int64_t I = 0; I < A.L.B * A.L.H; ++I)
      thread::recurrentResetAt(A, I);
    return llvm::Error::success();
  }
  llvm::Error step(const RecurrentArgs &A, int64_t Ti, float *Y) override {
    ++Steps;
    for (int64_t I = 0; I < A.L.B * A.L.H; ++I)
      thread::recurrentStepAt(A, Ti, Y, &Bad, I);
    return llvm::Error::success();
  }
  llvm::Error finish(const RecurrentArgs &A, float *Yh, float *Yc) override {
    for (int64_t I = 0; I < A.L.B * A.L.H; ++I)
      thread::recurrentFinishAt(A, Yh, Yc, I);
    return llvm::Error::success();
  }
};

struct Operand {
  std::vector<float> F;
  std::vector<int32_t> I;
  std::vector<int64_t> Dims;
  bool Present = true;
};

// One case: the op, its attributes, and its operand and output dims.
struct Case {
  const char *Op;
  int64_t T, B, I, H, Dirs;
  bool BatchMajor;
  std::vector<std::pair<const char *, int64_t>> Ints;
  std::vector<std::pair<const char *, std::string>> Strings;
  std::vector<std::string> Activations;
  float Clip;
  bool Bias, Lengths, Initial, Peepholes;
};

void runCase(const Case &K) {
  SCOPED_TRACE(std::string(K.Op) + (K.BatchMajor ? " batch-major" : ""));
  Graph G;
  G.Opsets.push_back({"", 17});
  G.Nodes.emplace_back();
  Node &N = G.Nodes[0];
  N.OpType = K.Op;
  N.Name = "rec";
  auto AddInt = [&](const char *Name, int64_t V) {
    Attribute A;
    A.Name = Name;
    A.Kind = AttrKind::Int;
    A.I = V;
    N.Attrs.push_back(A);
  };
  AddInt("hidden_size", K.H);
  if (K.BatchMajor)
    AddInt("layout", 1);
  for (auto &[Name, V] : K.Ints)
    AddInt(Name, V);
  for (auto &[Name, V] : K.Strings) {
    Attribute A;
    A.Name = Name;
    A.Kind = AttrKind::String;
    A.S = V;
    N.Attrs.push_back(A);
  }
  if (!K.Activations.empty()) {
    Attribute A;
    A.Name = "activations";
    A.Kind = AttrKind::Strings;
    A.Strings = K.Activations;
    N.Attrs.push_back(A);
  }
  if (K.Clip > 0) {
    Attribute A;
    A.Name = "clip";
    A.Kind = AttrKind::Float;
    A.F = K.Clip;
    N.Attrs.push_back(A);
  }
  const int64_t Gates = std::string(K.Op) == "LSTM"  ? 4
                        : std::string(K.Op) == "GRU" ? 3
                                                     : 1;
  std::mt19937 Rng(11);
  std::uniform_real_distribution<float> U(-0.5f, 0.5f);
  auto Fill = [&](std::vector<int64_t> Dims, bool Present = true) {
    Operand O;
    O.Dims = Dims;
    O.Present = Present;
    int64_t Count = 1;
    for (int64_t D : Dims)
      Count *= D;
    if (Present)
      for (int64_t E = 0; E < Count; ++E)
        O.F.push_back(U(Rng));
    return O;
  };
  std::vector<Operand> In;
  In.push_back(Fill(K.BatchMajor ? std::vector<int64_t>{K.B, K.T, K.I}
                                 : std::vector<int64_t>{K.T, K.B, K.I}));
  In.push_back(Fill({K.Dirs, Gates * K.H, K.I}));
  In.push_back(Fill({K.Dirs, Gates * K.H, K.H}));
  In.push_back(Fill({K.Dirs, 2 * Gates * K.H}, K.Bias));
  Operand Len;
  Len.Dims = {K.B};
  Len.Present = K.Lengths;
  for (int64_t Bi = 0; Bi < K.B && K.Lengths; ++Bi)
    Len.I.push_back(int32_t((K.T - Bi * 2) > 0 ? K.T - Bi * 2 : 0));
  In.push_back(Len);
  std::vector<int64_t> StateDims = K.BatchMajor
                                       ? std::vector<int64_t>{K.B, K.Dirs, K.H}
                                       : std::vector<int64_t>{K.Dirs, K.B, K.H};
  In.push_back(Fill(StateDims, K.Initial));
  In.push_back(Fill(StateDims, K.Initial && Gates == 4));
  In.push_back(Fill({K.Dirs, 3 * K.H}, K.Peepholes));
  std::vector<TensorRef> Ins;
  for (Operand &O : In) {
    TensorRef R; // sequence_lens (input 4) is int32, the rest float
    R.Type = &O == &In[4] ? ElementType::Int32 : ElementType::Float;
    R.Dims.assign(O.Dims.begin(), O.Dims.end());
    if (O.Present)
      R.Data = &O == &In[4] ? static_cast<void *>(O.I.data())
                            : static_cast<void *>(O.F.data());
    Ins.push_back(R);
  }
  // Outputs: Y, Y_h (and Y_c), for both runs.
  std::vector<int64_t> YDims =
      K.BatchMajor ? std::vector<int64_t>{K.B, K.T, K.Dirs, K.H}
                   : std::vector<int64_t>{K.T, K.Dirs, K.B, K.H};
  const size_t YN = size_t(K.T * K.Dirs * K.B * K.H),
               SN = size_t(K.Dirs * K.B * K.H);
  std::vector<float> Out[2][3];
  for (auto &O : Out) {
    O[0].assign(YN, -7);
    O[1].assign(SN, -7);
    O[2].assign(SN, -7);
  }
  ThreadPool Pool(1);
  for (int Run = 0; Run < 2; ++Run) {
    std::vector<TensorRef> Outs(Gates == 4 ? 3 : 2);
    for (size_t O = 0; O < Outs.size(); ++O) {
      Outs[O].Type = ElementType::Float;
      if (O == 0)
        Outs[O].Dims.assign(YDims.begin(), YDims.end());
      else
        Outs[O].Dims.assign(StateDims.begin(), StateDims.end());
      Outs[O].Data = Out[Run][O].data();
    }
    const uint64_t Bytes = cpu::recurrentStateBytes(N, Ins);
    std::vector<float> Ws(Bytes / 4 + 1);
    KernelContext C{G, N, Ins, Outs, Ws.data(), Bytes, Pool};
    if (Run == 0) {
      auto CPU = backendKernels("cpu");
      ASSERT_TRUE(bool(CPU));
      const auto &Kern = (*CPU)->get(ops::opCode(*ops::lookupOp(K.Op)));
      ASSERT_TRUE(Kern.has_value());
      llvm::Error E = Kern->Run(C);
      ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
      continue;
    }
    cpu::RecurrentSetup S;
    llvm::Error E = cpu::recurrentSetup(C, S);
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    HostQueue Q;
    E = queueRecurrent(C, S, Ws.data(), Q);
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    EXPECT_EQ(Q.Bad, 0);
    EXPECT_EQ(Q.Steps, unsigned(K.T * K.Dirs));
    EXPECT_EQ(Q.Products, unsigned(K.T * K.Dirs * (Gates == 3 ? 3 : 2)));
  }
  for (size_t O = 0; O < (Gates == 4 ? 3u : 2u); ++O)
    for (size_t E = 0; E < Out[0][O].size(); ++E)
      ASSERT_NEAR(Out[1][O][E], Out[0][O][E], 1e-5)
          << "output " << O << " element " << E;
}

TEST(RecurrentDriver, MatchesTheCPUKernel) {
  // Lengths are T, T - 2, T - 4... (at least 0), one per batch row.
  // LSTM: bidirectional, biases, lengths 5, 3, 1, initial states, peepholes.
  runCase({"LSTM",
           5,
           3,
           4,
           6,
           2,
           false,
           {},
           {{"direction", "bidirectional"}},
           {},
           0,
           true,
           true,
           true,
           true});
  // LSTM batch-major with input_forget and clip, lengths, no bias.
  runCase({"LSTM",
           4,
           2,
           3,
           5,
           1,
           true,
           {{"input_forget", 1}},
           {},
           {},
           0.8f,
           false,
           true,
           true,
           false});
  // GRU: linear_before_reset, biases, initial state.
  runCase({"GRU",
           5,
           3,
           4,
           6,
           1,
           false,
           {{"linear_before_reset", 1}},
           {},
           {},
           0,
           true,
           false,
           true,
           false});
  // GRU reverse, batch-major, lengths.
  runCase({"GRU",
           6,
           4,
           2,
           3,
           1,
           true,
           {},
           {{"direction", "reverse"}},
           {},
           0,
           true,
           true,
           false,
           false});
  // RNN bidirectional with Relu one way and Tanh the other.
  runCase({"RNN",
           4,
           2,
           3,
           5,
           2,
           false,
           {},
           {{"direction", "bidirectional"}},
           {"Relu", "Tanh"},
           0,
           true,
           true,
           true,
           false});
}

} // namespace
