//===- FuzzModel.h - pipeline shared by the ONNX fuzz targets --*- C++ -*-===//
//
// Both ONNX fuzz targets (binary and text) hand the imported graph to
// fuzzModel, which runs what the CLI runs on a model: shape inference, symbol
// binding, the inference plan and the training plan, each placement checked
// again by the independent verifier. Bad input must come back as an
// llvm::Error; a crash, a sanitizer report, an internal error, a plan that
// fails verification or a total that wraps is a bug, and the harness aborts
// so that libFuzzer keeps the input.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TEST_FUZZ_FUZZMODEL_H
#define OOMPLAN_TEST_FUZZ_FUZZMODEL_H

#include "oomplan/IR/Graph.h"
#include "llvm/Support/Error.h"
#include <cstddef>
#include <cstdint>

namespace oomplan::fuzz {

/// Inputs larger than this are skipped: libFuzzer's -max_len keeps mutations
/// below it, and the limit keeps one run far under -timeout.
constexpr size_t MaxInputBytes = 64 * 1024;
/// Graphs with more nodes or values are skipped before planning: training
/// placement is still quadratic (issue 10 item 8), and a slow input that is
/// merely big would hide real hangs.
constexpr size_t MaxNodes = 400;
constexpr size_t MaxValues = 2000;

/// Consumes E; aborts when it is an internal error (a bug, never bad input).
void checkError(llvm::Error E, const char *Stage);

/// Runs shapes, binding, inference and training plans on an imported graph.
void fuzzModel(llvm::Expected<std::unique_ptr<Graph>> G);

} // namespace oomplan::fuzz

#endif
