//===- ApiTest.cpp - oomplan.h's run() called as a program would ----------===//
//
// The CLI is one way into api::run; these tests are another, with the model
// given as bytes. Every expected size is worked out by hand in the comment
// above its test; the error tests check the category an embedder switches
// on, not only the message.
//
//===----------------------------------------------------------------------===//
#include "oomplan/oomplan.h"
#include "gtest/gtest.h"

using namespace oomplan::api;

namespace {
// x: float[2,64] input (512 B); w: float[64,64] weight (16384 B);
// h = MatMul(x, w): float[2,64] (512 B) in the arena; y = Relu(h) is the
// output (512 B). Alignment 256 pads nothing. Regions: weights 16384,
// io 512 + 512 = 1024, arena 512 (h alone; y is io): total 17920.
std::string matMulRelu() {
  std::string W;
  for (int I = 0; I < 64 * 64; ++I)
    W += I ? ",0" : "0";
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "g (float[2,64] x) => (float[2,64] y) <float[64,64] w = {" +
         W + "}> {\n  h = MatMul(x, w)\n  y = Relu(h)\n}\n";
}

Request textModel(const std::string &Text) {
  Request R;
  R.ModelPath = "matmul_relu.onnxtxt";
  R.ModelBytes = Text;
  // The sizes below are the unfused graph's in the file's order: MatMul +
  // Relu would otherwise be one OomplanMatMul (test/lit/fuse covers that).
  R.Fuse = "none";
  R.Order = "file";
  return R;
}
} // namespace

TEST(Api, TotalBytesByHand) {
  Result Res = run(textModel(matMulRelu()));
  ASSERT_EQ(Res.ExitCode, 0) << Res.ErrorMessage;
  EXPECT_TRUE(Res.Fits);
  EXPECT_EQ(Res.TotalBytes, 17920u);
  EXPECT_FALSE(Res.BudgetBytes.has_value());
}

// A budget one byte short of 17920 with fitting off: the verdict as is,
// exit 2 and not an error. At exactly 17920 it fits.
TEST(Api, BudgetVerdictWithoutFitting) {
  Request R = textModel(matMulRelu());
  R.Budget = "17919";
  R.Fit.NoFit = true;
  Result Short = run(R);
  EXPECT_EQ(Short.ExitCode, 2) << Short.ErrorMessage;
  EXPECT_FALSE(Short.Fits);
  ASSERT_TRUE(Short.BudgetBytes.has_value());
  EXPECT_EQ(*Short.BudgetBytes, 17919u);
  EXPECT_TRUE(Short.ok());

  R.Budget = "17920";
  Result Exact = run(R);
  EXPECT_EQ(Exact.ExitCode, 0);
  EXPECT_TRUE(Exact.Fits);
}

// The JSON document carries the same total as the result's field, and two
// runs of one request give byte-identical output.
TEST(Api, JSONAgreesAndIsDeterministic) {
  Request R = textModel(matMulRelu());
  R.Emit = EmitKind::JSON;
  Result A = run(R), B = run(R);
  ASSERT_EQ(A.ExitCode, 0) << A.ErrorMessage;
  EXPECT_NE(A.Output.find("\"total_bytes\": 17920"), std::string::npos)
      << A.Output;
  EXPECT_EQ(A.Output, B.Output);
}

TEST(Api, MissingFileIsAnIOError) {
  Request R;
  R.ModelPath = "/nonexistent/oomplan-api-test.onnx";
  Result Res = run(R);
  EXPECT_EQ(Res.ExitCode, 1);
  ASSERT_TRUE(Res.Category.has_value());
  EXPECT_EQ(*Res.Category, ErrorCategory::IO);
  EXPECT_NE(Res.ErrorMessage.find("oomplan-api-test.onnx"), std::string::npos)
      << Res.ErrorMessage;
}

TEST(Api, MalformedModelIsBadInput) {
  Result Res = run(textModel("g (float[2] x) => (float[2] y) { y = "));
  EXPECT_EQ(Res.ExitCode, 1);
  ASSERT_TRUE(Res.Category.has_value());
  EXPECT_EQ(*Res.Category, ErrorCategory::BadInput);
}

TEST(Api, UnknownAlgorithmIsBadInput) {
  Request R = textModel(matMulRelu());
  R.Algorithm = "no-such-algorithm";
  Result Res = run(R);
  EXPECT_EQ(Res.ExitCode, 1);
  ASSERT_TRUE(Res.Category.has_value());
  EXPECT_EQ(*Res.Category, ErrorCategory::BadInput);
  EXPECT_NE(Res.ErrorMessage.find("no-such-algorithm"), std::string::npos)
      << Res.ErrorMessage;
}
