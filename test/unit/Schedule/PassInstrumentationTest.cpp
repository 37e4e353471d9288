//===- PassInstrumentationTest.cpp - the passes a pipeline reports --------===//
//
// AfterPass sees each transform of the schedule that is kept, in order,
// already verified: "training" from the training pipeline, the chooser's
// passes from fitSchedule. The models and budgets are those of
// test/lit/fit/stream.onnxtxt and recompute.onnxtxt, whose comments derive
// every size and the choice by hand: streaming both weights (2000 bytes;
// 2240 without) and recomputing Mul, Concat, Sigmoid (34000 bytes; 37696
// without, 29504 with).
//
//===----------------------------------------------------------------------===//
#include "TestExpected.h"
#include "oomplan/Fit/Chooser.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Plan/TrainingPipeline.h"
#include "oomplan/Schedule/SchedulePrinter.h"
#include "oomplan/Schedule/ScheduleVerifier.h"
#include "oomplan/Support/Error.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {
std::string weights(unsigned N) {
  std::string W = " = {";
  for (unsigned I = 0; I < N; ++I)
    W += I ? ", 0.5" : "0.5";
  return W + "}";
}

// test/lit/fit/stream.onnxtxt: t = x @ W1, y = t @ W2, at N = 1.
std::string streamModel() {
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "chain (float[N,16] x) => (float[N,16] y) <float[16,16] W1" +
         weights(256) + ", float[16,16] W2" + weights(256) +
         "> {\n  t = MatMul(x, W1)\n  y = MatMul(t, W2)\n}\n";
}

// test/lit/fit/recompute.onnxtxt at N = 16.
std::string recomputeModel() {
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "g (float[N,64] x) => (float[N] y) <float[64] w" +
         weights(64) +
         "> {\n  h = Mul(x, w)\n  e = Concat<axis = 1>(h, h)\n"
         "  a = Sigmoid(e)\n  b = Sigmoid(a)\n"
         "  y = ReduceMean<axes = [1], keepdims = 0>(b)\n}\n";
}

struct Loaded {
  std::unique_ptr<Graph> G;
  ShapeInfo Shapes;
  std::vector<std::optional<int64_t>> Bind;
};

bool load(const std::string &Text, int64_t N, Loaded &L) {
  auto G = importModelText(Text, "m.onnxtxt");
  if (!G) {
    ADD_FAILURE() << llvm::toString(G.takeError());
    return false;
  }
  L.G = std::move(*G);
  auto Shapes = inferShapes(*L.G);
  if (!Shapes) {
    ADD_FAILURE() << llvm::toString(Shapes.takeError());
    return false;
  }
  L.Shapes = std::move(*Shapes);
  L.Bind.assign(L.Shapes.SymbolNames.size(), N);
  return true;
}

struct Recorder {
  std::vector<std::string> Passes;
  std::string Printed;
  PassInstrumentation PI;
  const Graph *G = nullptr;
  Recorder() {
    PI.AfterPass = [this](llvm::StringRef Pass, const Schedule &S) {
      llvm::Error E = verifySchedule(S);
      EXPECT_FALSE(!!E) << Pass.str() << ": " << llvm::toString(std::move(E));
      Passes.push_back(Pass.str());
      llvm::raw_string_ostream OS(Printed);
      OS << "after " << Pass << ":\n";
      printSchedule(OS, S, G);
    };
  }
};

FitOptions fitOptions(uint64_t Budget, const PassInstrumentation &PI) {
  FitOptions O;
  O.BudgetBytes = Budget;
  O.Estimate.AlignBytes = 1;
  O.Instr = &PI;
  return O;
}

CostModel cost(const Loaded &L) {
  auto Dev = findDevice("H100-SXM");
  test::stopOnError(Dev, "Dev");
  return CostModel(*L.G, evaluateDims(*L.G, L.Shapes, L.Bind), *Dev);
}
} // namespace

