//===- Commands.h - many oomplan command lines in one process ---*- C++ -*-===//
//
// `oomplan --commands FILE`: each line of FILE is one oomplan command line
// (the model and its options), planned in this process one after another,
// with one JSON object per line on standard output (JSON Lines). A pipeline
// that checks hundreds of exports, or a test suite, then pays the process
// start (dynamic loading and ONNX's schema registry, about 40 ms) once
// instead of once per model. FILE "-" reads standard input, answering each
// line as it arrives, so a program can keep one oomplan as a coprocess.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TOOLS_COMMANDS_H
#define OOMPLAN_TOOLS_COMMANDS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace oomplan {
namespace tool {

/// Runs every command line of PATH ("-": standard input), writing one JSON
/// object per line to OUT. Returns the tool's exit code: 1 when the file
/// cannot be read or some line failed with an error, else 2 when some
/// line's plan does not fit, else 0.
int runCommandsFile(llvm::StringRef Path, llvm::raw_ostream &Out);

} // namespace tool
} // namespace oomplan

#endif
