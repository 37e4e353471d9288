//===- oomplan.cpp - the oomplan command-line tool ------------------------===//
//
// Wires the library together: load, analyse, plan, verify, emit. Logic lives
// in lib/; this file parses options, prints, and chooses the exit code
// (0 fits, 2 does not fit the budget, 1 error).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/IR/GraphPrinter.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace oomplan;

static cl::OptionCategory Cat("oomplan options");
static cl::opt<std::string> ModelPath(cl::Positional,
                                      cl::desc("<model.onnx|model.onnxtxt>"),
                                      cl::Required, cl::cat(Cat));
enum class EmitKind { Graph };
static cl::opt<EmitKind>
    Emit("emit", cl::desc("What to print"),
         cl::values(clEnumValN(EmitKind::Graph, "graph", "the imported IR")),
         cl::init(EmitKind::Graph), cl::cat(Cat));

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Cat);
  cl::ParseCommandLineOptions(
      argc, argv, "oomplan: static memory planner for neural-network graphs\n");
  auto G = importModelFile(ModelPath);
  if (!G) {
    WithColor::error(errs(), "oomplan") << toString(G.takeError()) << '\n';
    return 1;
  }
  printGraph(outs(), **G);
  return 0;
}
