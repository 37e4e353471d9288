//===- RunArguments.cpp - a parsed command line run as the tool runs it ---===//
//
// What the oomplan tool does around api::run, for the C API and the Python
// module: --list-algos, --help and --version produce their text instead of
// a plan, and -o FILE receives the output. Nothing is printed; the text
// lands in the Result.
//
//===----------------------------------------------------------------------===//
#include "oomplan/CAPI/Arguments.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::api;

static Result textResult(std::string Text) {
  Result R;
  R.ExitCode = 0;
  R.Output = std::move(Text);
  return R;
}

static Result errorResult(ErrorCategory C, std::string Message) {
  Result R;
  R.ExitCode = 1;
  R.Fits = false;
  R.Category = C;
  R.ErrorMessage = std::move(Message);
  return R;
}

Result api::runArguments(const Arguments &A) {
  if (A.ListAlgorithms) {
    std::string Text;
    for (const AlgorithmInfo &Info : algorithms())
      Text += formatv("{0,-20}{1}\n", Info.Name, Info.Description).str();
    return textResult(std::move(Text));
  }
  if (A.Help)
    return textResult(argumentsHelp());
  if (A.Version)
    return textResult("oomplan version " + std::string(version()) + "\n");
  if (A.Req.ModelPath.empty() && !A.Req.ModelBytes)
    return errorResult(ErrorCategory::BadInput,
                       "no model given (a .onnx, .onnxtxt or .csv path)");
  Result R = run(A.Req);
  if (!R.ok() || A.OutputPath.empty() || A.OutputPath == "-")
    return R;
  std::error_code EC;
  raw_fd_ostream OS(A.OutputPath, EC, sys::fs::OF_None);
  if (!EC) {
    OS << R.Output;
    OS.close();
    EC = OS.error();
  }
  if (EC)
    return errorResult(ErrorCategory::IO, A.OutputPath + ": " + EC.message());
  return R;
}
