//===- LowerBound.cpp - the largest sum of sizes live at one step ---------===//
//
// A sweep over start and end events sorted by step; ends sort before starts
// at the same step because lifetimes are half-open.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Placement/LowerBound.h"
#include "oomplan/Support/CheckedMath.h"
#include "llvm/ADT/STLExtras.h"
#include <vector>

using namespace llvm;

namespace oomplan::planner {

uint64_t lowerBound(ArrayRef<BufferRequest> Requests) {
  struct Event {
    uint64_t Step;
    bool IsStart;
    uint64_t Bytes;
  };
  std::vector<Event> Events;
  Events.reserve(2 * Requests.size());
  for (const BufferRequest &R : Requests) {
    uint64_t Footprint = 0;
    uint64_t Align = R.AlignBytes == 0 ? 1 : R.AlignBytes;
    if (!checkedAlignUp(R.SizeBytes, Align, Footprint))
      return UINT64_MAX;
    if (Footprint == 0 || R.EndStep <= R.StartStep)
      continue;
    Events.push_back({R.StartStep, true, Footprint});
    Events.push_back({R.EndStep, false, Footprint});
  }
  llvm::sort(Events, [](const Event &A, const Event &B) {
    if (A.Step != B.Step)
      return A.Step < B.Step;
    return !A.IsStart && B.IsStart;
  });
  // Saturation is sticky: once the live sum overflows, the bound is maxed.
  uint64_t Live = 0, Peak = 0;
  for (const Event &E : Events) {
    if (!E.IsStart) {
      Live -= E.Bytes;
      continue;
    }
    if (!checkedAdd(Live, E.Bytes, Live))
      return UINT64_MAX;
    Peak = std::max(Peak, Live);
  }
  return Peak;
}

} // namespace oomplan::planner
