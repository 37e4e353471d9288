//===- RunReport.cpp - what oomplan-run measured, as text or JSON ---------===//
//
// Each output gets a line with its name, type, dims and an FNV-1a hash of
// its bytes, so two runs can be compared without the .pb files.
//
//===----------------------------------------------------------------------===//
#include "RunReport.h"
#include "oomplan/Support/ByteSize.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::run;

static uint64_t fnv1a(const runtime::TensorRef &T) {
  uint64_t H = 0xcbf29ce484222325ull;
  const unsigned char *P = T.data<unsigned char>();
  for (uint64_t I = 0, N = T.present() ? T.bytes() : 0; I < N; ++I)
    H = (H ^ P[I]) * 0x100000001b3ull;
  return H;
}

static std::string hex(uint64_t V) {
  std::string S;
  raw_string_ostream(S) << format_hex_no_prefix(V, 16);
  return S;
}

static double median(std::vector<double> S) {
  llvm::sort(S);
  size_t N = S.size();
  return N % 2 ? S[N / 2] : (S[N / 2 - 1] + S[N / 2]) / 2;
}

double RunReport::warmSeconds() const {
  return RepeatSeconds.empty() ? RunSeconds : median(RepeatSeconds);
}

std::optional<double> RunReport::warmStepsSeconds() const {
  if (!StepsSeconds)
    return std::nullopt;
  // Every warm run timed its steps, or the median is not theirs.
  if (RepeatStepsSeconds.empty() ||
      RepeatStepsSeconds.size() != RepeatSeconds.size())
    return RepeatSeconds.empty() ? StepsSeconds : std::nullopt;
  return median(RepeatStepsSeconds);
}

bool RunReport::highWaterMatches() const {
  for (const runtime::RegionUse &U : Regions)
    if (U.HighWaterAligned != U.PlannedBytes)
      return false;
  return true;
}

uint64_t RunReport::rssBeyondPlan(ArrayRef<runtime::TensorRef> Outputs) const {
  uint64_t Planned = 0;
  for (const runtime::RegionUse &U : Regions)
    if (U.R == Region::Arena)
      Planned += U.PlannedBytes;
  for (const runtime::TensorRef &T : Outputs)
    Planned += T.present() ? T.bytes() : 0;
  return RSSGrowth && *RSSGrowth > Planned ? *RSSGrowth - Planned : 0;
}

