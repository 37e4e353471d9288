//===- DriverRunReport.cpp - api::formatRunReport: oomplan-run's report ---===//
//
// What one execute() call measured (phase times, per-region high-water
// against the plan, RSS growth, the unplanned check) in its two renderings:
// a table for people and one JSON object for scripts (--json). Each output
// gets a line with its name, type, dims and an FNV-1a hash of its bytes, so
// two runs can be compared without the .pb files.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Support/ByteSize.h"
#include "oomplan/oomplan.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace llvm;
using namespace oomplan;
using api::ExecuteResult;

static uint64_t fnv1a(const api::Tensor &T) {
  uint64_t H = 0xcbf29ce484222325ull;
  for (unsigned char C : T.Data)
    H = (H ^ C) * 0x100000001b3ull;
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

// Median of RepeatSeconds (RunSeconds without repeats).
static double warmSeconds(const ExecuteResult &R) {
  return R.RepeatSeconds.empty() ? R.RunSeconds : median(R.RepeatSeconds);
}

// Median of RepeatStepsSeconds (StepsSeconds without repeats).
static std::optional<double> warmStepsSeconds(const ExecuteResult &R) {
  if (!R.StepsSeconds)
    return std::nullopt;
  // Every warm run timed its steps, or the median is not theirs.
  if (R.RepeatStepsSeconds.empty() ||
      R.RepeatStepsSeconds.size() != R.RepeatSeconds.size())
    return R.RepeatSeconds.empty() ? R.StepsSeconds : std::nullopt;
  return median(R.RepeatStepsSeconds);
}

// RSS growth less the arena and the outputs' bytes: the constant
// docs/runtime.md explains (0 when the growth is smaller).
static uint64_t rssBeyondPlan(const ExecuteResult &R) {
  uint64_t Planned = 0;
  for (const api::RegionBytes &U : R.Regions)
    if (U.Region == "arena")
      Planned += U.PlannedBytes;
  for (const api::Tensor &T : R.Outputs)
    Planned += T.Data.size();
  return R.RSSGrowthBytes && *R.RSSGrowthBytes > Planned
             ? *R.RSSGrowthBytes - Planned
             : 0;
}

static bool ok(const ExecuteResult &R) {
  return R.highWaterMatches() && R.deviceMatches() && R.CheckDifference.empty();
}

static void printJSON(raw_ostream &OS, const ExecuteResult &R) {
  json::OStream J(OS, 2);
  J.object([&] {
    J.attributeArray("outputs", [&] {
      for (size_t I = 0; I < R.Outputs.size(); ++I) {
        const api::Tensor &T = R.Outputs[I];
        J.object([&] {
          J.attribute("index", int64_t(I));
          J.attribute("name", T.Name);
          J.attribute("type", T.Type);
          J.attributeArray("dims", [&] {
            for (int64_t D : T.Dims)
              J.value(D);
          });
          J.attribute("bytes", int64_t(T.Data.size()));
          J.attribute("fnv1a", hex(fnv1a(T)));
        });
      }
    });
    J.attributeArray("regions", [&] {
      for (const api::RegionBytes &U : R.Regions)
        J.object([&] {
          J.attribute("region", U.Region);
          J.attribute("planned_bytes", int64_t(U.PlannedBytes));
          J.attribute("high_water_bytes", int64_t(U.HighWaterBytes));
          J.attribute("high_water_aligned_bytes",
                      int64_t(U.HighWaterAlignedBytes));
          J.attribute("equal", U.HighWaterAlignedBytes == U.PlannedBytes);
        });
    });
    J.attribute("plan_total_bytes", int64_t(R.PlanTotalBytes));
    if (R.Device)
      J.attributeObject("device", [&] {
        const api::DeviceBytes &D = *R.Device;
        J.attribute("backend", D.Device);
        J.attribute("allocated_bytes", int64_t(D.AllocatedBytes));
        J.attribute("plan_device_bytes", int64_t(D.PlanDeviceBytes));
        J.attribute("equal", R.deviceMatches());
        if (D.MeasuredBytes)
          J.attribute("measured_bytes", int64_t(*D.MeasuredBytes));
        if (D.FirstRunDropBytes)
          J.attribute("first_run_drop_bytes", int64_t(*D.FirstRunDropBytes));
        if (D.LaterRunsDropBytes)
          J.attribute("later_runs_drop_bytes", int64_t(*D.LaterRunsDropBytes));
        if (D.ContextBytes)
          J.attribute("context_bytes", int64_t(*D.ContextBytes));
        if (D.HandleBytes)
          J.attribute("handle_bytes", int64_t(*D.HandleBytes));
        J.attribute("pinned_host_bytes", int64_t(D.PinnedHostBytes));
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
    if (R.BudgetBytes) {
      J.attribute("budget_bytes", int64_t(*R.BudgetBytes));
      J.attribute("fits", R.Fits);
    }
    if (R.RSSGrowthBytes) {
      J.attribute("rss_growth_bytes", int64_t(*R.RSSGrowthBytes));
      J.attribute("rss_growth_first_run_bytes",
                  int64_t(*R.RSSGrowthFirstRunBytes));
      J.attribute("rss_beyond_arena_and_outputs_bytes",
                  int64_t(rssBeyondPlan(R)));
    }
    if (R.ProcessGrowthBytes) {
      J.attribute("process_peak_growth_bytes", int64_t(*R.ProcessGrowthBytes));
      J.attribute("process_peak_growth_first_run_bytes",
                  int64_t(*R.ProcessGrowthFirstRunBytes));
    }
    J.attribute("threads", int64_t(R.Threads));
    J.attributeObject("seconds", [&] {
      J.attribute("plan", R.PlanSeconds);
      J.attribute("load", R.LoadSeconds);
      J.attribute("run", R.RunSeconds);
      if (!R.RepeatSeconds.empty()) {
        J.attributeArray("run_repeats", [&] {
          for (double S : R.RepeatSeconds)
            J.value(S);
        });
        J.attribute("run_warm_median", warmSeconds(R));
      }
      // The steps alone, without the copies through host memory.
      if (R.StepsSeconds)
        J.attribute("steps", *R.StepsSeconds);
      if (!R.RepeatSeconds.empty())
        if (std::optional<double> W = warmStepsSeconds(R))
          J.attribute("steps_warm_median", *W);
    });
    if (!R.Ops.empty()) {
      // Seconds per run, slowest first (JSON objects keep this order).
      J.attributeObject("op_seconds", [&] {
        for (const api::OpSeconds &T : R.Ops)
          J.attribute(T.Op, T.Seconds / R.ProfiledRuns);
      });
      J.attributeObject("op_calls", [&] {
        for (const api::OpSeconds &T : R.Ops)
          J.attribute(T.Op, int64_t(T.Calls / R.ProfiledRuns));
      });
      // Each step's seconds per run, in schedule order: where an op type's
      // time goes (a depthwise convolution against a dense one).
      J.attributeArray("step_seconds", [&] {
        for (const api::StepSeconds &T : R.Steps)
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
    J.attribute("ok", ok(R));
  });
  OS << '\n';
}

// A plan over the budget is not run: the verdict alone.
static void printNotRun(raw_ostream &OS, const ExecuteResult &R, bool JSON) {
  if (JSON) {
    json::OStream J(OS, 1);
    J.object([&] {
      J.attribute("ran", false);
      J.attribute("plan_total_bytes", int64_t(R.PlanTotalBytes));
      J.attribute("fitted", R.Fitted);
      J.attribute("budget_bytes", int64_t(R.BudgetBytes.value_or(0)));
      J.attribute("fits", false);
    });
    OS << '\n';
    return;
  }
  OS << "plan total " << R.PlanTotalBytes << " bytes ("
     << formatBytes(R.PlanTotalBytes) << ")" << (R.Fitted ? ", fitted" : "")
     << "; budget " << R.BudgetBytes.value_or(0)
     << " bytes: does NOT fit (nothing fitted it): not run\n"
     << "(oomplan with the same options explains what the memory is "
        "and what would fit)\n";
}

// The device's figures, after the plan's total.
static void printDevice(raw_ostream &OS, const api::DeviceBytes &D,
                        bool Matches) {
  OS << D.Device << " allocations " << D.AllocatedBytes
     << " bytes, plan's device regions " << D.PlanDeviceBytes
     << " bytes: " << (Matches ? "equal" : "DIFFERENT");
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
  if (D.ContextBytes || D.HandleBytes) {
    OS << D.Device << " overhead:";
    if (D.ContextBytes)
      OS << " context " << *D.ContextBytes << " bytes ("
         << formatBytes(*D.ContextBytes) << ")";
    if (D.HandleBytes)
      OS << ", library handles and streams " << *D.HandleBytes << " bytes ("
         << formatBytes(*D.HandleBytes) << ")";
    OS << '\n';
  }
}

static void printText(raw_ostream &OS, const ExecuteResult &R) {
  for (size_t I = 0; I < R.Outputs.size(); ++I) {
    const api::Tensor &T = R.Outputs[I];
    OS << "output " << I << " '" << T.Name << "' " << T.Type << " [";
    for (size_t D = 0; D < T.Dims.size(); ++D)
      OS << (D ? "," : "") << T.Dims[D];
    OS << "] " << T.Data.size() << " bytes fnv1a " << hex(fnv1a(T)) << '\n';
  }
  OS << "\nregion     planned bytes   high-water   (aligned)   equal\n";
  for (const api::RegionBytes &U : R.Regions)
    OS << left_justify(U.Region, 8) << format("%15llu", U.PlannedBytes)
       << format("%13llu", U.HighWaterBytes)
       << format("%12llu", U.HighWaterAlignedBytes)
       << (U.HighWaterAlignedBytes == U.PlannedBytes ? "   yes" : "   NO")
       << '\n';
  OS << "plan total " << R.PlanTotalBytes << " bytes ("
     << formatBytes(R.PlanTotalBytes) << ")";
  if (R.Fitted)
    OS << ", fitted";
  if (R.Passes > 1)
    OS << ", " << R.Passes << " micro-batch passes";
  if (R.BudgetBytes)
    OS << "; budget " << *R.BudgetBytes
       << " bytes: " << (R.Fits ? "fits" : "does NOT fit (nothing fitted it)");
  OS << '\n';
  if (R.Device)
    printDevice(OS, *R.Device, R.deviceMatches());
  // The CPU backend's bound (docs/runtime.md) is on host memory beyond
  // the arena; on a device the arena is not host memory and the growth is
  // the device runtime's own (staging, the driver's host buffers), so the
  // bound is not claimed there (the H200 run's RSS grew 3.6 to 7.5 MiB).
  if (R.RSSGrowthBytes && R.Device)
    OS << "RSS growth during the run: " << *R.RSSGrowthBytes << " bytes ("
       << formatBytes(*R.RSSGrowthBytes)
       << ") of host memory (the arena is on the device; the bound of "
          "docs/runtime.md is the CPU backend's)\n";
  else if (R.RSSGrowthBytes)
    OS << "RSS growth during the run: " << *R.RSSGrowthBytes << " bytes ("
       << formatBytes(*R.RSSGrowthBytes) << "), " << rssBeyondPlan(R)
       << " bytes beyond the arena and the outputs (docs/runtime.md: under 4 "
          "MiB at up to two threads)\n";
  if (R.ProcessGrowthBytes)
    OS << "process peak RSS growth (from before reading the model): "
       << *R.ProcessGrowthBytes << " bytes ("
       << formatBytes(*R.ProcessGrowthBytes) << ")\n";
  OS << "threads: " << R.Threads
     << (R.ThreadsPerCore ? " (one per physical core; --threads N to choose)"
                          : " (--threads)")
     << '\n';
  OS << format("time: plan %.3f s, load %.3f s, run %.3f s", R.PlanSeconds,
               R.LoadSeconds, R.RunSeconds);
  if (!R.RepeatSeconds.empty())
    OS << format(", warm run %.3f s (median of %u)", warmSeconds(R),
                 unsigned(R.RepeatSeconds.size()));
  // On a device, also the steps alone: the copies of inputs and outputs
  // through host memory are the difference.
  if (R.Device)
    if (std::optional<double> W = warmStepsSeconds(R))
      OS << format(", steps on the device %.6f s", *W);
  OS << '\n';
  if (!R.Ops.empty()) {
    double Total = 0;
    for (const api::OpSeconds &T : R.Ops)
      Total += T.Seconds;
    OS << "\nop type                 seconds/run   share   calls/run"
       << (R.ProfiledRuns > 1 ? " (mean of the warm runs)" : "") << '\n';
    for (const api::OpSeconds &T : R.Ops)
      OS << left_justify(T.Op, 22)
         << format("%12.6f %6.1f%% %11llu\n", T.Seconds / R.ProfiledRuns,
                   Total > 0 ? 100.0 * T.Seconds / Total : 0.0,
                   (unsigned long long)(T.Calls / R.ProfiledRuns));
  }
  if (R.Poisoned)
    OS << "poison: dead buffers overwritten\n";
  if (R.CheckRan)
    OS << "check unplanned: "
       << (R.CheckDifference.empty() ? std::string("outputs bit-identical")
                                     : "FAILED, " + R.CheckDifference)
       << '\n';
  if (!R.deviceMatches())
    OS << "device: FAILED, the run's device allocations differ from the "
          "plan\n";
  if (!R.highWaterMatches())
    OS << "high-water: FAILED, a region's measured high-water differs from "
          "the plan\n";
}

std::string api::formatRunReport(const ExecuteResult &E, bool JSON) {
  std::string Text;
  raw_string_ostream OS(Text);
  if (!E.Ran) {
    if (E.ExitCode == 2)
      printNotRun(OS, E, JSON);
  } else if (JSON) {
    printJSON(OS, E);
  } else {
    printText(OS, E);
  }
  OS.flush();
  return Text;
}
