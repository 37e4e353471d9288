//===- Advice.h - what would help, each remedy planned -----------*- C++
//-*-===//
//
// For a plan that does not fit: the remedies a person would try, each with the
// memory it leads to, computed by planning it (the capacity searches for a
// smaller batch or a shorter sequence, a re-plan at 16-bit precision, a
// re-plan with the model state sharded over the fewest devices that fit),
// ranked by bytes saved. Recompute and offload are planned by the --fit
// chooser when the caller passes one (DiagnosisInput::Fit), else listed as
// not planned.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_ADVICE_H
#define OOMPLAN_REPORT_ADVICE_H

#include "oomplan/Report/Diagnosis.h"

namespace oomplan {
namespace report {

/// What a remedy changes; the JSON's "kind" (remedyKindKey).
enum class RemedyKind : uint8_t {
  SmallerBatch,
  ShorterSequence,
  LowerPrecision,
  MoreDevices,
  Fit,                     ///< the --fit chooser: recompute/offload
  ActivationCheckpointing, ///< placeholder (no --fit chooser given)
  HostOffload,             ///< placeholder (no --fit chooser given)
};
/// "smaller-batch", "shorter-sequence", "lower-precision", "more-devices",
/// "fit", "activation-checkpointing", "host-offload".
llvm::StringRef remedyKindKey(RemedyKind K);

struct Remedy {
  RemedyKind Kind = RemedyKind::SmallerBatch;
  std::string Action;      ///< "smaller batch", "lower precision", ...
  std::string Detail;      ///< "batch 32 -> 30", "fp16/bf16", "8 devices".
  bool Planned = true;     ///< False for placeholders (no transform yet).
  uint64_t BytesAfter = 0; ///< Device bytes (per device) after the change.
  int64_t BytesSaved = 0;  ///< Current device bytes minus BytesAfter.
  bool Fits = false;
  // The change as numbers, so programs need not parse Detail (JSON fields;
  // absent ones are null).
  std::string Symbol;          ///< Smaller batch/shorter seq: "batch", "seq".
  std::optional<int64_t> From; ///< ... the bound value now,
  std::optional<int64_t> To;   ///< ... and the one planned (1: none fits).
  std::optional<unsigned> Devices; ///< More devices: N (none: 4096 fail).
  std::string Precision;           ///< Lower precision: the --precision value.
  std::string Strategy; ///< --fit: the chooser's strategy, if it fits.
  std::optional<double> OverheadPercent; ///< --fit: predicted added time.
};

/// The remedies for In's plan, largest saving first, placeholders last; empty
/// when the plan fits.
llvm::Expected<std::vector<Remedy>> adviseRemedies(const DiagnosisInput &In);

} // namespace report
} // namespace oomplan

#endif
