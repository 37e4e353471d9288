//===- Arguments.cpp - command lines parsed with the option table ---------===//
//
// The parser and the help text over OptionTable.cpp's rows, with llvm::cl's
// spelling rules (--name=value or --name value, -name as --name, flags with
// =true|false, repeatable lists, --dim's commas, "--" ends the options).
// No global state, so the C API may parse on several threads at once.
//
//===----------------------------------------------------------------------===//
#include "OptionTable.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::api;
using namespace oomplan::api::options;

namespace {

const OptionSpec *findOption(StringRef Name, ArgumentsFor For) {
  for (const OptionSpec &O : table())
    if (Name == O.Name && acceptedBy(O, For))
      return &O;
  return nullptr;
}

// The option closest to Name by edit distance, as the tool suggests.
std::string closestOption(StringRef Name, ArgumentsFor For) {
  std::string Best;
  unsigned BestDist = std::max<unsigned>(2, Name.size() / 3) + 1;
  for (const OptionSpec &O : table()) {
    if (!acceptedBy(O, For) || O.Hidden)
      continue;
    unsigned D = Name.edit_distance(O.Name, true, BestDist);
    if (D < BestDist) {
      BestDist = D;
      Best = O.Name;
    }
  }
  return Best;
}

bool takesValue(Arity K) {
  return K == Arity::Value || K == Arity::List || K == Arity::CommaList;
}

// One option with its value (HasValue: "=V" or the next argument).
Error applyOption(Arguments &A, const OptionSpec &O, StringRef Value,
                  bool HasValue, unsigned &Count) {
  // As llvm::cl: a single-valued option may occur once.
  if (++Count > 1 && (O.Kind == Arity::Value || O.Kind == Arity::Flag))
    return makeInputError("--" + StringRef(O.Name) +
                          " may only occur zero or one times");
  if (!takesValue(O.Kind)) {
    auto B = readBool(O.Name, HasValue ? Value : "true");
    if (!B)
      return B.takeError();
    return O.Set(A, *B ? "true" : "false");
  }
  if (!HasValue)
    return makeInputError("--" + StringRef(O.Name) + " needs a value (" +
                          O.ValueDesc + ")");
  if (O.Kind != Arity::CommaList)
    return O.Set(A, Value);
  SmallVector<StringRef, 4> Parts;
  Value.split(Parts, ',');
  for (StringRef P : Parts)
    if (Error E = O.Set(A, P))
      return E;
  return Error::success();
}

Error parse(ArrayRef<std::string> Args, Arguments &A, ArgumentsFor For) {
  ArrayRef<OptionSpec> Table = table();
  std::vector<unsigned> Counts(Table.size(), 0);
  bool SeenModel = false, OptionsEnded = false;
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef Arg = Args[I];
    if (!OptionsEnded && Arg == "--") {
      OptionsEnded = true;
      continue;
    }
    if (OptionsEnded || !Arg.startswith("-") || Arg == "-") {
      if (SeenModel || !A.Req.ModelPath.empty())
        return makeInputError("unexpected argument '" + Arg +
                              "' (the model is already given)");
      A.Req.ModelPath = Arg.str();
      SeenModel = true;
      continue;
    }
    StringRef Body = Arg.drop_front(Arg.startswith("--") ? 2 : 1);
    auto [Name, Value] = Body.split('=');
    bool HasValue = Body.contains('=');
    const OptionSpec *O = findOption(Name, For);
    if (!O) {
      std::string Msg = "unknown option '" + Arg.split('=').first.str() + "'";
      std::string Near = closestOption(Name, For);
      return makeInputError(
          Near.empty() ? Msg : Msg + "; did you mean '--" + Near + "'?");
    }
    // As llvm::cl: a required value may be the next argument, even one that
    // starts with a dash ("--batch -1").
    if (!HasValue && takesValue(O->Kind) && I + 1 < Args.size()) {
      Value = Args[++I];
      HasValue = true;
    }
    if (Error E = applyOption(A, *O, Value, HasValue, Counts[O - Table.data()]))
      return E;
  }
  return Error::success();
}

// "--name=<VALUE>", as --help and the docs show an option.
std::string spelling(const OptionSpec &O) {
  std::string S =
      (StringRef(O.Name).size() == 1 ? "-" : "--") + std::string(O.Name);
  if (takesValue(O.Kind))
    S += "=<" + std::string(O.ValueDesc) + ">";
  return S;
}

