//===- DriverParallel.cpp - --devices, --parallel and the engine configs --===//
//
// A training step over several devices (docs/multi-device.md): one given
// configuration (--parallel=SPEC), the fastest that fits on N devices
// (--devices=N, --parallel=auto or no --parallel), or the fewest devices
// with a configuration that fits (--devices=auto). Prints the per-stage
// plans, or with --emit=deepspeed|fsdp|megatron the chosen configuration as
// that engine takes it. Exit 0 when it fits, 2 when not.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Driver/Session.h"
#include "oomplan/Parallel/EngineConfig.h"
#include "oomplan/Parallel/Parallel.h"
#include "oomplan/Parallel/ParallelJSON.h"
#include "oomplan/Report/Capacity.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;
using namespace oomplan::parallel;

static std::string gib(uint64_t B) { return formatBytes(B); }

static void printPlan(raw_ostream &OS, const ParallelPlan &P,
                      const LayerStructure &L, const DeviceProfile &Dev,
                      std::optional<uint64_t> Budget) {
  const ParallelSpec &S = P.Spec;
  OS << "configuration: " << formatSpec(S) << " on " << S.devices() << " x "
     << Dev.Name;
  if (Budget)
    OS << " (" << gib(*Budget) << " each)";
  OS << "\n";
  if (L.Found)
    OS << "layers: " << L.NumBlocks << " repeated blocks ("
       << L.WeightNodesPerBlock << " weight-reading nodes each); "
       << L.ColumnLinears << " column- and " << L.RowLinears
       << " row-parallel linears\n";
  else
    OS << "layers: not found (" << L.Why
       << "): no tensor or pipeline parallelism\n";
  OS << formatv("{0,-6}{1,-9}{2,-10}{3,-11}{4,-11}{5,-11}{6,-11}{7,-11}{8,-11}"
                "{9}\n",
                "stage", "blocks", "in-flight", "peak", "weights", "grads",
                "optimizer", "gathered", "buckets", "act/block");
  for (const StagePlan &SP : P.Stages) {
    uint64_t Act = SP.BlockActivationBytes.empty()
                       ? 0
                       : *std::max_element(SP.BlockActivationBytes.begin(),
                                           SP.BlockActivationBytes.end());
    std::string Blocks = SP.FirstBlock < 0
                             ? "-"
                             : std::to_string(SP.FirstBlock) + "-" +
                                   std::to_string(SP.LastBlock);
    OS << formatv("{0,-6}{1,-9}{2,-10}{3,-11}{4,-11}{5,-11}{6,-11}{7,-11}"
                  "{8,-11}{9}\n",
                  SP.Stage, Blocks, SP.InFlight,
                  gib(SP.PeakBytes ? SP.PeakBytes : SP.LowerBound),
                  gib(SP.Bytes.Weights), gib(SP.Bytes.Gradients),
                  gib(SP.Bytes.OptimizerState), gib(SP.Bytes.GatherBuffers),
                  gib(SP.Bytes.CommBuffers), gib(Act));
    if (SP.Bytes.HostBytes)
      OS << "      host (offloaded): " << gib(SP.Bytes.HostBytes) << "\n";
  }
  // Exact bytes, for checking against the published formulas.
  for (const StagePlan &SP : P.Stages) {
    OS << "stage " << SP.Stage << " bytes: model-states "
       << SP.Bytes.modelStates() << ", saved activations per block";
    for (uint64_t A : SP.BlockActivationBytes)
      OS << " " << A;
    OS << "\n";
  }
  OS << "per-device peak: " << gib(P.peakBytes()) << " (stage " << P.Binding
     << " binds); " << (P.Fits ? "fits" : "does not fit") << "\n";
  OS << formatv("predicted step: {0:F3} s for {1} micro-batch(es) on each of "
                "{2} data-parallel group(s)\n",
                P.StepSeconds, S.MicroBatches, S.DP);
  for (const std::string &N : P.Notes)
    OS << "note: " << N << "\n";
}

