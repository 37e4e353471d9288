//===- SchedulePrinter.h - a schedule as text, one line per step -*- C++
//-*-===//
//
// --emit=schedule and --print-after print the schedule the transforms made,
// so that a test can check one transform's own output (the Recompute,
// Offload and Prefetch steps it inserted, the reads it redirected) instead of
// summary lines. The format is one line per step and nothing else:
//
//   <index> <kind> <op> <node>: <reads> -> <writes>[ view of <t>][ in-place]
//       [ on-host]
//
// where <node> is the graph node's name in quotes (#<id> without a graph or
// for an unnamed node, '-' for steps that run no node), and <reads>/<writes>
// list
// "<tensor>:<bytes>", comma-separated, host-home tensors marked "@host", or
// '-' when empty. "in-place" is the permission (MayWriteInPlace); liveness
// decides whether a dying read is reused. Deterministic.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SCHEDULE_SCHEDULEPRINTER_H
#define OOMPLAN_SCHEDULE_SCHEDULEPRINTER_H

#include "oomplan/Schedule/Schedule.h"
#include "llvm/Support/raw_ostream.h"

namespace oomplan {

/// "compute", "recompute", "offload", "prefetch", "backward", "optimizer".
llvm::StringRef stepKindName(StepKind K);

/// Prints S, one line per step. With G (the graph S was built from), steps
/// name their node; without it, its id.
void printSchedule(llvm::raw_ostream &OS, const Schedule &S,
                   const Graph *G = nullptr);

} // namespace oomplan

#endif
