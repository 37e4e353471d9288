//===- TestExpected.h - unwrap an Expected in a test helper ----*- C++ -*-===//
//
// A test helper that returns a value (a loaded model, a schedule) cannot use
// ASSERT_*, and an EXPECT_* there does not stop the test: the next line would
// dereference a failed Expected. stopOnError reports the error as a test
// failure and stops the test binary at once instead, so no test ever uses an
// Expected value after a failed check. Inside a TEST body, use ASSERT_TRUE
// with llvm::toString(X.takeError()) as usual.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TEST_UNIT_TESTEXPECTED_H
#define OOMPLAN_TEST_UNIT_TESTEXPECTED_H

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"
#include <cstdio>
#include <cstdlib>

namespace oomplan {
namespace test {

/// Returns when E holds a value; on error, reports a failure naming What and
/// the error, then stops the test binary (the caller's next line would
/// dereference E).
template <typename T> void stopOnError(llvm::Expected<T> &E, const char *What) {
  if (E)
    return;
  ADD_FAILURE() << What << ": " << llvm::toString(E.takeError());
  std::fflush(stdout);
  std::abort();
}

} // namespace test
} // namespace oomplan

#endif
