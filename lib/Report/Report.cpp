//===- Report.cpp - assembling the memory report --------------------------===//
//
// Runs the report's analyses in order: breakdown and peak (no planning), the
// capacity searches that were asked for or that a diagnosis needs, the sweep,
// then the diagnosis and the remedies, which reuse the capacity results.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Report.h"
#include "oomplan/Report/Formulas.h"
#include "oomplan/Support/Error.h"

using namespace oomplan;
using namespace oomplan::report;

// The search for one role, when asked or needed; errors only when asked.
static llvm::Error searchRole(std::optional<CapacityResult> &Out, bool Asked,
                              bool Needed, llvm::ArrayRef<SymbolId> Syms,
                              llvm::StringRef Role, const PlanContext &C,
                              const PlanFn &PlanAt, const ReportOptions &RO) {
  if (!Asked && (!Needed || Syms.empty() || !boundValue(C.Bindings, Syms)))
    return llvm::Error::success();
  if (!RO.Limit.given())
    return makeInputError("--max-" + Role + " needs a --budget");
  if (Syms.empty())
    return makeInputError("--max-" + Role + ": the model has no " + Role +
                          " symbol (bind it with --dim to see the model's "
                          "symbols)");
  auto R =
      findCapacity(PlanAt, C.Bindings, Syms, Role, RO.Limit, RO.CapacityCap);
  if (!R)
    return R.takeError();
  Out = std::move(*R);
  return llvm::Error::success();
}

llvm::Expected<MemoryReport>
report::buildReport(const Plan &P, const PlanContext &C,
                    const SymbolRoles &Roles, const PlanFn &PlanAt,
                    const PipelineOptions &Opts, const ReportOptions &RO) {
  MemoryReport R;
  R.Limit = RO.Limit;
  R.DeviceBytes = neededBytes(RO.Limit, P.figures());
  R.Fits = fits(RO.Limit, P.figures());
  R.Classes = computeBreakdown(P, C, RO.Limit.OverheadBytes);
  R.Peak = computePeak(P, C, Roles.Seq);
  R.CurrentBatch = boundValue(C.Bindings, Roles.Batch);
  R.CurrentSeq = boundValue(C.Bindings, Roles.Seq);
  R.BatchAsked = RO.MaxBatch;
  R.SeqAsked = RO.MaxSeq;
  bool Needed = RO.Diagnose && !R.Fits;
  if (llvm::Error E = searchRole(R.Batch, RO.MaxBatch, Needed, Roles.Batch,
                                 "batch", C, PlanAt, RO))
    return E;
  if (llvm::Error E =
          searchRole(R.Seq, RO.MaxSeq, Needed, Roles.Seq, "seq", C, PlanAt, RO))
    return E;
  if (RO.Sweep) {
    if (Roles.Batch.empty() && Roles.Seq.empty())
      return makeInputError("--sweep: the model has neither a batch nor a "
                            "sequence symbol");
    auto S = sweepMemory(PlanAt, C.Bindings, Roles.Batch, Roles.Seq, RO.Limit);
    if (!S)
      return S.takeError();
    R.SweepTable = std::move(*S);
  }
  if (!Needed)
    return R;
  DiagnosisInput In{P,        C,      Roles,   PlanAt, Opts,
                    RO.Limit, R.Peak, R.Batch, R.Seq};
  if (RO.Fit)
    In.Fit = &RO.Fit;
  if (RO.PlanAtPrecision)
    In.PlanAtPrecision = &RO.PlanAtPrecision;
  auto F = diagnose(In);
  if (!F)
    return F.takeError();
  R.Findings = std::move(*F);
  auto Rem = adviseRemedies(In);
  if (!Rem)
    return Rem.takeError();
  R.Remedies = std::move(*Rem);
  return R;
}
