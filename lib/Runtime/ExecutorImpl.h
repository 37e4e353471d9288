//===- ExecutorImpl.h - the executor's state, shared by its files -*- C++
//-*-===//
//
// Executor.cpp (regions, binding, steps, checks), ExecutorWeights.cpp
// (loading the weights), HostShapes.cpp (shape values computed on the host
// for devices the host cannot touch) and HostSteps.cpp (steps such a
// device cannot run, run on the host) all work on Executor::Impl; this
// private header defines it.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_EXECUTORIMPL_H
#define OOMPLAN_LIB_RUNTIME_EXECUTORIMPL_H

#include "ArenaShadow.h"
#include "oomplan/Runtime/Executor.h"
#include "oomplan/Runtime/LaunchPlan.h"
#include "llvm/ADT/DenseMap.h"
#include <cstdlib>

namespace oomplan {
namespace runtime {
namespace detail {

// One allocation of the device, released when dropped.
class Allocation {
public:
  Allocation() = default;
  Allocation(Device *D, Region R, char *P) : D(D), R(R), P(P) {}
  Allocation(Allocation &&O) { *this = std::move(O); }
  Allocation &operator=(Allocation &&O) {
    reset();
    D = O.D;
    R = O.R;
    P = O.P;
    O.P = nullptr;
    return *this;
  }
  ~Allocation() { reset(); }
  char *get() const { return P; }
  explicit operator bool() const { return P != nullptr; }
  void reset() {
    if (P)
      D->release(R, P);
    P = nullptr;
  }

private:
  Device *D = nullptr;
  Region R = Region::Arena;
  char *P = nullptr;
};

// Host memory of the caller's (staging and mirrors), 64-byte aligned.
struct FreeDeleter {
  void operator()(void *P) const { std::free(P); }
};
using HostBuffer = std::unique_ptr<char, FreeDeleter>;
/// The largest value kept on the host (a shape tensor is a few int64s).
constexpr uint64_t MaxHostValueBytes = 512;
inline HostBuffer hostBuffer(uint64_t Bytes) {
  uint64_t Size = std::max<uint64_t>(64, (Bytes + 63) / 64 * 64);
  return HostBuffer(static_cast<char *>(std::aligned_alloc(64, Size)));
}

enum class CallKind : uint8_t {
  Kernel,   ///< Call K.
  Nothing,  ///< A Constant: its value was loaded with the weights.
  Prefetch, ///< Copy each write's host home to its device bytes.
  Offload,  ///< Copy each read's device bytes to its host home.
  Copy,     ///< Recompute of a Constant: copy the loaded value.
};

// One step, ready to run: the kernel and its argument lists.
struct StepCall {
  CallKind Kind = CallKind::Nothing;
  const Kernel *K = nullptr;
  /// Set when K runs on float copies of half operands (HalfInFloat.h): the
  /// backend's Cast kernel, which converts them.
  const Kernel *HalfCast = nullptr;
  llvm::SmallVector<TensorRef, 4> In, Out;
  /// The schedule tensor of each slot of In and Out (NoId when omitted),
  /// for checkStepShapes.
  llvm::SmallVector<TensorId, 4> InIds, OutIds;
  void *Workspace = nullptr;
  uint64_t WorkspaceBytes = 0;
  /// Buffers whose lifetime ends after this step (poisoned).
  llvm::SmallVector<BufferId, 4> Dying;
  /// Per node input: its host value when known (KernelContext::HostInputs).
  llvm::SmallVector<TensorRef, 4> HostIn;
  /// Evaluated on the host (HostShapes.cpp): the run copies the outputs
  /// listed in Upload to the device instead of calling the kernel.
  bool OnHost = false;
  /// A host step (HostSteps.cpp): K is the CPU kernel, run on host copies
  /// of the operands at every run. HostWorkspaceBytes: its scratch, in the
  /// host staging buffer.
  bool Host = false;
  uint64_t HostWorkspaceBytes = 0;
  llvm::SmallVector<TensorId, 2> Upload;
  /// Data-dependent outputs: the dims the kernel reports (KernelContext::
  /// ActualDims), one per output; empty when every output is exact.
  llvm::SmallVector<llvm::SmallVector<int64_t, 6>, 2> Actual;
  /// The node's guards (IR/Graph.h): each condition's tensor (a read after
  /// the node's inputs) and the value it must have for the step to run.
  llvm::SmallVector<std::pair<TensorId, bool>, 1> Guards;
  /// Inputs and outputs with data-dependent dims (RunInfo::SymbolicDims):
  /// their slot in In or Out and their tensor, re-dimmed before each call.
  llvm::SmallVector<std::pair<unsigned, TensorId>, 2> DynIn, DynOut;
};

/// The kernel of node N in Kernels for a first input of type InType (a
/// half type a float kernel widens counts as handled), or an unsupported
/// error naming the node, the op and the backend.
llvm::Expected<const Kernel *> findKernel(const Graph &G, NodeId N,
                                          const KernelTable &Kernels,
                                          ElementType InType,
                                          llvm::StringRef Backend);

} // namespace detail

using namespace detail;

struct Executor::Impl {
  const Graph &G;
  const Plan &P;
  const RunInfo &Info;
  const KernelTable &Kernels;
  ExecOptions Opts;
  Device &Dev;
  ThreadPool Pool;
  Allocation Regions[NumRegions];
  std::vector<Allocation> PerTensor; ///< Unplanned mode.
  /// AddressSanitizer builds: which region bytes are alive (ArenaShadow.h).
  /// After Regions, so that it is destroyed before they are freed.
  ArenaShadow Shadow;
  /// Device memory asked for, and the drop in free device memory across
  /// those allocations when the device measures it.
  uint64_t DeviceBytes = 0;
  std::optional<uint64_t> MeasuredBytes, FirstRunDrop;
  /// Free device memory after the first run, and the largest drop from it
  /// after any later run (a recording's graph included).
  std::optional<uint64_t> FreeAfterFirst, LaterRunsDrop;
  unsigned MeasuredRuns = 0; ///< Runs whose free memory was read after.
  bool Ran = false;
  std::optional<double> StepsSeconds; ///< Executor::lastStepsSeconds().
  /// Device::createTimers's first: the steps' begin (+0) and end (+1), and
  /// with --profile after each step S (+2+S). TimedSteps: runSteps marked
  /// them, collectStepTimes has not read them yet.
  unsigned TimerBase = 0;
  bool TimedSteps = false;
  LaunchPlan Launch;
  unsigned EventBase = 0;
  /// Devices the host cannot touch: host mirrors of the graph inputs and
  /// outputs (tensor() returns them), by tensor.
  llvm::DenseMap<TensorId, HostBuffer> Mirror;
  std::vector<TensorId> MirrorIn, MirrorOut;
  /// Small values known on the host, by tensor (HostShapes.cpp).
  llvm::DenseMap<TensorId, HostBuffer> HostVal;
  /// Where a condition is copied back to (guardsHold), made on first use.
  HostBuffer GuardByte;
  /// Host steps' operands and scratch (HostSteps.cpp): one buffer, made
  /// when the executor is created, reused by each host step in turn.
  HostBuffer Staging;
  uint64_t StagingBytes = 0;
  /// Weights and constants a host step reads, kept on the host from
  /// loadWeights (their host copies, which the load made anyway): a run
  /// writes no weight, so a host step reads these instead of copying them
  /// back from the device at every run. Small ones are in HostVal instead.
  llvm::DenseMap<TensorId, HostBuffer> HostWeight;
  uint64_t HostWeightBytes = 0;
  /// Whether a host step reads tensor T (Calls' host steps' reads).
  bool hostStepReads(TensorId T) const;
  /// Per step: its kernel decides a data-dependent size: it is the first,
  /// in schedule order, to write a tensor whose size is data-dependent and
  /// read later (RunInfo::Reported), or it writes a data-dependent graph
  /// output nothing reads (RunInfo::UpperBound) that has no formula
  /// (HostSteps.cpp).
  std::vector<bool> ReportsSize;
  bool HostShapesDone = false;
  /// The device's recording of the steps (Device::beginRecording), once
  /// made; RecordFailed: the device could not record them (a kernel waits
  /// for the device), so every run goes step by step.
  std::optional<unsigned> Recording;
  bool RecordFailed = false;
  /// Frees the recording, if any (Device::dropRecording).
  void dropRecording() {
    if (Recording)
      Dev.dropRecording(*Recording);
    Recording.reset();
  }
  std::vector<char *> Addr;     ///< Per schedule tensor.
  std::vector<char *> HostAddr; ///< Per tensor: its host home, or null.
  /// Per tensor: the dims kernels see, Info's, or for a data-dependent
  /// output the dims its kernel reported.
  std::vector<llvm::SmallVector<int64_t, 6>> Dims;
  std::vector<StepCall> Calls;
  uint64_t HighWater[NumRegions] = {0, 0, 0, 0};
  /// Per step (ExecOptions::Profile): seconds and calls since the last
  /// resetProfile().
  std::vector<double> StepSeconds;
  std::vector<uint64_t> StepCalls;
  /// Runs whose steps were timed since the last resetProfile() (a replay
  /// whose timers the device did not set is not).
  unsigned ProfiledRuns = 0;

