//===- TrainingTest.cpp - the training schedule on hand-sized graphs ------===//
//
// A 2-layer MLP whose every gradient and saved tensor is computed by hand:
//   x: float[4,8] (graph input, no gradient)
//   h = Gemm(x, W1[16,8], b1[16], transB)   [4,16]  256 B
//   r = Relu(h)                             [4,16]  256 B (in place over h)
//   y = Gemm(r, W2[2,16], b2[2], transB)    [4,2]    32 B (graph output)
// Parameters: 128 + 16 + 32 + 2 = 178 elements (712 B in fp32).
// Saved: Gemm1 keeps x (for dW1; x needs no gradient so W1 is not kept for
// it), Relu keeps r, Gemm2 keeps r (for dW2) and W2 (for dr).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Transforms/Training.h"
#include "TestExpected.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Plan/Pipeline.h"
#include "gtest/gtest.h"
#include <map>

using namespace oomplan;

namespace {
// "float[16,8] W1 = {0.5, ...}": the text format needs every value.
std::string W(const std::string &Decl, unsigned N) {
  std::string S = Decl + " = {";
  for (unsigned I = 0; I < N; ++I)
    S += I ? ", 0.5" : "0.5";
  return S + "}";
}

const std::string MLP =
    R"(<ir_version: 8, opset_import: ["" : 17]>
mlp (float[4,8] x) => (float[4,2] y) <)" +
    W("float[16,8] W1", 128) + ", " + W("float[16] b1", 16) + ", " +
    W("float[2,16] W2", 32) + ", " + W("float[2] b2", 2) + R"(> {
  h = Gemm<transB=1>(x, W1, b1)
  r = Relu(h)
  y = Gemm<transB=1>(r, W2, b2)
}
)";

struct Built {
  std::unique_ptr<Graph> G;
  Schedule S;
  TrainingSummary Sum;
  std::vector<std::string> Warnings;
};

Built build(const std::string &Text, const TrainingOptions &Opts) {
  Built B;
  auto G = importModelText(Text, "test.onnxtxt");
  test::stopOnError(G, "G");
  B.G = std::move(*G);
  auto Shapes = inferShapes(*B.G);
  test::stopOnError(Shapes, "Shapes");
  std::vector<std::optional<int64_t>> Bind(Shapes->SymbolNames.size(), 4);
  auto Bytes = evaluateValueBytes(*B.G, *Shapes, Bind);
  test::stopOnError(Bytes, "Bytes");
  auto S =
      makeTrainingSchedule(*B.G, *Shapes, *Bytes, Opts, B.Warnings, &B.Sum);
  test::stopOnError(S, "S");
  B.S = std::move(*S);
  return B;
}

const ScheduleTensor *find(const Schedule &S, llvm::StringRef Name) {
  for (const ScheduleTensor &T : S.Tensors)
    if (T.Name == Name)
      return &T;
  return nullptr;
}

std::vector<std::string> names(const Schedule &S,
                               const std::vector<TensorId> &Ids) {
  std::vector<std::string> Out;
  for (TensorId T : Ids)
    Out.push_back(S.Tensors[T].Name);
  return Out;
}
} // namespace

