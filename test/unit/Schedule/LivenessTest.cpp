//===- LivenessTest.cpp - lifetimes of host-home, I/O and dead tensors ----===//
//
// Liveness as the fit transforms leave a schedule: a streamed weight whose
// home is the host is on the device only from its Prefetch to its last read,
// a host-home tensor nothing writes has no device bytes, resident weights
// span the run, graph inputs end at their last read, graph outputs at the
// end, and an elementwise step overwrites a dying input of its size unless
// in-place is off. Lifetimes are half-open [start, end), worked out by hand
// in the comment. (Views and in-place chains: LivenessViewsTest.cpp.)
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/Liveness.h"
#include "oomplan/Schedule/ScheduleVerifier.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {
// Tensors: 0 ws (streamed weight: host-home, 40 B), 1 x (input, 16 B),
// 2 a (16 B), 3 b (16 B), 4 y (output, 16 B), 5 m (optimizer state kept on
// the host, 8 B, never written), 6 r (resident weight, 24 B), 7 s (4 B).
// Steps:
//   0: a = Relu(x)
//   1: Prefetch -> ws
//   2: b = Add(a, ws)   elementwise; a dies here, same size -> over a
//   3: s = Shape(b)     s is never read
//   4: y = MatMul(b, r)
// Expected, in place: x [0,1); a and b one buffer [0,5) (b last read at 4);
// ws [1,3); s [3,4); y [4,5) (output: to the end, 5 steps); r [0,5); m 0 B.
Schedule hostSchedule() {
  Schedule S;
  auto T = [&](const char *Name, uint64_t Bytes, TensorKind K, bool Host) {
    ScheduleTensor Ten;
    Ten.Name = Name;
    Ten.SizeBytes = Bytes;
    Ten.Kind = K;
    Ten.HostHome = Host;
    Ten.IsGraphOutput = K == TensorKind::GraphOutput;
    S.Tensors.push_back(Ten);
  };
  T("ws", 40, TensorKind::Activation, true);
  T("x", 16, TensorKind::GraphInput, false);
  T("a", 16, TensorKind::Activation, false);
  T("b", 16, TensorKind::Activation, false);
  T("y", 16, TensorKind::GraphOutput, false);
  T("m", 8, TensorKind::OptimizerState, true);
  T("r", 24, TensorKind::Weight, false);
  T("s", 4, TensorKind::Activation, false);
  auto Add = [&](StepKind K, const char *Op, std::vector<TensorId> R,
                 std::vector<TensorId> W, bool InPlace) {
    Step St;
    St.Kind = K;
    St.Op = Op;
    St.Reads = std::move(R);
    St.Writes = std::move(W);
    St.MayWriteInPlace = InPlace;
    S.Steps.push_back(std::move(St));
  };
  Add(StepKind::Compute, "Relu", {1}, {2}, false);
  Add(StepKind::Prefetch, "Prefetch", {}, {0}, false);
  Add(StepKind::Compute, "Add", {2, 0}, {3}, true);
  Add(StepKind::Compute, "Shape", {3}, {7}, false);
  Add(StepKind::Compute, "MatMul", {3, 6}, {4}, false);
  return S;
}

struct Range {
  uint64_t Start, End, Bytes;
  bool operator==(const Range &O) const {
    return Start == O.Start && End == O.End && Bytes == O.Bytes;
  }
};
std::ostream &operator<<(std::ostream &OS, const Range &R) {
  return OS << '[' << R.Start << ',' << R.End << ") " << R.Bytes << " B";
}
Range rangeOf(const Lifetimes &L, TensorId T) {
  const LiveBuffer &B = L.Buffers[L.BufferOf[T]];
  return {B.StartStep, B.EndStep, B.SizeBytes};
}
} // namespace

TEST(Liveness, HostHomeIOAndDeadTensors) {
  Schedule S = hostSchedule();
  llvm::Error E = verifySchedule(S);
  ASSERT_FALSE(E) << llvm::toString(std::move(E));
  Lifetimes L = computeLifetimes(S, LivenessOptions());
  EXPECT_EQ(L.NumSteps, 5u);
  EXPECT_EQ(rangeOf(L, 1), (Range{0, 1, 16})); // x
  EXPECT_EQ(rangeOf(L, 2), (Range{0, 5, 16})); // a, then b over it
  EXPECT_EQ(L.BufferOf[3], L.BufferOf[2]);     // b
  EXPECT_EQ(rangeOf(L, 0), (Range{1, 3, 40})); // ws, from its Prefetch
  EXPECT_EQ(rangeOf(L, 7), (Range{3, 4, 4}));  // s, never read
  EXPECT_EQ(rangeOf(L, 4), (Range{4, 5, 16})); // y
  EXPECT_EQ(rangeOf(L, 6), (Range{0, 5, 24})); // r
  EXPECT_EQ(rangeOf(L, 5).Bytes, 0u);          // m: host only
  ASSERT_EQ(L.InPlace.size(), 1u);
  EXPECT_EQ(L.InPlace[0], (std::pair<TensorId, TensorId>{3, 2}));
  // Buffers: x, r, a+b, ws, s, y, m = 7 (every tensor has one).
  EXPECT_EQ(L.Buffers.size(), 7u);
}

// With in-place off, b gets its own buffer: a [0,3) (last read at step 2),
// b [2,5).
TEST(Liveness, InPlaceOff) {
  LivenessOptions Opts;
  Opts.InPlace = false;
  Lifetimes L = computeLifetimes(hostSchedule(), Opts);
  EXPECT_TRUE(L.InPlace.empty());
  EXPECT_NE(L.BufferOf[3], L.BufferOf[2]);
  EXPECT_EQ(rangeOf(L, 2), (Range{0, 3, 16}));
  EXPECT_EQ(rangeOf(L, 3), (Range{2, 5, 16}));
  EXPECT_EQ(L.Buffers.size(), 8u);
}
