//===- SavedTensorRulesTest.cpp - the saved-tensor table ------------------===//
//
// Training's reading of the op table's saved-tensor column: decided rows are
// found, Unknown and missing ops fall back; a few rows are checked against
// PyTorch's formulas they claim to follow.
//
//===----------------------------------------------------------------------===//
#include "SavedTensorRules.h"
#include "gtest/gtest.h"

using namespace oomplan::training;

TEST(SavedTensorRules, FindsEveryRowAndNothingElse) {
  EXPECT_GT(numSavedRules(), 60u);
  for (const char *Op : {"Abs", "Conv", "Dropout", "MatMul", "Relu", "Where"})
    EXPECT_NE(findSavedRule(Op), nullptr) << Op;
  EXPECT_EQ(findSavedRule("FlyingCarpet"), nullptr);
  EXPECT_EQ(findSavedRule(""), nullptr);
  EXPECT_EQ(fallbackSavedRule().SaveAlways, AllInputs);
}

TEST(SavedTensorRules, RowsFollowPyTorch) {
  // ReLU and Softmax keep their result, not their input.
  EXPECT_EQ(findSavedRule("Relu")->SaveOutputs, bit(0));
  EXPECT_EQ(findSavedRule("Relu")->SaveAlways, 0u);
  EXPECT_EQ(findSavedRule("Softmax")->SaveOutputs, bit(0));
  // Products keep an operand only for the other's gradient.
  EXPECT_EQ(findSavedRule("MatMul")->SaveIfPartnerGrad, bit(0) | bit(1));
  EXPECT_EQ(findSavedRule("Mul")->SaveAlways, 0u);
  // Add keeps nothing; its gradient is the incoming one.
  EXPECT_EQ(findSavedRule("Add")->SaveAlways, 0u);
  EXPECT_EQ(findSavedRule("Add")->GradViewInputs, bit(0) | bit(1));
  // Norms keep the input and statistics; running stats get no gradient.
  EXPECT_EQ(findSavedRule("BatchNormalization")->Aux, AuxKind::BatchNormStats);
  EXPECT_EQ(findSavedRule("BatchNormalization")->DiffInputs & bit(3), 0u);
  EXPECT_EQ(findSavedRule("LayerNormalization")->Aux, AuxKind::NormStats);
  EXPECT_EQ(findSavedRule("Dropout")->Aux, AuxKind::DropoutMask);
  EXPECT_EQ(findSavedRule("MaxPool")->Aux, AuxKind::PoolIndices);
  // Shape computations carry no gradient.
  EXPECT_EQ(findSavedRule("Shape")->DiffInputs, 0u);
}
