//===- ReportJSON.cpp - the memory report for programs --------------------===//
//
// The "report" object of the JSON plan (docs/plan-json.md): the same content
// as the text report, with byte counts as integers and shares as fractions.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Report.h"
#include "llvm/Support/JSON.h"

using namespace oomplan;
using namespace oomplan::report;

static int64_t I64(uint64_t V) { return static_cast<int64_t>(V); }

static void writeClasses(llvm::json::OStream &J, const MemoryReport &R) {
  J.attributeArray("breakdown", [&] {
    for (const ClassRow &Row : R.Classes.Rows)
      J.object([&] {
        J.attribute("class", memoryClassKey(Row.Class));
        J.attribute("bytes", I64(Row.Bytes));
        J.attribute("share", R.Classes.share(Row.Class));
        J.attribute("formula", Row.Formula);
        if (!Row.Note.empty())
          J.attribute("note", Row.Note);
      });
  });
}

static void writePeak(llvm::json::OStream &J, const MemoryReport &R,
                      const PlanContext &C) {
  const PeakReport &Pk = R.Peak;
  J.attributeObject("peak", [&] {
    J.attribute("step", I64(Pk.Step));
    J.attribute("node", Pk.Node);
    J.attribute("op", Pk.Op);
    J.attribute("live_bytes", I64(Pk.LiveBytes));
    J.attribute("arena_bytes", I64(Pk.ArenaBytes));
    J.attribute("lower_bound", I64(Pk.LowerBound));
    J.attribute("fragmentation", I64(Pk.Fragmentation));
    J.attribute("formula", Pk.Formula.str(C.Shapes.SymbolNames));
    J.attribute("quadratic_in_seq_bytes", Pk.QuadraticBytes);
    J.attributeArray("buffers", [&] {
      for (const PeakBuffer &B : Pk.Buffers)
        J.object([&] {
          J.attribute("name", B.Name);
          J.attribute("node", B.Node);
          J.attribute("op", B.Op);
          J.attribute("producer", B.Producer);
          J.attribute("type", B.Type);
          J.attribute("kind", tensorKindName(B.Kind));
          J.attribute("formula", B.Formula.str(C.Shapes.SymbolNames));
          J.attribute("bytes", I64(B.Bytes));
          J.attribute("quadratic_in_seq_bytes", B.QuadraticBytes);
        });
    });
  });
}

static void writeCapacity(llvm::json::OStream &J, llvm::StringRef Key,
                          const std::optional<CapacityResult> &C) {
  if (!C) {
    J.attribute(Key, nullptr);
    return;
  }
  J.attributeObject(Key, [&] {
    if (C->Max)
      J.attribute("max", *C->Max);
    else
      J.attribute("max", nullptr);
    J.attribute("at_least", C->AtLeast);
    J.attribute("bytes_at_max", I64(C->BytesAtMax));
    if (C->BytesAbove)
      J.attribute("bytes_above", I64(*C->BytesAbove));
    else
      J.attribute("bytes_above", nullptr);
    J.attribute("plans", static_cast<int64_t>(C->NumPlans));
  });
}

static void writeFindings(llvm::json::OStream &J, const MemoryReport &R) {
  J.attributeArray("diagnosis", [&] {
    unsigned Rank = 0;
    for (const Finding &F : R.Findings)
      J.object([&] {
        J.attribute("rank", static_cast<int64_t>(++Rank));
        J.attribute("cause", causeKey(F.Kind));
        J.attribute("summary", F.Summary);
        J.attributeArray("evidence", [&] {
          for (const std::string &E : F.Evidence)
            J.value(llvm::StringRef(E).ltrim());
        });
        J.attributeArray("tensors", [&] {
          for (const std::string &T : F.Tensors)
            J.value(T);
        });
        if (F.Value)
          J.attribute("value", *F.Value);
        else
          J.attribute("value", nullptr);
      });
  });
  J.attributeArray("remedies", [&] {
    for (const Remedy &M : R.Remedies)
      J.object([&] {
        J.attribute("action", M.Action);
        J.attribute("detail", M.Detail);
        J.attribute("planned", M.Planned);
        if (M.Planned) {
          J.attribute("bytes_after", I64(M.BytesAfter));
          J.attribute("bytes_saved", M.BytesSaved);
          J.attribute("fits", M.Fits);
        }
      });
  });
}

static void writeSweep(llvm::json::OStream &J, const MemoryReport &R) {
  if (!R.SweepTable) {
    J.attribute("sweep", nullptr);
    return;
  }
  J.attributeArray("sweep", [&] {
    for (const SweepCell &C : R.SweepTable->Cells)
      J.object([&] {
        J.attribute("batch", C.Batch ? llvm::json::Value(C.Batch) : nullptr);
        J.attribute("seq", C.Seq ? llvm::json::Value(C.Seq) : nullptr);
        J.attribute("bytes",
                    C.Bytes ? llvm::json::Value(I64(*C.Bytes)) : nullptr);
      });
  });
}

void report::writeReportJSON(llvm::json::OStream &J, const MemoryReport &R,
                             const PlanContext &C) {
  J.object([&] {
    J.attribute("overhead_bytes", I64(R.OverheadBytes));
    J.attribute("device_bytes", I64(R.DeviceBytes));
    if (R.BudgetBytes)
      J.attribute("budget_bytes", I64(*R.BudgetBytes));
    else
      J.attribute("budget_bytes", nullptr);
    J.attribute("fits", R.Fits);
    writeClasses(J, R);
    writePeak(J, R, C);
    writeFindings(J, R);
    writeCapacity(J, "max_batch", R.Batch);
    writeCapacity(J, "max_seq", R.Seq);
    writeSweep(J, R);
  });
}
