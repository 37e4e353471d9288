//===- OptionTable.h - one row per option of every tool ---------*- C++ -*-===//
//
// The one definition of the command-line options (OptionTable.cpp): the
// parser (Arguments.cpp), --help and docs/cli.md's reference are read from
// it. Adding an option is one row here plus the field it sets.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_CAPI_OPTIONTABLE_H
#define OOMPLAN_LIB_CAPI_OPTIONTABLE_H

#include "oomplan/CAPI/Arguments.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace oomplan {
namespace api {
namespace options {

/// How an option takes values.
enum class Arity {
  Flag,      ///< No value, or --name=true|false.
  Value,     ///< One value (--name=V or --name V), at most once.
  List,      ///< Repeatable, one value each time.
  CommaList, ///< Repeatable, and each value may hold several, comma-separated.
  Generic,   ///< --help and friends: a flag the caller handles.
};

/// --help's groups, in the order shown.
enum class Category {
  Model,
  Budget,
  Training,
  Fitting,
  Serving,
  Output,
  Algorithms,
  Running,
  General,
};
llvm::StringRef categoryName(Category C);

/// Which parsers accept an option (a mask of these).
enum : unsigned {
  ForLibrary = 1,    ///< The C API and Python.
  ForOomplan = 2,    ///< The oomplan tool.
  ForOomplanRun = 4, ///< The oomplan-run tool.
  ForPlanning = ForLibrary | ForOomplan | ForOomplanRun,
};

using Setter = llvm::Error (*)(Arguments &, llvm::StringRef Value);

/// One value of an enumerated option, for --help.
struct ValueHelp {
  const char *Name;
  const char *Help;
};

struct OptionSpec {
  const char *Name;
  Arity Kind;
  const char *ValueDesc; ///< "N", "SIZE"; "" for a flag.
  Category Cat;
  unsigned For; ///< ForLibrary | ForOomplan | ForOomplanRun.
  const char *Help;
  Setter Set;
  std::vector<ValueHelp> Values = {}; ///< An enumerated option's values.
  bool Hidden = false;                ///< Only in --help-hidden.
};

/// Every row, in --help's order within each category.
llvm::ArrayRef<OptionSpec> table();

/// A flag's value: true|false|1|0 (and their capitalized spellings).
llvm::Expected<bool> readBool(llvm::StringRef Name, llvm::StringRef V);

/// Whether the parser for FOR accepts O.
bool acceptedBy(const OptionSpec &O, ArgumentsFor For);

} // namespace options
} // namespace api
} // namespace oomplan

#endif
