//===- CPUKernelsReduceTest.cpp - reductions and axis kernels -------------===//
//
// Reductions over hand-checked small tensors (including opset rules: axes as
// an input, noop_with_empty_axes, Softmax's 2-D coercion before opset 13),
// and ReduceSum over every axis subset of a 4-D tensor against a naive loop.
//
//===----------------------------------------------------------------------===//
#include "KernelHarness.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::test;
using namespace oomplan::runtime;
using ET = ElementType;

namespace {

#define ASSERT_OK(E)                                                           \
  do {                                                                         \
    llvm::Error Err = (E);                                                     \
    ASSERT_FALSE(bool(Err)) << llvm::toString(std::move(Err));                 \
  } while (0)

TEST(CPUKernelsReduce, SumOverRowsAndColumns) {
  std::vector<float> X = {1, 2, 3, 4, 5, 6}, Y(2), Z(3);
  KernelHarness H("ReduceSum", 11);
  H.setInts("axes", {1});
  ASSERT_OK(H.run({ref(X, ET::Float, {2, 3})}, {ref(Y, ET::Float, {2, 1})}));
  EXPECT_EQ(Y, (std::vector<float>{6, 15}));
  // Opset 13: axes as input 1, negative.
  std::vector<int64_t> Axes = {-2};
  KernelHarness H13("ReduceSum", 13);
  H13.setInt("keepdims", 0);
  ASSERT_OK(H13.run({ref(X, ET::Float, {2, 3}), ref(Axes, ET::Int64, {1})},
                    {ref(Z, ET::Float, {3})}));
  EXPECT_EQ(Z, (std::vector<float>{5, 7, 9}));
}

TEST(CPUKernelsReduce, EmptyAxesReduceAllOrNothing) {
  std::vector<float> X = {1, -2, 3, 4}, One(1), Same(4);
  std::vector<int64_t> NoAxes;
  KernelHarness H("ReduceSum", 13);
  ASSERT_OK(H.run({ref(X, ET::Float, {2, 2}), ref(NoAxes, ET::Int64, {0})},
                  {ref(One, ET::Float, {1, 1})}));
  EXPECT_EQ(One[0], 6);
  KernelHarness N("ReduceSum", 13);
  N.setInt("noop_with_empty_axes", 1);
  ASSERT_OK(N.run({ref(X, ET::Float, {2, 2}), ref(NoAxes, ET::Int64, {0})},
                  {ref(Same, ET::Float, {2, 2})}));
  EXPECT_EQ(Same, X);
}

TEST(CPUKernelsReduce, MiddleAxisAndOtherReducers) {
  // X[i][j][k] = 100 i + 10 j + k, dims [2, 3, 2]; reduce axis 1.
  std::vector<int32_t> X;
  for (int I = 0; I < 2; ++I)
    for (int J = 0; J < 3; ++J)
      for (int K = 0; K < 2; ++K)
        X.push_back(100 * I + 10 * J + K);
  std::vector<int32_t> Y(4);
  KernelHarness Max("ReduceMax", 13);
  Max.setInts("axes", {1});
  ASSERT_OK(
      Max.run({ref(X, ET::Int32, {2, 3, 2})}, {ref(Y, ET::Int32, {2, 1, 2})}));
  EXPECT_EQ(Y, (std::vector<int32_t>{20, 21, 120, 121}));
  KernelHarness Mean("ReduceMean", 13);
  Mean.setInts("axes", {1});
  ASSERT_OK(
      Mean.run({ref(X, ET::Int32, {2, 3, 2})}, {ref(Y, ET::Int32, {2, 1, 2})}));
  EXPECT_EQ(Y, (std::vector<int32_t>{10, 11, 110, 111}));
  std::vector<float> F = {3, -4}, L(1);
  KernelHarness L2("ReduceL2", 13);
  ASSERT_OK(L2.run({ref(F, ET::Float, {2})}, {ref(L, ET::Float, {1})}));
  EXPECT_EQ(L[0], 5);
  KernelHarness L1("ReduceL1", 13);
  ASSERT_OK(L1.run({ref(F, ET::Float, {2})}, {ref(L, ET::Float, {1})}));
  EXPECT_EQ(L[0], 7);
  KernelHarness Lse("ReduceLogSumExp", 13);
  ASSERT_OK(Lse.run({ref(F, ET::Float, {2})}, {ref(L, ET::Float, {1})}));
  EXPECT_FLOAT_EQ(L[0], std::log(std::exp(3.0f) + std::exp(-4.0f)));
}

TEST(CPUKernelsReduce, SumMatchesNaiveOverEveryAxisSubset) {
  const std::vector<int64_t> Dims = {3, 4, 5, 6};
  std::vector<double> X(360);
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = double((I * 37) % 101) - 50;
  for (unsigned Mask = 1; Mask < 16; ++Mask) {
    std::vector<int64_t> Axes, OutDims;
    for (int D = 0; D < 4; ++D) {
      if (Mask & (1u << D))
        Axes.push_back(D);
      OutDims.push_back((Mask & (1u << D)) ? 1 : Dims[D]);
    }
    size_t OutN = 1;
    for (int64_t D : OutDims)
      OutN *= size_t(D);
    std::vector<double> Y(OutN), Want(OutN, 0);
    for (int64_t A = 0; A < 3; ++A)
      for (int64_t B = 0; B < 4; ++B)
        for (int64_t C = 0; C < 5; ++C)
          for (int64_t D = 0; D < 6; ++D) {
            int64_t Idx[] = {A, B, C, D};
            size_t O = 0;
            for (int K = 0; K < 4; ++K)
              O = O * size_t(OutDims[K]) +
                  size_t((Mask & (1u << K)) ? 0 : Idx[K]);
            Want[O] += X[size_t(((A * 4 + B) * 5 + C) * 6 + D)];
          }
    KernelHarness H("ReduceSum", 11, 3);
    H.setInts("axes", Axes);
    ASSERT_OK(H.run({ref(X, ET::Double, Dims)}, {ref(Y, ET::Double, OutDims)}));
    EXPECT_EQ(Y, Want) << "mask " << Mask;
  }
}

TEST(CPUKernelsReduce, ArgMaxSelectsFirstOrLastTie) {
  std::vector<float> X = {1, 3, 3, 2, 0, 0};
  std::vector<int64_t> Y(2);
  KernelHarness H("ArgMax", 13);
  H.setInt("axis", 1);
  ASSERT_OK(H.run({ref(X, ET::Float, {2, 3})}, {ref(Y, ET::Int64, {2, 1})}));
  EXPECT_EQ(Y, (std::vector<int64_t>{1, 0}));
  KernelHarness L("ArgMax", 13);
  L.setInt("axis", 1).setInt("select_last_index", 1);
  ASSERT_OK(L.run({ref(X, ET::Float, {2, 3})}, {ref(Y, ET::Int64, {2, 1})}));
  EXPECT_EQ(Y, (std::vector<int64_t>{2, 0}));
  std::vector<int64_t> Z(3);
  KernelHarness M("ArgMin", 13); // axis 0: columns (1,2), (3,0), (3,0)
  ASSERT_OK(M.run({ref(X, ET::Float, {2, 3})}, {ref(Z, ET::Int64, {1, 3})}));
  EXPECT_EQ(Z, (std::vector<int64_t>{0, 1, 1}));
}

TEST(CPUKernelsReduce, SoftmaxAxisVersusCoercedTo2D) {
  std::vector<float> X = {1, 2, 3, 1}, Y(4);
  KernelHarness H("Softmax", 13); // along the last axis: rows (1,2), (3,1)
  ASSERT_OK(
      H.run({ref(X, ET::Float, {1, 2, 2})}, {ref(Y, ET::Float, {1, 2, 2})}));
  float S = 1 / (1 + std::exp(1.0f)); // softmax(1, 2)[0]
  EXPECT_FLOAT_EQ(Y[0], S);
  EXPECT_FLOAT_EQ(Y[1], 1 - S);
  EXPECT_FLOAT_EQ(Y[2], 1 / (1 + std::exp(-2.0f))); // softmax(3, 1)[0]
  KernelHarness Old("Softmax", 11);                 // axis 1 coerces to [1, 4]
  ASSERT_OK(
      Old.run({ref(X, ET::Float, {1, 2, 2})}, {ref(Y, ET::Float, {1, 2, 2})}));
  double Sum = 2 * std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_FLOAT_EQ(Y[2], float(std::exp(3.0) / Sum));
  EXPECT_FLOAT_EQ(Y[0], float(std::exp(1.0) / Sum));
  KernelHarness Log("LogSoftmax", 13);
  ASSERT_OK(
      Log.run({ref(X, ET::Float, {1, 2, 2})}, {ref(Y, ET::Float, {1, 2, 2})}));
  EXPECT_FLOAT_EQ(Y[0], std::log(S));
  KernelHarness Hard("Hardmax", 13);
  Hard.setInt("axis", 1); // columns (1,3) and (2,1)
  ASSERT_OK(
      Hard.run({ref(X, ET::Float, {1, 2, 2})}, {ref(Y, ET::Float, {1, 2, 2})}));
  EXPECT_EQ(Y, (std::vector<float>{0, 1, 1, 0}));
}

TEST(CPUKernelsReduce, CumSumExclusiveReverse) {
  std::vector<int64_t> X = {1, 2, 3, 10, 20, 30}, Y(6), Axis = {1};
  KernelHarness H("CumSum");
  ASSERT_OK(H.run({ref(X, ET::Int64, {2, 3}), ref(Axis, ET::Int64, {})},
                  {ref(Y, ET::Int64, {2, 3})}));
  EXPECT_EQ(Y, (std::vector<int64_t>{1, 3, 6, 10, 30, 60}));
  KernelHarness R("CumSum");
  R.setInt("exclusive", 1).setInt("reverse", 1);
  ASSERT_OK(R.run({ref(X, ET::Int64, {2, 3}), ref(Axis, ET::Int64, {})},
                  {ref(X, ET::Int64, {2, 3})})); // in place
  EXPECT_EQ(X, (std::vector<int64_t>{5, 3, 0, 50, 30, 0}));
}

TEST(CPUKernelsReduce, AxisOutOfRangeIsAnError) {
  std::vector<float> X = {1, 2}, Y(1);
  KernelHarness H("ReduceSum", 11);
  H.setInts("axes", {3});
  llvm::Error E = H.run({ref(X, ET::Float, {2})}, {ref(Y, ET::Float, {1})});
  EXPECT_TRUE(bool(E));
  llvm::consumeError(std::move(E));
}

} // namespace

