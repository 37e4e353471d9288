//===- PlacementVerifier.cpp - sweep-line check of a placement ------------===//
//
// Shares no code with the planner's algorithms on purpose. First a pass over
// every buffer checks alignment and that it lies inside the arena; then a
// sweep over lifetime events (ends before starts at the same step, since
// lifetimes are half-open) keeps the live buffers in a map ordered by
// offset. Live buffers are pairwise disjoint, so a new buffer only needs to
// be compared with its two neighbours in that map: O(n log n) in all.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Verify/PlacementVerifier.h"
#include "oomplan/Support/CheckedMath.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include <map>
#include <vector>

using namespace llvm;
using oomplan::planner::BufferRequest;

namespace oomplan::verify {

namespace {
/// "buffer 7 (bytes [0, 64), steps [2, 5))".
std::string describe(const BufferRequest &R, uint64_t Offset) {
  return ("buffer " + Twine(R.Id) + " (bytes [" + Twine(Offset) + ", " +
          Twine(Offset + R.SizeBytes) + "), steps [" + Twine(R.StartStep) +
          ", " + Twine(R.EndStep) + "))")
      .str();
}

bool needsSpace(const BufferRequest &R) {
  return R.SizeBytes > 0 && R.EndStep > R.StartStep;
}
} // namespace

static Error checkEachBuffer(ArrayRef<BufferRequest> Requests,
                             ArrayRef<uint64_t> Offsets, uint64_t ArenaBytes) {
  for (size_t I = 0; I < Requests.size(); ++I) {
    const BufferRequest &R = Requests[I];
    if (R.AlignBytes == 0)
      return makeInputError("buffer " + Twine(R.Id) + " has alignment 0");
    if (Offsets[I] % R.AlignBytes != 0)
      return makeInputError("buffer " + Twine(R.Id) + " at offset " +
                            Twine(Offsets[I]) + " is not aligned to " +
                            Twine(R.AlignBytes) + " bytes");
    uint64_t End = 0;
    if (!checkedAdd(Offsets[I], R.SizeBytes, End) || End > ArenaBytes)
      return makeInputError(describe(R, Offsets[I]) +
                            " ends outside the arena of " + Twine(ArenaBytes) +
                            " bytes");
    if (R.EndStep < R.StartStep)
      return makeInputError("buffer " + Twine(R.Id) + " ends before it starts");
  }
  return Error::success();
}

static Error checkOverlaps(ArrayRef<BufferRequest> Requests,
                           ArrayRef<uint64_t> Offsets) {
  struct Event {
    uint64_t Step;
    bool IsStart;
    uint32_t Index;
  };
  std::vector<Event> Events;
  for (size_t I = 0; I < Requests.size(); ++I) {
    if (!needsSpace(Requests[I]))
      continue;
    Events.push_back({Requests[I].StartStep, true, uint32_t(I)});
    Events.push_back({Requests[I].EndStep, false, uint32_t(I)});
  }
  llvm::sort(Events, [](const Event &A, const Event &B) {
    if (A.Step != B.Step)
      return A.Step < B.Step;
    return !A.IsStart && B.IsStart;
  });
  std::map<uint64_t, uint32_t> Live; // Offset -> request index.
  auto Conflict = [&](uint32_t A, uint32_t B) {
    return makeInputError(describe(Requests[A], Offsets[A]) + " overlaps " +
                          describe(Requests[B], Offsets[B]));
  };
  for (const Event &E : Events) {
    uint64_t Offset = Offsets[E.Index];
    if (!E.IsStart) {
      Live.erase(Offset);
      continue;
    }
    auto Next = Live.lower_bound(Offset);
    if (Next != Live.end() &&
        Next->first < Offset + Requests[E.Index].SizeBytes)
      return Conflict(Next->second, E.Index);
    if (Next != Live.begin()) {
      auto Prev = std::prev(Next);
      if (Prev->first + Requests[Prev->second].SizeBytes > Offset)
        return Conflict(Prev->second, E.Index);
    }
    Live.emplace(Offset, E.Index);
  }
  return Error::success();
}

Error verifyPlacement(ArrayRef<BufferRequest> Requests,
                      ArrayRef<uint64_t> Offsets, uint64_t ArenaBytes,
                      std::optional<uint64_t> BudgetBytes) {
  if (Offsets.size() != Requests.size())
    return makeInputError("placement has " + Twine(Offsets.size()) +
                          " offsets for " + Twine(Requests.size()) +
                          " buffers");
  if (Requests.size() >= UINT32_MAX)
    return makeUnsupportedError("too many buffers to verify");
  if (Error E = checkEachBuffer(Requests, Offsets, ArenaBytes))
    return E;
  if (Error E = checkOverlaps(Requests, Offsets))
    return E;
  if (BudgetBytes && ArenaBytes > *BudgetBytes) {
    // Name the buffer that reaches highest: it is over the budget.
    size_t Top = 0;
    for (size_t I = 1; I < Requests.size(); ++I)
      if (Offsets[I] + Requests[I].SizeBytes >
          Offsets[Top] + Requests[Top].SizeBytes)
        Top = I;
    std::string Culprit =
        Requests.empty()
            ? std::string()
            : "; highest is " + describe(Requests[Top], Offsets[Top]);
    return makeInputError("arena of " + Twine(ArenaBytes) +
                          " bytes exceeds the budget of " +
                          Twine(*BudgetBytes) + " bytes" + Culprit);
  }
  return Error::success();
}

} // namespace oomplan::verify
