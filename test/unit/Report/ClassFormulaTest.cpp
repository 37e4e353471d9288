//===- ClassFormulaTest.cpp - class formulas hold at every binding --------===//
//
// The report gives each memory class a formula of the model's symbols. The
// property: planned at one binding B1, that formula evaluated at another
// binding B2 equals what a plan made directly at B2 holds in the class. For
// every shipped model (test/models, its train/, serve/ and measured exports),
// inference and --train, as the CLI plans them (driver defaults), and
// training again on the CPU runtime in bf16-mixed (its kernels'
// temporaries, 16-bit copies) and on our runtime with --dropout (the masks
// it adds), at three seeded random bindings (batch 1..8, sequence 8..128,
// any other symbol 1..16), every ordered pair (B1 = B2 included).
//
// What is compared is the sum of the class's buffer sizes, which is what
// the formula sums: the class's bytes also hold alignment padding and, for
// activations, the arena's fragmentation, which come from placement and
// follow no formula (docs/report.md). An arena class sums the buffers live
// at B1's peak step, so B2's plan is read at that same step (its own peak
// may be another step; the schedule's steps are the same at every binding,
// which the test checks first). The fixed overhead is the user's number.
//
//===----------------------------------------------------------------------===//
#include "FitInternal.h"
#include "TestExpected.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Driver/Session.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Report/Breakdown.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <random>

using namespace oomplan;
using namespace oomplan::report;

