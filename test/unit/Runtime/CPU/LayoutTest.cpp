//===- LayoutTest.cpp - shape, slicing, gathers, scatters, TopK -----------===//
//
// Data-movement kernels on small tensors whose expected outputs are written
// out by hand (several follow the examples in ONNX's operator docs).
//
//===----------------------------------------------------------------------===//
#include "OpRunner.h"
#include <cmath>
#include <limits>

using namespace oomplan;
using namespace oomplan::test;

using I64 = std::vector<int64_t>;

TEST(ShapeKernels, TransposeTwoAndThreeDims) {
  std::vector<float> X{1, 2, 3, 4, 5, 6}, Y(6);
  OpRunner R("Transpose");
  RUN_OK(R, {f32(X, {2, 3})}, {f32(Y, {3, 2})});
  expectNear(Y, {1, 4, 2, 5, 3, 6});
  I64 A{0, 1, 2, 3, 4, 5, 6, 7}, B(8);
  OpRunner P("Transpose");
  P.ints("perm", {1, 0, 2}); // out[i][j][k] = in[j][i][k]
  RUN_OK(P, {i64(A, {2, 2, 2})}, {i64(B, {2, 2, 2})});
  EXPECT_EQ(B, (I64{0, 1, 4, 5, 2, 3, 6, 7}));
}

TEST(ShapeKernels, TransposesOfTheInnermostAxisMatchADirectLoop) {
  // Permutations whose innermost output axis is strided in the input while
  // another axis is the input's contiguous one go through square tiles
  // (StridedCopy.cpp): attention's K^T ([S, B*H, D] -> [B*H, D, S]), the
  // last two axes swapped, and a full reversal, with sizes that are not
  // multiples of the 16-element tile, on 1-, 2-, 4- and 8-byte elements,
  // each against out[i] = in[sum of i_k * stride of perm[k]].
  struct Case {
    I64 Dims, Perm;
  } Cases[] = {{{37, 12, 21}, {1, 2, 0}},
               {{3, 5, 19, 33}, {0, 1, 3, 2}},
               {{4, 18, 7}, {2, 1, 0}},
               {{2, 64, 40}, {0, 2, 1}}};
  for (const Case &T : Cases) {
    const int64_t R = int64_t(T.Dims.size());
    I64 OutDims(R), InStr(R, 1);
    for (int64_t K = R - 2; K >= 0; --K)
      InStr[K] = InStr[K + 1] * T.Dims[K + 1];
    int64_t N = 1;
    for (int64_t K = 0; K < R; ++K) {
      OutDims[K] = T.Dims[T.Perm[K]];
      N *= T.Dims[K];
    }
    std::vector<int64_t> Want(N);
    for (int64_t I = 0; I < N; ++I) {
      int64_t Rem = I, Off = 0;
      for (int64_t K = R - 1; K >= 0; --K) {
        Off += (Rem % OutDims[K]) * InStr[T.Perm[K]];
        Rem /= OutDims[K];
      }
      Want[I] = Off;
    }
    for (ElementType Ty : {ElementType::Int8, ElementType::Float16,
                           ElementType::Float, ElementType::Int64}) {
      const size_t EB = elementBits(Ty) / 8;
      std::vector<uint8_t> X(N * EB), Y(N * EB, 0xAB);
      // Element I holds I's low bytes: every element distinct up to 2^(8EB).
      for (int64_t I = 0; I < N; ++I)
        for (size_t B = 0; B < EB; ++B)
          X[I * EB + B] = uint8_t(uint64_t(I) >> (8 * B));
      OpRunner P("Transpose", 17, 2);
      P.ints("perm", T.Perm);
      RUN_OK(P, {tensor(X, Ty, T.Dims)}, {tensor(Y, Ty, OutDims)});
      for (int64_t I = 0; I < N; ++I)
        for (size_t B = 0; B < EB; ++B)
          ASSERT_EQ(Y[I * EB + B], uint8_t(uint64_t(Want[I]) >> (8 * B)))
              << "element " << I << " of " << N << ", " << EB
              << "-byte elements";
    }
  }
}

