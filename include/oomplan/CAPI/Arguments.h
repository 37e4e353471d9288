//===- Arguments.h - the oomplan CLI's options as a library call -*- C++
//-*-===//
//
// The C API and the Python module take the command-line options of the
// oomplan tool. The tool parses them with llvm::cl, whose options are
// process-wide globals (not thread-safe, and they live in the tool), so the
// library has its own parser: a table of every option, with the tool's
// spelling rules (--name=value or --name value, flags with =true/false,
// repeatable lists, --dim's commas), producing the same api::Request the
// tool's makeRequest does. A test checks that it accepts exactly the options
// `oomplan --help-hidden` lists, so the two cannot drift. Only standard
// types appear, so that liboomplan.so can export it.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_CAPI_ARGUMENTS_H
#define OOMPLAN_CAPI_ARGUMENTS_H

#include "oomplan/oomplan.h"

#include <string>
#include <vector>

#if defined(__GNUC__)
#define OOMPLAN_CXX_EXPORT __attribute__((visibility("default")))
#else
#define OOMPLAN_CXX_EXPORT
#endif

namespace oomplan {
namespace api {

/// A parsed command line: the request and what the tool itself handles.
struct Arguments {
  /// Parsing fills this in place, so a caller may set defaults first (the C
  /// API defaults to --emit=json).
  Request Req;
  std::string OutputPath;      ///< -o FILE ("-" or empty: none).
  bool ListAlgorithms = false; ///< --list-algos.
  bool Help = false;           ///< --help and its variants.
  bool Version = false;        ///< --version.
};

/// Parses ARGS (the options after the program name; the model path may be
/// among them as the one positional argument) into OUT. Returns "" on
/// success or the error message, which names the option.
OOMPLAN_CXX_EXPORT std::string
parseArguments(const std::vector<std::string> &Args, Arguments &Out);

/// Every option parseArguments accepts, without dashes, sorted.
OOMPLAN_CXX_EXPORT std::vector<std::string> argumentNames();

/// One line per option with its value's spelling, for --help.
OOMPLAN_CXX_EXPORT std::string argumentsHelp();

/// Runs a parsed command line as the tool would: --list-algos, --help and
/// --version produce their text; otherwise run(Req), then -o FILE receives
/// the output.
OOMPLAN_CXX_EXPORT Result runArguments(const Arguments &A);

} // namespace api
} // namespace oomplan

#endif