TEST(Training, MLPStepsAndGradients) {
  Built B = build(MLP, {});
  const Schedule &S = B.S;
  ASSERT_EQ(S.Steps.size(), 8u); // 3 forward, loss, 3 backward, Adam
  EXPECT_EQ(S.Steps[3].Op, "Loss");
  EXPECT_EQ(names(S, S.Steps[3].Writes), std::vector<std::string>{"grad(y)"});
  EXPECT_EQ(S.Steps[4].Op, "Gemm.grad");
  EXPECT_EQ(S.Steps[4].Kind, StepKind::Backward);
  EXPECT_EQ(names(S, S.Steps[4].Reads),
            (std::vector<std::string>{"grad(y)", "r", "W2"}));
  EXPECT_EQ(names(S, S.Steps[4].Writes),
            (std::vector<std::string>{"grad(r)", "grad(W2)", "grad(b2)"}));
  EXPECT_EQ(S.Steps[5].Op, "Relu.grad");
  EXPECT_EQ(names(S, S.Steps[5].Reads),
            (std::vector<std::string>{"grad(r)", "r"}));
  EXPECT_EQ(names(S, S.Steps[6].Reads),
            (std::vector<std::string>{"grad(h)", "x"}));
  EXPECT_EQ(names(S, S.Steps[6].Writes),
            (std::vector<std::string>{"grad(W1)", "grad(b1)"}));
  EXPECT_EQ(S.Steps[7].Kind, StepKind::Optimizer);
  EXPECT_EQ(find(S, "grad(r)")->SizeBytes, 256u);
  EXPECT_EQ(find(S, "grad(W1)")->SizeBytes, 512u);
  EXPECT_EQ(find(S, "grad(W1)")->Kind, TensorKind::Gradient);
  EXPECT_EQ(find(S, "adam.m(W1)")->Kind, TensorKind::OptimizerState);
  // Two fp32 temporaries of the largest parameter (W1, 512 B).
  EXPECT_EQ(find(S, "Adam.scratch")->SizeBytes, 1024u);
  EXPECT_TRUE(B.Warnings.empty());
}

TEST(Training, ModelStateIsSixteenBytesPerParameterForAdam) {
  Built B = build(MLP, {});
  EXPECT_EQ(B.Sum.TrainableParams, 178u);
  EXPECT_EQ(B.Sum.WeightBytes, 712u);
  EXPECT_EQ(B.Sum.GradBytes, 712u);
  EXPECT_EQ(B.Sum.OptimizerBytes, 1424u);
  EXPECT_EQ(B.Sum.modelStateBytes(), 16u * 178u);
}

TEST(Training, OptimizersAndPrecision) {
  TrainingOptions O;
  O.Optimizer = OptimizerKind::SGD;
  EXPECT_EQ(build(MLP, O).Sum.modelStateBytes(), 8u * 178u);
  O.Optimizer = OptimizerKind::Momentum;
  EXPECT_EQ(build(MLP, O).Sum.modelStateBytes(), 12u * 178u);
  O.Optimizer = OptimizerKind::AdamW;
  EXPECT_EQ(build(MLP, O).Sum.modelStateBytes(), 16u * 178u);
  // Mixed: 2 (weight) + 2 (grad) + 4 (master) + 8 (moments).
  O.Precision = TrainPrecision::BF16Mixed;
  Built B = build(MLP, O);
  EXPECT_EQ(B.Sum.modelStateBytes(), 16u * 178u);
  EXPECT_EQ(B.Sum.WeightBytes, 2u * 178u);
  EXPECT_EQ(find(B.S, "grad(r)")->SizeBytes, 128u);
  EXPECT_EQ(find(B.S, "master(W1)")->SizeBytes, 512u);
}

TEST(Training, FreezeDropsGradientAndSavedInput) {
  TrainingOptions O;
  O.Freeze = {"W*"};
  Built B = build(MLP, O);
  EXPECT_EQ(B.Sum.TrainableParams, 18u); // b1, b2
  EXPECT_EQ(B.Sum.FrozenParams, 160u);
  EXPECT_EQ(find(B.S, "grad(W1)"), nullptr);
  // Gemm1 no longer keeps x: only b1 needs a gradient there.
  const Step &Last = B.S.Steps[B.S.Steps.size() - 2];
  EXPECT_EQ(names(B.S, Last.Reads), std::vector<std::string>{"grad(h)"});
  O.Freeze = {"re:^(W|b)[12]$"};
  auto G = importModelText(MLP, "t.onnxtxt");
  ASSERT_TRUE(!!G);
  auto P = trainableParameters(**G, O);
  ASSERT_TRUE(!!P);
  EXPECT_TRUE(P->empty());
}

