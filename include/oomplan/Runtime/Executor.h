//===- Executor.h - runs a placed plan in its planned regions ---*- C++ -*-===//
//
// The runtime. From a verified Plan, it allocates each region once
// at the plan's size (64-byte aligned), binds every schedule tensor to its
// region and offset (views and in-place writes share their buffer's bytes,
// as the plan says), loads the weights into their offsets, and runs the
// steps in order, calling one backend kernel per compute step with the
// step's planned workspace. Nothing is allocated during run(): kernels get
// their scratch from the plan. Backends are kernel tables indexed by the
// operator table (Backend.h).
//
// Checks that the plan is honoured: poisoning a buffer when its lifetime
// ends (NaN for floats, 0xA5 bytes otherwise), an unplanned mode in which
// every tensor has its own allocation (the reference for a bit-identical
// comparison), and the high-water mark of the bytes touched in each region.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_EXECUTOR_H
#define OOMPLAN_RUNTIME_EXECUTOR_H

#include "oomplan/Analysis/SymExpr.h"
#include "oomplan/IR/OpTable.h"
#include "oomplan/Plan/Plan.h"
#include "oomplan/Runtime/Device.h"
#include "oomplan/Runtime/Kernel.h"
#include <memory>

namespace oomplan {
namespace runtime {

using KernelTable = ops::KernelTable<Kernel>;

/// What a run needs besides the plan: every schedule tensor's concrete dims
/// and type, and each step's workspace tensor. The driver fills it
/// (Driver/Executable.h) from shape inference at the bound symbols.
struct RunInfo {
  /// Per schedule tensor. Present false: a value nothing reads whose size
  /// is unknown (an unused optional output); kernels see it as omitted.
  std::vector<llvm::SmallVector<int64_t, 6>> Dims;
  std::vector<ElementType> Types;
  std::vector<bool> Present;
  /// Per step: the tensor holding its kernel's scratch (the last of the
  /// step's Writes), or NoId.
  std::vector<TensorId> Workspace;
  /// Per tensor (or empty: none): a data-dependent graph output that no
  /// step reads, planned at its upper bound; its kernel reports the dims
  /// (KernelContext::ActualDims) and tensor() returns those after the run.
  std::vector<bool> UpperBound;
  /// Data-dependent sizes that later steps read (on a device the host
  /// cannot touch, the step deciding each runs on the host): per
  /// tensor, its dims as exact formulas over Symbols, which extend the
  /// model's with one symbol per data-dependent size (the exactness run,
  /// ShapeInference.h); empty for a tensor whose dims are Dims. Before each
  /// step the executor evaluates the formulas of what it reads and writes
  /// at Bindings plus the sizes kernels reported so far; Dims holds the
  /// planned upper bound.
  std::vector<std::vector<SymExpr>> SymbolicDims;
  /// Per tensor: the axes a kernel reports (ActualDims) whose formula is
  /// "symbol - 1", and that symbol: the run binds it to the size + 1.
  std::vector<llvm::SmallVector<std::pair<unsigned, SymbolId>, 1>> Reported;
  std::vector<std::optional<int64_t>> Bindings;
  std::vector<std::string> Symbols;
};

struct ExecOptions {
  /// Kernel threads; 0: one per physical core (physicalCores()).
  unsigned Threads = 0;
  /// Overwrite each arena buffer when its lifetime ends.
  bool Poison = false;
  /// Every tensor in its own allocation: the plan's offsets are ignored.
  bool Unplanned = false;
  /// Time every step (opProfile); costs two clock reads per step (two
  /// timer marks per step on an asynchronous device).
  bool Profile = false;
  /// Where the regions live and the steps run (Backend.h gives a backend's
  /// device); null: host memory, the CPU backend's.
  Device *Dev = nullptr;
  /// On a device that can record (CUDA graphs): the second run records its
  /// steps and every later run replays them. With Profile too: the
  /// recording holds each step's timers, so that a step's time is the
  /// device's without the host's launch gaps; where the device does not
  /// set timers inside a recording, the recording is dropped and the runs
  /// go step by step. The first run always goes step by step.
  bool Record = true;
  /// On a device the host cannot touch: a step the device has no kernel
  /// for (its op, or its type), and every step that reports a
  /// data-dependent size (NonZero, NonMaxSuppression...), runs on the host
  /// with the CPU kernel: its inputs copied to host memory, the device
  /// synchronized, its outputs copied back (a host step; HostSteps.cpp).
  /// False: such a plan is refused, naming the first step.
  bool HostSteps = true;
};

/// The device memory a run took, against the plan.
struct DeviceUse {
  std::string Device; ///< Device::name().
  DeviceOverhead Overhead;
  /// Sum of the sizes asked of the device: the weights, IO and arena
  /// regions (one allocation each), or every tensor in unplanned mode.
  uint64_t AllocatedBytes = 0;
  /// The drop in free device memory across the region allocations, where
  /// the device measures it (rounded up to the driver's page size).
  std::optional<uint64_t> MeasuredBytes;
  /// The host region (pinned on CUDA), not device memory.
  uint64_t HostBytes = 0;
  /// The drop in free device memory across the first run(), where the
  /// device measures it: what the kernel libraries took on their own
  /// (lazily loaded kernels, internal buffers); the plan cannot count it.
  std::optional<uint64_t> FirstRunDropBytes;
  /// The largest drop in free device memory from after the first run to
  /// after the second and third (a CUDA graph's memory, recorded in the
  /// second; later runs replay it): none with a single run. Anything here is
  /// memory the plan did not allocate.
  std::optional<uint64_t> LaterRunsDropBytes;
  /// Host steps (ExecOptions::HostSteps), by op type, in op-type order:
  /// how many steps of the plan run on the host.
  std::vector<std::pair<std::string, unsigned>> HostOps;
  /// The host memory their operands and scratch are staged in (allocated
  /// once, when the executor is created; not device memory).
  uint64_t HostStagingBytes = 0;
  /// The weights and constants host steps read, kept in host memory from
  /// loadWeights on so that a run need not copy them back (not device
  /// memory).
  uint64_t HostWeightBytes = 0;
};

/// Time spent in one op type (ExecOptions::Profile).
struct OpTime {
  std::string Op; ///< Op type, or "(prefetch)", "(offload)", "(copy)".
  double Seconds = 0;
  uint64_t Calls = 0;
};

/// Time spent in one step (ExecOptions::Profile): its index in the plan's
/// schedule, its op type (as OpTime's) and its node's name ("" for none).
struct StepTime {
  uint64_t Index = 0;
  std::string Op, Node;
  double Seconds = 0;
  uint64_t Calls = 0;
};

/// Number of regions the runtime allocates (Weights, IO, Arena, Host).
constexpr unsigned NumRegions = 4;

/// The highest byte touched in one region against the plan's size.
struct RegionUse {
  Region R = Region::Arena;
  uint64_t PlannedBytes = 0;
  /// Max over tensors read or written of offset + bytes.
  uint64_t HighWater = 0;
  /// HighWater rounded up to the plan's alignment: equal to PlannedBytes
  /// exactly when the run touched the buffer that ends the region.
  uint64_t HighWaterAligned = 0;
};

class Executor {
public:
  /// Checks that every step has a kernel for its op and input type (an
  /// unsupported error names the node and op otherwise) and allocates the
  /// regions. G, P and Info must outlive the executor.
  static llvm::Expected<std::unique_ptr<Executor>>
  create(const Graph &G, const Plan &P, const RunInfo &Info,
         const KernelTable &Kernels, const ExecOptions &Opts);
  ~Executor();