// Words of Text filled into lines of at most Width columns, each line
// indented by Indent; the first begins with Lead instead (as long as
// Indent, or longer), so that a list's names stand out of its text.
void wrap(std::string &Out, StringRef Text, unsigned Indent, unsigned Width,
          StringRef Lead = "") {
  SmallVector<StringRef, 32> Words;
  Text.split(Words, ' ', -1, /*KeepEmpty=*/false);
  std::string Line = Lead.empty() ? std::string(Indent, ' ') : Lead.str();
  bool Empty = true;
  for (StringRef W : Words) {
    if (!Empty && Line.size() + 1 + W.size() > Width) {
      Out += Line + '\n';
      Line.assign(Indent, ' ');
      Empty = true;
    }
    if (!Empty)
      Line += ' ';
    Line += W.str();
    Empty = false;
  }
  Out += Line + '\n';
}

std::vector<Category> categoriesOf(ArgumentsFor For, bool Hidden) {
  std::vector<Category> Cats;
  for (const OptionSpec &O : table())
    if (acceptedBy(O, For) && (Hidden || !O.Hidden) &&
        !is_contained(Cats, O.Cat))
      Cats.push_back(O.Cat);
  llvm::sort(Cats);
  return Cats;
}

} // namespace

std::string api::parseArguments(const std::vector<std::string> &Args,
                                Arguments &Out, ArgumentsFor For) {
  if (Error E = parse(Args, Out, For))
    return toString(std::move(E));
  return "";
}

std::vector<std::string> api::argumentNames(ArgumentsFor For) {
  std::vector<std::string> Names;
  for (const OptionSpec &O : table())
    if (acceptedBy(O, For))
      Names.push_back(O.Name);
  llvm::sort(Names);
  Names.erase(std::unique(Names.begin(), Names.end()), Names.end());
  return Names;
}

std::string api::argumentsHelp() {
  std::string Out = "oomplan options (oomplan --help describes each):\n";
  for (const OptionSpec &O : table()) {
    if (!acceptedBy(O, ArgumentsFor::Library))
      continue;
    Out += "  --" + std::string(O.Name);
    if (takesValue(O.Kind))
      Out += "=<" + std::string(O.ValueDesc) + ">";
    if (O.Kind == Arity::List || O.Kind == Arity::CommaList)
      Out += " (repeatable)";
    Out += "\n";
  }
  return Out;
}

std::string api::helpText(ArgumentsFor For, const std::string &Overview,
                          bool Hidden) {
  std::string Out = Overview;
  if (!Out.empty() && Out.back() != '\n')
    Out += '\n';
  for (Category Cat : categoriesOf(For, Hidden)) {
    Out += "\n" + categoryName(Cat).str() + ":\n";
    for (const OptionSpec &O : table()) {
      if (O.Cat != Cat || !acceptedBy(O, For) || (O.Hidden && !Hidden))
        continue;
      // Two spaces before the option and six before its text: programs
      // (and the tests) find the options by that indent.
      Out += "  " + spelling(O) + "\n";
      wrap(Out, O.Help, 6, 80);
      for (const ValueHelp &V : O.Values) {
        std::string Lead = "        " + std::string(V.Name);
        Lead.resize(std::max<size_t>(Lead.size() + 1, 20), ' ');
        wrap(Out, V.Help, 20, 80, Lead);
      }
    }
  }
  return Out;
}

std::string api::helpMarkdown(ArgumentsFor For) {
  std::string Out;
  for (Category Cat : categoriesOf(For, /*Hidden=*/false)) {
    Out += "\n### " + categoryName(Cat).str() + "\n\n";
    Out += "| Option | Meaning |\n|---|---|\n";
    for (const OptionSpec &O : table()) {
      if (O.Cat != Cat || !acceptedBy(O, For) || O.Hidden)
        continue;
      std::string Help = O.Help;
      for (const ValueHelp &V : O.Values)
        Help += std::string("<br>`") + V.Name + "`: " + V.Help;
      // A '|' inside a table cell ends it.
      std::string Spelled = spelling(O), Cell;
      for (char C : Spelled)
        Cell += C == '|' ? std::string("\\|") : std::string(1, C);
      std::string HelpCell;
      for (char C : Help)
        HelpCell += C == '|' ? std::string("\\|") : std::string(1, C);
      Out += "| `" + Cell + "` | " + HelpCell + " |\n";
    }
  }
  return Out;
}