// --max-batch / --max-seq for the chosen configuration: the largest
// micro-batch (or sequence) whose binding stage fits, each probe a full set
// of placed stage plans.
static Error printCapacity(Session &S, const ParallelInput &In,
                           const ParallelPlan &Chosen) {
  if (!S.Limit.given())
    return makeInputError("--max-batch/--max-seq need a --budget or --device");
  const SymbolRoles &Roles = S.Roles;
  report::PlanFn PlanAt =
      [&](ArrayRef<std::optional<int64_t>> B) -> Expected<Plan> {
    ParallelInput At = In;
    At.Bindings.assign(B.begin(), B.end());
    auto PP = ParallelPlanner::create(At);
    if (!PP)
      return PP.takeError();
    auto P = PP->plan(Chosen.Spec, /*Place=*/true);
    if (!P)
      return P.takeError();
    return std::move(*P->Stages[P->Binding].P);
  };
  for (int Role = 0; Role < 2; ++Role) {
    if (!(Role == 0 ? S.Req.Report.MaxBatch : S.Req.Report.MaxSeq))
      continue;
    const char *Name = Role == 0 ? "batch" : "seq";
    auto C = report::findCapacity(PlanAt, In.Bindings,
                                  Role == 0 ? Roles.Batch : Roles.Seq, Name,
                                  S.Limit);
    if (!C)
      return C.takeError();
    S.OS << "largest " << (Role == 0 ? "micro-batch per device" : "sequence")
         << " that fits with " << formatSpec(Chosen.Spec) << ": ";
    if (!C->Max)
      S.OS << "none (even 1 needs " << gib(C->BytesAbove.value_or(0)) << ")\n";
    else
      S.OS << (C->AtLeast ? "at least " : "") << *C->Max << " ("
           << gib(C->BytesAtMax) << ")\n";
  }
  return Error::success();
}

static Expected<std::optional<unsigned>> deviceCount(const api::Request &R) {
  if (!R.Parallel.Devices || *R.Parallel.Devices == "auto")
    return std::optional<unsigned>();
  unsigned N;
  if (StringRef(*R.Parallel.Devices).getAsInteger(10, N) || N < 1 || N > 65536)
    return makeInputError("--devices: '" + *R.Parallel.Devices +
                          "' is not a device count from 1 to 65536 or auto");
  return std::optional<unsigned>(N);
}