  /// The bytes of schedule tensor T, with its dims and type (Data null when
  /// the tensor is not present).
  TensorRef tensor(TensorId T) const;

  /// Loads the initializers and Constant values of the model file G came
  /// from into their planned slots. Bytes, when given, is the model's
  /// contents (a model rewritten in memory, such as folded inputs).
  /// RandomMissingSeed, when given: an initializer whose external data file
  /// does not exist gets fillRandomWeight's values from this seed (a model
  /// shipped without its weights) instead of failing the load.
  llvm::Error loadWeights(llvm::StringRef ModelPath,
                          std::optional<llvm::StringRef> Bytes = {},
                          std::optional<uint64_t> RandomMissingSeed = {});

  /// Runs every step once, in order.
  llvm::Error run();

  /// The last run()'s steps alone, in seconds: from before the first step
  /// to after the last, without copying inputs in and outputs out through
  /// host memory (a device the host cannot touch times them with its own
  /// events). None when the device could not tell.
  std::optional<double> lastStepsSeconds() const;

  /// Per op type, the time of the steps run since creation or the last
  /// resetProfile(), slowest first (ties by name, so the order is
  /// deterministic for equal times). Empty unless ExecOptions::Profile.
  std::vector<OpTime> opProfile() const;
  /// Every timed step's time since construction or resetProfile(), in
  /// schedule order (opProfile() is these summed per op type). Empty unless
  /// ExecOptions::Profile.
  std::vector<StepTime> stepProfile() const;
  /// The runs opProfile() covers (those whose steps were timed).
  unsigned profiledRuns() const;
  void resetProfile();

  /// Per region, after run() (empty in unplanned mode).
  std::vector<RegionUse> regionUse() const;

  DeviceUse deviceUse() const;

private:
  struct Impl;
  explicit Executor(std::unique_ptr<Impl> P);
  std::unique_ptr<Impl> I;
};

} // namespace runtime
} // namespace oomplan

#endif