namespace {

/// How a case trains: not at all, with the CLI's defaults (PyTorch on
/// CUDA, fp32, Adam), or with the other runtimes' and precisions' tensors
/// (the CPU kernels' temporaries, 16-bit copies, added dropout masks).
enum class Mode { Infer, Train, TrainCPUMixed, TrainOomplanDropout };

struct ModelCase {
  std::string Path; ///< Under test/models.
  Mode M = Mode::Infer;
  bool train() const { return M != Mode::Infer; }
};

const char *modeName(Mode M) {
  switch (M) {
  case Mode::Infer:
    return "infer";
  case Mode::Train:
    return "train";
  case Mode::TrainCPUMixed:
    return "train_cpu_bf16";
  case Mode::TrainOomplanDropout:
    return "train_oomplan_dropout";
  }
  return "";
}

std::vector<ModelCase> allCases() {
  std::vector<ModelCase> Out;
  std::string Root = OOMPLAN_TEST_MODELS_DIR;
  for (const char *Dir : {"", "/train", "/serve", "/h200-pytorch-2.11"}) {
    std::error_code EC;
    std::vector<std::string> Files;
    for (llvm::sys::fs::directory_iterator It(Root + Dir, EC), End;
         It != End && !EC; It.increment(EC))
      if (llvm::StringRef(It->path()).endswith(".onnx"))
        Files.push_back(It->path().substr(Root.size() + 1));
    std::sort(Files.begin(), Files.end());
    for (const std::string &F : Files)
      for (Mode M : {Mode::Infer, Mode::Train, Mode::TrainCPUMixed,
                     Mode::TrainOomplanDropout})
        Out.push_back({F, M});
  }
  return Out;
}

struct Binding {
  std::optional<int64_t> Batch, Seq;
  std::vector<api::SymbolValue> Dims; ///< Symbols of neither role.
};

struct Planned {
  driver::PlannedModel M;
  Breakdown BD;
};

// The plan `oomplan MODEL [--train] --batch B --seq S` makes, with a fast
// placement (placement changes no class formula and no buffer size) and no
// fitting (a fitted plan is another schedule).
// HasDropout: the graph trains with its own Dropout nodes (--dropout adds
// masks only to a graph exported without them).
llvm::Expected<Planned> planAt(const ModelCase &C, const Binding &B,
                               bool HasDropout) {
  api::Request R;
  R.ModelPath = std::string(OOMPLAN_TEST_MODELS_DIR) + "/" + C.Path;
  R.Batch = B.Batch;
  R.Seq = B.Seq;
  R.Dims = B.Dims;
  R.Train.Enabled = C.train();
  if (C.M == Mode::TrainCPUMixed) {
    R.Train.Runtime = "pytorch-cpu";
    R.Train.Precision = "bf16-mixed";
  }
  if (C.M == Mode::TrainOomplanDropout) {
    R.Train.Runtime = "oomplan";
    if (!HasDropout)
      R.Train.Dropout = "0.1";
  }
  R.Fit.NoFit = true;
  R.Algorithm = "greedy-by-size";
  api::Result Res;
  driver::Session S(R, Res);
  if (llvm::Error E = driver::resolveOptions(S))
    return std::move(E);
  if (llvm::Error E = driver::installBackend(S))
    return std::move(E);
  auto M = driver::planModel(S);
  if (!M)
    return M.takeError();
  Planned Out;
  Out.M = std::move(*M);
  PlanContext PC{*Out.M.G, Out.M.Shapes, Out.M.Bindings};
  Out.BD = computeBreakdown(Out.M.Final, PC, 0);
  return std::move(Out);
}

// Unaligned bytes of class K in P: every resident buffer, and the arena
// buffers live at Step.
uint64_t classBytesAt(const Plan &P, MemoryClass K, uint64_t Step) {
  uint64_t Sum = 0;
  for (BufferId B = 0; B < P.Life.Buffers.size(); ++B) {
    const LiveBuffer &L = P.Life.Buffers[B];
    if (memoryClassOf(P, L) != K)
      continue;
    if (P.RegionOf[B] == Region::Arena &&
        (L.StartStep > Step || Step >= L.EndStep))
      continue;
    Sum += L.SizeBytes;
  }
  return Sum;
}

std::string caseName(const testing::TestParamInfo<ModelCase> &I) {
  std::string N = I.param.Path + "_" + modeName(I.param.M);
  for (char &Ch : N)
    if (!isalnum(static_cast<unsigned char>(Ch)))
      Ch = '_';
  return N;
}

class ClassFormula : public testing::TestWithParam<ModelCase> {};

TEST_P(ClassFormula, EvaluatesToThePlanAtOtherBindings) {
  const ModelCase &C = GetParam();
  // Which roles the model has: --batch and --seq are given only for those.
  auto G = importModelFile(std::string(OOMPLAN_TEST_MODELS_DIR) + "/" + C.Path);
  test::stopOnError(G, "import");
  SymbolRoles Roles = findSymbolRoles(**G);
  bool HasDropout = llvm::any_of(
      (*G)->Nodes, [](const Node &N) { return N.OpType == "Dropout"; });
  std::mt19937 Rng(
      static_cast<uint32_t>(std::hash<std::string>()(C.Path + modeName(C.M))) &
      0x7fffffff);
  std::uniform_int_distribution<int64_t> BatchDist(1, 8), SeqDist(8, 128),
      OtherDist(1, 16);
  std::vector<Binding> Bs(3);
  for (Binding &B : Bs) {
    if (!Roles.Batch.empty())
      B.Batch = BatchDist(Rng);
    if (!Roles.Seq.empty())
      B.Seq = SeqDist(Rng);
    // Any other symbol (a decoder's past_sequence_length) by name.
    for (SymbolId Sym = 0; Sym < (*G)->Symbols.size(); ++Sym)
      if (!llvm::is_contained(Roles.Batch, Sym) &&
          !llvm::is_contained(Roles.Seq, Sym))
        B.Dims.push_back({(*G)->Symbols[Sym], OtherDist(Rng)});
  }
  std::vector<Planned> Plans;
  for (const Binding &B : Bs) {
    auto P = planAt(C, B, HasDropout);
    if (!P) {
      // A model that cannot be planned at a random binding (the measured
      // exports of bert_like and gpt_like reshape to a fixed 512-token
      // sequence) or that --train does not support.
      std::string Msg = llvm::toString(P.takeError());
      GTEST_SKIP() << C.Path << ": " << Msg;
    }
    Plans.push_back(std::move(*P));
  }
  const std::vector<std::string> &Names = Plans[0].M.Shapes.SymbolNames;
  for (size_t I = 0; I < Plans.size(); ++I) {
    const Plan &P1 = Plans[I].M.Final;
    for (size_t J = 0; J < Plans.size(); ++J) {
      const Plan &P2 = Plans[J].M.Final;
      std::string At = "formulas at binding " + std::to_string(I) +
                       " evaluated at binding " + std::to_string(J);
      for (size_t K = 0; K < Plans[J].M.Bindings.size(); ++K)
        if (Plans[J].M.Bindings[K])
          At += " " + Names[K] + "=" + std::to_string(*Plans[J].M.Bindings[K]);
      ASSERT_EQ(P1.Sched.Steps.size(), P2.Sched.Steps.size()) << At;
      for (const ClassRow &Row : Plans[I].BD.Rows) {
        if (Row.Class == MemoryClass::Overhead)
          continue;
        auto V = Row.Expr.evaluate(Plans[J].M.Bindings, Names);
        ASSERT_TRUE(bool(V)) << At << ": " << llvm::toString(V.takeError());
        EXPECT_EQ(static_cast<uint64_t>(*V),
                  classBytesAt(P2, Row.Class, P1.PeakStep))
            << C.Path << " " << modeName(C.M) << ": class "
            << memoryClassName(Row.Class).str() << " formula " << Row.Formula
            << ", " << At << ", step " << P1.PeakStep;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ShippedModels, ClassFormula,
                         testing::ValuesIn(allCases()), caseName);

} // namespace
