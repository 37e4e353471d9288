//===- PlanJSON.cpp - a plan as versioned JSON ----------------------------===//
//
// Schema PlanJSONSchema ("oomplan.plan/2"), documented in docs/plan-json.md.
// Byte counts are JSON integers (exact up to 2^53 in every reader; 8 PiB is
// beyond any device), offsets are relative to their region; a value that
// does not exist is null, and every key is always written.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Plan/PlanPrinter.h"
#include "oomplan/Plan/TensorInfo.h"
#include "llvm/Support/JSON.h"

using namespace oomplan;

// shapeString/formulaString print "-" for a tensor without a graph value.
static llvm::json::Value orNull(const std::string &S) {
  if (S.empty() || S == "-")
    return nullptr;
  return S;
}

static void writeSummary(llvm::json::OStream &J, const Plan &P,
                         const PlanContext &C) {
  J.attribute("schema", PlanJSONSchema);
  J.attribute("model", C.G.SourcePath);
  J.attributeObject("symbols", [&] {
    for (size_t I = 0; I < C.Shapes.SymbolNames.size(); ++I) {
      if (I < C.Bindings.size() && C.Bindings[I])
        J.attribute(C.Shapes.SymbolNames[I], *C.Bindings[I]);
      else
        J.attribute(C.Shapes.SymbolNames[I], nullptr);
    }
  });
  J.attribute("algorithm", P.Algorithm);
  J.attribute("alignment", static_cast<int64_t>(P.AlignBytes));
  J.attribute("steps", static_cast<int64_t>(P.Life.NumSteps));
  J.attributeObject("regions", [&] {
    J.attribute("weights", static_cast<int64_t>(P.WeightBytes));
    J.attribute("io", static_cast<int64_t>(P.IOBytes));
    J.attribute("arena", static_cast<int64_t>(P.ArenaBytes));
  });
  J.attribute("total_bytes", static_cast<int64_t>(P.totalBytes()));
  J.attribute("arena_lower_bound", static_cast<int64_t>(P.ArenaLowerBound));
  if (P.BudgetBytes)
    J.attribute("budget_bytes", static_cast<int64_t>(*P.BudgetBytes));
  else
    J.attribute("budget_bytes", nullptr);
  J.attribute("fits", P.fits());
  J.attribute("peak_step", static_cast<int64_t>(P.PeakStep));
  // Totals per kind: bytes of buffers of each kind (each buffer once).
  J.attributeObject("totals_by_kind", [&] {
    uint64_t Sum[7] = {};
    for (const LiveBuffer &B : P.Life.Buffers)
      Sum[static_cast<int>(B.Kind)] += B.SizeBytes;
    for (int K = 0; K < 7; ++K)
      J.attribute(tensorKindName(static_cast<TensorKind>(K)),
                  static_cast<int64_t>(Sum[K]));
  });
}

static void writeSteps(llvm::json::OStream &J, const Plan &P,
                       const PlanContext &C) {
  static const char *KindNames[] = {"compute",  "recompute", "offload",
                                    "prefetch", "backward",  "optimizer"};
  J.attributeArray("schedule", [&] {
    for (const Step &S : P.Sched.Steps)
      J.object([&] {
        J.attribute("kind", KindNames[static_cast<int>(S.Kind)]);
        J.attribute("op", S.Op);
        J.attribute("node", S.Node != NoId
                                ? llvm::json::Value(C.G.Nodes[S.Node].Name)
                                : llvm::json::Value(nullptr));
        J.attributeArray("reads", [&] {
          for (TensorId T : S.Reads)
            J.value(P.Sched.Tensors[T].Name);
        });
        J.attributeArray("writes", [&] {
          for (TensorId T : S.Writes)
            J.value(P.Sched.Tensors[T].Name);
        });
      });
  });
}

void oomplan::printPlanJSON(
    llvm::raw_ostream &OS, const Plan &P, const PlanContext &C,
    llvm::function_ref<void(llvm::json::OStream &)> Extra) {
  llvm::json::OStream J(OS, 1);
  J.object([&] {
    writeSummary(J, P, C);
    if (Extra)
      Extra(J);
    J.attributeArray("buffers", [&] {
      for (BufferId B : bufferPrintOrder(P)) {
        const LiveBuffer &Buf = P.Life.Buffers[B];
        TensorId Root = Buf.Root;
        ValueId V = P.Sched.Tensors[Root].Value;
        J.object([&] {
          J.attribute("name", P.Sched.Tensors[Root].Name);
          J.attribute("region", regionName(P.RegionOf[B]));
          J.attribute("offset", static_cast<int64_t>(P.OffsetOf[B]));
          J.attribute("size", static_cast<int64_t>(Buf.SizeBytes));
          J.attribute("start", static_cast<int64_t>(Buf.StartStep));
          J.attribute("end", static_cast<int64_t>(Buf.EndStep));
          J.attribute("kind", tensorKindName(Buf.Kind));
          // The type and formula of the bytes counted (16-bit under mixed
          // precision), null when they do not give this size.
          TensorDescription D = describeTensor(P, C, Root);
          J.attribute("type", orNull(D.TypeText));
          J.attribute(
              "size_formula",
              orNull(D.HasFormula ? D.Formula.str(C.Shapes.SymbolNames) : "-"));
          const Node *N = nullptr;
          if (V != NoId && C.G.Values[V].Kind == ValueKind::NodeOutput)
            N = &C.G.Nodes[C.G.Values[V].Producer];
          J.attribute("node", N ? orNull(N->Name) : nullptr);
          J.attribute("op", N ? orNull(N->OpType) : nullptr);
          J.attributeArray("tensors", [&] {
            for (TensorId T : Buf.Members)
              J.value(P.Sched.Tensors[T].Name);
          });
        });
      }
    });
    writeSteps(J, P, C);
  });
  OS << '\n';
}
