//===- CommandLines.cpp - reading a file of command lines -----------------===//
//
// `--commands FILE` of oomplan and oomplan-run: each line of FILE is one
// command line. This reads them, a line at a time from standard input when
// FILE is "-" (so that a program can write a line and wait for its answer),
// skips blank lines and '#' comments, and splits each line as a shell would
// (GNU quoting: '...', "...", backslash).
//
//===----------------------------------------------------------------------===//
#include "oomplan/CAPI/Arguments.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/StringSaver.h"

#include <iostream>
#include <memory>

using namespace llvm;

std::string oomplan::api::forEachCommandLine(
    const std::string &PathText,
    const std::function<void(unsigned, const std::string &,
                             const std::vector<std::string> &)> &Fn) {
  StringRef Path(PathText);
  std::unique_ptr<MemoryBuffer> Whole;
  if (Path != "-") {
    auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/true);
    if (!Buf)
      return (Path + ": " + Buf.getError().message()).str();
    Whole = std::move(*Buf);
  }
  StringRef Rest = Whole ? Whole->getBuffer() : StringRef();
  std::string StdinLine;
  for (unsigned LineNo = 1;; ++LineNo) {
    StringRef Line;
    if (Whole) {
      if (Rest.empty())
        break;
      std::tie(Line, Rest) = Rest.split('\n');
    } else {
      if (!std::getline(std::cin, StdinLine))
        break;
      Line = StdinLine;
    }
    Line = Line.trim();
    if (Line.empty() || Line.startswith("#"))
      continue;
    BumpPtrAllocator Alloc;
    StringSaver Saver(Alloc);
    SmallVector<const char *, 16> Tokens;
    cl::TokenizeGNUCommandLine(Line, Saver, Tokens);
    std::vector<std::string> Args;
    for (const char *T : Tokens)
      if (T) // The tokenizer marks line ends with null entries.
        Args.emplace_back(T);
    Fn(LineNo, Line.str(), Args);
  }
  return "";
}