TEST(ShapeKernels, ReshapeCopiesWhenNotAliased) {
  std::vector<float> X{1, 2, 3, 4}, Y(4);
  I64 S{4};
  OpRunner R("Reshape");
  RUN_OK(R, {f32(X, {2, 2}), i64(S, {1})}, {f32(Y, {4})});
  expectNear(Y, {1, 2, 3, 4});
}

TEST(ShapeKernels, ExpandShapeSizeEyeLikeTriluRange) {
  std::vector<float> X{1, 2}, Y(6);
  I64 Shape{2, 3};
  OpRunner E("Expand");
  RUN_OK(E, {f32(X, {2, 1}), i64(Shape, {2})}, {f32(Y, {2, 3})});
  expectNear(Y, {1, 1, 1, 2, 2, 2});

  std::vector<float> T(24);
  I64 S(2), N(1);
  OpRunner Sh("Shape");
  Sh.i("start", 1);
  RUN_OK(Sh, {f32(T, {2, 3, 4})}, {i64(S, {2})});
  EXPECT_EQ(S, (I64{3, 4}));
  OpRunner Sz("Size");
  RUN_OK(Sz, {f32(T, {2, 3, 4})}, {i64(N, {})});
  EXPECT_EQ(N[0], 24);

  std::vector<float> Eye(6);
  OpRunner Ey("EyeLike");
  Ey.i("k", 1);
  RUN_OK(Ey, {f32(Y, {2, 3})}, {f32(Eye, {2, 3})});
  expectNear(Eye, {0, 1, 0, 0, 0, 1});

  std::vector<float> Ones(9, 1), U(9);
  I64 K{1};
  OpRunner Tu("Trilu");
  RUN_OK(Tu, {f32(Ones, {3, 3}), i64(K, {})}, {f32(U, {3, 3})});
  expectNear(U, {0, 1, 1, 0, 0, 1, 0, 0, 0}); // keep j >= i + 1
  I64 KM{-1};
  OpRunner Tl("Trilu");
  Tl.i("upper", 0);
  RUN_OK(Tl, {f32(Ones, {3, 3}), i64(KM, {})}, {f32(U, {3, 3})});
  expectNear(U, {0, 0, 0, 1, 0, 0, 1, 1, 0}); // keep j <= i - 1

  I64 Start{1}, Limit{10}, Delta{3}, R(3);
  OpRunner Rg("Range");
  RUN_OK(Rg, {i64(Start, {}), i64(Limit, {}), i64(Delta, {})}, {i64(R, {3})});
  EXPECT_EQ(R, (I64{1, 4, 7}));
}

TEST(ShapeKernels, ConstantAndConstantOfShape) {
  I64 Y(3);
  OpRunner C("Constant");
  C.ints("value_ints", {5, 6, 7});
  RUN_OK(C, {}, {i64(Y, {3})});
  EXPECT_EQ(Y, (I64{5, 6, 7}));
  TensorData V;
  V.Type = ElementType::Int64;
  V.Dims = {1};
  V.Ints = {7};
  I64 Shape{3};
  OpRunner K("ConstantOfShape");
  K.tensorAttr("value", V);
  RUN_OK(K, {i64(Shape, {1})}, {i64(Y, {3})});
  EXPECT_EQ(Y, (I64{7, 7, 7}));
  // float16 and bfloat16 values: 1.5 is 0x3E00 and 0x3FC0.
  for (ElementType T : {ElementType::Float16, ElementType::BFloat16}) {
    TensorData H;
    H.Type = T;
    H.Dims = {1};
    H.Floats = {1.5};
    std::vector<uint16_t> Bits(3);
    runtime::TensorRef Out;
    Out.Data = Bits.data();
    Out.Type = T;
    Out.Dims = {3};
    OpRunner KH("ConstantOfShape");
    KH.tensorAttr("value", H);
    RUN_OK(KH, {i64(Shape, {1})}, {Out});
    uint16_t Want = T == ElementType::Float16 ? 0x3E00 : 0x3FC0;
    EXPECT_EQ(Bits, (std::vector<uint16_t>{Want, Want, Want}));
  }
  TensorData Big;
  Big.Type = ElementType::Float;
  Big.Dims = {2000}; // larger than the importer keeps: no values
  std::vector<float> Out(2000);
  OpRunner L("Constant");
  L.tensorAttr("value", Big);
  llvm::Error E = L.run({}, {f32(Out, {2000})});
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("importer keeps"),
            std::string::npos);
}

