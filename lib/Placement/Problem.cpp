//===- Problem.cpp - validating and compressing request lists -------------===//
//
// Builds the Problem every algorithm works on: checks each request, rounds
// sizes up to footprints with overflow checks, and maps step ranges to
// section ranges by sorting the distinct start and end steps.
//
//===----------------------------------------------------------------------===//
#include "Problem.h"
#include "oomplan/Support/CheckedMath.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include <algorithm>

using namespace llvm;

namespace oomplan::planner {

static Error checkRequest(const BufferRequest &R) {
  if (R.AlignBytes == 0 || (R.AlignBytes & (R.AlignBytes - 1)) != 0)
    return makeInputError("buffer " + Twine(R.Id) + ": alignment " +
                          Twine(R.AlignBytes) + " is not a power of two");
  if (R.EndStep < R.StartStep)
    return makeInputError("buffer " + Twine(R.Id) + ": lifetime [" +
                          Twine(R.StartStep) + ", " + Twine(R.EndStep) +
                          ") ends before it starts");
  return Error::success();
}

/// Largest total of (padded) footprints accepted.
constexpr uint64_t MaxTotalBytes = uint64_t(1) << 63;

Expected<Problem> buildProblem(ArrayRef<BufferRequest> Requests) {
  if (Requests.size() >= UINT32_MAX)
    return makeUnsupportedError("too many buffers: " + Twine(Requests.size()));
  Problem P;
  P.Requests = Requests;
  size_t N = Requests.size();
  P.Footprint.assign(N, 0);
  P.Lo.assign(N, 0);
  P.Hi.assign(N, 0);
  std::vector<uint64_t> Steps;
  Steps.reserve(2 * N);
  uint64_t FootprintTotal = 0;
  for (size_t I = 0; I < N; ++I) {
    const BufferRequest &R = Requests[I];
    if (Error E = checkRequest(R))
      return E;
    uint64_t Footprint = 0, Padded = 0;
    // Footprints may total 2^63 at most (the limit on any size); with
    // alignment padding the total must stay below 2^64 - 1. An arena can
    // then never reach UINT64_MAX, which the searches use as "no solution
    // yet".
    if (!checkedAlignUp(R.SizeBytes, R.AlignBytes, Footprint) ||
        !checkedAdd(FootprintTotal, Footprint, FootprintTotal) ||
        FootprintTotal > MaxTotalBytes)
      return makeOverflowError(
          "buffer " + Twine(R.Id) +
          ": total size of all buffers exceeds 2^63 bytes");
    if (!checkedAdd(Footprint, R.AlignBytes - 1, Padded) ||
        !checkedAdd(P.SafeTotalBytes, Padded, P.SafeTotalBytes) ||
        P.SafeTotalBytes == UINT64_MAX)
      return makeOverflowError(
          "buffer " + Twine(R.Id) +
          ": total size of all buffers with alignment padding "
          "overflows 64 bits");
    if (Footprint == 0 || R.StartStep == R.EndStep)
      continue;
    P.Footprint[I] = Footprint;
    P.Active.push_back(I);
    Steps.push_back(R.StartStep);
    Steps.push_back(R.EndStep);
  }
  llvm::sort(Steps);
  Steps.erase(std::unique(Steps.begin(), Steps.end()), Steps.end());
  P.NumSections = Steps.empty() ? 0 : Steps.size() - 1;
  auto Index = [&](uint64_t Step) {
    return uint32_t(std::lower_bound(Steps.begin(), Steps.end(), Step) -
                    Steps.begin());
  };
  for (uint32_t I : P.Active) {
    P.Lo[I] = Index(Requests[I].StartStep);
    P.Hi[I] = Index(Requests[I].EndStep);
  }
  return P;
}

uint64_t arenaOf(const Problem &P, ArrayRef<uint64_t> Offsets) {
  uint64_t Arena = 0;
  for (uint32_t I : P.Active)
    Arena = std::max(Arena, Offsets[I] + P.Footprint[I]);
  return Arena;
}

std::vector<uint64_t> naiveOffsets(const Problem &P) {
  std::vector<uint64_t> Offsets(P.Requests.size(), 0);
  uint64_t Cursor = 0; // Bounded by SafeTotalBytes: no overflow.
  for (uint32_t I : P.Active) {
    Offsets[I] = alignUp(Cursor, P.align(I));
    Cursor = Offsets[I] + P.Footprint[I];
  }
  return Offsets;
}

Placement makePlacement(const Problem &P, std::vector<uint64_t> Offsets,
                        StringRef Algorithm) {
  Placement Result;
  Result.ArenaBytes = arenaOf(P, Offsets);
  // Alignment padding can make a reuse plan worse than no reuse on odd
  // inputs; never return worse than the baseline.
  std::vector<uint64_t> Naive = naiveOffsets(P);
  if (uint64_t NaiveArena = arenaOf(P, Naive); NaiveArena < Result.ArenaBytes) {
    Offsets = std::move(Naive);
    Result.ArenaBytes = NaiveArena;
  }
  Result.Offsets = std::move(Offsets);
  Result.Algorithm = Algorithm.str();
  return Result;
}

} // namespace oomplan::planner
