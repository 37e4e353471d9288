//===- ShapeInferenceTest.cpp - shape rules on small text models ----------===//
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {
TEST(ShapeInferenceTest, Placeholder) { SUCCEED(); }
} // namespace
