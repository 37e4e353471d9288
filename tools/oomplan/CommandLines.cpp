//===- CommandLines.cpp - reading a file of command lines -----------------===//
#include "CommandLines.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/StringSaver.h"

#include <iostream>
#include <memory>

using namespace llvm;

std::string oomplan::tool::forEachCommandLine(
    StringRef Path,
    function_ref<void(unsigned, StringRef, ArrayRef<std::string>)> Fn) {
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
    Fn(LineNo, Line, Args);
  }
  return "";
}