  Impl(const Graph &G, const Plan &P, const RunInfo &Info, const KernelTable &K,
       const ExecOptions &O)
      : G(G), P(P), Info(Info), Kernels(K), Opts(O),
        Dev(O.Dev ? *O.Dev : hostDevice()),
        Pool(O.Threads ? O.Threads : physicalCores()) {}

  llvm::Error allocate(Region R, uint64_t Bytes, Allocation &Out) {
    auto A = Dev.allocate(R, Bytes);
    if (!A)
      return A.takeError();
    Out = Allocation(&Dev, R, static_cast<char *>(*A));
    if (R != Region::Host)
      DeviceBytes += Bytes;
    return llvm::Error::success();
  }

  uint64_t regionBytes(Region R) const {
    switch (R) {
    case Region::Weights:
      return P.WeightBytes;
    case Region::IO:
      return P.IOBytes;
    case Region::Host:
      return P.HostBytes;
    default:
      return P.ArenaBytes;
    }
  }
  uint64_t tensorBytes(TensorId T) const {
    TensorRef R;
    R.Type = Info.Types[T];
    R.Dims = Info.Dims[T];
    return R.bytes();
  }
  TensorRef ref(TensorId T) const {
    TensorRef R;
    if (T == NoId || !Info.Present[T])
      return R;
    R.Type = Info.Types[T];
    R.Dims = Dims.empty() ? Info.Dims[T] : Dims[T];
    R.Data = Addr[T];
    return R;
  }
  /// ref(T), with the host mirror's address when T has one.
  TensorRef hostRef(TensorId T) const {
    TensorRef R = ref(T);
    auto It = Mirror.find(T);
    if (R.Data && It != Mirror.end())
      R.Data = It->second.get();
    return R;
  }