namespace {

TEST(CPUKernelsLoss, NegativeLogLikelihoodReductions) {
  // Rows of log-probabilities; targets pick -3 and -0.5.
  std::vector<float> X = {-1, -2, -3, -0.5f, -1.5f, -2.5f}, Y(2);
  std::vector<int64_t> Tgt = {2, 0};
  std::vector<float> W = {1, 2, 3};
  KernelHarness Mean("NegativeLogLikelihoodLoss", 13);
  ASSERT_OK(Mean.run({ref(X, ET::Float, {2, 3}), ref(Tgt, ET::Int64, {2})},
                     {ref(Y, ET::Float, {})}));
  EXPECT_FLOAT_EQ(Y[0], 1.75f); // (3 + 0.5) / 2
  ASSERT_OK(Mean.run({ref(X, ET::Float, {2, 3}), ref(Tgt, ET::Int64, {2}),
                      ref(W, ET::Float, {3})},
                     {ref(Y, ET::Float, {})}));
  EXPECT_FLOAT_EQ(Y[0], 2.375f); // (3 * 3 + 1 * 0.5) / (3 + 1)
  KernelHarness Ign("NegativeLogLikelihoodLoss", 13);
  Ign.setInt("ignore_index", 0).setString("reduction", "none");
  ASSERT_OK(Ign.run({ref(X, ET::Float, {2, 3}), ref(Tgt, ET::Int64, {2})},
                    {ref(Y, ET::Float, {2})}));
  EXPECT_EQ(Y, (std::vector<float>{3, 0}));
}

TEST(CPUKernelsLoss, SoftmaxCrossEntropyWithLogProb) {
  // softmax(0, 0, ln 2) = (1/4, 1/4, 1/2).
  std::vector<float> X = {0, 0, std::log(2.0f)}, Y(1), LogP(3);
  std::vector<int32_t> Tgt = {2};
  KernelHarness H("SoftmaxCrossEntropyLoss", 13);
  ASSERT_OK(H.run({ref(X, ET::Float, {1, 3}), ref(Tgt, ET::Int32, {1})},
                  {ref(Y, ET::Float, {}), ref(LogP, ET::Float, {1, 3})}));
  EXPECT_FLOAT_EQ(Y[0], std::log(2.0f));
  EXPECT_FLOAT_EQ(LogP[0], std::log(0.25f));
  EXPECT_FLOAT_EQ(LogP[2], std::log(0.5f));
}

TEST(CPUKernelsLoss, TargetOutOfRangeIsAnError) {
  std::vector<float> X = {0, 0}, Y(1);
  std::vector<int64_t> Tgt = {5};
  KernelHarness H("NegativeLogLikelihoodLoss", 13);
  llvm::Error E = H.run({ref(X, ET::Float, {1, 2}), ref(Tgt, ET::Int64, {1})},
                        {ref(Y, ET::Float, {})});
  EXPECT_TRUE(bool(E));
  llvm::consumeError(std::move(E));
}

} // namespace

