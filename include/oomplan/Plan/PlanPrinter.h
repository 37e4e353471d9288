//===- PlanPrinter.h - a plan as text and as JSON ---------------*- C++ -*-===//
//
// --emit=plan prints for people and lit tests; --emit=json prints the same
// content for programs, with a versioned schema (docs/plan-json.md). Both are
// deterministic: the same plan gives byte-identical output.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PLAN_PLANPRINTER_H
#define OOMPLAN_PLAN_PLANPRINTER_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Plan/Plan.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace llvm {
namespace json {
class OStream;
} // namespace json
} // namespace llvm

namespace oomplan {

/// Schema identifier written into every JSON plan (docs/plan-json.md). /2:
/// missing values are null, every key is always written, remedies carry
/// their numbers as fields. /3: the host region and its homes, each step's
/// index, predicted seconds and host flag, the fit's decision ("fit").
constexpr const char *PlanJSONSchema = "oomplan.plan/3";

/// What the JSON may say beyond the plan itself.
struct PlanJSONOptions {
  /// Predicted seconds of each step (the cost model's); empty: null.
  llvm::ArrayRef<double> StepSeconds;
};

/// What the printers need besides the plan: names, types, formulas.
struct PlanContext {
  const Graph &G;
  const ShapeInfo &Shapes;
  llvm::ArrayRef<std::optional<int64_t>> Bindings;
};

/// Buffers in print order: region, then first step, then name.
std::vector<BufferId> bufferPrintOrder(const Plan &P);

/// "plan for FILE", the symbols with their values, steps, buffers, algorithm
/// and alignment: the first lines of --emit=plan and of the report.
/// "arena: N bytes, lower bound: M bytes, arena/lower bound: R, fragmentation:
/// F bytes", the line every plan prints.
void printArenaLine(llvm::raw_ostream &OS, const Plan &P);

void printPlanHeader(llvm::raw_ostream &OS, const Plan &P,
                     const PlanContext &C);

/// The summary; with ListBuffers, one line per buffer after it.
void printPlanText(llvm::raw_ostream &OS, const Plan &P, const PlanContext &C,
                   bool ListBuffers = true);
/// Extra, when given, may add attributes to the top-level object (the report
/// library adds "report"); it runs after the summary, before "buffers".
void printPlanJSON(
    llvm::raw_ostream &OS, const Plan &P, const PlanContext &C,
    llvm::function_ref<void(llvm::json::OStream &)> Extra = nullptr,
    const PlanJSONOptions &O = {});

/// "float[batch,3,224,224]" from the inferred shape of Value.
std::string shapeString(const PlanContext &C, ValueId Value);
/// The byte-size formula of Value ("602112*batch"), or its number.
std::string formulaString(const PlanContext &C, ValueId Value);

} // namespace oomplan

#endif
