//===- ErrorTest.cpp - error categories
//------------------------------------===//
//
// Each typed maker gives its category, reading the category neither consumes
// nor changes the error, context keeps the category, and the library's real
// failures (missing file, bad syntax, unsupported opset, overflow) arrive
// with the category an embedder would switch on.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Support/Error.h"
#include "oomplan/Analysis/SymExpr.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {
/// The category and message of a failed Expected (a failure is expected).
template <typename T> ErrorParts partsOf(llvm::Expected<T> V) {
  EXPECT_FALSE(static_cast<bool>(V));
  if (V)
    return {};
  return takeErrorParts(V.takeError());
}
} // namespace

TEST(Error, MakersGiveTheirCategory) {
  struct Case {
    llvm::Error E;
    ErrorCategory C;
    const char *Name;
  } Cases[] = {
      {makeInputError("a"), ErrorCategory::Input, "input"},
      {makeUnsupportedError("b"), ErrorCategory::Unsupported, "unsupported"},
      {makeOverflowError("c"), ErrorCategory::Overflow, "overflow"},
      {makeInternalError("d"), ErrorCategory::Internal, "internal"},
      {makeIOError("e"), ErrorCategory::IO, "io"},
  };
  char Msg = 'a';
  for (Case &K : Cases) {
    // Reading the category twice shows that it does not consume the error.
    EXPECT_EQ(errorCategory(K.E), K.C);
    EXPECT_EQ(errorCategory(K.E), K.C);
    EXPECT_EQ(errorCategoryName(K.C), K.Name);
    ErrorParts P = takeErrorParts(std::move(K.E));
    EXPECT_EQ(P.Category, K.C);
    EXPECT_EQ(P.Message, std::string(1, Msg++));
  }
}

TEST(Error, TypedMakerMatchesNamedMakers) {
  for (ErrorCategory C :
       {ErrorCategory::Input, ErrorCategory::Unsupported,
        ErrorCategory::Overflow, ErrorCategory::Internal, ErrorCategory::IO}) {
    ErrorParts P = takeErrorParts(makeTypedError(C, "x"));
    EXPECT_EQ(P.Category, C);
    EXPECT_EQ(P.Message, "x");
  }
}

TEST(Error, HandleErrorsSelectsOnTheType) {
  bool SawOverflow = false;
  llvm::Error Rest = llvm::handleErrors(
      makeOverflowError("too big"),
      [&](const OverflowError &E) { SawOverflow = E.message() == "too big"; });
  EXPECT_FALSE(static_cast<bool>(Rest));
  EXPECT_TRUE(SawOverflow);
  // The common base catches every category.
  ErrorCategory Seen = ErrorCategory::Internal;
  llvm::Error Rest2 = llvm::handleErrors(
      makeIOError("disk"), [&](const OomplanError &E) { Seen = E.category(); });
  EXPECT_FALSE(static_cast<bool>(Rest2));
  EXPECT_EQ(Seen, ErrorCategory::IO);
}

TEST(Error, ContextKeepsTheCategory) {
  ErrorParts P = takeErrorParts(
      prependContext(makeOverflowError("integer overflow"), "m.onnx: "));
  EXPECT_EQ(P.Category, ErrorCategory::Overflow);
  EXPECT_EQ(P.Message, "m.onnx: integer overflow");
  EXPECT_FALSE(static_cast<bool>(
      prependContext(llvm::Error::success(), "never shown: ")));
}

TEST(Error, ForeignErrorsAreInternal) {
  llvm::Error E = llvm::createStringError(llvm::inconvertibleErrorCode(), "x");
  EXPECT_EQ(errorCategory(E), ErrorCategory::Internal);
  llvm::consumeError(std::move(E));
}

TEST(Error, LibraryFailuresAreCategorised) {
  EXPECT_EQ(partsOf(importModelFile("/nonexistent/m.onnx")).Category,
            ErrorCategory::IO);
  EXPECT_EQ(partsOf(importModelText("<ir_version: 8", "t.onnxtxt")).Category,
            ErrorCategory::Input);
  ErrorParts Opset = partsOf(importModelText(R"(
    <ir_version: 8, opset_import: ["" : 99]>
    g (float[2] x) => (float[2] y) { y = Relu(x) })",
                                             "t.onnxtxt"));
  EXPECT_EQ(Opset.Category, ErrorCategory::Unsupported);
  EXPECT_NE(Opset.Message.find("default-domain opset 99"), std::string::npos);
  // 2^40 * 2^40 does not fit in 63 bits.
  SymExpr Big = SymExpr::symbol(0) * SymExpr::symbol(0);
  std::vector<std::optional<int64_t>> Bind = {int64_t(1) << 40};
  std::vector<std::string> Names = {"N"};
  EXPECT_EQ(partsOf(Big.evaluate(Bind, Names)).Category,
            ErrorCategory::Overflow);
}
