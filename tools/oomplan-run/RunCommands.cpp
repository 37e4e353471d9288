//===- RunCommands.cpp - oomplan-run --commands: one fork per line --------===//
//
// Why fork rather than run each line in this process as oomplan --commands
// does: a kernel that crashes on one ONNX test must not take the other
// tests' answers with it, and a run's process memory (the RSS growth it
// reports) must be its own. A fork costs about a millisecond; the process
// start it saves costs about 40.
//
//===----------------------------------------------------------------------===//
#include "RunCommands.h"
#include "oomplan/CAPI/Arguments.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

using namespace llvm;
using namespace oomplan;

namespace {

/// A file's text, then the file removed ("" when it cannot be read).
std::string takeFile(const SmallString<128> &Path) {
  std::string Text;
  if (auto Buf = MemoryBuffer::getFile(Path))
    Text = (*Buf)->getBuffer().str();
  sys::fs::remove(Path);
  return Text;
}

/// JSON strings must be UTF-8 (a crash's stderr or a path need not be).
std::string utf8(StringRef S) {
  return json::isUTF8(S) ? S.str() : json::fixUTF8(S);
}

struct LineOutcome {
  int Exit = 1;
  int Signal = 0;
  std::string Stdout, Stderr;
};

LineOutcome runForked(ArrayRef<std::string> Args, unsigned TimeoutSeconds,
                      function_ref<int(ArrayRef<std::string>)> RunLine) {
  LineOutcome O;
  int OutFD = -1, ErrFD = -1;
  SmallString<128> OutPath, ErrPath;
  if (sys::fs::createTemporaryFile("oomplan-run", "out", OutFD, OutPath) ||
      sys::fs::createTemporaryFile("oomplan-run", "err", ErrFD, ErrPath)) {
    O.Stderr = "oomplan-run: error: cannot create a temporary file\n";
    if (OutFD >= 0) {
      ::close(OutFD);
      sys::fs::remove(OutPath);
    }
    return O;
  }
  // Nothing buffered may reach the child, which would write it again.
  outs().flush();
  errs().flush();
  std::fflush(nullptr);
  pid_t Parent = ::getpid();
  pid_t Pid = ::fork();
  if (Pid == 0) {
#ifdef __linux__
    // A line dies with its parent (a harness that kills the coprocess at
    // its deadline must not leave a run holding the GPU).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != Parent) // the parent died before prctl
      ::_exit(1);
#endif
    ::dup2(OutFD, STDOUT_FILENO);
    ::dup2(ErrFD, STDERR_FILENO);
    ::close(OutFD);
    ::close(ErrFD);
    if (TimeoutSeconds)
      ::alarm(TimeoutSeconds); // SIGALRM's default action ends the child
    int RC = RunLine(Args);
    outs().flush();
    errs().flush();
    std::fflush(nullptr);
    ::_exit(RC); // not exit(): the parent's atexit work is the parent's
  }
  ::close(OutFD);
  ::close(ErrFD);
  if (Pid < 0) {
    O.Stderr = "oomplan-run: error: fork failed\n";
    takeFile(OutPath);
    takeFile(ErrPath);
    return O;
  }
  int Status = 0;
  while (::waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(Status)) {
    O.Exit = WEXITSTATUS(Status);
  } else if (WIFSIGNALED(Status)) {
    O.Signal = WTERMSIG(Status);
    O.Exit = -O.Signal;
  }
  O.Stdout = takeFile(OutPath);
  O.Stderr = takeFile(ErrPath);
  return O;
}

} // namespace

int run::runCommandsForked(StringRef Path, unsigned TimeoutSeconds,
                           function_ref<int(ArrayRef<std::string>)> RunLine,
                           raw_ostream &Out) {
  bool AnyFailed = false, AnyOverBudget = false;
  std::string Bad = api::forEachCommandLine(
      Path.str(), [&](unsigned LineNo, const std::string &Line,
                      const std::vector<std::string> &Args) {
        LineOutcome O = runForked(Args, TimeoutSeconds, RunLine);
        // As oomplan --commands: a line whose plan does not fit (exit 2)
        // is an answer, not a failure.
        AnyFailed |= O.Exit != 0 && O.Exit != 2;
        AnyOverBudget |= O.Exit == 2;
        {
          json::OStream J(Out);
          J.object([&] {
            J.attribute("line", LineNo);
            J.attribute("command", utf8(Line));
            J.attribute("exit", O.Exit);
            if (O.Signal)
              J.attribute("signal", O.Signal);
            J.attribute("stdout", utf8(O.Stdout));
            J.attribute("stderr", utf8(O.Stderr));
          });
        }
        Out << '\n';
        Out.flush(); // a program reading a pipe waits for each answer
      });
  if (!Bad.empty()) {
    errs() << "oomplan-run: error: " << Bad << '\n';
    return 1;
  }
  return AnyFailed ? 1 : AnyOverBudget ? 2 : 0;
}