TEST(Training, DropoutKeepsMaskAndGeluKeepsInput) {
  const std::string Text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4,8] x) => (float[4,16] y) <)" +
                           W("float[16,8] W", 128) +
                           R"(, float ratio = {0.1}, bool train = {1},
 float s2 = {1.41421}, float one = {1.0}, float half = {0.5}> {
  h = Gemm<transB=1>(x, W)
  d = Div(h, s2)
  e = Erf(d)
  a = Add(e, one)
  m = Mul(h, a)
  g = Mul(m, half)
  y, mask = Dropout(g, ratio, train)
}
)";
  Built B = build(Text, {});
  // PyTorch on the CPU keeps a float mask of the input's size: 4*16*4 B.
  ASSERT_NE(find(B.S, "saved(mask)"), nullptr);
  EXPECT_EQ(find(B.S, "saved(mask)")->SizeBytes, 256u);
  // GELU in erf form: one backward step keeping only its input h.
  bool SawGelu = false;
  for (const Step &St : B.S.Steps)
    if (St.Op == "Gelu.grad") {
      SawGelu = true;
      EXPECT_EQ(names(B.S, St.Reads),
                (std::vector<std::string>{"grad(g)", "h"}));
      EXPECT_EQ(names(B.S, St.Writes), std::vector<std::string>{"grad(h)"});
    }
  EXPECT_TRUE(SawGelu);
  EXPECT_EQ(find(B.S, "grad(e)"), nullptr);
  // Scalar constants are not parameters.
  EXPECT_EQ(B.Sum.TrainableParams, 128u);
}

TEST(Training, TransposedWeightIsAFreeView) {
  const std::string Text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4,8] x) => (float[4,16] y) <)" +
                           W("float[16,8] W", 128) + R"(> {
  wt = Transpose<perm=[1,0]>(W)
  y = MatMul(x, wt)
}
)";
  Built B = build(Text, {});
  EXPECT_EQ(B.S.Steps[0].ViewOf, 0);
  EXPECT_NE(find(B.S, "grad(W)"), nullptr);
  EXPECT_EQ(find(B.S, "grad(wt)"), nullptr);
  EXPECT_EQ(B.Sum.modelStateBytes(), 16u * 128u);
}

// The layer of the two tests below.
const std::string PackedLSTM =
    R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[5,3,4] x) => (float[5,2,3,8] y) <)" +
    W("float[1,32,4] wf", 128) + ", " + W("float[1,32,4] wr", 128) + ", " +
    W("float[1,32,8] rf", 256) + ", " + W("float[1,32,8] rr", 256) + R"(> {
  w = Concat<axis = 0>(wf, wr)
  r = Concat<axis = 0>(rf, rr)
  y, h, c = LSTM<hidden_size = 8, direction = "bidirectional">(x, w, r)
}
)";

// A bidirectional LSTM whose W and R PyTorch's exporter packs from the two
// directions' parameters with Concat. By hand: X [T=5, N=3, I=4], H = 8.
// The packed W (2 x 32 x 4 floats) and R hold no bytes: PyTorch runs on the
// parameters. The states are 7 x 2 directions x 15 steps x 8 x 4 B = 6720;
// the gate gradients 4 x 2 x 15 x 8 x 4 = 3840. Each parameter's gradient
// (wf, wr: 512 B; rf, rr: 1024 B) is written by an LSTM.grad step (the
// recurrence writes dR, the input projection dW), and no Concat.grad runs.
TEST(Training, RecurrentStatesAndPackedWeights) {
  const std::string &Text = PackedLSTM;
  Built B = build(Text, {});
  EXPECT_TRUE(B.Warnings.empty()) << B.Warnings.front();
  ASSERT_NE(find(B.S, "w"), nullptr);
  EXPECT_EQ(find(B.S, "w")->SizeBytes, 0u);
  EXPECT_EQ(find(B.S, "r")->SizeBytes, 0u);
  ASSERT_NE(find(B.S, "saved(y:states)"), nullptr);
  EXPECT_EQ(find(B.S, "saved(y:states)")->SizeBytes, 6720u);
  ASSERT_NE(find(B.S, "grad(y:gates)"), nullptr);
  EXPECT_EQ(find(B.S, "grad(y:gates)")->SizeBytes, 3840u);
  // x is a graph input, not a Transpose's output: no copies.
  EXPECT_EQ(find(B.S, "saved(y:input-copies)"), nullptr);
  std::map<std::string, std::string> WriterOf;
  for (const Step &St : B.S.Steps)
    for (TensorId T : St.Writes)
      WriterOf[B.S.Tensors[T].Name] = St.Op;
  for (const char *P : {"grad(wf)", "grad(wr)", "grad(rf)", "grad(rr)"})
    EXPECT_EQ(WriterOf[P], "LSTM.grad") << P;
  EXPECT_EQ(find(B.S, "grad(wf)")->SizeBytes, 512u);
  EXPECT_EQ(find(B.S, "grad(rf)")->SizeBytes, 1024u);
  for (const Step &St : B.S.Steps)
    EXPECT_NE(St.Op, "Concat.grad");
}

