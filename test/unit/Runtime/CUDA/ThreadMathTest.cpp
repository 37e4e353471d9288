//===- ThreadMathTest.cpp - CUDA kernels' thread math on the host --------===//
//
// The per-thread index arithmetic of NonZero, of a reduction over
// scattered axes, of Hardmax's lines and GlobalLpPool's window
// (lib/Runtime/CUDA/Kernels/ThreadMath.h), run for every
// thread of a launch one after another on the host, in the kernels' phase
// order, against references written here from the ops' definitions. Runs
// without a GPU: the part of those kernels a device would otherwise be the
// first to check.
//
//===----------------------------------------------------------------------===//
#include "../../../../lib/Runtime/CUDA/Kernels/ThreadMath.h"
#include "../../../../lib/Runtime/CUDA/CUDAKernels.h"
#include "NodeCall.h"
#include "oomplan/IR/Graph.h"
#include "oomplan/IR/OpTable.h"
#include "oomplan/Runtime/Backend.h"
#include "gtest/gtest.h"
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace oomplan::runtime;
using oomplan::ElementType;
using namespace oomplan::runtime::cuda;
using namespace oomplan::runtime::unit;

namespace {

// NonZero.cu's launch: 1024 threads, each counting its chunk; thread 0's
// exclusive scan; each writing its chunk's coordinates at its first column.
std::vector<int64_t> emulateNonZero(const std::vector<float> &X,
                                    const NonZeroDims &D, int64_t &Cols) {
  const int Threads = 1024;
  const int64_t N = int64_t(X.size());
  std::vector<int64_t> First(Threads);
  for (int T = 0; T < Threads; ++T) {
    thread::Chunk C = thread::chunkOf(N, Threads, T);
    for (int64_t I = C.Begin; I < C.End; ++I)
      First[size_t(T)] += X[size_t(I)] != 0;
  }
  int64_t Run = 0;
  for (int64_t &F : First) {
    int64_t C = F;
    F = Run;
    Run += C;
  }
  Cols = Run;
  std::vector<int64_t> Y(size_t(std::max(D.Rank, 1)) * size_t(N), -1);
  for (int T = 0; T < Threads; ++T) {
    thread::Chunk C = thread::chunkOf(N, Threads, T);
    int64_t K = First[size_t(T)];
    for (int64_t I = C.Begin; I < C.End; ++I)
      if (X[size_t(I)] != 0)
        thread::writeCoordinates(D, I, K++, Cols, Y.data());
  }
  Y.resize(size_t(D.Rank) * size_t(Cols));
  return Y;
}

// Every chunk is covered once, in order, for sizes around the thread
// count; every element's coordinates land in its column, in row-major
// order (ONNX NonZero), for shapes of rank 0 to 4 with 0 to all nonzero.
TEST(ThreadMath, NonZeroChunksCoverTheInputInOrder) {
  for (int64_t N : {0, 1, 7, 1023, 1024, 1025, 4096, 5000, 100003}) {
    int64_t Next = 0;
    for (int T = 0; T < 1024; ++T) {
      thread::Chunk C = thread::chunkOf(N, 1024, T);
      ASSERT_LE(C.Begin, C.End);
      if (C.Begin < C.End) {
        EXPECT_EQ(C.Begin, Next) << N << " " << T;
        Next = C.End;
      }
    }
    EXPECT_EQ(Next, N);
  }
  std::mt19937 Rng(5);
  const std::vector<std::vector<int64_t>> Shapes = {
      {}, {1}, {7}, {3, 5}, {2, 3, 4}, {4, 1, 9, 5}, {37, 41}, {2, 1500}};
  for (const auto &Shape : Shapes)
    for (double Density : {0.0, 0.1, 0.5, 1.0}) {
      NonZeroDims D;
      D.Rank = int(Shape.size());
      int64_t N = 1;
      for (int I = 0; I < D.Rank; ++I) {
        D.Dims[I] = Shape[size_t(I)];
        N *= Shape[size_t(I)];
      }
      std::vector<float> X(static_cast<size_t>(N));
      std::bernoulli_distribution Keep(Density);
      for (float &V : X)
        V = Keep(Rng) ? 1.5f : 0.0f;
      // The reference: nonzero positions in row-major order, one column
      // each, row d holding the index along dim d.
      std::vector<int64_t> Flat;
      for (int64_t I = 0; I < N; ++I)
        if (X[size_t(I)] != 0)
          Flat.push_back(I);
      const int64_t Count = int64_t(Flat.size());
      std::vector<int64_t> Want(size_t(D.Rank) * size_t(Count));
      for (int64_t K = 0; K < Count; ++K) {
        int64_t Rem = Flat[size_t(K)];
        for (int Dim = D.Rank - 1; Dim >= 0; --Dim) {
          Want[size_t(Dim * Count + K)] = Rem % Shape[size_t(Dim)];
          Rem /= Shape[size_t(Dim)];
        }
      }
      int64_t Cols = -1;
      EXPECT_EQ(emulateNonZero(X, D, Cols), Want)
          << "rank " << D.Rank << " density " << Density;
      EXPECT_EQ(Cols, Count);
    }
}

// Reduce.cu's scattered reduction: one thread per output, summing its
// reduced positions in row-major order. Against a reference that walks
// the whole input once and drops the reduced coordinates: every output
// gets exactly its elements (integer values: sums are exact).
TEST(ThreadMath, ScatteredReductionVisitsEachOutputsElements) {
  struct Case {
    std::vector<int64_t> Dims, Axes;
  };
  const std::vector<Case> Cases = {
      {{2, 3, 4}, {0, 2}},       {{2, 3, 4, 5}, {1, 3}},
      {{2, 3, 4, 5}, {0, 2, 3}}, {{3, 1, 4, 2, 5}, {0, 3}},
      {{6, 7}, {0, 1}},          {{2, 3, 4}, {1}},
      {{4, 5, 6}, {0, 2}},       {{2, 0, 3}, {0, 2}}};
  for (const Case &K : Cases) {
    const int Rank = int(K.Dims.size());
    ReduceAxes A = thread::reduceAxesOf(K.Dims.data(), Rank, K.Axes.data(),
                                        int(K.Axes.size()));
    int64_t N = 1;
    for (int64_t D : K.Dims)
      N *= D;
    std::vector<double> X(static_cast<size_t>(N));
    for (int64_t I = 0; I < N; ++I)
      X[size_t(I)] = double((I * 37) % 101);
    // Reference: output index of each input element (kept coords, row-major).
    std::vector<double> Want(size_t(A.Outputs), 0.0);
    for (int64_t I = 0; I < N; ++I) {
      int64_t Rem = I, Out = 0, Scale = 1;
      for (int D = Rank - 1; D >= 0; --D) {
        int64_t C = Rem % K.Dims[size_t(D)];
        Rem /= K.Dims[size_t(D)];
        bool Red = false;
        for (int64_t Ax : K.Axes)
          Red = Red || Ax == D;
        if (!Red) {
          Out += C * Scale;
          Scale *= K.Dims[size_t(D)];
        }
      }
      Want[size_t(Out)] += X[size_t(I)];
    }
    std::vector<double> Got(static_cast<size_t>(A.Outputs));
    for (int64_t I = 0; I < A.Outputs; ++I) {
      double Acc = 0;
      const int64_t Base = thread::keptOffset(A, I);
      for (int64_t R = 0; R < A.Reduced; ++R)
        Acc += X[size_t(Base + thread::reducedOffset(A, R))];
      Got[size_t(I)] = Acc;
    }
    EXPECT_EQ(Got, Want) << "rank " << Rank;
  }
}

// Compress.cu's launch: every block (an outer row) scans the condition
// in 256 chunks, then each thread copies its chunk's kept slices of the
// row. Against ONNX's definition written out here: per outer row, the
// slices whose condition holds, in order; positions past the condition's
// end dropped. Conditions around the chunk boundaries (255 to 1000 long),
// shorter than the axis, all or none kept.
TEST(ThreadMath, CompressCopiesTheKeptSlicesInOrder) {
  struct Case {
    int64_t Outer, XLen, Inner, Len;
  };
  const std::vector<Case> Cases = {
      {1, 7, 1, 7},      {3, 5, 2, 4}, {2, 255, 3, 255}, {2, 257, 1, 256},
      {1, 1000, 2, 999}, {4, 6, 0, 6}, {0, 4, 3, 4},     {2, 3, 5, 0}};
  const int Threads = 256;
  std::mt19937 Rng(11);
  for (const Case &K : Cases)
    for (double Density : {0.0, 0.3, 1.0}) {
      std::vector<uint8_t> Keep(size_t(K.Len));
      std::bernoulli_distribution B(Density);
      for (uint8_t &V : Keep)
        V = B(Rng) ? 1 : 0;
      std::vector<int32_t> X(size_t(K.Outer * K.XLen * K.Inner));
      for (size_t I = 0; I < X.size(); ++I)
        X[I] = int32_t(I) * 3 + 1;
      std::vector<int32_t> Want;
      int64_t Kept = 0;
      for (int64_t I = 0; I < K.Len; ++I)
        Kept += Keep[size_t(I)];
      for (int64_t O = 0; O < K.Outer; ++O)
        for (int64_t I = 0; I < K.Len; ++I)
          if (Keep[size_t(I)])
            for (int64_t J = 0; J < K.Inner; ++J)
              Want.push_back(X[size_t((O * K.XLen + I) * K.Inner + J)]);
      // The kernel's phases: counts per chunk, the exclusive scan, copies.
      std::vector<int64_t> First(Threads);
      for (int T = 0; T < Threads; ++T) {
        thread::Chunk C = thread::chunkOf(K.Len, Threads, T);
        for (int64_t I = C.Begin; I < C.End; ++I)
          First[size_t(T)] += Keep[size_t(I)];
      }
      int64_t Run = 0;
      for (int64_t &F : First) {
        const int64_t C = F;
        F = Run;
        Run += C;
      }
      ASSERT_EQ(Run, Kept);
      std::vector<int32_t> Got(Want.size(), -7);
      for (int64_t O = 0; O < K.Outer; ++O)
        for (int T = 0; T < Threads; ++T)
          thread::compressChunk(Keep.data(), thread::chunkOf(K.Len, Threads, T),
                                First[size_t(T)], O, K.XLen, Run, K.Inner,
                                X.data(), Got.data());
      EXPECT_EQ(Got, Want) << K.Outer << "x" << K.XLen << "x" << K.Inner
                           << " len " << K.Len << " density " << Density;
    }
}

// ReverseSequence.cu's threads (an output element each) against ONNX's
// definition written out: per batch, its first len rows in reverse, the
// rest as they were; time-major and batch-major, lengths 0 to T; a length
// past T raises the flag.
TEST(ThreadMath, ReverseSequenceTakesTheReversedRows) {
  const int64_t T = 4, B = 3, Inner = 2;
  const std::vector<int64_t> Len = {4, 1, 0};
  for (bool TimeMajor : {true, false}) {
    auto At = [&](int64_t Ti, int64_t Bi, int64_t J) {
      return (TimeMajor ? Ti * B + Bi : Bi * T + Ti) * Inner + J;
    };
    std::vector<int64_t> Want(size_t(T * B * Inner));
    for (int64_t Bi = 0; Bi < B; ++Bi)
      for (int64_t Ti = 0; Ti < T; ++Ti)
        for (int64_t J = 0; J < Inner; ++J)
          Want[size_t(At(Ti, Bi, J))] =
              At(Ti < Len[size_t(Bi)] ? Len[size_t(Bi)] - 1 - Ti : Ti, Bi, J);
    std::vector<int64_t> Got(Want.size());
    int Bad = 0;
    for (int64_t I = 0; I < int64_t(Got.size()); ++I)
      Got[size_t(I)] =
          thread::reversedSource(I, Len.data(), T, B, Inner, TimeMajor, &Bad);
    EXPECT_EQ(Got, Want) << "time-major " << TimeMajor;
    EXPECT_EQ(Bad, 0);
  }
  const std::vector<int64_t> TooLong = {5, 1, 0};
  int Bad = 0;
  EXPECT_EQ(thread::reversedSource(0, TooLong.data(), T, B, Inner, true, &Bad),
            0);
  EXPECT_EQ(Bad, 1);
}

// Runs the CPU kernel of Op on one float input X of Dims with the given
// int attributes into Y of OutDims.
std::vector<float> cpuRun(const char *Op, std::vector<float> X,
                          std::vector<int64_t> Dims,
                          std::vector<int64_t> OutDims,
                          std::vector<std::pair<const char *, int64_t>> Attrs,
                          int64_t Opset = 17) {
  using namespace oomplan;
  Graph G;
  G.Opsets.push_back({"", Opset});
  G.Nodes.emplace_back();
  G.Nodes[0].OpType = Op;
  for (auto &[Name, V] : Attrs) {
    Attribute A;
    A.Name = Name;
    A.Kind = AttrKind::Int;
    A.I = V;
    G.Nodes[0].Attrs.push_back(A);
  }
  int64_t N = 1;
  for (int64_t D : OutDims)
    N *= D;
  std::vector<float> Y(static_cast<size_t>(N), -7);
  std::vector<TensorRef> In(1), Out(1);
  In[0].Type = Out[0].Type = ElementType::Float;
  In[0].Dims.assign(Dims.begin(), Dims.end());
  In[0].Data = X.data();
  Out[0].Dims.assign(OutDims.begin(), OutDims.end());
  Out[0].Data = Y.data();
  ThreadPool Pool(1);
  KernelContext C{G, G.Nodes[0], In, Out, nullptr, 0, Pool};
  auto CPU = backendKernels("cpu");
  EXPECT_TRUE(bool(CPU));
  llvm::Error E = (*CPU)->get(ops::opCode(*ops::lookupOp(Op)))->Run(C);
  EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
  return Y;
}

// Hardmax's lines ([Outer, Axis, Inner], every line a thread) give the CPU
// kernel's values, ties and NaN included, along a middle and the last axis.
TEST(ThreadMath, HardmaxLinesAreTheCPUs) {
  std::vector<float> X(2 * 5 * 3);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = float(int(I * 7 % 5)); // ties within lines
  X[4] = std::nanf("");
  for (int64_t Axis : {1, 2}) {
    const int64_t Outer = Axis == 1 ? 2 : 10, Len = Axis == 1 ? 5 : 3,
                  Inner = Axis == 1 ? 3 : 1;
    std::vector<float> Got(X.size(), -7);
    for (int64_t I = 0; I < Outer * Inner; ++I)
      thread::hardmaxLine(X.data(), Got.data(), Len, Inner, I);
    EXPECT_EQ(Got, cpuRun("Hardmax", X, {2, 5, 3}, {2, 5, 3}, {{"axis", Axis}}))
        << "axis " << Axis;
  }
}

// GlobalLpPool's one window per plane (pool::at, Lp) gives the CPU global
// pool's values, p 1, 2 and 3, over 1 to 3 spatial dims.
TEST(ThreadMath, GlobalLpWindowIsTheCPUs) {
  const std::vector<std::vector<int64_t>> Shapes = {
      {2, 3, 7}, {1, 2, 4, 5}, {2, 2, 3, 2, 4}};
  for (const auto &Dims : Shapes)
    for (int64_t P : {1, 2, 3}) {
      int64_t N = 1, Planes = Dims[0] * Dims[1];
      for (int64_t D : Dims)
        N *= D;
      std::vector<float> X(static_cast<size_t>(N));
      for (int64_t I = 0; I < N; ++I)
        X[size_t(I)] = float(int(I * 13 % 11) - 5) / 4;
      const int Rank = int(Dims.size()) - 2;
      pool::Window W = thread::globalWindow(Dims.data() + 2, Rank, double(P));
      std::vector<float> Got(static_cast<size_t>(Planes));
      const int64_t Plane = N / Planes;
      for (int64_t Pl = 0; Pl < Planes; ++Pl)
        Got[size_t(Pl)] = pool::at<float>(W, pool::Kind::Lp,
                                          X.data() + Pl * Plane, 0, 0, nullptr);
      std::vector<int64_t> OutDims(Dims.size(), 1);
      OutDims[0] = Dims[0];
      OutDims[1] = Dims[1];
      EXPECT_EQ(Got, cpuRun("GlobalLpPool", X, Dims, OutDims, {{"p", P}}))
          << "rank " << Rank << " p " << P;
    }
}

// LpNormalization's lines (Normalize.cu: [Outer, D, Inner], a thread a
// line) give the CPU kernel's values, p 1 and 2, along the first, a middle
// and the last axis, a zero line included (0 / 0: NaN on both).
TEST(ThreadMath, LpNormLinesAreTheCPUs) {
  const std::vector<int64_t> Dims = {3, 4, 5};
  std::vector<float> X(3 * 4 * 5);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = float(int(I * 7 % 9) - 4) / 3;
  for (int64_t J = 0; J < 5; ++J)
    X[size_t(J)] = 0; // the first row along the last axis
  for (int64_t Axis : {0, 1, 2})
    for (int64_t P : {1, 2}) {
      const int64_t D = Dims[size_t(Axis)];
      int64_t Outer = 1, Inner = 1;
      for (int64_t K = 0; K < 3; ++K)
        (K < Axis ? Outer : Inner) *= K == Axis ? 1 : Dims[size_t(K)];
      std::vector<float> Got(X.size(), -7);
      for (int64_t I = 0; I < Outer * Inner; ++I)
        thread::lpNormLine(X.data(), Got.data(), D, Inner, int(P), I);
      std::vector<float> Want =
          cpuRun("LpNormalization", X, Dims, Dims, {{"axis", Axis}, {"p", P}});
      ASSERT_EQ(Got.size(), Want.size());
      for (size_t I = 0; I < Got.size(); ++I)
        EXPECT_TRUE(Got[I] == Want[I] ||
                    (std::isnan(Got[I]) && std::isnan(Want[I])))
            << "axis " << Axis << " p " << P << " [" << I << "]: " << Got[I]
            << " vs " << Want[I];
    }
}

// QuantizedMatMul.cu's launch on the host: per batch, row tile and column
// tile, the 16 x 16 threads load their operands' tile (phase one), then
// each adds its 16 products (phase two), K tile after K tile; then each
// stores its output. The arguments are the CUDA kernel's own
// (cuda::qMatMulArgs, given host pointers).
std::vector<char> emulateQMatMul(QMatMulArgs P, size_t YBytes) {
  std::vector<char> Y(YBytes, char(0x5a));
  P.Y = Y.data();
  const int T = 16;
  int32_t As[16][16], Bs[16][16];
  for (int64_t Bt = 0; Bt < P.Batches; ++Bt) {
    int64_t AOff, BOff;
    thread::qBatchOffsets(P, Bt, AOff, BOff);
    for (int64_t RT = 0; RT * T < P.M; ++RT)
      for (int64_t CT = 0; CT * T < P.N; ++CT) {
        int64_t Acc[16][16] = {};
        for (int64_t K0 = 0; K0 < P.K; K0 += T) {
          for (int Ty = 0; Ty < T; ++Ty)
            for (int Tx = 0; Tx < T; ++Tx) {
              thread::qTileLoad(P, AOff, BOff, RT * T + Ty, CT * T + Tx, K0, Tx,
                                Ty, As[Ty][Tx], Bs[Ty][Tx]);
            }
          for (int Ty = 0; Ty < T; ++Ty)
            for (int Tx = 0; Tx < T; ++Tx) {
              int32_t Part = 0;
              for (int KK = 0; KK < T; ++KK)
                Part += As[Ty][KK] * Bs[KK][Tx];
              Acc[Ty][Tx] += Part;
            }
        }
        for (int Ty = 0; Ty < T; ++Ty)
          for (int Tx = 0; Tx < T; ++Tx) {
            const int64_t Row = RT * T + Ty, Col = CT * T + Tx;
            if (Row < P.M && Col < P.N)
              thread::qStore(P, (Bt * P.M + Row) * P.N + Col, Acc[Ty][Tx]);
          }
      }
  }
  return Y;
}

// MatMulInteger and QLinearMatMul: the CUDA kernel's arguments and
// threads, on the host, give the CPU kernel's bytes: zero points per row
// (A) and per column (B), K and N past one tile, batches broadcast on both
// sides, per-row and per-column scales with saturation, a 1-D B.
TEST(ThreadMath, QuantizedMatMulIsTheCPUs) {
  using oomplan::Graph;
  const ElementType U8 = ElementType::UInt8, I8 = ElementType::Int8,
                    F32 = ElementType::Float;
  std::mt19937 Rng(3);
  struct Case {
    const char *Op;
    std::vector<Operand> In;
    ElementType YType;
    std::vector<int64_t> YDims;
  };
  std::vector<Case> Cases;
  std::vector<float> RowScales(18);
  for (size_t I = 0; I < RowScales.size(); ++I)
    RowScales[I] = 0.005f * float(I + 1);
  Cases.push_back(
      {"MatMulInteger",
       {operandOf(U8, {2, 3, 20}, randomOf<uint8_t>(Rng, 120, 0, 255)),
        operandOf(I8, {20, 17}, randomOf<int8_t>(Rng, 340, -128, 127)),
        operandOf(U8, {3}, std::vector<uint8_t>{0, 128, 255}),
        operandOf(I8, {17}, randomOf<int8_t>(Rng, 17, -128, 127))},
       ElementType::Int32,
       {2, 3, 17}});
  Cases.push_back(
      {"MatMulInteger",
       {operandOf(I8, {4, 1, 3, 8}, randomOf<int8_t>(Rng, 96, -128, 127)),
        operandOf(U8, {2, 8, 5}, randomOf<uint8_t>(Rng, 80, 0, 255)), Operand(),
        operandOf(U8, {}, std::vector<uint8_t>{131})},
       ElementType::Int32,
       {4, 2, 3, 5}});
  Cases.push_back(
      {"QLinearMatMul",
       {operandOf(U8, {2, 18, 9}, randomOf<uint8_t>(Rng, 324, 0, 255)),
        operandOf(F32, {18}, RowScales),
        operandOf(U8, {18}, randomOf<uint8_t>(Rng, 18, 100, 150)),
        operandOf(I8, {9, 6}, randomOf<int8_t>(Rng, 54, -128, 127)),
        operandOf(F32, {6},
                  std::vector<float>{0.01f, 0.02f, 0.03f, 0.05f, 0.1f, 0.2f}),
        operandOf(I8, {6}, std::vector<int8_t>{0, 1, -1, 5, -7, 2}),
        operandOf(F32, {}, std::vector<float>{0.25f}),
        operandOf(I8, {}, std::vector<int8_t>{-3})},
       I8,
       {2, 18, 6}});
  Cases.push_back({"QLinearMatMul",
                   {operandOf(U8, {3, 9}, randomOf<uint8_t>(Rng, 27, 0, 255)),
                    operandOf(F32, {}, std::vector<float>{0.05f}),
                    operandOf(U8, {}, std::vector<uint8_t>{128}),
                    operandOf(I8, {9}, randomOf<int8_t>(Rng, 9, -128, 127)),
                    operandOf(F32, {}, std::vector<float>{0.03f}), Operand(),
                    operandOf(F32, {}, std::vector<float>{0.1f}),
                    operandOf(U8, {}, std::vector<uint8_t>{100})},
                   U8,
                   {3}});
  for (Case &K : Cases) {
    NodeCall Q(K.Op, K.In, K.YType, K.YDims, {});
    ASSERT_TRUE(Q.runCPU()) << K.Op;
    QMatMulArgs P;
    llvm::Error EA = cuda::qMatMulArgs(*Q.C, P);
    ASSERT_FALSE(bool(EA)) << llvm::toString(std::move(EA));
    EXPECT_EQ(emulateQMatMul(P, Q.Want.size()), Q.Want) << K.Op;
  }
}

// A quantized convolution's kernel on the host: qConvArgs, then every
// thread's qConvSum and qConvStore, against the CPU kernel's bytes: two
// groups with per-channel w zero points, asymmetric pads, stride and
// dilation; int8 X with uint8 W, per-channel w_scale and a bias,
// SAME_UPPER padding; a 1-D depthwise QLinearConv into uint8.
TEST(ThreadMath, QuantizedConvIsTheCPUs) {
  const ElementType U8 = ElementType::UInt8, I8 = ElementType::Int8,
                    F32 = ElementType::Float;
  std::mt19937 Rng(9);
  auto Int = [](const char *Name, int64_t V) {
    oomplan::Attribute A;
    A.Name = Name;
    A.Kind = oomplan::AttrKind::Int;
    A.I = V;
    return A;
  };
  oomplan::Attribute Same;
  Same.Name = "auto_pad";
  Same.Kind = oomplan::AttrKind::String;
  Same.S = "SAME_UPPER";
  struct Case {
    const char *Op;
    std::vector<Operand> In;
    ElementType YType;
    std::vector<int64_t> YDims;
    std::vector<oomplan::Attribute> Attrs;
  };
  std::vector<Case> Cases;
  Cases.push_back(
      {"ConvInteger",
       {operandOf(U8, {2, 4, 5, 6}, randomOf<uint8_t>(Rng, 240, 0, 255)),
        operandOf(I8, {6, 2, 3, 3}, randomOf<int8_t>(Rng, 108, -128, 127)),
        operandOf(U8, {}, std::vector<uint8_t>{121}),
        operandOf(I8, {6}, randomOf<int8_t>(Rng, 6, -20, 20))},
       ElementType::Int32,
       // H: (5 + 1 + 1 - 3) / 2 + 1 = 3; W: (6 + 0 + 2 - 5) / 1 + 1 = 4.
       {2, 6, 3, 4},
       {Int("group", 2), intsAttr("pads", {1, 0, 1, 2}),
        intsAttr("strides", {2, 1}), intsAttr("dilations", {1, 2})}});
  Cases.push_back(
      {"QLinearConv",
       {operandOf(I8, {1, 3, 4, 4}, randomOf<int8_t>(Rng, 48, -128, 127)),
        operandOf(F32, {}, std::vector<float>{0.04f}),
        operandOf(I8, {}, std::vector<int8_t>{-2}),
        operandOf(U8, {4, 3, 2, 2}, randomOf<uint8_t>(Rng, 48, 0, 255)),
        operandOf(F32, {4}, std::vector<float>{0.01f, 0.002f, 0.03f, 0.005f}),
        operandOf(U8, {4}, std::vector<uint8_t>{128, 120, 135, 128}),
        operandOf(F32, {}, std::vector<float>{0.5f}),
        operandOf(I8, {}, std::vector<int8_t>{7}),
        operandOf(ElementType::Int32, {4},
                  std::vector<int32_t>{100, -2000, 0, 35000})},
       I8,
       {1, 4, 4, 4},
       {Same}});
  Cases.push_back(
      {"QLinearConv",
       {operandOf(U8, {2, 3, 7}, randomOf<uint8_t>(Rng, 42, 0, 255)),
        operandOf(F32, {}, std::vector<float>{0.1f}),
        operandOf(U8, {}, std::vector<uint8_t>{128}),
        operandOf(I8, {3, 1, 3}, randomOf<int8_t>(Rng, 9, -128, 127)),
        operandOf(F32, {}, std::vector<float>{0.02f}), Operand(),
        operandOf(F32, {}, std::vector<float>{0.3f}), Operand()},
       U8,
       {2, 3, 7},
       {Int("group", 3), intsAttr("pads", {1, 1})}});
  for (Case &K : Cases) {
    NodeCall Q(K.Op, K.In, K.YType, K.YDims, K.Attrs);
    ASSERT_TRUE(Q.runCPU()) << K.Op;
    QConvArgs P;
    llvm::Error EA = cuda::qConvArgs(*Q.C, P);
    ASSERT_FALSE(bool(EA)) << llvm::toString(std::move(EA));
    std::vector<char> Got(Q.Want.size(), char(0x5a));
    P.Y = Got.data();
    for (int64_t I = 0; I < P.N * P.M * P.OutSize; ++I)
      thread::qConvStore(P, I, thread::qConvSum(P, I));
    EXPECT_EQ(Got, Q.Want) << K.Op;
  }
}

// MaxUnpool (Pool.cu: a thread per input element writes it at its index)
// on the host, from the kernel's offsets, against the CPU kernel's bytes:
// MaxPool-like indices into the default dims (stride 2, kernel 2, pads 1
// and 0), and an output_shape larger than the default, where a value keeps
// its coordinates; an index past the output raises the flag.
TEST(ThreadMath, MaxUnpoolIsTheCPUs) {
  const std::vector<float> X = {1, 2, 3, 4, 5, 6, 7, 8};
  // Default dims [1, 2, 3, 4]: (2 - 1) * 2 + 2 - 1 - 0 = 3 rows, (2 - 1) * 2
  // + 2 = 4 columns; one index per input, each into its channel's plane.
  const std::vector<int64_t> Idx = {0, 3, 9, 6, 12, 14, 17, 23};
  for (std::vector<int64_t> YDims :
       {std::vector<int64_t>{1, 2, 3, 4}, std::vector<int64_t>{1, 2, 4, 5}}) {
    std::vector<Operand> Ins = {
        operandOf(ElementType::Float, {1, 2, 2, 2}, X),
        operandOf(ElementType::Int64, {1, 2, 2, 2}, Idx)};
    NodeCall Q("MaxUnpool", Ins, ElementType::Float, YDims,
               {intsAttr("kernel_shape", {2, 2}), intsAttr("strides", {2, 2}),
                intsAttr("pads", {1, 0, 0, 0})});
    ASSERT_TRUE(Q.runCPU());
    UnpoolArgs A;
    A.Rank = 4;
    const std::vector<int64_t> Def = {1, 2, 3, 4};
    A.DefCount = 24;
    int64_t Stride = 1;
    for (int D = 3; D >= 0; --D) {
      A.Def[D] = Def[size_t(D)];
      A.YDims[D] = YDims[size_t(D)];
      A.YStride[D] = Stride;
      Stride *= YDims[size_t(D)];
    }
    std::vector<float> Got(size_t(Stride), 0.0f);
    for (size_t I = 0; I < X.size(); ++I) {
      const int64_t Off = thread::unpoolOffset(A, Idx[I]);
      ASSERT_GE(Off, 0);
      Got[size_t(Off)] = X[I];
    }
    std::vector<float> Want(Got.size());
    std::memcpy(Want.data(), Q.Want.data(), Q.Want.size());
    EXPECT_EQ(Got, Want) << "output " << YDims[2] << "x" << YDims[3];
    EXPECT_EQ(thread::unpoolOffset(A, 24), -1);
    EXPECT_EQ(thread::unpoolOffset(A, -1), -1);
  }
}

} // namespace
