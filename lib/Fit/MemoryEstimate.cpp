//===- MemoryEstimate.cpp - region sizes and the arena's live peak --------===//
//
// Mirrors Plan.cpp's region rule (weights and constants resident, graph
// inputs and outputs in io unless placed in the arena, everything else in
// the arena) and sweeps the arena buffers' [start, end) ranges for the peak.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/MemoryEstimate.h"

using namespace oomplan;

static uint64_t alignUp(uint64_t X, uint64_t A) {
  return A ? (X + A - 1) / A * A : X;
}

MemoryEstimate oomplan::estimateMemory(const Schedule &S,
                                       const EstimateOptions &Opts) {
  return estimateMemory(S, computeLifetimes(S, Opts.Liveness), Opts);
}

// Region sizes into M; returns the arena's live-bytes change at each step.
static std::vector<int64_t> arenaDeltas(const Lifetimes &L,
                                        const EstimateOptions &Opts,
                                        MemoryEstimate &M) {
  std::vector<int64_t> Delta(L.NumSteps + 2, 0);
  for (const LiveBuffer &B : L.Buffers) {
    uint64_t Size = alignUp(B.SizeBytes, Opts.AlignBytes);
    switch (B.Kind) {
    case TensorKind::Weight:
    case TensorKind::Constant:
      M.WeightBytes += Size;
      continue;
    case TensorKind::GraphInput:
    case TensorKind::GraphOutput:
      if (!Opts.IOInArena) {
        M.IOBytes += Size;
        continue;
      }
      break;
    default:
      break;
    }
    uint64_t End = B.EndStep < L.NumSteps + 1 ? B.EndStep : L.NumSteps + 1;
    Delta[B.StartStep] += static_cast<int64_t>(Size);
    Delta[End] -= static_cast<int64_t>(Size);
  }
  return Delta;
}

uint64_t oomplan::excessBytes(const Schedule &S, const EstimateOptions &Opts,
                              uint64_t Target) {
  Lifetimes L = computeLifetimes(S, Opts.Liveness);
  MemoryEstimate M;
  std::vector<int64_t> Delta = arenaDeltas(L, Opts, M);
  int64_t Live = static_cast<int64_t>(M.WeightBytes + M.IOBytes);
  uint64_t Excess = 0;
  for (uint64_t Step = 0; Step <= L.NumSteps; ++Step) {
    Live += Delta[Step];
    if (Live > static_cast<int64_t>(Target))
      Excess += static_cast<uint64_t>(Live) - Target;
  }
  return Excess;
}

MemoryEstimate oomplan::estimateMemory(const Schedule &S, const Lifetimes &L,
                                       const EstimateOptions &Opts) {
  MemoryEstimate M;
  std::vector<int64_t> Delta = arenaDeltas(L, Opts, M);
  int64_t Live = 0;
  for (uint64_t Step = 0; Step <= L.NumSteps; ++Step) {
    Live += Delta[Step];
    if (Live > static_cast<int64_t>(M.ArenaPeak)) {
      M.ArenaPeak = static_cast<uint64_t>(Live);
      M.PeakStep = Step;
    }
  }
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