TEST(IndexingKernels, SliceNegativeStepsAndClamping) {
  I64 X{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Y(3);
  I64 St{8}, En{2}, Ax{0}, Sp{-2};
  OpRunner R("Slice");
  RUN_OK(R,
         {i64(X, {10}), i64(St, {1}), i64(En, {1}), i64(Ax, {1}), i64(Sp, {1})},
         {i64(Y, {3})});
  EXPECT_EQ(Y, (I64{8, 6, 4}));
  I64 St2{-3}, En2{100};
  OpRunner C("Slice");
  RUN_OK(C, {i64(X, {10}), i64(St2, {1}), i64(En2, {1})}, {i64(Y, {3})});
  EXPECT_EQ(Y, (I64{7, 8, 9}));
  std::vector<float> M{1, 2, 3, 4, 5, 6, 7, 8}, MY(3);
  I64 St3{0, 1}, En3{-1, 1000};
  OpRunner D("Slice");
  RUN_OK(D, {f32(M, {2, 4}), i64(St3, {2}), i64(En3, {2})}, {f32(MY, {1, 3})});
  expectNear(MY, {2, 3, 4});
}

TEST(IndexingKernels, ConcatSplitTile) {
  std::vector<float> A{1, 2}, B{3, 4, 5, 6}, Y(6);
  OpRunner C("Concat");
  C.i("axis", 1);
  RUN_OK(C, {f32(A, {2, 1}), f32(B, {2, 2})}, {f32(Y, {2, 3})});
  expectNear(Y, {1, 3, 4, 2, 5, 6});
  std::vector<float> X{1, 2, 3, 4, 5, 6}, P(2), Q(4);
  OpRunner S("Split");
  RUN_OK(S, {f32(X, {6})}, {f32(P, {2}), f32(Q, {4})});
  expectNear(P, {1, 2});
  expectNear(Q, {3, 4, 5, 6});
  std::vector<float> T{1, 2}, TY(8);
  I64 Reps{2, 2};
  OpRunner Ti("Tile");
  RUN_OK(Ti, {f32(T, {1, 2}), i64(Reps, {2})}, {f32(TY, {2, 4})});
  expectNear(TY, {1, 2, 1, 2, 1, 2, 1, 2});
}

TEST(IndexingKernels, PadModes) {
  std::vector<float> X{1, 2, 3}, Y(6), Val{9};
  I64 Pads{2, 1};
  OpRunner Rf("Pad");
  Rf.s("mode", "reflect");
  RUN_OK(Rf, {f32(X, {3}), i64(Pads, {2})}, {f32(Y, {6})});
  expectNear(Y, {3, 2, 1, 2, 3, 2});
  OpRunner Ed("Pad");
  Ed.s("mode", "edge");
  RUN_OK(Ed, {f32(X, {3}), i64(Pads, {2})}, {f32(Y, {6})});
  expectNear(Y, {1, 1, 1, 2, 3, 3});
  OpRunner Co("Pad");
  RUN_OK(Co, {f32(X, {3}), i64(Pads, {2}), f32(Val, {})}, {f32(Y, {6})});
  expectNear(Y, {9, 9, 1, 2, 3, 9});
  std::vector<float> M{1, 2}, MY(6);
  I64 P2{1, 0, 0, 1}; // one row before, one column after
  OpRunner Two("Pad");
  RUN_OK(Two, {f32(M, {1, 2}), i64(P2, {4})}, {f32(MY, {2, 3})});
  expectNear(MY, {0, 0, 0, 1, 2, 0});
}

TEST(IndexingKernels, GatherFamily) {
  std::vector<float> X{1, 2, 3, 4, 5, 6}, Y(4);
  I64 Idx{2, -3};
  OpRunner G("Gather");
  RUN_OK(G, {f32(X, {3, 2}), i64(Idx, {2})}, {f32(Y, {2, 2})});
  expectNear(Y, {5, 6, 1, 2});
  I64 Bad{3};
  std::vector<float> Y1(2);
  OpRunner GB("Gather");
  llvm::Error E = GB.run({f32(X, {3, 2}), i64(Bad, {1})}, {f32(Y1, {1, 2})});
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("index 3"), std::string::npos);

  std::vector<float> D{1, 2, 3, 4}, DY(4);
  I64 EI{0, 0, 1, 0};
  OpRunner GE("GatherElements");
  GE.i("axis", 1);
  RUN_OK(GE, {f32(D, {2, 2}), i64(EI, {2, 2})}, {f32(DY, {2, 2})});
  expectNear(DY, {1, 1, 4, 3});

  I64 N{0, 1, 2, 3}, NI{1, 0}, NY(4);
  OpRunner ND("GatherND");
  RUN_OK(ND, {i64(N, {2, 2}), i64(NI, {2, 1})}, {i64(NY, {2, 2})});
  EXPECT_EQ(NY, (I64{2, 3, 0, 1}));
  I64 B{0, 1, 2, 3, 4, 5, 6, 7}, BI{1, 0}, BY(4);
  OpRunner BD("GatherND");
  BD.i("batch_dims", 1);
  RUN_OK(BD, {i64(B, {2, 2, 2}), i64(BI, {2, 1})}, {i64(BY, {2, 2})});
  EXPECT_EQ(BY, (I64{2, 3, 4, 5}));
}

