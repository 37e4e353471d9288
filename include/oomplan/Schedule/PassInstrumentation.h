//===- PassInstrumentation.h - a hook after each schedule transform -*- C++
//-*-===//
//
// LLVM's -print-after for oomplan's schedule transforms: the pipelines
// (Plan/Pipeline.h, Plan/TrainingPipeline.h) and the chooser (Fit/Chooser.h)
// call after() with the pass name and the schedule it produced, once the
// verifier (ScheduleVerifier.h) has accepted it. The chooser tries many
// candidates; it reports the passes of the one it keeps, in the order they
// were applied. Tools print; the library only calls the hook.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SCHEDULE_PASSINSTRUMENTATION_H
#define OOMPLAN_SCHEDULE_PASSINSTRUMENTATION_H

#include "oomplan/Schedule/Schedule.h"
#include "llvm/ADT/StringRef.h"
#include <functional>

namespace oomplan {

struct PassInstrumentation {
  /// Called after each schedule transform, with the pass name: a name in
  /// the pass registry (PassRegistry.h), such as "training" or "recompute".
  std::function<void(llvm::StringRef Pass, const Schedule &S)> AfterPass;
  void after(llvm::StringRef Pass, const Schedule &S) const {
    if (AfterPass)
      AfterPass(Pass, S);
  }
};

} // namespace oomplan

#endif
