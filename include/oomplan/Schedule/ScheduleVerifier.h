//===- ScheduleVerifier.h - the rules every schedule obeys ------*- C++ -*-===//
//
// Every transform (training, reorder, recompute, offload, weight streaming,
// micro-batching) edits a Schedule; liveness and placement then trust it. The
// placement verifier only sees buffers, so a schedule that reads a value
// before it exists, or on the device while it is in host memory, would be
// placed and "verified" without complaint. This verifier checks the schedule
// itself, after every transform and before placement, in every build (not
// an assert): a broken schedule is a bug in oomplan, reported as an internal
// error naming the step index, its op and the tensor.
//
// Terms. A tensor is *resident* when it exists before step 0 and for the
// whole run: Kind Weight, Constant, GraphInput or OptimizerState, and not
// HostHome. A *device step* is any step without OnHost. A tensor is
// *defined* once it is resident or a step has written it. It is *offloaded*
// after an Offload step reads it, until a Prefetch step writes it again.
//
// The rules, one per ScheduleRule:
//
// 1. ReadBeforeWrite: every read is of a defined tensor (host-home tensors:
//    rule 3). Tensor ids and ViewOf are in range.
// 2. ViewInPlace: ViewOf is -1 or indexes Reads, and then Writes is not
//    empty and Writes[0] is no larger than the tensor it views (a view has no
//    bytes of its own). MayWriteInPlace is set only on a device Compute,
//    Recompute or Backward step that is not a view, and Writes[0] has the
//    byte size of one of its Reads (liveness reuses a dying read's buffer
//    only when the sizes are equal; elementwise ops have such a read).
// 3. HostResident: a device step reads a HostHome tensor only after a
//    Prefetch step has written it, and never reads a tensor that is
//    offloaded. Only Prefetch steps write HostHome tensors on the device.
//    OnHost steps are the exception: they read host-home tensors (their host
//    copy) and only those, and write only host-home tensors.
// 4. RecomputeLive: a Recompute step reads only live values. A value is
//    dead on the device once an Offload has moved it (until a Prefetch
//    writes it again), and, when a Recompute step re-runs the step that
//    wrote it (same node; its writes are copies, position by position),
//    after its last read by an ordinary (non-Recompute) step: the schedule
//    has declared the original dropped, and reads after that must use the
//    copy. Reading it anyway would silently keep it alive. A kept value
//    (a checkpoint: nothing recomputes it) stays live to its last read,
//    the Recompute's included; that is how checkpointing works.
// 5. WriteOnce: a tensor is written at most once, and a resident tensor
//    other than a Constant (whose Constant node's step writes it) not at
//    all, with two exceptions by design: a Prefetch step may write a
//    tensor again (it re-materialises the host copy: a streamed weight, an
//    offloaded activation, a parameter updated on the host), and a
//    Recompute step may write again a tensor that is already defined (the
//    same value, recomputed). No step lists a tensor twice in its Writes.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SCHEDULE_SCHEDULEVERIFIER_H
#define OOMPLAN_SCHEDULE_SCHEDULEVERIFIER_H

#include "oomplan/Schedule/Schedule.h"
#include "llvm/Support/Error.h"

namespace oomplan {

/// The rule a schedule broke (for tests and messages).
enum class ScheduleRule : uint8_t {
  ReadBeforeWrite,
  ViewInPlace,
  HostResident,
  RecomputeLive,
  WriteOnce,
};

/// Short name of a rule, as error messages print it: "read-before-write",
/// "view/in-place", "host-resident", "recompute-live", "write-once".
llvm::StringRef scheduleRuleName(ScheduleRule R);

/// Success, or an internal error for the first broken rule in step order:
/// "schedule step I (Op): [rule] what, naming the tensor".
llvm::Error verifySchedule(const Schedule &S);

/// The same, with the pass that produced S named in the message.
llvm::Error verifyScheduleAfter(llvm::StringRef Pass, const Schedule &S);

} // namespace oomplan

#endif
