//===- ReportJSON.cpp - the memory report for programs --------------------===//
//
// The "report" object of the JSON plan (docs/plan-json.md): the same content
// as the text report, with byte counts as integers and shares as fractions.
// A missing value is null, never "" or "-", and every key is always present,
// so a program can tell "none" from "not written"; each remedy's numbers are
// fields of their own (schema oomplan.plan/2).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Report.h"
#include "llvm/Support/JSON.h"

using namespace oomplan;
using namespace oomplan::report;

static int64_t I64(uint64_t V) { return static_cast<int64_t>(V); }

// Text that the report leaves empty (or "-" where the text report prints a
// dash) is null in the JSON.
static llvm::json::Value text(llvm::StringRef S) {
  if (S.empty() || S == "-")
    return nullptr;
  return S.str();
}

template <typename T> static llvm::json::Value opt(const std::optional<T> &V) {
  if (!V)
    return nullptr;
  return *V;
}

static void writeClasses(llvm::json::OStream &J, const MemoryReport &R) {
  J.attributeArray("breakdown", [&] {
    for (const ClassRow &Row : R.Classes.Rows)
      J.object([&] {
        J.attribute("class", memoryClassKey(Row.Class));
        J.attribute("bytes", I64(Row.Bytes));
        J.attribute("share", R.Classes.share(Row.Class));
        J.attribute("formula", text(Row.Formula));
        J.attribute("note", text(Row.Note));
      });
  });
}

static void writePeak(llvm::json::OStream &J, const MemoryReport &R,
                      const PlanContext &C) {
  const PeakReport &Pk = R.Peak;
  J.attributeObject("peak", [&] {
    J.attribute("step", I64(Pk.Step));
    J.attribute("node", text(Pk.Node));
    J.attribute("op", text(Pk.Op));
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
          J.attribute("node", text(B.Node));
          J.attribute("op", text(B.Op));
          J.attribute("producer", text(B.Producer));
          J.attribute("type", text(B.Type));
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
    J.attribute("max", opt(C->Max));
    J.attribute("at_least", C->AtLeast);
    // Without a max there are no bytes at it: null, not 0.
    J.attribute("bytes_at_max", C->Max ? llvm::json::Value(I64(C->BytesAtMax))
                                       : llvm::json::Value(nullptr));
    J.attribute("bytes_above", C->BytesAbove
                                   ? llvm::json::Value(I64(*C->BytesAbove))
                                   : llvm::json::Value(nullptr));
    J.attribute("plans", static_cast<int64_t>(C->NumPlans));
  });
}

// Every key in every remedy, null where it does not apply, so a program reads
// "what to set" (symbol from -> to, devices, precision) without parsing the
// detail text.
static void writeRemedy(llvm::json::OStream &J, const Remedy &M) {
  using llvm::json::Value;
  J.object([&] {
    J.attribute("kind", remedyKindKey(M.Kind));
    J.attribute("action", M.Action);
    J.attribute("detail", text(M.Detail));
    J.attribute("planned", M.Planned);
    J.attribute("symbol", text(M.Symbol));
    J.attribute("from", opt(M.From));
    J.attribute("to", opt(M.To));
    J.attribute("devices",
                M.Devices ? Value(int64_t(*M.Devices)) : Value(nullptr));
    J.attribute("precision", text(M.Precision));
    J.attribute("strategy", text(M.Strategy));
    J.attribute("overhead_percent", opt(M.OverheadPercent));
    J.attribute("bytes_after",
                M.Planned ? Value(I64(M.BytesAfter)) : Value(nullptr));
    J.attribute("bytes_saved",
                M.Planned ? Value(M.BytesSaved) : Value(nullptr));
    J.attribute("fits", M.Planned ? Value(M.Fits) : Value(nullptr));
  });
}

static void writeFindings(llvm::json::OStream &J, const MemoryReport &R) {
  J.attributeArray("diagnosis", [&] {
    unsigned Rank = 0;
    for (const Finding &F : R.Findings)
      J.object([&] {
        J.attribute("rank", static_cast<int64_t>(++Rank));
        J.attribute("cause", causeKey(F.Kind));
        J.attribute("summary", text(F.Summary));
        J.attributeArray("evidence", [&] {
          for (const std::string &E : F.Evidence)
            J.value(llvm::StringRef(E).ltrim());
        });
        J.attributeArray("tensors", [&] {
          for (const std::string &T : F.Tensors)
            J.value(T);
        });
        J.attribute("value", opt(F.Value));
      });
  });
  J.attributeArray("remedies", [&] {
    for (const Remedy &M : R.Remedies)
      writeRemedy(J, M);
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
    J.attribute("overhead_bytes", I64(R.Limit.OverheadBytes));
    J.attribute("device_bytes", I64(R.DeviceBytes));
    if (R.Limit.CapacityBytes)
      J.attribute("budget_bytes", I64(*R.Limit.CapacityBytes));
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
