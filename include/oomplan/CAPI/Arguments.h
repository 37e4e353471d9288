//===- Arguments.h - the tools' options as a library call -------*- C++ -*-===//
//
// Every option of the oomplan and oomplan-run tools is one row of one table
// (lib/CAPI/OptionTable.cpp): its spelling, its value, its --help text and
// the field of Arguments it sets. The tools, the C API and the Python module
// all parse with it, and --help is printed from it, so an option is defined
// once. No global state: each call parses into its own Arguments, which
// makes the C API safe to call from several threads at once. Only standard
// types appear, so that liboomplan.so can export it.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_CAPI_ARGUMENTS_H
#define OOMPLAN_CAPI_ARGUMENTS_H

#include "oomplan/oomplan.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#if defined(__GNUC__)
#define OOMPLAN_CXX_EXPORT __attribute__((visibility("default")))
#else
#define OOMPLAN_CXX_EXPORT
#endif

namespace oomplan {
namespace api {

/// Who parses a command line: the library (the C API and Python take the
/// planning options), or one of the tools (which add their own).
enum class ArgumentsFor { Library, Oomplan, OomplanRun };

/// A parsed command line: the request and what the tool itself handles.
struct Arguments {
  /// Parsing fills this in place, so a caller may set defaults first (the C
  /// API defaults to --emit=json).
  Request Req;
  std::string OutputPath;      ///< -o FILE ("-" or empty: none).
  bool ListAlgorithms = false; ///< --list-algos.
  bool Help = false;           ///< --help and its variants.
  bool Version = false;        ///< --version.
  bool HelpHidden = false;     ///< --help-hidden: every option.
  RunOptions Run;              ///< oomplan-run's options.
  std::string CommandsPath;    ///< oomplan --commands FILE.
};

/// Parses ARGS (the options after the program name; the model path may be
/// among them as the one positional argument) into OUT. Returns "" on
/// success or the error message, which names the option.
/// FOR says whose options are accepted: the library's (the planning
/// options), or a tool's (those and the tool's own).
OOMPLAN_CXX_EXPORT std::string
parseArguments(const std::vector<std::string> &Args, Arguments &Out,
               ArgumentsFor For = ArgumentsFor::Library);

/// Every option parseArguments accepts for FOR, without dashes, sorted.
OOMPLAN_CXX_EXPORT std::vector<std::string>
argumentNames(ArgumentsFor For = ArgumentsFor::Library);

/// One line per option with its value's spelling (the C API's --help).
OOMPLAN_CXX_EXPORT std::string argumentsHelp();

/// A tool's --help: OVERVIEW, then every option FOR accepts, grouped by
/// category, each with its value and description, wrapped to 80 columns.
/// HIDDEN adds --help's own variants.
OOMPLAN_CXX_EXPORT std::string
helpText(ArgumentsFor For, const std::string &Overview, bool Hidden = false);

/// The same table as Markdown (docs/cli.md's reference).
OOMPLAN_CXX_EXPORT std::string helpMarkdown(ArgumentsFor For);

/// Runs a parsed command line as the tool would: --list-algos, --help and
/// --version produce their text; otherwise run(Req), then -o FILE receives
/// the output.
OOMPLAN_CXX_EXPORT Result runArguments(const Arguments &A);

/// `--commands FILE` of both tools: calls FN(line number, the line, its
/// arguments) for each command line of PATH ("-": standard input, a line
/// at a time), skipping blank lines and '#' comments, each line split as a
/// shell would (GNU quoting). Returns "" or why PATH cannot be read.
OOMPLAN_CXX_EXPORT std::string forEachCommandLine(
    const std::string &Path,
    const std::function<void(unsigned, const std::string &,
                             const std::vector<std::string> &)> &Fn);

} // namespace api
} // namespace oomplan

#endif
