//===- PassRegistry.h - every schedule transform and fit lever --*- C++ -*-===//
//
// One record per schedule pass, in pipeline order: its name (the key
// --print-after takes and PassInstrumentation reports), its kind, a one-line
// description and the verifier that checks the schedule it makes. Two kinds:
//
// - a transform changes what runs (fusion, training) and is applied as the
//   request asks;
// - a fit lever (reorder, recompute, offload, weight streaming, micro-batches)
//   keeps what runs and is chosen by cost to meet a budget. The chooser
//   (Fit/Chooser.h) enumerates the levers in this order; its table there
//   gives each one's cost hook, the candidates it builds and weighs. The
//   batch split (micro-batch) is weighed by the driver, which plans each
//   split and then runs the chooser on one pass.
//
// Adding a pass: one row here, with a PassId, and its code in Transforms/ or
// Fit/ (a lever: a row in the chooser's table too).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SCHEDULE_PASSREGISTRY_H
#define OOMPLAN_SCHEDULE_PASSREGISTRY_H

#include "oomplan/Schedule/Schedule.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace oomplan {

/// Every schedule pass, in pipeline order (the registry's row order).
enum class PassId : uint8_t {
  Fusion,
  Training,
  Reorder,
  Recompute,
  ActivationOffload,
  WeightStreaming,
  OptimizerOffload,
  MicroBatch,
  InferenceRecompute,
};

enum class PassKind : uint8_t {
  Transform, ///< Changes what runs; applied as the request asks.
  FitLever,  ///< Keeps what runs; chosen by cost to meet a budget.
};

/// Checks the schedule a pass made; an error names the pass.
using PassVerifier = llvm::Error (*)(llvm::StringRef Pass, const Schedule &S);

struct PassInfo {
  PassId Id;
  const char *Name; ///< The --print-after key: "recompute".
  PassKind Kind;
  const char *Description; ///< One line, for --help and docs.
  /// verifyScheduleAfter for every pass today. The passes call it through
  /// verifyAfter, except fusion and micro-batch: their schedules are checked
  /// by the pipeline's verifySchedule before placement (planGraph,
  /// buildPlan).
  PassVerifier Verify;
};

/// Every pass, in pipeline order.
llvm::ArrayRef<PassInfo> schedulePasses();

/// The record of Id.
const PassInfo &passInfo(PassId Id);

/// Id's name: passName(PassId::Recompute) is "recompute".
llvm::StringRef passName(PassId Id);

/// The record named Name, or null.
const PassInfo *lookupPass(llvm::StringRef Name);

/// "transform" or "fit lever".
llvm::StringRef passKindName(PassKind K);

/// Runs Id's verifier on S, the schedule Id made.
llvm::Error verifyAfter(PassId Id, const Schedule &S);

} // namespace oomplan

#endif
