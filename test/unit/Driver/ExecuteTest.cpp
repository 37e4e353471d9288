//===- ExecuteTest.cpp - oomplan.h's execute() and its C form -------------===//
//
// execute() is oomplan-run as one call; these tests call it as a program
// would, with inputs in memory, and check the values the run computed
// (worked out by hand), the measured bytes against the plan, and the errors
// an embedder switches on. The C form, oomplan_execute, is checked on the
// same model file.
//
//===----------------------------------------------------------------------===//
#include "oomplan-c/oomplan.h"
#include "oomplan/oomplan.h"
#include "gtest/gtest.h"
#include <cstring>

using namespace oomplan::api;

namespace {

// test/lit/run/relu-add.onnxtxt: r = Relu(x), s = r + w, y = Reshape(s * c,
// [2, 2]) with w = [10, 20, 30, 40] and c = 0.5. For x = [-1, 2, -3, 4]:
// r = [0, 2, 0, 4], s = [10, 22, 30, 44], y = [[5, 11], [15, 22]]. The
// weights region holds w, shape and c at 256-byte aligned slots (768
// bytes); the last, c, ends at 512 + 4 = 516.
const char *ReluAdd = OOMPLAN_TEST_MODELS_DIR "/../lit/run/relu-add.onnxtxt";

std::string floats(std::initializer_list<float> Values) {
  std::string Bytes(Values.size() * sizeof(float), '\0');
  std::memcpy(Bytes.data(), Values.begin(), Bytes.size());
  return Bytes;
}

Tensor input(std::vector<int64_t> Dims, std::string Data) {
  return {"x", "float", std::move(Dims), std::move(Data)};
}

Request model(const std::string &Path) {
  Request R;
  R.ModelPath = Path;
  return R;
}

const RegionBytes *region(const ExecuteResult &E, const std::string &Name) {
  for (const RegionBytes &R : E.Regions)
    if (R.Region == Name)
      return &R;
  return nullptr;
}

// Every region's measured high-water, rounded up to the alignment, is its
// planned size, and the weights, io and arena regions add up to the plan.
void expectHighWaterEqualsPlan(const ExecuteResult &E) {
  uint64_t Sum = 0;
  for (const RegionBytes &R : E.Regions) {
    EXPECT_EQ(R.HighWaterAlignedBytes, R.PlannedBytes) << R.Region;
    EXPECT_LE(R.HighWaterBytes, R.PlannedBytes) << R.Region;
    if (R.Region != "host")
      Sum += R.PlannedBytes;
  }
  EXPECT_EQ(Sum, E.PlanTotalBytes);
  EXPECT_TRUE(E.highWaterMatches());
}

} // namespace

