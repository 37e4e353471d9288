//===- LinearAlgebraTest.cpp - MatMul, Gemm, Einsum, normalizations -------===//
//
// Every expected value was worked out by hand from the ONNX operator
// definitions (the arithmetic is in the comments).
//
//===----------------------------------------------------------------------===//
#include "OpRunner.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::test;

TEST(MatMulKernel, TwoByThreeTimesThreeByTwo) {
  std::vector<float> A{1, 2, 3, 4, 5, 6}, B{7, 8, 9, 10, 11, 12}, Y(4);
  OpRunner R("MatMul");
  RUN_OK(R, {f32(A, {2, 3}), f32(B, {3, 2})}, {f32(Y, {2, 2})});
  // 1*7+2*9+3*11 = 58, 1*8+2*10+3*12 = 64, 4*7+5*9+6*11 = 139, 154.
  expectNear(Y, {58, 64, 139, 154});
}

TEST(MatMulKernel, OneDimensionalLeftOperand) {
  std::vector<float> A{1, 2, 3}, B{7, 8, 9, 10, 11, 12}, Y(2);
  OpRunner R("MatMul");
  RUN_OK(R, {f32(A, {3}), f32(B, {3, 2})}, {f32(Y, {2})});
  expectNear(Y, {58, 64});
}

TEST(MatMulKernel, SharedRightOperandStacksBatches) {
  // A is two 1x2 rows [1,2], [3,4]; B = [[5],[6]] shared by both batches.
  std::vector<float> A{1, 2, 3, 4}, B{5, 6}, Y(2);
  OpRunner R("MatMul");
  RUN_OK(R, {f32(A, {2, 1, 2}), f32(B, {2, 1})}, {f32(Y, {2, 1, 1})});
  expectNear(Y, {17, 39}); // 1*5+2*6, 3*5+4*6
}

TEST(MatMulKernel, BroadcastLeftBatch) {
  // A [1,2,2] = [[1,2],[3,4]] against two B's: e0 = [1,0]^T, e1 = [0,1]^T.
  std::vector<float> A{1, 2, 3, 4}, B{1, 0, 0, 1}, Y(4);
  OpRunner R("MatMul");
  RUN_OK(R, {f32(A, {1, 2, 2}), f32(B, {2, 2, 1})}, {f32(Y, {2, 2, 1})});
  expectNear(Y, {1, 3, 2, 4}); // first column, then second column
}

TEST(MatMulKernel, Int32Loop) {
  std::vector<int32_t> A{1, 2, 3, 4}, B{5, 6, 7, 8}, Y(4);
  OpRunner R("MatMul");
  RUN_OK(R,
         {tensor(A, ElementType::Int32, {2, 2}),
          tensor(B, ElementType::Int32, {2, 2})},
         {tensor(Y, ElementType::Int32, {2, 2})});
  EXPECT_EQ(Y, (std::vector<int32_t>{19, 22, 43, 50}));
}

TEST(MatMulKernel, MismatchedInnerDimsIsAnInputError) {
  std::vector<float> A(6), B(4), Y(4);
  OpRunner R("MatMul");
  llvm::Error E = R.run({f32(A, {2, 3}), f32(B, {2, 2})}, {f32(Y, {2, 2})});
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("inner dims"), std::string::npos);
}

TEST(GemmKernel, TransBAlphaBetaVectorBias) {
  // A*B^T = [[1+3, 2], [4+6, 5]]; *2 = [[8,4],[20,10]]; + 0.5*[1,-1].
  std::vector<float> A{1, 2, 3, 4, 5, 6}, B{1, 0, 1, 0, 1, 0}, Cv{1, -1}, Y(4);
  OpRunner R("Gemm");
  R.i("transB", 1).f("alpha", 2).f("beta", 0.5);
  RUN_OK(R, {f32(A, {2, 3}), f32(B, {2, 3}), f32(Cv, {2})}, {f32(Y, {2, 2})});
  expectNear(Y, {8.5, 3.5, 20.5, 9.5});
}

TEST(GemmKernel, TransAScalarBias) {
  // A given as (K, M); A^T * B = [[4,2],[10,5]]; + 1.
  std::vector<float> A{1, 4, 2, 5, 3, 6}, B{1, 0, 0, 1, 1, 0}, Cv{1}, Y(4);
  OpRunner R("Gemm");
  R.i("transA", 1);
  RUN_OK(R, {f32(A, {3, 2}), f32(B, {3, 2}), f32(Cv, {1})}, {f32(Y, {2, 2})});
  expectNear(Y, {5, 3, 11, 6});
}

