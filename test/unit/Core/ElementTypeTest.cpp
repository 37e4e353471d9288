//===- ElementTypeTest.cpp - ONNX element types ---------------------------===//
#include "oomplan/IR/ElementType.h"
#include "gtest/gtest.h"

using namespace oomplan;

TEST(ElementType, WidthsFollowONNX) {
  // Every ONNX 1.12 type number, with the width the ONNX spec gives it.
  const unsigned Expected[] = {0, 32, 8,  8,  16, 16, 32,  64, 0,
                               8, 16, 64, 32, 64, 64, 128, 16};
  for (unsigned N = 0; N <= MaxElementTypeNumber; ++N) {
    ElementType T;
    ASSERT_TRUE(elementTypeFromNumber(N, T));
    EXPECT_EQ(elementBits(T), Expected[N]) << elementTypeName(T).str();
  }
  ElementType T;
  EXPECT_FALSE(elementTypeFromNumber(17, T));
  EXPECT_FALSE(elementTypeFromNumber(-1, T));
}

TEST(ElementType, Names) {
  EXPECT_EQ(elementTypeName(ElementType::BFloat16), "bfloat16");
  EXPECT_EQ(elementTypeName(ElementType::Int64), "int64");
  EXPECT_TRUE(isIntegerLike(ElementType::Bool));
  EXPECT_FALSE(isIntegerLike(ElementType::Float16));
  EXPECT_TRUE(isFloatingPoint(ElementType::BFloat16));
}