  bool upperBound(TensorId T) const {
    return T != NoId && T < Info.UpperBound.size() && Info.UpperBound[T];
  }
  /// T's dims are formulas of data-dependent sizes (RunInfo::SymbolicDims).
  bool dynamic(TensorId T) const {
    return T != NoId && T < Info.SymbolicDims.size() &&
           !Info.SymbolicDims[T].empty();
  }
  /// T's kernel reports a data-dependent size (RunInfo::Reported).
  bool reported(TensorId T) const {
    return T != NoId && T < Info.Reported.size() && !Info.Reported[T].empty();
  }
  llvm::Error checkInfo() const;
  llvm::Error takeActualDims(uint64_t S);
  llvm::Error bindTensors();
  llvm::Error makeMirrors();
  llvm::Error prepareStep(uint64_t S);
  /// Host steps (HostSteps.cpp): whether step S, whose device kernel is
  /// DeviceK (an error when the device has none), runs on the host with
  /// the CPU kernel, and that kernel; sizes and allocates Staging; runs one.
  llvm::Expected<const Kernel *>
  hostKernel(uint64_t S, llvm::Expected<const Kernel *> DeviceK);
  void findSizeReports();
  llvm::Error makeStaging();
  llvm::Error runHostStep(uint64_t S, Queue Q);
  /// A step that reports a data-dependent size runs on the device: its
  /// dims would reach the host only after a wait per step. An error
  /// naming it when later steps read such sizes and the device is not
  /// the host's.
  llvm::Error checkDataDependentOnHost() const;
  /// False when a guard of a step's node does not hold: the step is in the
  /// If branch this run does not take, and does nothing. Q: the step's.
  llvm::Expected<bool> guardsHold(const StepCall &C, Queue Q);
  /// Data-dependent sizes reported so far in this run: Info.Bindings plus
  /// the symbols of RunInfo::Reported (reset at each run).
  std::vector<std::optional<int64_t>> RunBindings;
  /// Evaluates the formulas of C's data-dependent inputs and outputs at
  /// RunBindings into Dims and C's refs (one not yet known stays as it
  /// is: a branch not taken); an error when one exceeds its plan.
  llvm::Error refreshDims(StepCall &C);
  /// Before step S's kernel runs (StepShapes.cpp): every operand fits its
  /// planned buffer, and the dims of broadcasting ops and products agree.
  llvm::Error checkStepShapes(uint64_t S) const;
  llvm::Error runSteps();
  void collectStepTimes();
  llvm::Error runStepsOrReplay();
  llvm::Error runOnce();
  void planHostShapes();
  bool evaluateOnHost(uint64_t S);
  void touch(TensorId T);
  void touchHost(TensorId T);
  llvm::Error poison(BufferId B, Queue Q);
  llvm::Error runStep(uint64_t S);
  llvm::Error callKernel(uint64_t S, KernelContext &Ctx);
};

} // namespace runtime
} // namespace oomplan

#endif