TEST(EinsumKernel, TransposeDiagonalInnerProductBatchMatMul) {
  std::vector<float> X{1, 2, 3, 4}, Y(4);
  OpRunner T("Einsum");
  T.s("equation", "ij->ji");
  RUN_OK(T, {f32(X, {2, 2})}, {f32(Y, {2, 2})});
  expectNear(Y, {1, 3, 2, 4});

  std::vector<float> D(2);
  OpRunner Diag("Einsum");
  Diag.s("equation", "ii->i");
  RUN_OK(Diag, {f32(X, {2, 2})}, {f32(D, {2})});
  expectNear(D, {1, 4});

  std::vector<float> U{1, 2, 3}, V{4, 5, 6}, S(1);
  OpRunner Dot("Einsum");
  Dot.s("equation", "i,i"); // implicit output: no free label, a scalar
  RUN_OK(Dot, {f32(U, {3}), f32(V, {3})}, {f32(S, {})});
  expectNear(S, {32}); // 4 + 10 + 18

  std::vector<float> A{1, 2, 3, 4, 1, 0, 0, 1}, B{1, 1, 0, 1, 2, 0, 0, 2}, Z(8);
  OpRunner BMM("Einsum");
  BMM.s("equation", "bij,bjk->bik");
  RUN_OK(BMM, {f32(A, {2, 2, 2}), f32(B, {2, 2, 2})}, {f32(Z, {2, 2, 2})});
  // [[1,2],[3,4]] * [[1,1],[0,1]] = [[1,3],[3,7]]; I * 2I = 2I.
  expectNear(Z, {1, 3, 3, 7, 2, 0, 0, 2});
}

TEST(NormKernels, BatchNormInference) {
  // Channel 0: (x - 2) / 1; channel 1: (x - 4) / 2 * 2 + 1.
  std::vector<float> X{1, 3, 2, 6}, S{1, 2}, B{0, 1}, M{2, 4}, V{1, 4}, Y(4);
  OpRunner R("BatchNormalization");
  R.f("epsilon", 0);
  RUN_OK(R,
         {f32(X, {1, 2, 1, 2}), f32(S, {2}), f32(B, {2}), f32(M, {2}),
          f32(V, {2})},
         {f32(Y, {1, 2, 1, 2})});
  expectNear(Y, {-1, 1, -1, 3});
}

TEST(NormKernels, BatchNormTrainingUpdatesRunningStats) {
  // Batch stats: channel 0 mean 2 var 1, channel 1 mean 4 var 4 (biased).
  std::vector<float> X{1, 3, 2, 6}, S{1, 2}, B{0, 1}, M{0, 0}, V{1, 1}, Y(4),
      RM(2), RV(2);
  OpRunner R("BatchNormalization");
  R.f("epsilon", 0).f("momentum", 0.5).i("training_mode", 1);
  RUN_OK(R,
         {f32(X, {1, 2, 1, 2}), f32(S, {2}), f32(B, {2}), f32(M, {2}),
          f32(V, {2})},
         {f32(Y, {1, 2, 1, 2}), f32(RM, {2}), f32(RV, {2})});
  expectNear(Y, {-1, 1, -1, 3});
  expectNear(RM, {1, 2});   // 0*0.5 + mean*0.5
  expectNear(RV, {1, 2.5}); // 1*0.5 + var*0.5
}

TEST(NormKernels, LayerNormWithStatistics) {
  // Rows [1,3] (mean 2, var 1) and [0,4] (mean 2, var 4).
  std::vector<float> X{1, 3, 0, 4}, S{2, 1}, B{0, 1}, Y(4), Mean(2), Inv(2);
  OpRunner R("LayerNormalization");
  R.f("epsilon", 0);
  RUN_OK(R, {f32(X, {2, 2}), f32(S, {2}), f32(B, {2})},
         {f32(Y, {2, 2}), f32(Mean, {2, 1}), f32(Inv, {2, 1})});
  expectNear(Y, {-2, 2, -2, 2});
  expectNear(Mean, {2, 2});
  expectNear(Inv, {1, 0.5});
}

TEST(NormKernels, InstanceNormLpNormLRNMVN) {
  std::vector<float> X{0, 2, 4, 6}, S{1}, B{0}, Y(4);
  OpRunner In("InstanceNormalization");
  In.f("epsilon", 0);
  RUN_OK(In, {f32(X, {1, 1, 4}), f32(S, {1}), f32(B, {1})},
         {f32(Y, {1, 1, 4})});
  const float R5 = std::sqrt(5.0f); // mean 3, var (9+1+1+9)/4 = 5
  expectNear(Y, {-3 / R5, -1 / R5, 1 / R5, 3 / R5});

  std::vector<float> L{1, 3, 2, 2}, LY(4);
  OpRunner Lp("LpNormalization");
  Lp.i("p", 1).i("axis", 1);
  RUN_OK(Lp, {f32(L, {2, 2})}, {f32(LY, {2, 2})});
  expectNear(LY, {0.25, 0.75, 0.5, 0.5});

  // size 2: channel c sums squares of c and c+1; alpha/size = 1, beta 1.
  std::vector<float> Q{1, 2}, QY(2);
  OpRunner Lrn("LRN");
  Lrn.i("size", 2).f("alpha", 2).f("beta", 1).f("bias", 1);
  RUN_OK(Lrn, {f32(Q, {1, 2, 1, 1})}, {f32(QY, {1, 2, 1, 1})});
  expectNear(QY, {1.0f / 6, 2.0f / 5});

  std::vector<float> M{1, 3}, MY(2);
  OpRunner Mvn("MeanVarianceNormalization");
  RUN_OK(Mvn, {f32(M, {1, 1, 1, 2})}, {f32(MY, {1, 1, 1, 2})});
  EXPECT_EQ(Mvn.WorkspaceBytes, 16u); // one channel: sum and sum of squares
  expectNear(MY, {-1, 1});
}