TEST(Execute, ReluAddValuesByHand) {
  RunOptions O;
  O.Check = "unplanned";
  O.Poison = true;
  ExecuteResult E =
      execute(model(ReluAdd), O, {input({4}, floats({-1, 2, -3, 4}))});
  ASSERT_EQ(E.ExitCode, 0) << E.ErrorMessage;
  EXPECT_TRUE(E.Ran);
  ASSERT_EQ(E.Outputs.size(), 1u);
  const Tensor &Y = E.Outputs[0];
  EXPECT_EQ(Y.Name, "y");
  EXPECT_EQ(Y.Type, "float");
  EXPECT_EQ(Y.Dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Y.Data, floats({5, 11, 15, 22}));
  const RegionBytes *W = region(E, "weights");
  ASSERT_TRUE(W);
  EXPECT_EQ(W->PlannedBytes, 768u);
  EXPECT_EQ(W->HighWaterBytes, 516u);
  expectHighWaterEqualsPlan(E);
  EXPECT_TRUE(E.CheckRan);
  EXPECT_EQ(E.CheckDifference, "");
  EXPECT_TRUE(E.Poisoned);
  EXPECT_EQ(E.Passes, 1u);
  // The tool's report says the same.
  std::string Text = formatRunReport(E, false);
  EXPECT_EQ(Text.rfind("output 0 'y' float [2,2] 16 bytes fnv1a ", 0), 0u)
      << Text;
  // io: x at 0 and y at 256, 16 bytes each (272); r, s and m are written
  // in place into y's buffer (m is y's view), so the arena is empty.
  EXPECT_NE(Text.find("\nweights             768          516         768"
                      "   yes\n"
                      "io                  512          272         512"
                      "   yes\n"
                      "arena                 0            0           0"
                      "   yes\n"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("\nplan total 1280 bytes (1.25 KiB)\n"),
            std::string::npos);
  EXPECT_NE(Text.find("check unplanned: outputs bit-identical\n"),
            std::string::npos);
  EXPECT_NE(formatRunReport(E, true).find("\"ok\": true"), std::string::npos);
}

// mobilenet_v2 (test/models, its weights stripped: random ones) at batch 1:
// one output of 1 x 1000 floats, 4000 bytes; every region's measured
// high-water is its planned size.
TEST(Execute, ShippedModelKeepsToItsPlan) {
  Request R = model(OOMPLAN_TEST_MODELS_DIR "/mobilenet_v2.onnx");
  R.Batch = 1;
  RunOptions O;
  O.RandomWeights = true;
  O.Seed = 3;
  ExecuteResult E = execute(R, O);
  ASSERT_EQ(E.ExitCode, 0) << E.ErrorMessage;
  ASSERT_EQ(E.Outputs.size(), 1u);
  EXPECT_EQ(E.Outputs[0].Type, "float");
  EXPECT_EQ(E.Outputs[0].Dims, (std::vector<int64_t>{1, 1000}));
  EXPECT_EQ(E.Outputs[0].Data.size(), 4000u);
  ASSERT_TRUE(region(E, "weights") && region(E, "io") && region(E, "arena"));
  // 3.5 million parameters of 4 bytes, at least.
  EXPECT_GT(region(E, "weights")->PlannedBytes, 13u << 20);
  expectHighWaterEqualsPlan(E);
  EXPECT_FALSE(E.Device); // the CPU backend's regions are host memory
}

// Inputs a run cannot use are bad input, naming the tensor and both shapes;
// nothing is printed and nothing throws.
TEST(Execute, BadInputsAreErrors) {
  RunOptions O;
  ExecuteResult E =
      execute(model(ReluAdd), O, {input({2, 2}, floats({1, 2, 3, 4}))});
  EXPECT_EQ(E.ExitCode, 1);
  EXPECT_EQ(E.Category, ErrorCategory::BadInput);
  EXPECT_EQ(E.ErrorMessage,
            "(in memory): input 'x' has shape 2x2, the plan is for 4 (bind "
            "the dims with --batch, --seq, --dim or --input-shape)");
  EXPECT_FALSE(E.Ran);
  EXPECT_TRUE(E.Outputs.empty());

  E = execute(model(ReluAdd), O, {input({4}, floats({1, 2, 3}))});
  EXPECT_EQ(E.Category, ErrorCategory::BadInput);
  EXPECT_EQ(E.ErrorMessage, "(in memory): input 'x' holds 12 bytes, its type "
                            "and dims (float 4) need 16");

  Tensor Other = input({4}, floats({1, 2, 3, 4}));
  Other.Name = "z";
  E = execute(model(ReluAdd), O, {Other});
  EXPECT_EQ(E.Category, ErrorCategory::BadInput);
  EXPECT_EQ(E.ErrorMessage, "a tensor given in memory is named 'z': the model "
                            "has no such input (its inputs: x)");

  O.Check = "everything";
  E = execute(model(ReluAdd), O);
  EXPECT_EQ(E.ErrorMessage,
            "invalid value 'everything' for --check; valid values: unplanned");
}

// A plan over its budget is an answer, not an error: exit 2, nothing run.
// The plan needs 768 bytes of weights alone, so 600 bytes cannot hold it.
TEST(Execute, OverBudgetIsNotRun) {
  Request R = model(ReluAdd);
  R.Budget = "600";
  ExecuteResult E = execute(R, RunOptions());
  EXPECT_EQ(E.ExitCode, 2);
  EXPECT_FALSE(E.Ran);
  EXPECT_FALSE(E.Fits);
  EXPECT_EQ(E.BudgetBytes, 600u);
  EXPECT_FALSE(E.Category);
  EXPECT_TRUE(E.Fitted); // tried, and still over
  EXPECT_GT(E.PlanTotalBytes, 768u);
  std::string Text = formatRunReport(E, false);
  EXPECT_EQ(Text.rfind("plan total ", 0), 0u);
  EXPECT_NE(Text.find("budget 600 bytes: does NOT fit (nothing fitted it): "
                      "not run\n"),
            std::string::npos);
}

TEST(Execute, KernelNames) {
  std::string Error;
  auto Names = kernelNames("cpu", Error);
  ASSERT_TRUE(Names);
  EXPECT_TRUE(std::is_sorted(Names->begin(), Names->end()));
  EXPECT_TRUE(std::binary_search(Names->begin(), Names->end(), "Relu"));
  EXPECT_FALSE(kernelNames("tpu", Error));
  EXPECT_NE(Error.find("backend 'tpu' is not available"), std::string::npos);
}

// The C form: the same run, the input in memory, the outputs and regions
// through the accessors.
TEST(ExecuteC, ReluAddValuesByHand) {
  const float X[4] = {-1, 2, -3, 4};
  const long long Dims[1] = {4};
  oomplan_tensor In = {"x", "float", Dims, 1, X, sizeof X};
  const char *Argv[] = {"--check=unplanned"};
  oomplan_execution *E = nullptr;
  char *Error = nullptr;
  ASSERT_EQ(oomplan_execute(ReluAdd, Argv, 1, &In, 1, &E, &Error), 0) << Error;
  EXPECT_EQ(Error, nullptr);
  ASSERT_EQ(oomplan_execution_output_count(E), 1);
  const char *Type = nullptr;
  const long long *OutDims = nullptr;
  int Rank = 0;
  const void *Data = nullptr;
  size_t Size = 0;
  EXPECT_STREQ(
      oomplan_execution_output(E, 0, &Type, &OutDims, &Rank, &Data, &Size),
      "y");
  EXPECT_STREQ(Type, "float");
  ASSERT_EQ(Rank, 2);
  EXPECT_EQ(OutDims[0], 2);
  EXPECT_EQ(OutDims[1], 2);
  ASSERT_EQ(Size, 16u);
  EXPECT_EQ(std::string(static_cast<const char *>(Data), Size),
            floats({5, 11, 15, 22}));
  EXPECT_EQ(oomplan_execution_output(E, 1, nullptr, nullptr, nullptr, nullptr,
                                     nullptr),
            nullptr);
  unsigned long long Sum = 0;
  for (int I = 0; I < oomplan_execution_region_count(E); ++I) {
    unsigned long long Planned = 0, HighWater = 0;
    const char *Name = oomplan_execution_region(E, I, &Planned, &HighWater);
    ASSERT_TRUE(Name);
    EXPECT_EQ(HighWater, Planned) << Name;
    if (std::strcmp(Name, "weights") == 0) {
      EXPECT_EQ(Planned, 768u);
    }
    Sum += Planned;
  }
  EXPECT_EQ(Sum, oomplan_execution_plan_bytes(E));
  // The report defaults to oomplan-run's --json object.
  std::string Report = oomplan_execution_report(E);
  EXPECT_EQ(Report.rfind("{\n  \"outputs\": [", 0), 0u) << Report;
  EXPECT_NE(Report.find("\"identical\": true"), std::string::npos);
  EXPECT_EQ(oomplan_execution_error_category(E), OOMPLAN_ERROR_NONE);
  oomplan_execution_free(E);
}

TEST(ExecuteC, ErrorsAreStrings) {
  const float X[4] = {-1, 2, -3, 4};
  const long long Dims[1] = {4};
  oomplan_tensor In = {"x", "flot", Dims, 1, X, sizeof X};
  oomplan_execution *E = nullptr;
  char *Error = nullptr;
  EXPECT_EQ(oomplan_execute(ReluAdd, nullptr, 0, &In, 1, &E, &Error), 1);
  ASSERT_TRUE(Error);
  EXPECT_STREQ(Error, "(in memory): input 'x' has element type 'flot', not "
                      "one oomplan can run (float, int64, ...)");
  EXPECT_EQ(oomplan_execution_error_category(E), OOMPLAN_ERROR_BAD_INPUT);
  EXPECT_STREQ(oomplan_execution_report(E), "");
  EXPECT_EQ(oomplan_execution_output_count(E), 0);
  oomplan_free_string(Error);
  oomplan_execution_free(E);
  // Bad C arguments and the tool's own options are errors, never aborts.
  EXPECT_EQ(oomplan_execute(ReluAdd, nullptr, 2, nullptr, 0, nullptr, &Error),
            1);
  EXPECT_STREQ(Error, "argv is NULL or argc is negative");
  oomplan_free_string(Error);
  EXPECT_EQ(oomplan_execute(ReluAdd, nullptr, 0, nullptr, 1, nullptr, &Error),
            1);
  EXPECT_STREQ(Error, "inputs is NULL or num_inputs is negative");
  oomplan_free_string(Error);
  const char *Argv[] = {"--list-kernels"};
  EXPECT_EQ(oomplan_execute(ReluAdd, Argv, 1, nullptr, 0, nullptr, &Error), 1);
  EXPECT_NE(std::string(Error).find("oomplan-run's own"), std::string::npos);
  oomplan_free_string(Error);
  EXPECT_EQ(oomplan_execution_status(nullptr), 1);
  EXPECT_EQ(oomplan_execution_output_count(nullptr), 0);
}
