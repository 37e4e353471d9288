//===- RunCommands.h - oomplan-run --commands: one fork per line -*- C++
//-*-===//
//
// `oomplan-run --commands FILE`: each line of FILE is one oomplan-run
// command line (api::forEachCommandLine). Each runs in a child forked from
// this process, after the process start and ONNX's schema registry (about
// 40 ms together, more than running a small model) were paid here once. A child
// starts with every option at its default, so no line's options reach the
// next; a line that crashes or hangs is reported as such and the next line
// still runs. One JSON object per line on stdout (JSON Lines): line,
// command, exit (or signal, with exit -SIGNAL), stdout, stderr.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TOOLS_RUNCOMMANDS_H
#define OOMPLAN_TOOLS_RUNCOMMANDS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <string>

namespace oomplan {
namespace run {

/// Runs RUNLINE(arguments) for every command line of PATH, each in a forked
/// child whose stdout and stderr are captured; a child still running after
/// TIMEOUTSECONDS (0: no limit) is killed (SIGALRM). Returns 1 when PATH
/// cannot be read or some line exited other than 0 or 2, else 2 when some
/// line's plan did not fit its budget (exit 2), else 0.
int runCommandsForked(
    llvm::StringRef Path, unsigned TimeoutSeconds,
    llvm::function_ref<int(llvm::ArrayRef<std::string>)> RunLine,
    llvm::raw_ostream &Out);

} // namespace run
} // namespace oomplan

#endif
