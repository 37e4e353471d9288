//===- CommandLines.h - reading a file of command lines ---------*- C++ -*-===//
//
// `--commands FILE` of oomplan and oomplan-run: each line of FILE is one
// command line. This reads them, a line at a time from standard input when
// FILE is "-" (so that a program can write a line and wait for its answer),
// skips blank lines and '#' comments, and splits each line as a shell would
// (GNU quoting: '...', "...", backslash).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TOOLS_COMMANDLINES_H
#define OOMPLAN_TOOLS_COMMANDLINES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include <string>

namespace oomplan {
namespace tool {

/// Calls FN(line number in the file, the line, its arguments) for each
/// command line of PATH. Returns "" or the message why PATH cannot be read.
std::string
forEachCommandLine(llvm::StringRef Path,
                   llvm::function_ref<void(unsigned, llvm::StringRef,
                                           llvm::ArrayRef<std::string>)>
                       Fn);

} // namespace tool
} // namespace oomplan

#endif