TEST(IndexingKernels, ScatterNDAndScatterElements) {
  std::vector<float> D{1, 2, 3, 4, 5, 6, 7, 8}, U{9, 10, 11, 12}, Y(8);
  I64 Idx{4, 3, 1, 7};
  OpRunner S("ScatterND");
  RUN_OK(S, {f32(D, {8}), i64(Idx, {4, 1}), f32(U, {4})}, {f32(Y, {8})});
  expectNear(Y, {1, 11, 3, 10, 9, 6, 7, 12});
  std::vector<float> U2{5, 6};
  I64 Dup{1, 1};
  OpRunner A("ScatterND");
  A.s("reduction", "add");
  RUN_OK(A, {f32(D, {8}), i64(Dup, {2, 1}), f32(U2, {2})}, {f32(Y, {8})});
  expectNear(Y, {1, 13, 3, 4, 5, 6, 7, 8}); // 2 + 5 + 6

  std::vector<float> E{1, 2, 3, 4, 5}, EU{1.1f, 2.1f}, EY(5);
  I64 EI{1, 3};
  OpRunner SE("ScatterElements");
  SE.i("axis", 1);
  RUN_OK(SE, {f32(E, {1, 5}), i64(EI, {1, 2}), f32(EU, {1, 2})},
         {f32(EY, {1, 5})});
  expectNear(EY, {1, 1.1f, 3, 2.1f, 5});
  I64 ED{1, 1};
  OpRunner SA("ScatterElements");
  SA.i("axis", 1).s("reduction", "add");
  RUN_OK(SA, {f32(E, {1, 5}), i64(ED, {1, 2}), f32(EU, {1, 2})},
         {f32(EY, {1, 5})});
  expectNear(EY, {1, 5.2f, 3, 4, 5});
}

