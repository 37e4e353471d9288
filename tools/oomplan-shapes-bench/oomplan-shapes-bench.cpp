//===- oomplan-shapes-bench.cpp - time the symbolic shape analysis --------===//
//
// Loads each model given on the command line and times, over --reps
// repetitions (after one warm-up), each phase on its own:
//
//   import       importModelFile (read and parse the file, build the Graph)
//                with the shape oracle the tools use (driver::importOptions:
//                the importer's questions about a prefix infer only the
//                nodes added since the last), and as a baseline in the same
//                run with an oracle that infers the whole prefix at each
//                question (a fresh IncrementalShapeInference per call, the
//                naive way); the two differ on models whose
//                function ops (Attention, RotaryEmbedding, ...) ask
//   inferShapes  symbolic shapes, contents of shape tensors and byte formulas
//                of every value of the imported Graph
//   onnx         baseline in the same run: ONNX's own
//                onnx::shape_inference::InferShapes on a fresh copy of the
//                parsed ModelProto (copy not timed), without and with data
//                propagation; it leaves many transformer dims unknown, so it
//                does less than inferShapes
//
// and prints min and median milliseconds per phase. --max-ms=X exits 1 when
// the median of inferShapes is above X (the bar the tests hold: 50 ms on the
// 1,461-node GPT-style graph, test/models/gpt_like.onnx).
//
//===----------------------------------------------------------------------===//
#include "onnx/onnx_pb.h"
#include "onnx/proto_utils.h"
#include "onnx/shape_inference/implementation.h"
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Driver/Import.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <vector>

using namespace llvm;
using namespace oomplan;

static cl::list<std::string> Models(cl::Positional, cl::OneOrMore,
                                    cl::desc("<model.onnx>..."));
static cl::opt<unsigned> Reps("reps", cl::desc("timed repetitions per phase"),
                              cl::init(50));
static cl::opt<double>
    MaxMs("max-ms",
          cl::desc("exit 1 when inferShapes' median is above this (0: off)"),
          cl::init(0.0));
static cl::opt<bool> NoONNX("no-onnx",
                            cl::desc("skip ONNX's own shape inference"));

static ExitOnError ExitOnErr("oomplan-shapes-bench: error: ");

namespace {
struct Timing {
  double MinMs = 0, MedianMs = 0;
};
} // namespace

/// Runs Setup (untimed) then Body (timed) once to warm up and Reps times.
static Timing measure(const std::function<void()> &Setup,
                      const std::function<void()> &Body) {
  std::vector<double> Ms;
  for (unsigned I = 0; I <= Reps; ++I) {
    Setup();
    auto Start = std::chrono::steady_clock::now();
    Body();
    auto End = std::chrono::steady_clock::now();
    if (I > 0)
      Ms.push_back(
          std::chrono::duration<double, std::milli>(End - Start).count());
  }
  std::sort(Ms.begin(), Ms.end());
  size_t N = Ms.size();
  Timing T;
  T.MinMs = Ms.front();
  T.MedianMs = N % 2 ? Ms[N / 2] : (Ms[N / 2 - 1] + Ms[N / 2]) / 2;
  return T;
}

static void printRow(StringRef Phase, const Timing &T, StringRef Note = "") {
  outs() << format("  %-34s %10.3f %10.3f", Phase.str().c_str(), T.MinMs,
                   T.MedianMs);
  if (!Note.empty())
    outs() << "  " << Note;
  outs() << '\n';
}

/// Times ONNX's shape inference; returns false (and says why) if it throws.
static bool timeONNX(StringRef Path, bool DataProp, Timing &T) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(Path);
  if (!Buf) {
    errs() << "oomplan-shapes-bench: " << Path << ": "
           << Buf.getError().message() << '\n';
    return false;
  }
  onnx::ModelProto Base;
  if (!onnx::ParseProtoFromBytes(&Base, (*Buf)->getBufferStart(),
                                 (*Buf)->getBufferSize())) {
    outs() << "  (ONNX: not a binary ModelProto, skipped)\n";
    return false;
  }
  onnx::ModelProto M;
  onnx::ShapeInferenceOptions Options(/*check_type_val=*/false,
                                      /*strict_mode_val=*/0, DataProp);
  try {
    T = measure([&] { M = Base; },
                [&] {
                  onnx::shape_inference::InferShapes(
                      M, onnx::OpSchemaRegistry::Instance(), Options);
                });
  } catch (const std::exception &E) {
    outs() << "  (ONNX InferShapes failed: " << E.what() << ")\n";
    return false;
  }
  return true;
}

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(
      argc, argv, "oomplan-shapes-bench: times symbolic shape analysis\n");
  if (Reps == 0)
    ExitOnErr(createStringError(inconvertibleErrorCode(),
                                "--reps must be at least 1"));
  bool OverBudget = false;
  // The baseline oracle: every question infers the whole prefix again.
  ImportOptions Whole;
  Whole.Dims = [](const Graph &Prefix, ValueId From) {
    return driver::importOptions().Dims(Prefix, From);
  };
  for (const std::string &Path : Models) {
    std::unique_ptr<Graph> G =
        ExitOnErr(importModelFile(Path, driver::importOptions()));
    ShapeInfo Info = ExitOnErr(inferShapes(*G));
    outs() << Path << ": " << G->Nodes.size() << " nodes, "
           << Info.Values.size() << " values, " << Reps
           << " repetitions (after 1 warm-up)\n";
    outs() << format("  %-34s %10s %10s\n", static_cast<const char *>("phase"),
                     static_cast<const char *>("min ms"),
                     static_cast<const char *>("median ms"));

    auto TimeImport = [&](const std::function<ImportOptions()> &Opts) {
      return measure([] {},
                     [&] {
                       std::unique_ptr<Graph> G2 =
                           ExitOnErr(importModelFile(Path, Opts()));
                       G2.reset();
                     });
    };
    Timing Import = TimeImport(driver::importOptions);
    printRow("import (importModelFile)", Import);
    printRow("import, whole prefix per question",
             TimeImport([&] { return Whole; }), "(baseline)");

    size_t Sink = 0;
    Timing Shapes = measure([] {},
                            [&] {
                              ShapeInfo S = ExitOnErr(inferShapes(*G));
                              Sink += S.Values.size();
                            });
    std::string Note;
    if (MaxMs > 0) {
      bool Over = Shapes.MedianMs > MaxMs;
      OverBudget |= Over;
      raw_string_ostream OS(Note);
      OS << (Over ? "OVER " : "under ") << format("%g", MaxMs.getValue())
         << " ms";
      OS.flush();
    }
    printRow("inferShapes", Shapes, Note);
    printRow("import + inferShapes",
             {Import.MinMs + Shapes.MinMs, Import.MedianMs + Shapes.MedianMs},
             "(sum)");

    if (!NoONNX) {
      Timing T;
      if (timeONNX(Path, /*DataProp=*/false, T))
        printRow("ONNX InferShapes", T, "(baseline)");
      if (timeONNX(Path, /*DataProp=*/true, T))
        printRow("ONNX InferShapes, data propagation", T, "(baseline)");
    }
    if (Sink == 0)
      outs() << "  (no values)\n";
  }
  return OverBudget ? 1 : 0;
}
