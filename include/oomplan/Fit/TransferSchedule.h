//===- TransferSchedule.h - when host-to-device copies are issued -*- C++
//-*-===//
//
// Activation offload (prefetching saved values back for the backward pass)
// and weight streaming (prefetching host-resident weights) both issue
// host-to-device copies on one link and want the same thing: each copy done
// by the time its first reader starts, issued as late as the link allows so
// its buffer lives as briefly as possible, and never more than MaxAhead
// copies early so that memory can be traded for stalls. One scheduler does
// it for both, against the cost model's stall-free timeline.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FIT_TRANSFERSCHEDULE_H
#define OOMPLAN_FIT_TRANSFERSCHEDULE_H

#include "oomplan/Cost/CostModel.h"
#include "llvm/ADT/ArrayRef.h"
#include <vector>

namespace oomplan {

/// StartAt[I]: when step I of S starts if nothing stalls; StartAt[N] is the
/// end of the last step.
std::vector<double> stallFreeStartTimes(const Schedule &S,
                                        const CostModel &Cost);

/// One host-to-device copy: its bytes, and the first step that reads it.
struct HostToDeviceCopy {
  uint64_t Bytes = 0;
  size_t NeededAt = 0;
};

/// The step before which each copy is issued, in the order of Copies, which
/// must be sorted by NeededAt. Working back from the copy needed last, each
/// copy ends when its reader starts and before the next copy starts; it is
/// issued before the last step that starts by then, but not before step Lo,
/// and (MaxAhead != UINT32_MAX) not before the step that needs the copy
/// MaxAhead places earlier.
std::vector<size_t>
scheduleHostToDevice(llvm::ArrayRef<HostToDeviceCopy> Copies,
                     llvm::ArrayRef<double> StartAt, const CostModel &Cost,
                     size_t Lo, unsigned MaxAhead);

} // namespace oomplan

#endif