Expected<int> driver::runParallel(Session &S, const Graph &G,
                                  const ShapeInfo &Shapes,
                                  ArrayRef<std::optional<int64_t>> Bindings) {
  const api::Request &R = S.Req;
  bool Engine = R.Emit == api::EmitKind::DeepSpeed ||
                R.Emit == api::EmitKind::FSDP ||
                R.Emit == api::EmitKind::Megatron;
  // The strategies' model-state formulas know fp32 and "O2" mixed precision
  // (DeepSpeed's and Megatron's); autocast's fp32 weights with 16-bit
  // copies are not one of them yet.
  if (S.Train.Precision == TrainPrecision::BF16Autocast ||
      S.Train.Precision == TrainPrecision::FP16Autocast)
    return makeUnsupportedError(
        "--precision=" + *R.Train.Precision +
        " with --devices/--parallel: the multi-device plans model fp32 and "
        "bf16-mixed/fp16-mixed; plan one device, or use bf16-mixed");
  if (!R.Parallel.requested())
    return makeInputError("--emit=deepspeed|fsdp|megatron write a "
                          "multi-device configuration: add --devices or "
                          "--parallel");
  if (!Engine && R.Emit != api::EmitKind::Report &&
      R.Emit != api::EmitKind::JSON)
    return makeInputError("--devices/--parallel print the per-device report, "
                          "--emit=json or --emit=deepspeed|fsdp|megatron; "
                          "other --emit kinds are not supported with them "
                          "yet");
  if (!S.training())
    return makeInputError("--devices/--parallel plan a training step: add "
                          "--train");
  auto N = deviceCount(R);
  if (!N)
    return N.takeError();
  bool AutoDevices = R.Parallel.Devices && *R.Parallel.Devices == "auto";
  std::string Spec = R.Parallel.Spec.value_or("auto");
  if (AutoDevices && Spec != "auto")
    return makeInputError("--devices=auto searches configurations: use "
                          "--parallel=auto (or leave it out)");
  std::optional<EngineKind> Kind;
  if (Engine)
    Kind = R.Emit == api::EmitKind::DeepSpeed ? EngineKind::DeepSpeed
           : R.Emit == api::EmitKind::FSDP    ? EngineKind::FSDP
                                              : EngineKind::Megatron;
  ParallelInput In{G,
                   Shapes,
                   {Bindings.begin(), Bindings.end()},
                   S.Train,
                   S.pipelineOptions(),
                   S.Device,
                   S.Limit,
                   {}};
  // GPU engines keep 1-byte dropout masks (Korthikanti et al. count them so).
  In.Train.DropoutMask = DropoutMaskKind::Byte;
  auto PP = ParallelPlanner::create(In);
  if (!PP)
    return PP.takeError();
  std::optional<ParallelPlan> Chosen;
  SearchResult Search;
  if (Spec == "auto") {
    if (!S.Limit.given())
      return makeInputError("--parallel=auto needs a budget: --device or "
                            "--budget");
    // With --emit, only what that engine can express is a candidate.
    std::function<bool(const ParallelSpec &)> Allowed;
    if (Kind)
      Allowed = [&](const ParallelSpec &Sp) {
        if (Error E = checkExpressible(*Kind, Sp)) {
          consumeError(std::move(E));
          return false;
        }
        return true;
      };
    auto Res = searchParallel(*PP, *N, 4096, Allowed);
    if (!Res)
      return Res.takeError();
    Search = std::move(*Res);
    Chosen = std::move(Search.Best);
  } else {
    auto Sp = parseParallelSpec(Spec, *N);
    if (!Sp)
      return Sp.takeError();
    if (Kind) // before planning: the answer could not be written
      if (Error E = checkExpressible(*Kind, *Sp))
        return std::move(E);
    auto P = PP->plan(*Sp, /*Place=*/true);
    if (!P)
      return P.takeError();
    Chosen = std::move(*P);
  }
  raw_ostream &OS = S.OS;
  if (R.Emit == api::EmitKind::JSON) {
    printParallelPlanJSON(OS, Chosen ? &*Chosen : nullptr, In, PP->layers(),
                          Spec == "auto" ? &Search : nullptr);
    if (!Chosen)
      return 2;
    S.Res.TotalBytes = Chosen->peakBytes();
    S.Res.Fits = Chosen->Fits;
    return Chosen->Fits ? 0 : 2;
  }
  if (!Chosen) {
    OS << "no configuration of " << (AutoDevices ? "up to " : "")
       << Search.Devices << " x " << S.Device.Name << " fits";
    if (S.Limit.given())
      OS << " a budget of " << gib(*S.Limit.CapacityBytes) << " per device";
    OS << " (" << Search.Tried << " tried)\n";
    for (const Candidate &C : Search.RunnersUp)
      OS << "  " << formatSpec(C.Spec) << ": " << C.Why << "\n";
    return 2;
  }
  if (Engine) {
    EngineContext C{G,
                    PP->layers(),
                    Chosen->Spec,
                    In.Engine,
                    R.Batch.value_or(1),
                    R.Seq.value_or(0),
                    In.Train.Precision,
                    In.Train.Optimizer};
    auto Text = *Kind == EngineKind::DeepSpeed ? deepSpeedConfig(C)
                : *Kind == EngineKind::FSDP    ? fsdpConfig(C)
                                               : megatronArguments(C);
    if (!Text)
      return Text.takeError();
    OS << *Text;
    return Chosen->Fits ? 0 : 2;
  }
  if (Spec == "auto")
    OS << "searched " << Search.Tried << " configurations; "
       << (AutoDevices ? "the fewest devices that fit, fastest configuration"
                       : "the fastest configuration that fits")
       << ":\n";
  printPlan(OS, *Chosen, PP->layers(), S.Device, S.Limit.CapacityBytes);
  if (!Search.RunnersUp.empty()) {
    OS << "runners-up:\n";
    for (const Candidate &C : Search.RunnersUp)
      OS << "  " << formatSpec(C.Spec) << ": " << C.Why << "\n";
  }
  if (R.Report.MaxBatch || R.Report.MaxSeq)
    if (Error E = printCapacity(S, In, *Chosen))
      return std::move(E);
  S.Res.TotalBytes = Chosen->peakBytes();
  S.Res.Fits = Chosen->Fits;
  return Chosen->Fits ? 0 : 2;
}
