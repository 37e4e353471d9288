//===- MoreOpsTest.cpp - recurrent, quantized, Det, DFT, unpool -----------===//
//
// One small case per op, each expected value worked out by hand from the
// ONNX definitions (the arithmetic is in the comments).
//
//===----------------------------------------------------------------------===//
#include "OpRunner.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::test;

TEST(RecurrentKernels, RNNReluTwoSteps) {
  // hidden 1, input 1: H_t = Relu(2*x_t + 0.5*H_{t-1} + 1 + 0).
  std::vector<float> X{1, 3}, W{2}, R{0.5f}, B{1, 0}, Y(2), Yh(1);
  OpRunner Run("RNN");
  Run.i("hidden_size", 1);
  Attribute A;
  A.Name = "activations";
  A.Kind = AttrKind::Strings;
  A.Strings = {"Relu"};
  Run.G.Nodes[0].Attrs.push_back(A);
  RUN_OK(
      Run,
      {f32(X, {2, 1, 1}), f32(W, {1, 1, 1}), f32(R, {1, 1, 1}), f32(B, {1, 2})},
      {f32(Y, {2, 1, 1, 1}), f32(Yh, {1, 1, 1})});
  expectNear(Y, {3, 8.5}); // 2+1 = 3; 6 + 1.5 + 1 = 8.5
  expectNear(Yh, {8.5});
  EXPECT_EQ(Run.WorkspaceBytes, 5u * 4u); // gates + 4 state rows of 1
}

TEST(QuantizedKernels, MatMulIntegerAndQLinearMatMul) {
  // (A - 1) * (B - 2) with A = [[3, 4]], B = [[2], [5]]: 2*0 + 3*3 = 9.
  std::vector<uint8_t> A{3, 4}, B{2, 5}, AZ{1}, BZ{2};
  std::vector<int32_t> Y(1);
  OpRunner M("MatMulInteger");
  RUN_OK(M,
         {tensor(A, ElementType::UInt8, {1, 2}),
          tensor(B, ElementType::UInt8, {2, 1}),
          tensor(AZ, ElementType::UInt8, {}),
          tensor(BZ, ElementType::UInt8, {})},
         {tensor(Y, ElementType::Int32, {1, 1})});
  EXPECT_EQ(Y[0], 9);
  // 9 * 0.5 * 0.25 / 0.5 = 2.25, rounds to 2, plus zero point 10.
  std::vector<float> SA{0.5f}, SB{0.25f}, SY{0.5f};
  std::vector<uint8_t> YZ{10}, Q(1);
  OpRunner L("QLinearMatMul");
  RUN_OK(L,
         {tensor(A, ElementType::UInt8, {1, 2}), f32(SA, {}),
          tensor(AZ, ElementType::UInt8, {}),
          tensor(B, ElementType::UInt8, {2, 1}), f32(SB, {}),
          tensor(BZ, ElementType::UInt8, {}), f32(SY, {}),
          tensor(YZ, ElementType::UInt8, {})},
         {tensor(Q, ElementType::UInt8, {1, 1})});
  EXPECT_EQ(Q[0], 12);
}

TEST(MiscKernels, DetDFTReverseSequenceMaxUnpool) {
  // det [[2,1],[4,3]] = 6 - 4; det [[0,1],[1,0]] = -1 (needs a pivot swap).
  std::vector<float> M{2, 1, 4, 3, 0, 1, 1, 0}, D(2);
  OpRunner Det("Det");
  RUN_OK(Det, {f32(M, {2, 2, 2})}, {f32(D, {2})});
  expectNear(D, {2, -1});

  // The DFT of an impulse is flat: every bin 1 + 0i.
  std::vector<float> S{1, 0, 0, 0}, F(8);
  OpRunner Dft("DFT");
  RUN_OK(Dft, {f32(S, {1, 4, 1})}, {f32(F, {1, 4, 2})});
  expectNear(F, {1, 0, 1, 0, 1, 0, 1, 0});

  // time-major [3 steps, 2 rows]; row 0 reverses 3 steps, row 1 only 2.
  std::vector<float> X{0, 10, 1, 11, 2, 12}, Y(6);
  std::vector<int64_t> Lens{3, 2};
  OpRunner Rs("ReverseSequence");
  RUN_OK(Rs, {f32(X, {3, 2}), i64(Lens, {2})}, {f32(Y, {3, 2})});
  expectNear(Y, {2, 11, 1, 10, 0, 12});

  // Indices of a 4x4 plane placed into a 5x5 output_shape keep (row, col).
  std::vector<float> V{5, 6, 7, 8}, U(25);
  std::vector<int64_t> I{5, 7, 13, 15};
  OpRunner Un("MaxUnpool");
  Un.ints("kernel_shape", {2, 2}).ints("strides", {2, 2});
  RUN_OK(Un, {f32(V, {1, 1, 2, 2}), i64(I, {1, 1, 2, 2})},
         {f32(U, {1, 1, 5, 5})});
  std::vector<float> Want(25, 0);
  Want[1 * 5 + 1] = 5;
  Want[1 * 5 + 3] = 6;
  Want[3 * 5 + 1] = 7;
  Want[3 * 5 + 3] = 8;
  expectNear(U, Want);
}
