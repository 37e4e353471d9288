//===- Commands.cpp - many oomplan command lines in one process -----------===//
//
// Each line goes through the library's own option parser
// (oomplan/CAPI/Arguments.h, the C API's: no llvm::cl globals, so one
// line's options cannot leak into the next) and api::runArguments, exactly
// as the C API runs it. Lines are split as a shell would split them (GNU
// quoting: '...', "...", backslash), so paths with spaces work. Blank lines
// and lines starting with '#' are skipped, and numbered as they are in the
// file. A line that fails is an answer ("exit": 1 with the error), not the
// end of the run.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "oomplan/CAPI/Arguments.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/StringSaver.h"

#include <iostream>
#include <string>

using namespace llvm;
using namespace oomplan;

namespace {

const char *severityName(api::Severity S) {
  return S == api::Severity::Warning ? "warning" : "note";
}

/// One line's answer: what the tool would have printed and returned.
void writeRecord(raw_ostream &OS, unsigned LineNo, StringRef Line,
                 const api::Result &R, bool OutputToFile) {
  json::OStream J(OS);
  J.object([&] {
    J.attribute("line", LineNo);
    J.attribute("command", Line);
    J.attribute("exit", R.ExitCode);
    if (R.ok()) {
      J.attribute("fits", R.Fits);
      J.attribute("total_bytes", R.TotalBytes);
      if (R.BudgetBytes)
        J.attribute("budget_bytes", *R.BudgetBytes);
    } else {
      J.attribute("error", R.ErrorMessage);
      if (R.Category)
        J.attribute("category", api::errorCategoryName(*R.Category));
    }
    J.attributeArray("diagnostics", [&] {
      for (const api::Diagnostic &D : R.Diagnostics)
        J.object([&] {
          J.attribute("level", severityName(D.Level));
          J.attribute("message", D.Message);
        });
    });
    // With -o FILE the output went to the file, as it does from the CLI.
    if (!OutputToFile)
      J.attribute("output", R.Output);
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

/// Parses and runs one command line.
api::Result runLine(StringRef Line, bool &OutputToFile) {
  BumpPtrAllocator Alloc;
  StringSaver Saver(Alloc);
  SmallVector<const char *, 16> Tokens;
  cl::TokenizeGNUCommandLine(Line, Saver, Tokens);
  std::vector<std::string> Args;
  for (const char *T : Tokens)
    if (T) // The tokenizer marks line ends with null entries.
      Args.emplace_back(T);
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
  std::unique_ptr<MemoryBuffer> Whole;
  if (Path != "-") {
    auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/true);
    if (!Buf) {
      errs() << "oomplan: error: " << Path << ": " << Buf.getError().message()
             << '\n';
      return 1;
    }
    Whole = std::move(*Buf);
  }
  bool AnyError = false, AnyOverBudget = false;
  unsigned LineNo = 0;
  StringRef Rest = Whole ? Whole->getBuffer() : StringRef();
  std::string StdinLine;
  while (true) {
    StringRef Line;
    if (Whole) {
      if (Rest.empty())
        break;
      std::tie(Line, Rest) = Rest.split('\n');
    } else {
      // Standard input is read a line at a time and each answer flushed, so
      // a program can write a line and wait for its answer.
      if (!std::getline(std::cin, StdinLine))
        break;
      Line = StdinLine;
    }
    ++LineNo;
    Line = Line.trim();
    if (Line.empty() || Line.startswith("#"))
      continue;
    bool OutputToFile = false;
    api::Result R = runLine(Line, OutputToFile);
    AnyError |= R.ExitCode == 1;
    AnyOverBudget |= R.ExitCode == 2;
    writeRecord(Out, LineNo, Line, R, OutputToFile);
    Out.flush();
  }
  return AnyError ? 1 : AnyOverBudget ? 2 : 0;
}
