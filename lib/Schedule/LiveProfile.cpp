//===- LiveProfile.cpp - one sweep of start and end events ----------------===//
//
// Difference arrays over the steps: +size at a buffer's start, -size at its
// end, then a prefix sum. Accumulated in 128 bits: sizes are below 2^63 and
// buffers fewer than 2^32, so no sum wraps; stored values saturate at 2^64-1.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/LiveProfile.h"
#include "oomplan/Support/CheckedMath.h"
#include <algorithm>

using namespace oomplan;

using Wide = unsigned __int128;

static uint64_t clamp64(Wide X) {
  return X > Wide(UINT64_MAX) ? UINT64_MAX : uint64_t(X);
}

static Wide alignedSize(uint64_t Size, uint64_t Align) {
  if (Align <= 1)
    return Size;
  return (Wide(Size) + Align - 1) / Align * Align;
}

uint64_t LiveProfile::totalBytes() const {
  return saturatingAdd(saturatingAdd(WeightBytes, IOBytes), Peak);
}

uint64_t LiveProfile::excessOver(uint64_t Target) const {
  Wide Resident = Wide(WeightBytes) + IOBytes, Excess = 0;
  for (uint64_t A : Arena) {
    Wide Live = Resident + A;
    if (Live > Target)
      Excess += Live - Target;
  }
  return clamp64(Excess);
}

LiveProfile oomplan::computeLiveProfile(const Lifetimes &L,
                                        const ProfileOptions &Opts) {
  LiveProfile P;
  const uint64_t Steps = L.NumSteps + 1; // Steps 0..NumSteps.
  std::vector<Wide> Start(Steps + 1, 0), End(Steps + 1, 0);
  std::vector<std::array<Wide, NumTensorKinds>> KStart, KEnd;
  if (Opts.ByKind) {
    KStart.assign(Steps + 1, {});
    KEnd.assign(Steps + 1, {});
  }
  Wide Weights = 0, IO = 0;
  std::array<Wide, NumTensorKinds> Resident{};
  for (const LiveBuffer &B : L.Buffers) {
    Wide Size = alignedSize(B.SizeBytes, Opts.AlignBytes);
    unsigned K = unsigned(B.Kind);
    Region R = regionFor(B.Kind, Opts.IOInArena);
    if (R != Region::Arena) {
      (R == Region::Weights ? Weights : IO) += Size;
      Resident[K] += Size;
      continue;
    }
    uint64_t S = std::min(B.StartStep, Steps);
    uint64_t E = std::min(B.EndStep, Steps);
    if (S >= E)
      continue;
    Start[S] += Size;
    End[E] += Size;
    if (Opts.ByKind) {
      KStart[S][K] += Size;
      KEnd[E][K] += Size;
    }
  }
  P.WeightBytes = clamp64(Weights);
  P.IOBytes = clamp64(IO);
  for (unsigned K = 0; K < NumTensorKinds; ++K)
    P.ResidentByKind[K] = clamp64(Resident[K]);
  P.Arena.resize(Steps);
  if (Opts.ByKind)
    P.ArenaByKind.resize(Steps);
  Wide Live = 0;
  std::array<Wide, NumTensorKinds> KLive{};
  for (uint64_t S = 0; S < Steps; ++S) {
    Live = Live + Start[S] - End[S];
    P.Arena[S] = clamp64(Live);
    if (P.Arena[S] > P.Peak) {
      P.Peak = P.Arena[S];
      P.PeakStep = S;
    }
    if (!Opts.ByKind)
      continue;
    for (unsigned K = 0; K < NumTensorKinds; ++K) {
      KLive[K] = KLive[K] + KStart[S][K] - KEnd[S][K];
      P.ArenaByKind[S][K] = clamp64(KLive[K]);
    }
  }
  return P;
}