namespace {

TEST(CPUKernelsTfIdf, CountsWithSkipsUnigramsOnce) {
  // Pool: unigrams 2, 3; bigram (3, 3). Tokens 3 3 3 2.
  std::vector<int64_t> X = {3, 3, 3, 2};
  std::vector<float> Y(3);
  KernelHarness H("TfIdfVectorizer", 17);
  H.setString("mode", "TF")
      .setInt("min_gram_length", 1)
      .setInt("max_gram_length", 2)
      .setInt("max_skip_count", 0)
      .setInts("ngram_counts", {0, 2})
      .setInts("ngram_indexes", {0, 1, 2})
      .setInts("pool_int64s", {2, 3, 3, 3});
  ASSERT_OK(H.run({ref(X, ET::Int64, {4})}, {ref(Y, ET::Float, {3})}));
  EXPECT_EQ(Y, (std::vector<float>{1, 3, 2})); // (3,3) at 0-1 and 1-2
  KernelHarness S("TfIdfVectorizer", 17);
  S.G.Nodes[0].Attrs = H.G.Nodes[0].Attrs;
  S.G.Nodes[0].Attrs[3].I = 1; // max_skip_count: also (3,3) at 0-2
  ASSERT_OK(S.run({ref(X, ET::Int64, {4})}, {ref(Y, ET::Float, {3})}));
  EXPECT_EQ(Y, (std::vector<float>{1, 3, 3}));
}

} // namespace

