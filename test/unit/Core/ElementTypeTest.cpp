//===- ElementTypeTest.cpp - ONNX element types ---------------------------===//
#include "oomplan/IR/ElementType.h"
#include "gtest/gtest.h"

using namespace oomplan;

TEST(ElementType, WidthsFollowONNX) {
  // Every ONNX 1.12 type number and the four 8-bit floats of ONNX 1.14,
  // with the width the ONNX spec gives it.
  const unsigned Expected[] = {0,  32, 8,  8,  16,  16, 32, 64, 0, 8, 16,
                               64, 32, 64, 64, 128, 16, 8,  8,  8, 8};
  static_assert(sizeof(Expected) / sizeof(Expected[0]) ==
                    MaxElementTypeNumber + 1,
                "one width per type number");
  for (unsigned N = 0; N <= MaxElementTypeNumber; ++N) {
    ElementType T;
    ASSERT_TRUE(elementTypeFromNumber(N, T));
    EXPECT_EQ(elementBits(T), Expected[N]) << elementTypeName(T).str();
  }
  ElementType T;
  // int4 and uint4 (ONNX 1.16) are half a byte: not known.
  EXPECT_FALSE(elementTypeFromNumber(21, T));
  EXPECT_FALSE(elementTypeFromNumber(-1, T));
}

TEST(ElementType, Names) {
  EXPECT_EQ(elementTypeName(ElementType::BFloat16), "bfloat16");
  EXPECT_EQ(elementTypeName(ElementType::Int64), "int64");
  EXPECT_TRUE(isIntegerLike(ElementType::Bool));
  EXPECT_FALSE(isIntegerLike(ElementType::Float16));
  EXPECT_TRUE(isFloatingPoint(ElementType::BFloat16));
  EXPECT_EQ(elementTypeName(ElementType::Float8E5M2FNUZ), "float8e5m2fnuz");
  // No kernel may read an 8-bit float as another float.
  EXPECT_FALSE(isFloatingPoint(ElementType::Float8E4M3FN));
  EXPECT_TRUE(isFloat8(ElementType::Float8E4M3FN));
  EXPECT_FALSE(isFloat8(ElementType::UInt8));
}
