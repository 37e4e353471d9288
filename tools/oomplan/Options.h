//===- Options.h - the oomplan tool's command-line options ------*- C++ -*-===//
//
// The options, grouped by category (Options.cpp), become one api::Request;
// checkArguments refuses unknown options and invalid enum values with a
// suggestion before LLVM's parser sees them.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TOOLS_OPTIONS_H
#define OOMPLAN_TOOLS_OPTIONS_H

#include "oomplan/oomplan.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CommandLine.h"

namespace oomplan {
namespace tool {

/// The categories --help groups the options by, in the order shown.
llvm::ArrayRef<const llvm::cl::OptionCategory *> categories();

/// The request the parsed options describe, or an error message.
llvm::Expected<api::Request> makeRequest();

/// The "Output" category, for options a tool adds (--commands).
llvm::cl::OptionCategory &outputCategory();

/// --backend: oomplan's (the workspaces a CUDA run plans, in the request)
/// and oomplan-run's (where the plan runs), one option for both tools.
llvm::cl::opt<std::string> &backendOption();

/// The output file (-o), and whether --list-algos was given.
const std::string &outputPath();
bool listAlgorithms();

/// Before cl::ParseCommandLineOptions: an unknown option or an invalid value
/// of an enum option gets an error with a suggestion (LLVM's own message
/// for "--optimiser" is about grouping the single-letter -o). Returns the
/// message, or "" when the arguments are fine.
std::string checkArguments(int argc, const char *const *argv);

} // namespace tool
} // namespace oomplan

#endif
