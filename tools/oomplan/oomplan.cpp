//===- oomplan.cpp - the oomplan command-line tool ------------------------===//
//
// Option parsing (the library's option table, oomplan/CAPI/Arguments.h),
// one call to oomplan.h's run(), and printing: the notes and
// warnings to standard error, the output to standard output (or -o FILE),
// and the exit code: 0 the plan fits, 2 it does not fit the budget (the
// report is still printed), 1 an error. Everything else is in lib/Driver.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "oomplan/CAPI/Arguments.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace oomplan;

static const char *Overview =
    "oomplan: plans every tensor of a neural-network graph at a fixed offset "
    "in one arena,\nand tells whether it fits a memory budget before "
    "anything runs.\n\n"
    "  oomplan model.onnx --batch 32 --seq 2048 --budget 24G\n"
    "  oomplan model.onnx --batch 8 --emit=json -o plan.json\n"
    "  oomplan buffers.csv --emit=csv     (MiniMalloc "
    "id,lower,upper,size)\n\n"
    "A plan over the budget is fitted (recompute, offload, micro-batches) "
    "unless --no-fit.\n"
    "Exit codes: 0 the plan (fitted, when it was) fits, 2 nothing fits the "
    "budget, 1 error.\n\n"
    "USAGE: oomplan <model.onnx | model.onnxtxt | buffers.csv> [options]\n";

static int fail(const Twine &Msg) {
  WithColor::error(errs(), "oomplan") << Msg << '\n';
  return 1;
}

// No arguments: what oomplan is for and the three commands most runs are.
static int shortUsage() {
  errs() << "usage: oomplan MODEL [options]   (oomplan --help lists them)\n\n"
            "  oomplan model.onnx --batch 32 --seq 2048 --budget 24G\n"
            "      does one inference pass fit 24 GiB? (exit 0 yes, 2 no)\n"
            "  oomplan model.onnx --train --batch 8 --device A100-80GB\n"
            "      does one training step fit the card?\n"
            "  oomplan model.onnx --train --batch 1 --seq 512 --budget 24G "
            "--max-batch\n"
            "      the largest batch that fits\n";
  return 1;
}

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  if (argc == 1)
    return shortUsage();
  // --commands FILE stands alone: each line of FILE has its own options.
  for (int I = 1; I < argc; ++I) {
    StringRef A(argv[I]);
    if (A != "--commands" && !A.startswith("--commands="))
      continue;
    bool Joined = A.startswith("--commands=");
    if ((Joined && A.size() == 11) || (!Joined && I + 1 >= argc))
      return fail("--commands needs a FILE of command lines, or - for "
                  "standard input");
    if (I != 1 || argc != (Joined ? 2 : 3))
      return fail("--commands FILE takes no other option: put each model's "
                  "options on its line of FILE");
    return tool::runCommandsFile(Joined ? A.drop_front(11) : argv[2], outs());
  }
  api::Arguments Args;
  std::string Bad =
      api::parseArguments(std::vector<std::string>(argv + 1, argv + argc), Args,
                          api::ArgumentsFor::Oomplan);
  if (!Bad.empty())
    return fail(Bad);
  if (Args.Help) {
    outs() << api::helpText(api::ArgumentsFor::Oomplan, Overview,
                            Args.HelpHidden);
    return 0;
  }
  if (Args.Version) {
    outs() << "oomplan version " << api::version() << "\n";
    return 0;
  }
  if (Args.ListAlgorithms) {
    for (const api::AlgorithmInfo &A : api::algorithms())
      outs() << left_justify(A.Name, 20) << A.Description << '\n';
    return 0;
  }
  if (Args.Req.ModelPath.empty())
    return fail("no model given (a .onnx, .onnxtxt or .csv path; --help "
                "lists the options)");
  std::string OutPath = Args.OutputPath.empty() ? "-" : Args.OutputPath;
  std::error_code EC;
  ToolOutputFile Out(OutPath, EC, sys::fs::OF_None);
  if (EC)
    return fail(OutPath + ": " + EC.message());
  api::Result Res = api::run(Args.Req);
  for (const api::Diagnostic &D : Res.Diagnostics)
    (D.Level == api::Severity::Warning ? WithColor::warning(errs(), "oomplan")
                                       : WithColor::note(errs(), "oomplan"))
        << D.Message << '\n';
  // An error is the whole answer: the header lines written before it (the
  // device, the training settings) would read as the start of a report.
  if (!Res.ok())
    return fail(Res.ErrorMessage);
  Out.os() << Res.Output;
  Out.keep();
  return Res.ExitCode;
}
