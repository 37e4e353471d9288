//===- LivenessTest.cpp - buffers, views, in-place ------------------------===//
//
// Schedules built by hand, lifetimes worked out by hand in the comments.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/Liveness.h"
#include "gtest/gtest.h"

using namespace oomplan;

static Schedule chain() {
  // t0 = input (100 B), w = weight (40 B)
  // step 0: a = MatMul(t0, w)   (100 B)
  // step 1: b = Reshape(a)      view of a
  // step 2: c = Relu(b)         elementwise, b dies here -> in place
  // step 3: d = Add(c, a?)      no: d = Add(c, t0); c dies -> in place
  // step 4: out = Sigmoid(d)    graph output, never in place
  Schedule S;
  auto T = [&](const char *N, uint64_t Sz, TensorKind K) {
    S.Tensors.push_back({N, NoId, Sz, ElementType::Undefined, K});
    return static_cast<TensorId>(S.Tensors.size() - 1);
  };
  TensorId In = T("in", 100, TensorKind::GraphInput);
  TensorId W = T("w", 40, TensorKind::Weight);
  TensorId A = T("a", 100, TensorKind::Activation);
  TensorId B = T("b", 100, TensorKind::Activation);
  TensorId C = T("c", 100, TensorKind::Activation);
  TensorId D = T("d", 100, TensorKind::Activation);
  TensorId Out = T("out", 100, TensorKind::GraphOutput);
  auto Add = [&](const char *Op, std::vector<TensorId> R, TensorId Wr, int View,
                 bool Elem) {
    Step St;
    St.Op = Op;
    St.Reads = R;
    St.Writes = {Wr};
    St.ViewOf = View;
    St.MayWriteInPlace = Elem;
    S.Steps.push_back(St);
  };
  Add("MatMul", {In, W}, A, -1, false);
  Add("Reshape", {A}, B, 0, false);
  Add("Relu", {B}, C, -1, true);
  Add("Add", {C, In}, D, -1, true);
  Add("Sigmoid", {D}, Out, -1, true);
  return S;
}

TEST(Liveness, ViewsAndInPlaceShareOneBuffer) {
  Schedule S = chain();
  Lifetimes L = computeLifetimes(S, {});
  EXPECT_EQ(L.NumSteps, 5u);
  // a, b (view), c (in place over b), d (in place over c): one buffer
  // from step 0 to the last read of d at step 4 -> [0,5).
  BufferId AB = L.BufferOf[2];
  EXPECT_EQ(L.BufferOf[3], AB);
  EXPECT_EQ(L.BufferOf[4], AB);
  EXPECT_EQ(L.BufferOf[5], AB);
  EXPECT_EQ(L.Buffers[AB].StartStep, 0u);
  EXPECT_EQ(L.Buffers[AB].EndStep, 5u);
  EXPECT_EQ(L.Buffers[AB].Kind, TensorKind::Activation);
  // The output is not written in place (it must outlive the run).
  BufferId O = L.BufferOf[6];
  EXPECT_NE(O, AB);
  EXPECT_EQ(L.Buffers[O].StartStep, 4u);
  EXPECT_EQ(L.Buffers[O].EndStep, 5u);
  // Input: from 0 to its last read (step 3) -> [0,4). Weight: whole run.
  EXPECT_EQ(L.Buffers[L.BufferOf[0]].EndStep, 4u);
  EXPECT_EQ(L.Buffers[L.BufferOf[1]].StartStep, 0u);
  EXPECT_EQ(L.Buffers[L.BufferOf[1]].EndStep, 5u);
  ASSERT_EQ(L.InPlace.size(), 2u);
  EXPECT_EQ(L.InPlace[0], std::make_pair(TensorId(4), TensorId(3)));
  EXPECT_EQ(L.InPlace[1], std::make_pair(TensorId(5), TensorId(4)));
}

TEST(Liveness, NoInPlaceGivesSeparateBuffers) {
  Schedule S = chain();
  LivenessOptions O;
  O.InPlace = false;
  Lifetimes L = computeLifetimes(S, O);
  // a and b still share (a view is not optional); c and d do not.
  EXPECT_EQ(L.BufferOf[2], L.BufferOf[3]);
  EXPECT_NE(L.BufferOf[4], L.BufferOf[3]);
  EXPECT_NE(L.BufferOf[5], L.BufferOf[4]);
  // a/b: defined at 0, last read (b) at step 2 -> [0,3).
  EXPECT_EQ(L.Buffers[L.BufferOf[2]].EndStep, 3u);
  // c: [2,4), d: [3,5).
  EXPECT_EQ(L.Buffers[L.BufferOf[4]].StartStep, 2u);
  EXPECT_EQ(L.Buffers[L.BufferOf[4]].EndStep, 4u);
  EXPECT_EQ(L.Buffers[L.BufferOf[5]].EndStep, 5u);
  EXPECT_TRUE(L.InPlace.empty());
}

TEST(Liveness, NoInPlaceWhenTheInputLivesOn) {
  Schedule S = chain();
  // Make step 4 read a as well: a's buffer now outlives step 2 and 3, so
  // neither Relu nor Add may overwrite it.
  S.Steps[4].Reads.push_back(2);
  Lifetimes L = computeLifetimes(S, {});
  EXPECT_NE(L.BufferOf[4], L.BufferOf[2]);
  EXPECT_EQ(L.Buffers[L.BufferOf[2]].EndStep, 5u);
}
