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
#include "../../../lib/Runtime/CUDA/Kernels/ThreadMath.h"
#include "oomplan/IR/Graph.h"
#include "oomplan/IR/OpTable.h"
#include "oomplan/Runtime/Backend.h"
#include "gtest/gtest.h"
#include <cmath>
#include <random>
#include <vector>

using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;

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

} // namespace
