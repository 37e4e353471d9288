//===- MemoryEstimate.cpp - region sizes and the arena's live peak --------===//
//
// The live-bytes profile (Schedule/LiveProfile.h) gives the regions and the
// arena's peak, by the same region rule and sweep as the plan; this adds the
// host bytes, which only the fit transforms create.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/MemoryEstimate.h"
#include "oomplan/Schedule/LiveProfile.h"

using namespace oomplan;

MemoryEstimate oomplan::estimateMemory(const Schedule &S,
                                       const EstimateOptions &Opts) {
  return estimateMemory(S, computeLifetimes(S, Opts.Liveness), Opts);
}

static ProfileOptions profileOptions(const EstimateOptions &Opts) {
  ProfileOptions P;
  P.AlignBytes = Opts.AlignBytes;
  P.IOInArena = Opts.IOInArena;
  return P;
}

uint64_t oomplan::excessBytes(const Schedule &S, const EstimateOptions &Opts,
                              uint64_t Target) {
  return computeLiveProfile(computeLifetimes(S, Opts.Liveness),
                            profileOptions(Opts))
      .excessOver(Target);
}

MemoryEstimate oomplan::estimateMemory(const Schedule &S, const Lifetimes &L,
                                       const EstimateOptions &Opts) {
  LiveProfile P = computeLiveProfile(L, profileOptions(Opts));
  MemoryEstimate M;
  M.WeightBytes = P.WeightBytes;
  M.IOBytes = P.IOBytes;
  M.ArenaPeak = P.Peak;
  M.PeakStep = P.PeakStep;
  // A weight streamed in twice (two prefetched copies) lives on the host
  // once: count graph values once, synthetic tensors each.
  std::vector<bool> Counted;
  for (const ScheduleTensor &T : S.Tensors) {
    if (!T.HostHome)
      continue;
    if (T.Value != NoId) {
      if (T.Value >= Counted.size())
        Counted.resize(T.Value + 1, false);
      if (Counted[T.Value])
        continue;
      Counted[T.Value] = true;
    }
    M.HostBytes += T.SizeBytes;
  }
  return M;
}