static void printJSON(raw_ostream &OS, const RunReport &R, const Graph &G,
                      ArrayRef<runtime::TensorRef> Outputs) {
  json::OStream J(OS, 2);
  J.object([&] {
    J.attributeArray("outputs", [&] {
      for (size_t I = 0; I < G.Outputs.size(); ++I) {
        const runtime::TensorRef &T = Outputs[I];
        J.object([&] {
          J.attribute("index", int64_t(I));
          J.attribute("name", G.Values[G.Outputs[I]].Name);
          J.attribute("type", elementTypeName(T.Type));
          J.attributeArray("dims", [&] {
            for (int64_t D : T.Dims)
              J.value(D);
          });
          J.attribute("bytes", int64_t(T.bytes()));
          J.attribute("fnv1a", hex(fnv1a(T)));
        });
      }
    });
    J.attributeArray("regions", [&] {
      for (const runtime::RegionUse &U : R.Regions)
        J.object([&] {
          J.attribute("region", regionName(U.R));
          J.attribute("planned_bytes", int64_t(U.PlannedBytes));
          J.attribute("high_water_bytes", int64_t(U.HighWater));
          J.attribute("high_water_aligned_bytes", int64_t(U.HighWaterAligned));
          J.attribute("equal", U.HighWaterAligned == U.PlannedBytes);
        });
    });
    J.attribute("plan_total_bytes", int64_t(R.PlanTotal));
    if (R.Device)
      J.attributeObject("device", [&] {
        const runtime::DeviceUse &D = *R.Device;
        J.attribute("backend", D.Device);
        J.attribute("allocated_bytes", int64_t(D.AllocatedBytes));
        J.attribute("plan_device_bytes", int64_t(R.PlanDeviceBytes));
        J.attribute("equal", R.deviceMatches());
        if (D.MeasuredBytes)
          J.attribute("measured_bytes", int64_t(*D.MeasuredBytes));
        if (D.FirstRunDropBytes)
          J.attribute("first_run_drop_bytes", int64_t(*D.FirstRunDropBytes));
        if (D.LaterRunsDropBytes)
          J.attribute("later_runs_drop_bytes", int64_t(*D.LaterRunsDropBytes));
        if (D.Overhead.ContextBytes)
          J.attribute("context_bytes", int64_t(*D.Overhead.ContextBytes));
        if (D.Overhead.HandleBytes)
          J.attribute("handle_bytes", int64_t(*D.Overhead.HandleBytes));
        J.attribute("pinned_host_bytes", int64_t(D.HostBytes));
        J.attributeArray("host_steps", [&] {
          for (const auto &[Op, Steps] : D.HostOps)
            J.object([&] {
              J.attribute("op", Op);
              J.attribute("steps", int64_t(Steps));
            });
        });
        J.attribute("host_staging_bytes", int64_t(D.HostStagingBytes));
        J.attribute("host_weight_bytes", int64_t(D.HostWeightBytes));
      });
    if (R.Budget) {
      J.attribute("budget_bytes", int64_t(*R.Budget));
      J.attribute("fits", R.Fits);
    }
    if (R.RSSGrowth) {
      J.attribute("rss_growth_bytes", int64_t(*R.RSSGrowth));
      J.attribute("rss_growth_first_run_bytes", int64_t(*R.RSSGrowthFirst));
      J.attribute("rss_beyond_arena_and_outputs_bytes",
                  int64_t(R.rssBeyondPlan(Outputs)));
    }
    if (R.ProcessGrowth) {
      J.attribute("process_peak_growth_bytes", int64_t(*R.ProcessGrowth));
      J.attribute("process_peak_growth_first_run_bytes",
                  int64_t(*R.ProcessGrowthFirst));
    }
    J.attributeObject("seconds", [&] {
      J.attribute("plan", R.PlanSeconds);
      J.attribute("load", R.LoadSeconds);
      J.attribute("run", R.RunSeconds);
      if (!R.RepeatSeconds.empty()) {
        J.attributeArray("run_repeats", [&] {
          for (double S : R.RepeatSeconds)
            J.value(S);
        });
        J.attribute("run_warm_median", R.warmSeconds());
      }
      // The steps alone, without the copies through host memory.
      if (R.StepsSeconds)
        J.attribute("steps", *R.StepsSeconds);
      if (!R.RepeatSeconds.empty())
        if (std::optional<double> W = R.warmStepsSeconds())
          J.attribute("steps_warm_median", *W);
    });
    if (!R.Ops.empty()) {
      // Seconds per run, slowest first (JSON objects keep this order).
      J.attributeObject("op_seconds", [&] {
        for (const runtime::OpTime &T : R.Ops)
          J.attribute(T.Op, T.Seconds / R.ProfiledRuns);
      });
      J.attributeObject("op_calls", [&] {
        for (const runtime::OpTime &T : R.Ops)
          J.attribute(T.Op, int64_t(T.Calls / R.ProfiledRuns));
      });
      // Each step's seconds per run, in schedule order: where an op type's
      // time goes (a depthwise convolution against a dense one).
      J.attributeArray("step_seconds", [&] {
        for (const runtime::StepTime &T : R.Steps)
          J.object([&] {
            J.attribute("index", int64_t(T.Index));
            J.attribute("op", T.Op);
            J.attribute("node", T.Node.empty() ? llvm::json::Value(nullptr)
                                               : llvm::json::Value(T.Node));
            J.attribute("seconds", T.Seconds / R.ProfiledRuns);
          });
      });
    }
    J.attribute("fitted", R.Fitted);
    J.attribute("passes", int64_t(R.Passes));
    J.attribute("poison", R.Poisoned);
    if (R.CheckRan)
      J.attributeObject("check_unplanned", [&] {
        J.attribute("identical", R.CheckDifference.empty());
        if (!R.CheckDifference.empty())
          J.attribute("first_difference", R.CheckDifference);
      });
    J.attribute("ok", R.ok());
  });
  OS << '\n';
}