TEST(PassInstrumentation, WeightStreaming) {
  Loaded L;
  ASSERT_TRUE(load(streamModel(), 1, L));
  auto Bytes = evaluateValueBytes(*L.G, L.Shapes, L.Bind);
  ASSERT_TRUE(!!Bytes) << llvm::toString(Bytes.takeError());
  Schedule S = makeDefaultSchedule(*L.G, *Bytes);
  Recorder Rec;
  auto R = fitSchedule(S, cost(L), fitOptions(2000, Rec.PI));
  ASSERT_TRUE(!!R) << llvm::toString(R.takeError());
  EXPECT_TRUE(R->Fits);
  EXPECT_EQ(Rec.Passes, std::vector<std::string>{"weight-streaming"});
  // x, t, y: float[1,16] = 64 B; W1, W2: float[16,16] = 1024 B. W2's copy
  // comes after W1's last use (one copy at a time fits, two do not).
  EXPECT_EQ(Rec.Printed, "after weight-streaming:\n"
                         "0 prefetch Prefetch -: - -> W1:1024@host\n"
                         "1 compute MatMul #0: x:64, W1:1024@host -> t:64\n"
                         "2 prefetch Prefetch -: - -> W2:1024@host\n"
                         "3 compute MatMul #1: t:64, W2:1024@host -> y:64\n");
}

TEST(PassInstrumentation, TrainingThenRecompute) {
  Loaded L;
  ASSERT_TRUE(load(recomputeModel(), 16, L));
  Recorder Rec;
  PipelineOptions PO;
  PO.Placement.AlignBytes = 1;
  PO.Instr = &Rec.PI;
  std::vector<std::string> Warnings;
  auto P = planTrainingGraph(*L.G, L.Shapes, L.Bind, PO, TrainingOptions(),
                             Warnings);
  ASSERT_TRUE(!!P) << llvm::toString(P.takeError());
  ASSERT_EQ(Rec.Passes, std::vector<std::string>{"training"});
  // Mul, Concat, Sigmoid, Sigmoid, ReduceMean, then Loss at step 5.
  EXPECT_NE(Rec.Printed.find("5 backward Loss -: y:64 -> grad(y):64\n"),
            std::string::npos)
      << Rec.Printed;
  Rec.Passes.clear();
  Rec.Printed.clear();
  auto R = fitSchedule(P->Sched, cost(L), fitOptions(34000, Rec.PI));
  ASSERT_TRUE(!!R) << llvm::toString(R.takeError());
  EXPECT_TRUE(R->Fits);
  EXPECT_EQ(Rec.Passes, std::vector<std::string>{"recompute"});
  // h = x * w (float[16,64], 4096 B), e = Concat(h, h) 8192 B, a =
  // Sigmoid(e) 8192 B, rebuilt from x before Sigmoid.grad(a)'s step reads a.
  for (const char *Line :
       {"8 recompute Mul #0: x:4096, w:256 -> recompute(h):4096 in-place\n",
        "9 recompute Concat #1: recompute(h):4096, recompute(h):4096 -> "
        "recompute(e):8192\n",
        "10 recompute Sigmoid #2: recompute(e):8192 -> recompute(a):8192 "
        "in-place\n"})
    EXPECT_NE(Rec.Printed.find(Line), std::string::npos) << Line << "in\n"
                                                         << Rec.Printed;
}

// The chooser verifies what it is given: a schedule that reads t before any
// step writes it is an internal error, and no pass is reported.
TEST(PassInstrumentation, ChooserRejectsBrokenInput) {
  Loaded L;
  ASSERT_TRUE(load(streamModel(), 1, L));
  auto Bytes = evaluateValueBytes(*L.G, L.Shapes, L.Bind);
  ASSERT_TRUE(!!Bytes) << llvm::toString(Bytes.takeError());
  Schedule S = makeDefaultSchedule(*L.G, *Bytes);
  std::swap(S.Steps[0], S.Steps[1]); // y = t @ W2 before t = x @ W1
  Recorder Rec;
  auto R = fitSchedule(S, cost(L), fitOptions(2000, Rec.PI));
  ASSERT_FALSE(!!R);
  llvm::Error E = R.takeError();
  EXPECT_EQ(errorCategory(E), ErrorCategory::Internal);
  EXPECT_EQ(llvm::toString(std::move(E)),
            "the schedule given to the chooser: schedule step 0 (MatMul): "
            "[read-before-write] reads 't' before any step writes it");
  EXPECT_TRUE(Rec.Passes.empty());
}
