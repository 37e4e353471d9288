//===- ThreadMathTest.cpp - CUDA kernels' thread math on the host --------===//
//
// The per-thread index arithmetic of NonZero and of a reduction over
// scattered axes (lib/Runtime/CUDA/Kernels/ThreadMath.h), run for every
// thread of a launch one after another on the host, in the kernels' phase
// order, against references written here from the ops' definitions. Runs
// without a GPU: the part of those kernels a device would otherwise be the
// first to check.
//
//===----------------------------------------------------------------------===//
#include "../../../lib/Runtime/CUDA/Kernels/ThreadMath.h"
#include "gtest/gtest.h"
#include <random>
#include <vector>

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

} // namespace
