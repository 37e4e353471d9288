//===- NewerOpsThreadTest.cpp - TensorScatter, Col2Im, Pad threads -------===//
//
// The CUDA kernels of ops that were host steps (NewerOps.cu, Pad.cu): their
// argument builders given host pointers, then every thread run on the host
// (Kernels/NewerOpsMath.h) against the CPU kernels of the same nodes, to
// the byte. Runs without a GPU.
//
//===----------------------------------------------------------------------===//
#include "../../../../lib/Runtime/CUDA/CUDAKernels.h"
#include "NodeCall.h"
#include "gtest/gtest.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::cuda;
using namespace oomplan::runtime::unit;

namespace {

std::vector<float> floatsOf(std::mt19937 &Rng, size_t N) {
  std::uniform_real_distribution<float> U(-2, 2);
  std::vector<float> V(N);
  for (float &X : V)
    X = U(Rng);
  return V;
}

// TensorScatter's threads give the CPU's cache: linear and circular (a
// write that wraps, a negative index), the sequence axis last but one and
// in the middle of a rank-5 cache (heads after it), int32 and int64 and
// absent write indices, 2-byte elements; a write that leaves the cache is
// flagged (the CPU refuses it).
TEST(NewerOpsThreads, TensorScatterIsTheCPUs) {
  std::mt19937 Rng(21);
  struct Case {
    std::vector<int64_t> Past, Upd;
    int64_t Axis;
    const char *Mode;
    std::vector<int64_t> Index; // empty: absent
    bool Index64;
  };
  const Case Cases[] = {
      {{2, 3, 6, 4}, {2, 3, 2, 4}, -2, "linear", {1, 4}, true},
      {{2, 3, 6, 4}, {2, 3, 3, 4}, 2, "circular", {5, -2}, false},
      {{3, 5, 2, 3}, {3, 2, 2, 3}, 1, "linear", {0, 3, 2}, true},
      {{2, 2, 4, 3, 2}, {2, 2, 2, 3, 2}, 2, "circular", {3, 1}, true},
      {{2, 3, 6, 4}, {2, 3, 2, 4}, -2, "linear", {}, true}};
  for (bool Half : {false, true})
    for (const Case &K : Cases) {
      const ElementType T = Half ? ElementType::Float16 : ElementType::Float;
      auto Bytes = [&](const std::vector<int64_t> &Dims) {
        int64_t N = 1;
        for (int64_t D : Dims)
          N *= D;
        std::vector<uint8_t> B(size_t(N) * (Half ? 2 : 4));
        for (uint8_t &X : B)
          X = uint8_t(Rng());
        return B;
      };
      std::vector<Operand> In;
      In.push_back(operandOf(T, K.Past, Bytes(K.Past)));
      In.push_back(operandOf(T, K.Upd, Bytes(K.Upd)));
      const int64_t Batch = K.Past[0];
      if (!K.Index.empty()) {
        if (K.Index64)
          In.push_back(operandOf(ElementType::Int64, {Batch}, K.Index));
        else
          In.push_back(
              operandOf(ElementType::Int32, {Batch},
                        std::vector<int32_t>(K.Index.begin(), K.Index.end())));
      }
      NodeCall Q("TensorScatter", In, T, K.Past,
                 {intAttr("axis", K.Axis), stringAttr("mode", K.Mode)});
      ASSERT_TRUE(Q.runCPU()) << K.Mode;
      newer::ScatterArgs A;
      llvm::Error E = scatterArgs(*Q.C, A);
      ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
      std::vector<char> Out(In[0].Bytes); // copyUnlessAliased
      A.Out = Out.data();
      const int64_t Count = A.Prefix * A.Seq * A.Row;
      for (int64_t I = 0; I < Count; ++I) {
        const int64_t To = newer::scatterTarget(A, I);
        ASSERT_GE(To, 0);
        std::memcpy(Out.data() + To * A.ElemBytes,
                    static_cast<const char *>(A.Update) + I * A.ElemBytes,
                    size_t(A.ElemBytes));
      }
      EXPECT_EQ(Out, Q.Want) << K.Mode << " axis " << K.Axis;
    }
  // Linear, cache 6, 2 new rows: index 5 leaves it, 4 fits, -1 leaves it.
  newer::ScatterArgs A;
  const int64_t Ix[2] = {5, 4};
  A.Index = Ix, A.Prefix = 2, A.PerBatch = 1, A.Max = 6, A.Seq = 2, A.Row = 1;
  EXPECT_EQ(newer::scatterTarget(A, 0), -1);
  EXPECT_EQ(newer::scatterTarget(A, 2), 1 * 6 + 4);
  const int64_t Neg[2] = {-1, 0};
  A.Index = Neg;
  EXPECT_EQ(newer::scatterTarget(A, 0), -1);
  A.Circular = true; // -1 is the last row, then wraps to row 0
  EXPECT_EQ(newer::scatterTarget(A, 0), 5);
  EXPECT_EQ(newer::scatterTarget(A, 1), 0);
}

// Col2Im's pixel gathers give the CPU's image to the bit (the same order
// of sums): 2-D with stride, dilation and asymmetric pads, overlapping
// blocks; 1-D; 3-D; float and double.
TEST(NewerOpsThreads, Col2ImIsTheCPUs) {
  std::mt19937 Rng(23);
  struct Case {
    std::vector<int64_t> Image, Block, Strides, Dilations, Pads;
    int64_t N, C;
  };
  const Case Cases[] = {
      {{5, 6}, {2, 3}, {1, 2}, {2, 1}, {1, 0, 0, 2}, 2, 3},
      {{7}, {3}, {1}, {1}, {1, 1}, 1, 2},
      {{3, 4, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 1, 0, 0, 0, 1}, 1, 1}};
  for (bool Dbl : {false, true})
    for (const Case &K : Cases) {
      const size_t S = K.Image.size();
      int64_t Cells = 1, Columns = 1;
      for (size_t I = 0; I < S; ++I) {
        Cells *= K.Block[I];
        const int64_t Span = K.Dilations[I] * (K.Block[I] - 1) + 1;
        Columns *=
            (K.Image[I] + K.Pads[I] + K.Pads[S + I] - Span) / K.Strides[I] + 1;
      }
      const ElementType T = Dbl ? ElementType::Double : ElementType::Float;
      std::vector<float> V = floatsOf(Rng, size_t(K.N * K.C * Cells * Columns));
      std::vector<Operand> In;
      if (Dbl)
        In.push_back(operandOf(T, {K.N, K.C * Cells, Columns},
                               std::vector<double>(V.begin(), V.end())));
      else
        In.push_back(operandOf(T, {K.N, K.C * Cells, Columns}, V));
      In.push_back(operandOf(ElementType::Int64, {int64_t(S)}, K.Image));
      In.push_back(operandOf(ElementType::Int64, {int64_t(S)}, K.Block));
      std::vector<int64_t> YDims = {K.N, K.C};
      YDims.insert(YDims.end(), K.Image.begin(), K.Image.end());
      NodeCall Q("Col2Im", In, T, YDims,
                 {intsAttr("strides", K.Strides),
                  intsAttr("dilations", K.Dilations),
                  intsAttr("pads", K.Pads)});
      ASSERT_TRUE(Q.runCPU());
      newer::Col2ImArgs A;
      llvm::Error E = col2ImArgs(*Q.C, K.Image, K.Block, A);
      ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
      std::vector<char> Y(Q.Want.size(), char(0x5a));
      for (int64_t I = 0; I < A.Planes * A.Pixels; ++I) {
        if (Dbl)
          reinterpret_cast<double *>(Y.data())[I] =
              newer::col2ImPixel<double>(A, I / A.Pixels, I % A.Pixels);
        else
          reinterpret_cast<float *>(Y.data())[I] =
              newer::col2ImPixel<float>(A, I / A.Pixels, I % A.Pixels);
      }
      EXPECT_EQ(Y, Q.Want) << S << "-D, double " << Dbl;
    }
}

// Pad's edge, reflect and wrap modes on CUDA (Pad.cu) read the input
// element pad::sourceOf names for each output element: the CPU kernel's
// bytes, for pads longer than the axis (reflect's and wrap's repeats),
// negative pads (a crop), an axis of one element, 2-byte elements.
TEST(NewerOpsThreads, PadModesAreTheCPUs) {
  std::mt19937 Rng(24);
  struct Case {
    std::vector<int64_t> Dims, Pads;
  };
  const Case Cases[] = {{{2, 3, 4}, {0, 2, 5, 1, 4, -1}},
                        {{3, 1, 5}, {1, 3, 0, 2, 2, 7}},
                        {{7}, {9, 13}}};
  for (const char *Mode : {"edge", "reflect", "wrap"})
    for (const Case &K : Cases) {
      const size_t R = K.Dims.size();
      std::vector<int64_t> Out(R);
      int64_t N = 1;
      for (size_t I = 0; I < R; ++I) {
        Out[I] = K.Dims[I] + K.Pads[I] + K.Pads[I + R];
        N *= K.Dims[I];
      }
      std::vector<uint16_t> X(static_cast<size_t>(N));
      for (uint16_t &V : X)
        V = uint16_t(Rng());
      std::vector<Operand> In;
      In.push_back(operandOf(ElementType::Float16, K.Dims, X));
      In.push_back(operandOf(ElementType::Int64, {int64_t(2 * R)}, K.Pads));
      NodeCall Q("Pad", In, ElementType::Float16, Out,
                 {stringAttr("mode", Mode)});
      ASSERT_TRUE(Q.runCPU()) << Mode;
      pad::Geometry G;
      G.Rank = int(R);
      G.M = std::string(Mode) == "edge"      ? pad::Edge
            : std::string(Mode) == "reflect" ? pad::Reflect
                                             : pad::Wrap;
      int64_t OutN = 1;
      for (size_t I = 0; I < R; ++I) {
        G.InDims[I] = K.Dims[I];
        G.OutDims[I] = Out[I];
        G.Begin[I] = K.Pads[I];
        OutN *= Out[I];
      }
      std::vector<uint16_t> Y(static_cast<size_t>(OutN));
      for (int64_t I = 0; I < OutN; ++I) {
        const int64_t S = pad::sourceOf(G, I);
        ASSERT_GE(S, 0);
        Y[size_t(I)] = X[size_t(S)];
      }
      std::vector<char> Bytes(Y.size() * 2);
      std::memcpy(Bytes.data(), Y.data(), Bytes.size());
      EXPECT_EQ(Bytes, Q.Want) << Mode << " rank " << R;
    }
}

} // namespace
