//===- LaunchPlan.h - which queue each step runs on, and its events -*- C++
//-*-===//
//
// A plan's steps run on two queues (Device.h): compute steps on one, the
// plan's offloads and prefetches on the other, so that copies overlap
// kernels. Two steps on different queues are unordered unless an event
// orders them, and the planner reuses arena bytes: a prefetch may land in
// bytes that a kernel before it still reads, and a kernel may read bytes a
// prefetch is still writing. The launch plan gives every step its queue,
// the events it waits for, and whether it records one, so that each such
// pair is ordered and no other is (a wait too many serialises the copy
// behind compute and loses the overlap).
//
// Rule: step S on queue Q waits for the latest step S' on the other queue
// that S conflicts with (same region, overlapping bytes, one of them
// writes) and that no earlier wait on Q already orders. Waiting on S'
// orders every earlier step of its queue too (a queue runs in order).
//
// verifyLaunchPlan checks a launch plan independently, with vector clocks:
// every conflicting pair on different queues must be ordered by a chain of
// events, and every wait must name an event recorded before it.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_LAUNCHPLAN_H
#define OOMPLAN_RUNTIME_LAUNCHPLAN_H

#include "oomplan/Plan/Plan.h"
#include "oomplan/Runtime/Device.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include <vector>

namespace oomplan {
namespace runtime {

/// Bytes one step reads or writes: [Begin, End) of region R. In unplanned
/// mode (every tensor its own allocation) Begin is the tensor id and End
/// Begin + 1, so only the same tensor conflicts.
struct Access {
  Region R = Region::Arena;
  uint64_t Begin = 0, End = 0;
  bool Write = false;
};

struct StepLaunch {
  Queue Q = Queue::Compute;
  /// Events to wait for before the step.
  llvm::SmallVector<unsigned, 2> Waits;
  /// Event recorded after the step, or -1.
  int Record = -1;
};

struct LaunchPlan {
  std::vector<StepLaunch> Steps; ///< Per schedule step.
  unsigned NumEvents = 0;
};

/// The queue of a step: Copy for Prefetch and Offload, Compute otherwise.
Queue stepQueue(StepKind K);

/// --poison: the buffers each step fills after its work, on its own queue:
/// those that die after it (in the arena, or every buffer when unplanned;
/// never weights or constants, nor a buffer alive to the last step).
std::vector<llvm::SmallVector<BufferId, 2>> poisonedAfter(const Plan &P,
                                                          bool Unplanned);

/// The bytes each step of P touches: its reads and writes at their
/// buffers' places (a prefetch also reads its tensors' host homes, an
/// offload writes them). Unplanned: by tensor id, as Access says. With
/// Poison, a step's fills (poisonedAfter) are writes of it too, so that a
/// fill is ordered after a read of the buffer on the other queue.
std::vector<llvm::SmallVector<Access, 6>>
stepAccesses(const Plan &P, bool Unplanned, bool Poison = false);

/// The launch plan of P (the rule above).
LaunchPlan planLaunches(const Plan &P, bool Unplanned = false,
                        bool Poison = false);
/// The same from given accesses and queues (for tests).
LaunchPlan planLaunches(llvm::ArrayRef<llvm::SmallVector<Access, 6>> Accesses,
                        llvm::ArrayRef<Queue> Queues);

/// An internal error naming the first unordered conflicting pair, or a
/// wait on an event not recorded before it.
llvm::Error
verifyLaunchPlan(llvm::ArrayRef<llvm::SmallVector<Access, 6>> Accesses,
                 const LaunchPlan &L);

} // namespace runtime
} // namespace oomplan

#endif