// Under --runtime=oomplan, whose executor does allocate the packed W and
// R, those keep their bytes (test/lit/training/lstm-without-y.test has the
// layer with Y omitted).
TEST(Training, RecurrentPackedWeightsUnderOurRuntime) {
  const std::string &Text = PackedLSTM;
  Built B = build(Text, {});
  EXPECT_EQ(find(B.S, "w")->SizeBytes, 0u);
  TrainingOptions Ours;
  Ours.Runtime = TrainRuntime::Oomplan;
  Built O = build(Text, Ours);
  EXPECT_EQ(find(O.S, "w")->SizeBytes, 2u * 32 * 4 * 4);
  EXPECT_EQ(find(O.S, "r")->SizeBytes, 2u * 32 * 8 * 4);
}

TEST(Training, TiedWeightsCountOnce) {
  const std::string Text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4,8] x) => (float[4,8] y) <)" +
                           W("float[8,8] A", 64) + ", " +
                           W("float[8,8] B", 64) + R"(> {
  h = MatMul(x, A)
  y = MatMul(h, B)
}
)";
  TrainingOptions O;
  O.Tied = {{"A", "B"}};
  Built B = build(Text, O);
  EXPECT_EQ(B.Sum.TrainableParams, 64u);
  EXPECT_EQ(find(B.S, "B")->SizeBytes, 0u);
  EXPECT_NE(find(B.S, "grad(A)+1"), nullptr); // second contribution
  O.Tied = {{"A", "nope"}};
  auto G = importModelText(Text, "t.onnxtxt");
  ASSERT_TRUE(!!G);
  auto P = trainableParameters(**G, O);
  ASSERT_FALSE(!!P);
  EXPECT_NE(llvm::toString(P.takeError()).find("'nope' is not a weight"),
            std::string::npos);
  // A weight tied to itself, or to one of another size, would silently drop
  // a gradient and its optimizer state.
  for (auto [Tie, Msg] :
       {std::pair<std::pair<std::string, std::string>, std::string>{
            {"A", "A"}, "'A' is tied to itself"},
        {{"A", "x"}, "'x' is not a weight"}}) {
    O.Tied = {Tie};
    auto Bad = trainableParameters(**G, O);
    ASSERT_FALSE(!!Bad);
    EXPECT_NE(llvm::toString(Bad.takeError()).find(Msg), std::string::npos);
  }
}

TEST(Training, TiedWeightsMustMatchInSize) {
  const std::string Text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4,8] x) => (float[4,4] y) <)" +
                           W("float[8,8] A", 64) + ", " +
                           W("float[8,4] B", 32) + R"(> {
  h = MatMul(x, A)
  y = MatMul(h, B)
}
)";
  auto G = importModelText(Text, "t.onnxtxt");
  ASSERT_TRUE(!!G);
  TrainingOptions O;
  O.Tied = {{"A", "B"}};
  auto P = trainableParameters(**G, O);
  ASSERT_FALSE(!!P);
  EXPECT_NE(llvm::toString(P.takeError())
                .find("'A' and 'B' differ in element count (64 and 32)"),
            std::string::npos);
}

TEST(Training, Options) {
  EXPECT_EQ(*parseOptimizer("adamw"), OptimizerKind::AdamW);
  llvm::consumeError(parseOptimizer("lion").takeError());
  EXPECT_EQ(*parsePrecision("fp16-mixed"), TrainPrecision::FP16Mixed);
  llvm::consumeError(parsePrecision("fp8").takeError());
  auto T = parseTiedPair("wte.weight, lm_head.weight");
  ASSERT_TRUE(!!T);
  EXPECT_EQ(T->second, "lm_head.weight");
  llvm::consumeError(parseTiedPair("a").takeError());
}
