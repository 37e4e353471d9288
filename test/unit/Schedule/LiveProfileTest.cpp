//===- LiveProfileTest.cpp - the one live-bytes sweep, by hand ------------===//
//
// Small lifetimes whose per-step bytes are worked out in the comments. (On
// real models, buildPlan checks the profile's peak against the planner's own
// sweep on every plan.)
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/LiveProfile.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {
LiveBuffer buffer(TensorKind K, uint64_t Bytes, uint64_t Start, uint64_t End) {
  LiveBuffer B;
  B.Kind = K;
  B.SizeBytes = Bytes;
  B.StartStep = Start;
  B.EndStep = End;
  return B;
}
} // namespace

// Steps 0..3 (NumSteps 3, so the profile has 4 entries).
//   weight 100 B -> 256 aligned, resident;  input 10 B -> 256, io region;
//   a: 300 B -> 512, live [0, 2);  b: 256 B -> 256, live [1, 3);
//   c: 1 B -> 256, live [2, 4) (ends past the last step: clamped).
// Arena per step: 0: 512; 1: 512+256 = 768; 2: 256+256 = 512; 3: 256.
TEST(LiveProfile, AlignedBytesPerStepByHand) {
  Lifetimes L;
  L.NumSteps = 3;
  L.Buffers = {buffer(TensorKind::Weight, 100, 0, 4),
               buffer(TensorKind::GraphInput, 10, 0, 2),
               buffer(TensorKind::Activation, 300, 0, 2),
               buffer(TensorKind::Activation, 256, 1, 3),
               buffer(TensorKind::Gradient, 1, 2, 9)};
  ProfileOptions O;
  O.AlignBytes = 256;
  O.ByKind = true;
  LiveProfile P = computeLiveProfile(L, O);
  EXPECT_EQ(P.WeightBytes, 256u);
  EXPECT_EQ(P.IOBytes, 256u);
  EXPECT_EQ(P.Arena, (std::vector<uint64_t>{512, 768, 512, 256}));
  EXPECT_EQ(P.Peak, 768u);
  EXPECT_EQ(P.PeakStep, 1u);
  EXPECT_EQ(P.totalBytes(), 256u + 256u + 768u);
  // By kind at step 2: activation b (256) and gradient c (256).
  EXPECT_EQ(P.ArenaByKind[2][unsigned(TensorKind::Activation)], 256u);
  EXPECT_EQ(P.ArenaByKind[2][unsigned(TensorKind::Gradient)], 256u);
  EXPECT_EQ(P.ResidentByKind[unsigned(TensorKind::Weight)], 256u);
  // Resident 512 + arena per step: 1024, 1280, 1024, 768. Above 1000:
  // 24 + 280 + 24 = 328.
  EXPECT_EQ(P.excessOver(1000), 328u);
  EXPECT_EQ(P.excessOver(1280), 0u);

  // With io in the arena the input joins the arena on steps 0 and 1.
  O.IOInArena = true;
  LiveProfile Q = computeLiveProfile(L, O);
  EXPECT_EQ(Q.IOBytes, 0u);
  EXPECT_EQ(Q.Arena, (std::vector<uint64_t>{768, 1024, 512, 256}));
}

// Two buffers of 2^63 bytes live at once: the sum saturates rather than
// wrapping to 0, so the schedule compares as too large.
TEST(LiveProfile, SaturatesInsteadOfWrapping) {
  Lifetimes L;
  L.NumSteps = 1;
  uint64_t Half = uint64_t(1) << 63;
  L.Buffers = {buffer(TensorKind::Activation, Half, 0, 2),
               buffer(TensorKind::Activation, Half, 0, 2)};
  ProfileOptions O;
  O.AlignBytes = 1;
  LiveProfile P = computeLiveProfile(L, O);
  EXPECT_EQ(P.Peak, UINT64_MAX);
  EXPECT_EQ(P.totalBytes(), UINT64_MAX);
}
