//===- Commands.cpp - many oomplan command lines in one process -----------===//
//
// Each line (api::forEachCommandLine) goes through the library's own option
// parser (oomplan/CAPI/Arguments.h, the C API's: no llvm::cl globals, so one
// line's options cannot leak into the next) and api::runArguments, exactly
// as the C API runs it. A line that fails is an answer ("exit": 1 with the
// error), not the end of the run.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "oomplan/CAPI/Arguments.h"
#include "llvm/Support/JSON.h"

#include <string>

using namespace llvm;
using namespace oomplan;

namespace {

const char *severityName(api::Severity S) {
  return S == api::Severity::Warning ? "warning" : "note";
}

/// JSON strings must be UTF-8 (a path or a model's names need not be).
std::string utf8(StringRef S) {
  return json::isUTF8(S) ? S.str() : json::fixUTF8(S);
}

/// One line's answer: what the tool would have printed and returned.
void writeRecord(raw_ostream &OS, unsigned LineNo, StringRef Line,
                 const api::Result &R, bool OutputToFile) {
  json::OStream J(OS);
  J.object([&] {
    J.attribute("line", LineNo);
    J.attribute("command", utf8(Line));
    J.attribute("exit", R.ExitCode);
    if (R.ok()) {
      J.attribute("fits", R.Fits);
      J.attribute("total_bytes", R.TotalBytes);
      if (R.BudgetBytes)
        J.attribute("budget_bytes", *R.BudgetBytes);
    } else {
      J.attribute("error", utf8(R.ErrorMessage));
      if (R.Category)
        J.attribute("category", api::errorCategoryName(*R.Category));
    }
    J.attributeArray("diagnostics", [&] {
      for (const api::Diagnostic &D : R.Diagnostics)
        J.object([&] {
          J.attribute("level", severityName(D.Level));
          J.attribute("message", utf8(D.Message));
        });
    });
    // With -o FILE the output went to the file, as it does from the CLI.
    if (!OutputToFile)
      J.attribute("output", utf8(R.Output));
  });
  OS << '\n';
}

api::Result errorResult(std::string Message) {
  api::Result R;
  R.ExitCode = 1;
  R.Fits = false;
  R.Category = api::ErrorCategory::BadInput;
  R.ErrorMessage = std::move(Message);
  return R;
}

/// Runs one command line.
api::Result runLine(ArrayRef<std::string> Args, bool &OutputToFile) {
  for (const std::string &A : Args)
    if (A == "--commands" || StringRef(A).startswith("--commands="))
      return errorResult("--commands cannot appear inside a commands file");
  api::Arguments Parsed;
  std::string Bad = api::parseArguments(Args, Parsed);
  if (!Bad.empty())
    return errorResult(Bad);
  OutputToFile = !Parsed.OutputPath.empty() && Parsed.OutputPath != "-";
  return api::runArguments(Parsed);
}

} // namespace

int tool::runCommandsFile(StringRef Path, raw_ostream &Out) {
  bool AnyError = false, AnyOverBudget = false;
  std::string Bad = api::forEachCommandLine(
      Path.str(), [&](unsigned LineNo, const std::string &Line,
                      const std::vector<std::string> &Args) {
        bool OutputToFile = false;
        api::Result R = runLine(Args, OutputToFile);
        AnyError |= R.ExitCode == 1;
        AnyOverBudget |= R.ExitCode == 2;
        writeRecord(Out, LineNo, Line, R, OutputToFile);
        Out.flush(); // a program reading a pipe waits for each answer
      });
  if (!Bad.empty()) {
    errs() << "oomplan: error: " << Bad << '\n';
    return 1;
  }
  return AnyError ? 1 : AnyOverBudget ? 2 : 0;
}
