//===- ParallelJSON.h - a multi-device plan as JSON ----------*- C++ -*-===//
//
// --emit=json with --devices/--parallel: the configuration, every stage's
// figures and its placed per-device plan (schema oomplan.plan/3, as for one
// device), and the runners-up of a search, in one document
// (docs/plan-json.md, "Multi-device plans").
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PARALLEL_PARALLELJSON_H
#define OOMPLAN_PARALLEL_PARALLELJSON_H

#include "oomplan/Parallel/Parallel.h"
#include "llvm/Support/raw_ostream.h"

namespace oomplan {
namespace parallel {

/// Schema of the document (docs/plan-json.md).
constexpr const char *ParallelPlanJSONSchema = "oomplan.parallel-plan/1";

/// Writes P (its stages placed) with the search's runners-up, if any; P
/// null: the search found nothing that fits (no configuration, no stages).
void printParallelPlanJSON(llvm::raw_ostream &OS, const ParallelPlan *P,
                           const ParallelInput &In, const LayerStructure &L,
                           const SearchResult *Search);

} // namespace parallel
} // namespace oomplan

#endif
