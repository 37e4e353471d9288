//===- Timeline.h - pictures of a plan: SVG/HTML and Chrome trace -*- C++
//-*-===//
//
// For people who prefer to look. The timeline is a self-contained SVG (or an
// HTML page holding it): bytes live per step stacked by memory class, the
// budget as a line, the memory the plan allocates as another, the peak step
// marked. The trace is Chrome trace-event JSON (chrome://tracing, Perfetto):
// one counter track of live bytes, one complete ("X") slice per buffer with
// ts = first step and dur = steps live (1 step = 1 microsecond).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_TIMELINE_H
#define OOMPLAN_REPORT_TIMELINE_H

#include "oomplan/Report/Report.h"
#include <array>

namespace oomplan {
namespace report {

using ClassBytes = std::array<uint64_t, NumMemoryClasses>;

/// Bytes live at each step by class: weights/io regions (resident) for the
/// whole run, arena buffers (aligned) over their lifetimes, OverheadBytes
/// throughout. One entry per step (at least one).
std::vector<ClassBytes> liveBytesByStep(const Plan &P, uint64_t OverheadBytes);

/// The timeline as a standalone SVG document.
void writeTimelineSVG(llvm::raw_ostream &OS, const Plan &P,
                      const PlanContext &C, const MemoryReport &R);
/// The same SVG inside a minimal HTML page.
void writeTimelineHTML(llvm::raw_ostream &OS, const Plan &P,
                       const PlanContext &C, const MemoryReport &R);

/// The plan as Chrome trace-event JSON.
void writeChromeTrace(llvm::raw_ostream &OS, const Plan &P,
                      const PlanContext &C, const MemoryReport &R);

} // namespace report
} // namespace oomplan

#endif
