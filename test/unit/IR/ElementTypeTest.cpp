//===- ElementTypeTest.cpp - ONNX element types ---------------------------===//
#include "oomplan/IR/ElementType.h"
#include "gtest/gtest.h"

using namespace oomplan;

TEST(ElementType, WidthsFollowONNX) {
  // Every ONNX 1.12 type number, the four 8-bit floats of ONNX 1.14 and
  // the 4-bit integers of ONNX 1.16, with the width the ONNX spec gives it.
  const unsigned Expected[] = {0,  32, 8,  8,   16, 16, 32, 64, 0, 8, 16, 64,
                               32, 64, 64, 128, 16, 8,  8,  8,  8, 4, 4};
  static_assert(sizeof(Expected) / sizeof(Expected[0]) ==
                    MaxElementTypeNumber + 1,
                "one width per type number");
  for (unsigned N = 0; N <= MaxElementTypeNumber; ++N) {
    ElementType T;
    ASSERT_TRUE(elementTypeFromNumber(N, T));
    EXPECT_EQ(elementBits(T), Expected[N]) << elementTypeName(T).str();
  }
  ElementType T;
  // float4e2m1 (ONNX 1.18) is not known.
  EXPECT_FALSE(elementTypeFromNumber(23, T));
  EXPECT_FALSE(elementTypeFromNumber(-1, T));
}

// Sub-byte types pack two to a byte: N of them take ceil(N / 2) bytes.
TEST(ElementType, SubBytePacking) {
  ElementType T;
  ASSERT_TRUE(elementTypeFromNumber(22, T));
  EXPECT_EQ(T, ElementType::Int4);
  EXPECT_EQ(elementTypeName(ElementType::UInt4), "uint4");
  EXPECT_TRUE(isSubByte(T));
  EXPECT_FALSE(isSubByte(ElementType::UInt8));
  EXPECT_FALSE(isIntegerLike(T)); // no shape computation reads them
  uint64_t B = 0;
  EXPECT_TRUE(packedBytes(T, 7, B));
  EXPECT_EQ(B, 4u);
  EXPECT_TRUE(packedBytes(ElementType::UInt4, 8, B));
  EXPECT_EQ(B, 4u);
  EXPECT_TRUE(packedBytes(ElementType::Float, 3, B));
  EXPECT_EQ(B, 12u);
  EXPECT_FALSE(packedBytes(ElementType::Float, uint64_t(1) << 63, B));
  EXPECT_FALSE(packedBytes(T, ~uint64_t(0), B));
  EXPECT_FALSE(packedBytes(ElementType::String, 1, B));
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