void RunReport::print(raw_ostream &OS, const Graph &G,
                      ArrayRef<runtime::TensorRef> Outputs, bool JSON) const {
  if (JSON)
    return printJSON(OS, *this, G, Outputs);
  for (size_t I = 0; I < G.Outputs.size(); ++I) {
    const runtime::TensorRef &T = Outputs[I];
    OS << "output " << I << " '" << G.Values[G.Outputs[I]].Name << "' "
       << elementTypeName(T.Type) << " [";
    for (size_t D = 0; D < T.Dims.size(); ++D)
      OS << (D ? "," : "") << T.Dims[D];
    OS << "] " << T.bytes() << " bytes fnv1a " << hex(fnv1a(T)) << '\n';
  }
  OS << "\nregion     planned bytes   high-water   (aligned)   equal\n";
  for (const runtime::RegionUse &U : Regions)
    OS << left_justify(regionName(U.R), 8) << format("%15llu", U.PlannedBytes)
       << format("%13llu", U.HighWater) << format("%12llu", U.HighWaterAligned)
       << (U.HighWaterAligned == U.PlannedBytes ? "   yes" : "   NO") << '\n';
  OS << "plan total " << PlanTotal << " bytes (" << formatBytes(PlanTotal)
     << ")";
  if (Fitted)
    OS << ", fitted";
  if (Passes > 1)
    OS << ", " << Passes << " micro-batch passes";
  if (Budget)
    OS << "; budget " << *Budget
       << " bytes: " << (Fits ? "fits" : "does NOT fit (nothing fitted it)");
  OS << '\n';
  if (Device) {
    const runtime::DeviceUse &D = *Device;
    OS << D.Device << " allocations " << D.AllocatedBytes
       << " bytes, plan's device regions " << PlanDeviceBytes
       << " bytes: " << (deviceMatches() ? "equal" : "DIFFERENT");
    if (D.MeasuredBytes)
      OS << "; free memory dropped " << *D.MeasuredBytes << " bytes";
    OS << '\n';
    if (D.FirstRunDropBytes)
      OS << D.Device << ": free memory dropped " << *D.FirstRunDropBytes
         << " bytes during the first run (the libraries' own, outside the "
            "plan)\n";
    if (D.LaterRunsDropBytes)
      OS << D.Device << ": free memory dropped " << *D.LaterRunsDropBytes
         << " bytes more over the later runs (a CUDA graph's own, outside "
            "the plan)\n";
    if (!D.HostOps.empty()) {
      unsigned Steps = 0;
      for (const auto &HO : D.HostOps)
        Steps += HO.second;
      OS << D.Device << ": " << Steps << " step" << (Steps == 1 ? "" : "s")
         << " ran on the host with the CPU kernel (the device has no kernel "
            "for them or cannot run their node, or they decide a "
            "data-dependent size), each a wait for the device:";
      for (const auto &[Op, N] : D.HostOps)
        OS << ' ' << Op << " x" << N;
      OS << "; staged in " << D.HostStagingBytes << " bytes ("
         << formatBytes(D.HostStagingBytes) << ") of host memory";
      if (D.HostWeightBytes)
        OS << ", and the weights they read kept in " << D.HostWeightBytes
           << " bytes (" << formatBytes(D.HostWeightBytes) << ")";
      OS << "\n";
    }
    if (D.Overhead.ContextBytes || D.Overhead.HandleBytes) {
      OS << D.Device << " overhead:";
      if (D.Overhead.ContextBytes)
        OS << " context " << *D.Overhead.ContextBytes << " bytes ("
           << formatBytes(*D.Overhead.ContextBytes) << ")";
      if (D.Overhead.HandleBytes)
        OS << ", library handles and streams " << *D.Overhead.HandleBytes
           << " bytes (" << formatBytes(*D.Overhead.HandleBytes) << ")";
      OS << '\n';
    }
  }
  // The CPU backend's bound (docs/runtime.md) is on host memory beyond
  // the arena; on a device the arena is not host memory and the growth is
  // the device runtime's own (staging, the driver's host buffers), so the
  // bound is not claimed there (the H200 run's RSS grew 3.6 to 7.5 MiB).
  if (RSSGrowth && Device)
    OS << "RSS growth during the run: " << *RSSGrowth << " bytes ("
       << formatBytes(*RSSGrowth)
       << ") of host memory (the arena is on the device; the bound of "
          "docs/runtime.md is the CPU backend's)\n";
  else if (RSSGrowth)
    OS << "RSS growth during the run: " << *RSSGrowth << " bytes ("
       << formatBytes(*RSSGrowth) << "), " << rssBeyondPlan(Outputs)
       << " bytes beyond the arena and the outputs (docs/runtime.md: under 4 "
          "MiB at up to two threads)\n";
  if (ProcessGrowth)
    OS << "process peak RSS growth (from before reading the model): "
       << *ProcessGrowth << " bytes (" << formatBytes(*ProcessGrowth) << ")\n";
  OS << format("time: plan %.3f s, load %.3f s, run %.3f s", PlanSeconds,
               LoadSeconds, RunSeconds);
  if (!RepeatSeconds.empty())
    OS << format(", warm run %.3f s (median of %u)", warmSeconds(),
                 unsigned(RepeatSeconds.size()));
  // On a device, also the steps alone: the copies of inputs and outputs
  // through host memory are the difference.
  if (Device)
    if (std::optional<double> W = warmStepsSeconds())
      OS << format(", steps on the device %.6f s", *W);
  OS << '\n';
  if (!Ops.empty()) {
    double Total = 0;
    for (const runtime::OpTime &T : Ops)
      Total += T.Seconds;
    OS << "\nop type                 seconds/run   share   calls/run"
       << (ProfiledRuns > 1 ? " (mean of the warm runs)" : "") << '\n';
    for (const runtime::OpTime &T : Ops)
      OS << left_justify(T.Op, 22)
         << format("%12.6f %6.1f%% %11llu\n", T.Seconds / ProfiledRuns,
                   Total > 0 ? 100.0 * T.Seconds / Total : 0.0,
                   (unsigned long long)(T.Calls / ProfiledRuns));
  }
  if (Poisoned)
    OS << "poison: dead buffers overwritten\n";
  if (CheckRan)
    OS << "check unplanned: "
       << (CheckDifference.empty() ? std::string("outputs bit-identical")
                                   : "FAILED, " + CheckDifference)
       << '\n';
  if (!deviceMatches())
    OS << "device: FAILED, the run's device allocations differ from the "
          "plan\n";
  if (!highWaterMatches())
    OS << "high-water: FAILED, a region's measured high-water differs from "
          "the plan\n";
}