TEST(IndexingKernels, DepthToSpaceModesAndSpaceToDepth) {
  std::vector<float> X{0, 1, 2, 3, 4, 5, 6, 7}, Y(8);
  OpRunner Dcr("DepthToSpace");
  Dcr.i("blocksize", 2);
  RUN_OK(Dcr, {f32(X, {1, 8, 1, 1})}, {f32(Y, {1, 2, 2, 2})});
  // DCR: channel = b1*4 + b2*2 + c.
  expectNear(Y, {0, 2, 4, 6, 1, 3, 5, 7});
  OpRunner Crd("DepthToSpace");
  Crd.i("blocksize", 2).s("mode", "CRD");
  RUN_OK(Crd, {f32(X, {1, 8, 1, 1})}, {f32(Y, {1, 2, 2, 2})});
  expectNear(Y, {0, 1, 2, 3, 4, 5, 6, 7}); // channel = c*4 + b1*2 + b2
  std::vector<float> S{0, 1, 2, 3}, SY(4);
  OpRunner Sd("SpaceToDepth");
  Sd.i("blocksize", 2);
  RUN_OK(Sd, {f32(S, {1, 1, 2, 2})}, {f32(SY, {1, 4, 1, 1})});
  expectNear(SY, {0, 1, 2, 3});
}

TEST(IndexingKernels, OneHotAndTopK) {
  I64 Idx{0, 2, -1}, Depth{3};
  std::vector<float> Vals{0, 1}, Y(9);
  OpRunner O("OneHot");
  RUN_OK(O, {i64(Idx, {3}), i64(Depth, {}), f32(Vals, {2})}, {f32(Y, {3, 3})});
  expectNear(Y, {1, 0, 0, 0, 0, 1, 0, 0, 1});

  std::vector<float> X{1, 4, 4, 2}, V(2);
  I64 K{2}, I(2);
  OpRunner T("TopK");
  RUN_OK(T, {f32(X, {4}), i64(K, {1})}, {f32(V, {2}), i64(I, {2})});
  expectNear(V, {4, 4});
  EXPECT_EQ(I, (I64{1, 2})); // equal values by index
  EXPECT_EQ(T.WorkspaceBytes, 4u * 8u);
  OpRunner S("TopK");
  S.i("largest", 0);
  RUN_OK(S, {f32(X, {4}), i64(K, {1})}, {f32(V, {2}), i64(I, {2})});
  expectNear(V, {1, 2});
  EXPECT_EQ(I, (I64{0, 3}));
}

// NaN goes after every number, largest or smallest first, NaNs by index:
// ONNX's reference sorts with numpy's stable argsort, which puts NaN last.
// (Without a place for NaN the order was not strict weak, and partial_sort
// undefined.)
TEST(IndexingKernels, TopKPutsNaNLast) {
  const float NaN = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> X{3, NaN, 1, NaN, 5}, V(5);
  I64 K{5}, I(5);
  OpRunner T("TopK");
  RUN_OK(T, {f32(X, {5}), i64(K, {1})}, {f32(V, {5}), i64(I, {5})});
  EXPECT_EQ(I, (I64{4, 0, 2, 1, 3}));
  expectNear({V[0], V[1], V[2]}, {5, 3, 1});
  EXPECT_TRUE(std::isnan(V[3]) && std::isnan(V[4]));
  I64 K3{3}, I3(3);
  std::vector<float> V3(3);
  OpRunner S("TopK");
  S.i("largest", 0);
  RUN_OK(S, {f32(X, {5}), i64(K3, {1})}, {f32(V3, {3}), i64(I3, {3})});
  EXPECT_EQ(I3, (I64{2, 0, 4}));
  expectNear(V3, {1, 3, 5});
}

// Off the axis an index names data at its own coordinates: an indices dim
// past data's is refused (it read past data before).
TEST(IndexingKernels, GatherElementsIndicesWithinDataOffTheAxis) {
  std::vector<float> D{1, 2, 3, 4}, Y(6);
  I64 EI{0, 0, 1, 0, 1, 1};
  OpRunner GE("GatherElements");
  GE.i("axis", 1);
  llvm::Error E = GE.run({f32(D, {2, 2}), i64(EI, {3, 2})}, {f32(Y, {3, 2})});
  ASSERT_TRUE(bool(E));
  EXPECT_NE(
      llvm::toString(std::move(E)).find("indices dim 0 (3) exceeds data's (2)"),
      std::string::npos);
}
