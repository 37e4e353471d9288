//===- ParallelJSON.cpp - a multi-device plan as one JSON document --------===//
//
// One object: the configuration, the verdict of the binding stage, and per
// pipeline stage its figures, the global ranks that run it and the placed
// plan every one of those ranks runs (the devices of one stage hold equal
// shares, so one plan describes them all). Each stage's plan is the
// single-device JSON (printPlanJSON), so a program reads it with the same
// code; its "type" and "size_formula" are null where the device holds a
// share of the graph value rather than the whole.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Parallel/ParallelJSON.h"
#include "oomplan/Plan/PlanPrinter.h"
#include "llvm/Support/JSON.h"

using namespace oomplan;
using namespace oomplan::parallel;

static const char *recomputeName(RecomputeKind K) {
  switch (K) {
  case RecomputeKind::Selective:
    return "selective";
  case RecomputeKind::Full:
    return "full";
  default:
    return "none";
  }
}

static int64_t i64(uint64_t V) { return static_cast<int64_t>(V); }

// The runners-up of a search, best first, with why each lost.
static void writeRunnersUp(llvm::json::OStream &J, const SearchResult *Search) {
  J.attributeArray("runners_up", [&] {
    if (!Search)
      return;
    for (const Candidate &R : Search->RunnersUp)
      J.object([&] {
        J.attribute("configuration", formatSpec(R.Spec));
        J.attribute("devices", i64(R.Spec.devices()));
        J.attribute("peak_bytes", i64(R.PeakBytes));
        J.attribute("fits", R.Fits);
        J.attribute("why", R.Why);
      });
  });
}

void parallel::printParallelPlanJSON(llvm::raw_ostream &OS,
                                     const ParallelPlan *Plan,
                                     const ParallelInput &In,
                                     const LayerStructure &L,
                                     const SearchResult *Search) {
  llvm::json::OStream J(OS, 1);
  if (!Plan) {
    // The search found nothing that fits: the same keys, empty.
    J.object([&] {
      J.attribute("schema", ParallelPlanJSONSchema);
      J.attribute("model", In.G.SourcePath);
      J.attribute("configuration", nullptr);
      J.attribute("fits", false);
      J.attribute("devices_searched",
                  Search ? i64(Search->Devices) : int64_t(0));
      J.attributeArray("stages", [] {});
      writeRunnersUp(J, Search);
    });
    OS << '\n';
    return;
  }
  const ParallelPlan &P = *Plan;
  const ParallelSpec &S = P.Spec;
  J.object([&] {
    J.attribute("schema", ParallelPlanJSONSchema);
    J.attribute("model", In.G.SourcePath);
    J.attribute("configuration", formatSpec(S));
    J.attributeObject("parallel", [&] {
      J.attribute("dp", i64(S.DP));
      J.attribute("tp", i64(S.TP));
      J.attribute("pp", i64(S.PP));
      J.attribute("sp", S.SP);
      J.attribute("zero", i64(S.Zero));
      J.attribute("micro_batches", i64(S.MicroBatches));
      J.attribute("recompute", recomputeName(S.Recompute));
      J.attribute("offload_optimizer", S.OffloadOptimizer);
      J.attribute("offload_params", S.OffloadParams);
    });
    J.attribute("devices", i64(S.devices()));
    J.attribute("device", In.Device.Name);
    if (In.Limit.CapacityBytes)
      J.attribute("budget_bytes", i64(*In.Limit.CapacityBytes));
    else
      J.attribute("budget_bytes", nullptr);
    J.attribute("overhead_bytes", i64(In.Limit.OverheadBytes));
    J.attribute("fits", P.Fits);
    J.attribute("peak_bytes", i64(P.peakBytes()));
    J.attribute("binding_stage", i64(P.Binding));
    J.attribute("step_seconds", P.StepSeconds);
    J.attribute("sample_seconds", P.SampleSeconds);
    J.attribute("blocks", L.Found ? llvm::json::Value(i64(L.NumBlocks))
                                  : llvm::json::Value(nullptr));
    // Megatron's rank order: tp innermost, then dp, then pp, so stage k
    // runs on ranks k * dp * tp up to (k + 1) * dp * tp - 1.
    uint64_t PerStage = uint64_t(S.DP) * S.TP;
    J.attributeArray("stages", [&] {
      for (const StagePlan &SP : P.Stages) {
        J.object([&] {
          J.attribute("stage", i64(SP.Stage));
          J.attribute("first_rank", i64(SP.Stage * PerStage));
          J.attribute("ranks", i64(PerStage));
          if (SP.FirstBlock < 0) {
            J.attribute("first_block", nullptr);
            J.attribute("last_block", nullptr);
          } else {
            J.attribute("first_block", int64_t(SP.FirstBlock));
            J.attribute("last_block", int64_t(SP.LastBlock));
          }
          J.attribute("in_flight", i64(SP.InFlight));
          J.attribute("peak_bytes",
                      i64(SP.PeakBytes ? SP.PeakBytes : SP.LowerBound));
          J.attribute("model_states", i64(SP.Bytes.modelStates()));
          J.attribute("weights", i64(SP.Bytes.Weights));
          J.attribute("gradients", i64(SP.Bytes.Gradients));
          J.attribute("optimizer_state", i64(SP.Bytes.OptimizerState));
          J.attribute("gathered", i64(SP.Bytes.GatherBuffers));
          J.attribute("buckets", i64(SP.Bytes.CommBuffers));
          J.attribute("host_bytes", i64(SP.Bytes.HostBytes));
          J.attributeArray("block_activation_bytes", [&] {
            for (uint64_t A : SP.BlockActivationBytes)
              J.value(i64(A));
          });
          if (!SP.P) {
            J.attribute("plan", nullptr);
            return;
          }
          PlanContext C{In.G, In.Shapes, In.Bindings};
          J.attributeBegin("plan");
          J.rawValue(
              [&](llvm::raw_ostream &Raw) { printPlanJSON(Raw, *SP.P, C); });
          J.attributeEnd();
        });
      }
    });
    writeRunnersUp(J, Search);
  });
  OS << '\n';
}
