//===- RealSchedulesTest.cpp - real schedules pass the verifier -----------===//
//
// The verifier's rules must hold for every schedule oomplan makes: the
// default schedule of each test model, the training schedule of each
// training export (fp32 and bf16-mixed, with gradient accumulation), each
// transform applied to it at full strength (recompute of everything
// recomputable, every saved activation offloaded, every weight streamed, the
// optimizer on the host, reordering, inference recompute), and the
// chooser's fitted schedules at budgets from generous to impossible.
//
//===----------------------------------------------------------------------===//
#include "TestExpected.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Fit/ActivationOffload.h"
#include "oomplan/Fit/Chooser.h"
#include "oomplan/Fit/InferenceRecompute.h"
#include "oomplan/Fit/OptimizerOffload.h"
#include "oomplan/Fit/Recompute.h"
#include "oomplan/Fit/RematChooser.h"
#include "oomplan/Fit/Reorder.h"
#include "oomplan/Fit/WeightStreaming.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Schedule/ScheduleVerifier.h"
#include "oomplan/Transforms/Training.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {
struct Model {
  std::unique_ptr<Graph> G;
  ShapeInfo Shapes;
  std::vector<std::optional<int64_t>> Bind;
  std::vector<uint64_t> Bytes;
};

// Loads test/models/<Path> at batch 2 (and sequence 32 where the model has
// one): small, since the rules do not depend on sizes and the test stays
// fast. Fails the test and returns false when anything does not load.
bool load(const std::string &Path, bool HasSeq, Model &M) {
  auto G = importModelFile(std::string(OOMPLAN_TEST_MODELS_DIR) + "/" + Path);
  if (!G) {
    ADD_FAILURE() << llvm::toString(G.takeError());
    return false;
  }
  M.G = std::move(*G);
  auto Shapes = inferShapes(*M.G);
  if (!Shapes) {
    ADD_FAILURE() << llvm::toString(Shapes.takeError());
    return false;
  }
  M.Shapes = std::move(*Shapes);
  BindingRequest R;
  R.Batch = 2;
  if (HasSeq)
    R.Seq = 32;
  auto Bound = bindSymbols(*M.G, R);
  if (!Bound) {
    ADD_FAILURE() << llvm::toString(Bound.takeError());
    return false;
  }
  M.Bind = Bound->Values;
  M.Bind.resize(M.Shapes.SymbolNames.size());
  auto Bytes = evaluateValueBytes(*M.G, M.Shapes, M.Bind);
  if (!Bytes) {
    ADD_FAILURE() << llvm::toString(Bytes.takeError());
    return false;
  }
  M.Bytes = std::move(*Bytes);
  return true;
}

void expectValid(const Schedule &S, const std::string &What) {
  llvm::Error E = verifySchedule(S);
  EXPECT_FALSE(!!E) << What << ": " << llvm::toString(std::move(E));
}

struct ModelCase {
  const char *Name;
  bool HasSeq;
};
const ModelCase Models[] = {{"resnet50.onnx", false},
                            {"mobilenet_v2.onnx", false},
                            {"bert_like.onnx", true},
                            {"gpt_like.onnx", true}};

CostModel costOf(const Model &M) {
  auto Dev = findDevice("H100-SXM");
  test::stopOnError(Dev, "Dev");
  return CostModel(*M.G, evaluateDims(*M.G, M.Shapes, M.Bind), *Dev);
}

// The chooser at the untransformed total and at fractions of it.
void expectFitsValid(const Schedule &S, const CostModel &Cost,
                     const std::string &What) {
  EstimateOptions EO;
  uint64_t Peak = estimateMemory(S, EO).totalBytes();
  for (double Fr : {1.0, 0.8, 0.6, 0.4, 0.2, 0.01}) {
    FitOptions O;
    O.BudgetBytes = static_cast<uint64_t>(static_cast<double>(Peak) * Fr);
    O.Reorder = Fr == 0.8;
    auto R = fitSchedule(S, Cost, O);
    if (!R) {
      ADD_FAILURE() << What << ": " << llvm::toString(R.takeError());
      continue;
    }
    expectValid(R->Sched, What + " fitted at " + std::to_string(Fr) + "P (" +
                              R->Strategy + ")");
  }
}
} // namespace

TEST(RealSchedules, DefaultAndInferenceTransforms) {
  for (auto [Name, HasSeq] : Models) {
    SCOPED_TRACE(Name);
    Model M;
    if (!load(Name, HasSeq, M))
      continue;
    Schedule S = makeDefaultSchedule(*M.G, M.Bytes);
    expectValid(S, std::string(Name) + " default");
    CostModel Cost = costOf(M);
    expectValid(streamWeights(S, streamableWeights(S), Cost, UINT32_MAX),
                "weight streaming");
    expectValid(streamWeights(S, streamableWeights(S), Cost, 0),
                "weight streaming, no look-ahead");
    std::vector<InferenceRemat> C =
        inferenceRematCandidates(S, Cost.stepTimes(S), true);
    expectValid(applyInferenceRecompute(S, C), "inference recompute");
    expectValid(reorderForMemory(S, EstimateOptions()), "reorder");
    expectFitsValid(S, Cost, Name);
  }
}

TEST(RealSchedules, TrainingAndTrainingTransforms) {
  for (auto [Name, HasSeq] : Models) {
    SCOPED_TRACE(Name);
    Model M;
    if (!load(std::string("train/") + Name, HasSeq, M))
      continue;
    CostModel Cost = costOf(M);
    for (int Variant = 0; Variant < 3; ++Variant) {
      TrainingOptions TO;
      if (Variant == 1)
        TO.GradAccum = 4;
      if (Variant == 2)
        TO.Precision = TrainPrecision::BF16Mixed;
      std::vector<std::string> Warnings;
      auto S = makeTrainingSchedule(*M.G, M.Shapes, M.Bytes, TO, Warnings);
      ASSERT_TRUE(!!S) << llvm::toString(S.takeError());
      std::string What =
          std::string(Name) + " training " + std::to_string(Variant);
      expectValid(*S, What);
      std::vector<bool> All(S->Steps.size(), false);
      for (size_t I = 0; I < forwardEnd(*S); ++I)
        All[I] = isRecomputable(*S, I);
      expectValid(applyRecompute(*S, All), What + " recompute everything");
      expectValid(applyRecompute(*S, sqrtCheckpoints(*S)), What + " sqrt(n)");
      std::vector<TensorId> A = offloadableActivations(*S);
      expectValid(offloadActivations(*S, A, Cost), What + " offload");
      expectValid(offloadActivations(*S, A, Cost, 0), What + " offload eager");
      Schedule H = offloadOptimizerState(*S);
      expectValid(H, What + " optimizer offload");
      expectValid(offloadActivations(H, offloadableActivations(H), Cost),
                  What + " optimizer offload + offload");
      if (Variant == 0)
        expectFitsValid(*S, Cost, What);
    }
  }
}
