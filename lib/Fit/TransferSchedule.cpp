//===- TransferSchedule.cpp - as late as possible on one link -------------===//
//
// See TransferSchedule.h. A backward sweep: copy J must finish by its
// reader's start and by the start of copy J+1 (the link is serial), so it
// starts one transfer time earlier; its issue step is found by binary search
// in the start times.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/TransferSchedule.h"
#include <algorithm>

using namespace oomplan;

std::vector<double> oomplan::stallFreeStartTimes(const Schedule &S,
                                                 const CostModel &Cost) {
  std::vector<double> StartAt(S.Steps.size() + 1, 0);
  for (size_t I = 0; I < S.Steps.size(); ++I)
    StartAt[I + 1] = StartAt[I] + Cost.stepSeconds(S, S.Steps[I]);
  return StartAt;
}

// The last step in [Lo, Hi] that starts at or before Time; Lo if none.
static size_t stepAt(llvm::ArrayRef<double> StartAt, double Time, size_t Lo,
                     size_t Hi) {
  auto It =
      std::upper_bound(StartAt.begin() + Lo, StartAt.begin() + Hi + 1, Time);
  return It == StartAt.begin() + Lo ? Lo : size_t(It - StartAt.begin()) - 1;
}

std::vector<size_t> oomplan::scheduleHostToDevice(
    llvm::ArrayRef<HostToDeviceCopy> Copies, llvm::ArrayRef<double> StartAt,
    const CostModel &Cost, size_t Lo, unsigned MaxAhead) {
  std::vector<size_t> Issue(Copies.size(), Lo);
  double NextStart = 1e300;
  for (size_t J = Copies.size(); J-- > 0;) {
    const HostToDeviceCopy &C = Copies[J];
    size_t Hi = std::max(C.NeededAt, Lo);
    double Finish = std::min(StartAt[Hi], NextStart);
    double Start = Finish - Cost.transferSeconds(C.Bytes);
    NextStart = Start;
    Issue[J] = stepAt(StartAt, Start, Lo, Hi);
    if (MaxAhead != UINT32_MAX && J >= MaxAhead)
      Issue[J] =
          std::max(Issue[J], std::min(Copies[J - MaxAhead].NeededAt, Hi));
  }
  return Issue;
}
