//===- oomplan-run.cpp - runs a model by its plan -------------------------===//
//
// A separate tool, as lli is for LLVM, and as thin over api::execute as
// oomplan is over api::run: option parsing (the library's option table,
// oomplan/CAPI/Arguments.h), one call that plans the model exactly as
// oomplan does and runs the plan in the plan's regions on the CPU backend
// (or on CUDA, which builds with it link in), and printing: the notes and
// warnings to standard error, api::formatRunReport's lines (or, with --json,
// one object) to standard output. Inputs and outputs are ONNX TensorProto
// .pb files (ONNX test data's input_<i>.pb / output_<i>.pb); inputs not
// given are seeded random values. --poison and --check=unplanned check that
// the plan is honoured.
//
// Exit codes: 0 the run succeeded (and every check passed), 1 an error or
// a failed check, 2 the plan does not fit --budget (not run).
//
//===----------------------------------------------------------------------===//
#include "RunCommands.h"
#include "oomplan/CAPI/Arguments.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace oomplan;

static const char *Overview =
    "oomplan-run: plans a model as oomplan does, then runs the plan in the "
    "planned regions\n(on the CPU, or --backend=cuda on GPU 0) and reports the "
    "measured memory.\n\n"
    "  oomplan-run model.onnx --batch 1 --output-dir out\n"
    "  oomplan-run test_relu/model.onnx --inputs-dir test_relu/"
    "test_data_set_0 --output-dir out\n\n"
    "Exit codes: 0 the run succeeded and every check passed, 2 the plan does "
    "not fit --budget even fitted (not run), 1 otherwise.\n";

static int fail(const Twine &Msg) {
  WithColor::error(errs(), "oomplan-run") << Msg << '\n';
  return 1;
}

// --list-kernels [--backend NAME]: the table alone, without a model and
// without opening a device.
static int listKernels(const std::string &Backend) {
  std::string Error;
  auto Names = api::kernelNames(Backend, Error);
  if (!Names)
    return fail(Error);
  for (const std::string &N : *Names)
    outs() << N << '\n';
  return 0;
}

/// One command line, as main runs it (also in each --commands child).
static int runMain(int argc, const char *const *argv) {
  api::Arguments Parsed;
  std::string Bad =
      api::parseArguments(std::vector<std::string>(argv + 1, argv + argc),
                          Parsed, api::ArgumentsFor::OomplanRun);
  if (!Bad.empty())
    return fail(Bad);
  if (Parsed.Help) {
    outs() << api::helpText(api::ArgumentsFor::OomplanRun, Overview,
                            Parsed.HelpHidden);
    return 0;
  }
  if (Parsed.Version) {
    outs() << "oomplan-run version " << api::version() << "\n";
    return 0;
  }
  if (Parsed.Run.ListKernels)
    return listKernels(Parsed.Req.Backend.value_or("cpu"));
  if (Parsed.Req.ModelPath.empty())
    return fail("no model given (a .onnx or .onnxtxt path; --help lists the "
                "options)");
  api::ExecuteResult E = api::execute(Parsed.Req, Parsed.Run);
  for (const api::Diagnostic &D : E.Diagnostics)
    (D.Level == api::Severity::Warning
         ? WithColor::warning(errs(), "oomplan-run")
         : WithColor::note(errs(), "oomplan-run"))
        << D.Message << '\n';
  if (E.Category)
    return fail(E.ErrorMessage);
  outs() << api::formatRunReport(E, Parsed.Run.JSON);
  return E.ExitCode;
}

/// oomplan-run --commands FILE [--line-timeout S] (RunCommands.h), or -1
/// when the arguments do not ask for it.
static int runCommands(int argc, char **argv) {
  std::optional<std::string> Path;
  unsigned Timeout = 0;
  bool Other = false;
  for (int I = 1; I < argc; ++I) {
    StringRef A(argv[I]), Name, Value;
    std::tie(Name, Value) = A.split('=');
    if (Name != "--commands" && Name != "--line-timeout") {
      Other = true;
      continue;
    }
    if (!A.contains('='))
      Value = I + 1 < argc ? StringRef(argv[++I]) : StringRef();
    if (Name == "--commands")
      Path = Value.str();
    else if (Value.getAsInteger(10, Timeout))
      return fail("invalid --line-timeout '" + Value + "': seconds expected");
  }
  if (!Path)
    return -1;
  if (Path->empty())
    return fail("--commands needs a FILE of command lines, or - for "
                "standard input");
  if (Other)
    return fail("--commands FILE takes no other option but --line-timeout: "
                "put each run's options on its line of FILE");
  // ONNX builds its operator schema registry on first use (about 25 ms):
  // once here, so that the children inherit it.
  api::Request Warm;
  Warm.ModelPath = "warm-up.onnxtxt";
  Warm.ModelBytes = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
                    "warmup (float[1] x) => (float[1] y) {\n  y = Relu(x)\n}\n";
  (void)api::run(Warm);
  return run::runCommandsForked(
      *Path, Timeout,
      [&](ArrayRef<std::string> Args) {
        for (const std::string &A : Args)
          if (StringRef(A).split('=').first == "--commands")
            return fail("--commands cannot appear inside a commands file");
        std::vector<const char *> Argv{argv[0]};
        for (const std::string &A : Args)
          Argv.push_back(A.c_str());
        return runMain(static_cast<int>(Argv.size()), Argv.data());
      },
      outs());
}

int main(int argc, char **argv) {
  InitLLVM Y(argc, argv);
  int RC = runCommands(argc, argv);
  if (RC >= 0)
    return RC;
  return runMain(argc, argv);
}