namespace {

TEST(CPUKernelsDataDependent, NonZeroPacksForTheActualCount) {
  std::vector<float> X = {0, 3, 0, 5}; // [2, 2]: (0,1) and (1,1)
  std::vector<int64_t> Y(2 * 4, -1);   // planned bound [2, 4]
  KernelHarness H("NonZero", 13);
  H.DataDependent = true;
  ASSERT_OK(H.run({ref(X, ET::Float, {2, 2})}, {ref(Y, ET::Int64, {2, 4})}));
  EXPECT_EQ(H.ActualDims[0], (llvm::SmallVector<int64_t, 6>{2, 2}));
  EXPECT_EQ(std::vector<int64_t>(Y.begin(), Y.begin() + 4),
            (std::vector<int64_t>{0, 1, 1, 1})); // rows, then columns
}

TEST(CPUKernelsDataDependent, UniqueSortedAndByFirstOccurrence) {
  std::vector<int64_t> X = {2, 1, 1, 3, 2};
  std::vector<int64_t> Y(5), Idx(5), Inv(5), Cnt(5);
  auto Outs = [&] {
    return std::vector<TensorRef>{
        ref(Y, ET::Int64, {5}), ref(Idx, ET::Int64, {5}),
        ref(Inv, ET::Int64, {5}), ref(Cnt, ET::Int64, {5})};
  };
  KernelHarness H("Unique", 13);
  H.DataDependent = true;
  H.Workspace.resize(2 * 8 * 5);
  ASSERT_OK(H.run({ref(X, ET::Int64, {5})}, Outs()));
  EXPECT_EQ(H.ActualDims[0], (llvm::SmallVector<int64_t, 6>{3}));
  EXPECT_EQ(std::vector<int64_t>(Y.begin(), Y.begin() + 3),
            (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(std::vector<int64_t>(Idx.begin(), Idx.begin() + 3),
            (std::vector<int64_t>{1, 0, 3}));
  EXPECT_EQ(Inv, (std::vector<int64_t>{1, 0, 0, 2, 1}));
  EXPECT_EQ(std::vector<int64_t>(Cnt.begin(), Cnt.begin() + 3),
            (std::vector<int64_t>{2, 2, 1}));
  KernelHarness F("Unique", 13);
  F.setInt("sorted", 0);
  F.DataDependent = true;
  F.Workspace.resize(2 * 8 * 5);
  ASSERT_OK(F.run({ref(X, ET::Int64, {5})}, Outs()));
  EXPECT_EQ(std::vector<int64_t>(Y.begin(), Y.begin() + 3),
            (std::vector<int64_t>{2, 1, 3}));
  EXPECT_EQ(Inv, (std::vector<int64_t>{0, 1, 1, 2, 0}));
}

} // namespace
