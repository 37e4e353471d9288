//===- ArenaShadow.cpp - arena bytes poisoned for AddressSanitizer --------===//
//
// The lists ArenaShadow.h's rules need, made once per executor: per step,
// the arena buffers that come alive before it and die after it. Empty in a
// build without AddressSanitizer.
//
//===----------------------------------------------------------------------===//
#include "ArenaShadow.h"

#if OOMPLAN_ASAN
#include "oomplan/Runtime/Executor.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::detail;

void ArenaShadow::init(const Plan &P, const RunInfo &Info, char *const *Base,
                       const uint64_t *RegionBytes) {
  const Lifetimes &L = P.Life;
  uint64_t NumSteps = P.Sched.Steps.size();
  std::vector<bool> Workspace(P.Sched.Tensors.size());
  for (TensorId T : Info.Workspace)
    if (T != NoId)
      Workspace[T] = true;
  // A tensor's bytes at the run's dims (the plan may have rounded, or sized
  // for larger dims); a workspace's kernel is given the whole buffer.
  auto LiveBytes = [&](const LiveBuffer &LB) {
    uint64_t Bytes = 0;
    for (TensorId T : LB.Members) {
      if (Workspace[T])
        return LB.SizeBytes;
      if (!Info.Present[T])
        continue;
      TensorRef R;
      R.Type = Info.Types[T];
      R.Dims = Info.Dims[T];
      Bytes = std::max(Bytes, R.bytes());
    }
    return std::min(Bytes, LB.SizeBytes);
  };
  // The host region holds host homes, copied whole by offloads and
  // prefetches at any time of the run; it stays addressable.
  for (unsigned R = 0; R < NumRegions; ++R) {
    if (!Base[R] || Region(R) == Region::Host)
      continue;
    poisonBytes(Base[R], RegionBytes[R]);
    Regions.push_back({Base[R], RegionBytes[R]});
  }
  unsigned A = unsigned(Region::Arena);
  Arena = {Base[A], Base[A] ? RegionBytes[A] : 0};
  std::vector<std::vector<uint32_t>> BornAt(NumSteps + 1), DyingAt(NumSteps);
  for (BufferId B = 0; B < L.Buffers.size(); ++B) {
    const LiveBuffer &LB = L.Buffers[B];
    Region R = P.RegionOf[B];
    if (!Base[unsigned(R)] || R == Region::Host)
      continue;
    Span S{Base[unsigned(R)] + P.OffsetOf[B], LiveBytes(LB)};
    if (R != Region::Arena) { // weights and IO: alive from create() on
      unpoisonBytes(S.P, S.Bytes);
      continue;
    }
    uint32_t Id = Spans.size();
    Spans.push_back(S);
    BornAt[std::min(LB.StartStep, NumSteps)].push_back(Id);
    if (LB.EndStep > 0 && LB.EndStep < NumSteps)
      DyingAt[LB.EndStep - 1].push_back(Id);
    bool Input = llvm::any_of(LB.Members, [&](TensorId T) {
      return P.Sched.Tensors[T].Kind == TensorKind::GraphInput;
    });
    if (Input || LB.EndStep >= NumSteps)
      BetweenRuns.push_back(S);
  }
  auto Flatten = [&](const std::vector<std::vector<uint32_t>> &At,
                     std::vector<uint64_t> &Off, std::vector<uint32_t> &Ids) {
    Off.assign(1, 0);
    for (const std::vector<uint32_t> &List : At) {
      Ids.insert(Ids.end(), List.begin(), List.end());
      Off.push_back(Ids.size());
    }
  };
  Flatten(BornAt, Born, BornSpan);
  Flatten(DyingAt, Dying, DyingSpan);
  endRun();
}

void ArenaShadow::set(const std::vector<uint64_t> &Off,
                      const std::vector<uint32_t> &Ids, uint64_t S,
                      bool Poison) {
  if (S + 1 >= Off.size())
    return; // not planned (unplanned mode, or another device's memory)
  for (uint64_t I = Off[S]; I < Off[S + 1]; ++I) {
    const Span &Sp = Spans[Ids[I]];
    if (Poison)
      poisonBytes(Sp.P, Sp.Bytes);
    else
      unpoisonBytes(Sp.P, Sp.Bytes);
  }
}

void ArenaShadow::beginRun() {
  if (Arena.P)
    poisonBytes(Arena.P, Arena.Bytes);
}

void ArenaShadow::endRun() {
  if (!Arena.P)
    return;
  poisonBytes(Arena.P, Arena.Bytes);
  for (const Span &S : BetweenRuns)
    unpoisonBytes(S.P, S.Bytes);
}

void ArenaShadow::reveal(const void *P, uint64_t Bytes) const {
  if (!Regions.empty())
    unpoisonBytes(P, Bytes);
}

ArenaShadow::~ArenaShadow() {
  for (const Span &S : Regions)
    unpoisonBytes(S.P, S.Bytes);
}
#endif
