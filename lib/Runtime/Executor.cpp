//===- Executor.cpp - runs a placed plan in its planned regions -----------===//
//
// create() does everything that may allocate: the regions (one allocation
// each, or one per tensor in unplanned mode), every tensor's address, every
// step's kernel and its argument lists, and the buffers each step's end
// kills (for --poison). run() then only calls kernels and copies, so the
// memory a run touches is the plan's and nothing else.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/Executor.h"
#include "oomplan/Frontend/WeightLoader.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringMap.h"
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace oomplan;
using namespace oomplan::runtime;

namespace {

struct FreeDeleter {
  void operator()(void *P) const { std::free(P); }
};
using Allocation = std::unique_ptr<char, FreeDeleter>;

// At least 64 bytes, so that even an empty region has a distinct, aligned,
// non-null base (a zero-sized tensor must still look present to kernels).
Allocation allocate(uint64_t Bytes) {
  uint64_t Size = std::max<uint64_t>(64, (Bytes + 63) / 64 * 64);
  return Allocation(static_cast<char *>(std::aligned_alloc(64, Size)));
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
  llvm::SmallVector<TensorRef, 4> In, Out;
  void *Workspace = nullptr;
  uint64_t WorkspaceBytes = 0;
  /// Buffers whose lifetime ends after this step (poisoned).
  llvm::SmallVector<BufferId, 4> Dying;
  /// Data-dependent outputs: the dims the kernel reports (KernelContext::
  /// ActualDims), one per output; empty when every output is exact.
  llvm::SmallVector<llvm::SmallVector<int64_t, 6>, 2> Actual;
};

} // namespace

struct Executor::Impl {
  const Graph &G;
  const Plan &P;
  const RunInfo &Info;
  const KernelTable &Kernels;
  ExecOptions Opts;
  ThreadPool Pool;
  Allocation Regions[NumRegions];
  std::vector<Allocation> PerTensor; ///< Unplanned mode.
  std::vector<char *> Addr;          ///< Per schedule tensor.
  std::vector<char *> HostAddr;      ///< Per tensor: its host home, or null.
  /// Per tensor: the dims kernels see, Info's, or for a data-dependent
  /// output the dims its kernel reported.
  std::vector<llvm::SmallVector<int64_t, 6>> Dims;
  std::vector<StepCall> Calls;
  uint64_t HighWater[NumRegions] = {0, 0, 0, 0};
  /// Per step (ExecOptions::Profile): seconds and calls since the last
  /// resetProfile().
  std::vector<double> StepSeconds;
  std::vector<uint64_t> StepCalls;

  Impl(const Graph &G, const Plan &P, const RunInfo &Info, const KernelTable &K,
       const ExecOptions &O)
      : G(G), P(P), Info(Info), Kernels(K), Opts(O),
        Pool(std::max(1u, O.Threads)) {}

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

  bool upperBound(TensorId T) const {
    return T != NoId && T < Info.UpperBound.size() && Info.UpperBound[T];
  }
  llvm::Error checkInfo() const;
  llvm::Error takeActualDims(uint64_t S);
  llvm::Error bindTensors();
  llvm::Error prepareStep(uint64_t S);
  void touch(TensorId T);
  void touchHost(TensorId T);
  void poison(BufferId B);
  llvm::Error runStep(uint64_t S);
};

llvm::Error Executor::Impl::checkInfo() const {
  size_t NT = P.Sched.Tensors.size();
  if (Info.Dims.size() != NT || Info.Types.size() != NT ||
      Info.Present.size() != NT ||
      Info.Workspace.size() != P.Sched.Steps.size())
    return makeInternalError("run information does not match the plan's "
                             "schedule");
  for (TensorId T = 0; T < NT; ++T) {
    const ScheduleTensor &ST = P.Sched.Tensors[T];
    if (ST.HostHome &&
        (P.HostOffsetOf.size() != NT || P.HostOffsetOf[T] == NoHostOffset))
      return makeInternalError("tensor '" + ST.Name +
                               "' has its home in host memory but the plan "
                               "gives it no place in the host region");
    // The plan sized the buffer; a tensor larger than it would overrun.
    if (Info.Present[T] && tensorBytes(T) > ST.SizeBytes)
      return makeInternalError(
          "tensor '" + ST.Name + "' needs " + llvm::Twine(tensorBytes(T)) +
          " bytes but the plan gives it " + llvm::Twine(ST.SizeBytes));
  }
  return llvm::Error::success();
}

llvm::Error Executor::Impl::bindTensors() {
  size_t NT = P.Sched.Tensors.size();
  Addr.assign(NT, nullptr);
  HostAddr.assign(NT, nullptr);
  // Host homes are the plan's in both modes: they are not device tensors.
  unsigned H = unsigned(Region::Host);
  Regions[H] = allocate(P.HostBytes);
  if (!Regions[H])
    return makeIOError("cannot allocate the host region (" +
                       llvm::Twine(P.HostBytes) + " bytes)");
  for (TensorId T = 0; T < NT; ++T)
    if (P.Sched.Tensors[T].HostHome)
      HostAddr[T] = Regions[H].get() + P.HostOffsetOf[T];
  if (Opts.Unplanned) {
    PerTensor.resize(NT);
    for (TensorId T = 0; T < NT; ++T) {
      PerTensor[T] = allocate(P.Sched.Tensors[T].SizeBytes);
      if (!PerTensor[T])
        return makeIOError(
            "cannot allocate " + llvm::Twine(P.Sched.Tensors[T].SizeBytes) +
            " bytes for tensor '" + P.Sched.Tensors[T].Name + "'");
      Addr[T] = PerTensor[T].get();
    }
    return llvm::Error::success();
  }
  for (unsigned R = 0; R < NumRegions; ++R) {
    if (Region(R) == Region::Host)
      continue;
    Regions[R] = allocate(regionBytes(Region(R)));
    if (!Regions[R])
      return makeIOError("cannot allocate the " + regionName(Region(R)) +
                         " region (" + llvm::Twine(regionBytes(Region(R))) +
                         " bytes)");
  }
  for (TensorId T = 0; T < NT; ++T) {
    BufferId B = P.Life.BufferOf[T];
    Region R = P.RegionOf[B];
    uint64_t Off = P.OffsetOf[B], End;
    if (__builtin_add_overflow(Off, P.Life.Buffers[B].SizeBytes, &End) ||
        End > regionBytes(R))
      return makeInternalError("buffer of tensor '" + P.Sched.Tensors[T].Name +
                               "' ends past its region");
    Addr[T] = Regions[unsigned(R)].get() + Off;
  }
  return llvm::Error::success();
}

// The kernel of step S's node, or an unsupported error naming it.
static llvm::Expected<const Kernel *> findKernel(const Graph &G, NodeId N,
                                                 const KernelTable &Kernels,
                                                 ElementType InType) {
  const Node &Nd = G.Nodes[N];
  const ops::OpInfo *Op = ops::lookupOp(Nd.OpType);
  bool DefaultDomain = Nd.Domain.empty() || Nd.Domain == "ai.onnx";
  if (!Op || !DefaultDomain || !Kernels.get(ops::opCode(*Op)))
    return makeUnsupportedError(G.SourcePath + ": " + G.describeNode(N) +
                                ": no CPU kernel for op " + Nd.OpType);
  const Kernel &K = *Kernels.get(ops::opCode(*Op));
  if (!K.Types.empty() && InType != ElementType::Undefined &&
      !llvm::is_contained(K.Types, InType))
    return makeUnsupportedError(
        G.SourcePath + ": " + G.describeNode(N) + ": the CPU kernel for " +
        Nd.OpType + " has no " + elementTypeName(InType) + " version");
  return &K;
}

llvm::Error Executor::Impl::prepareStep(uint64_t S) {
  const Step &St = P.Sched.Steps[S];
  StepCall &C = Calls[S];
  switch (St.Kind) {
  case StepKind::Compute:
  case StepKind::Recompute:
    break;
  case StepKind::Prefetch:
  case StepKind::Offload: {
    bool In = St.Kind == StepKind::Prefetch;
    for (TensorId T : In ? St.Writes : St.Reads)
      if (!P.Sched.Tensors[T].HostHome)
        return makeUnsupportedError(
            "step " + llvm::Twine(S) + ": " + (In ? "prefetch" : "offload") +
            " of tensor '" + P.Sched.Tensors[T].Name +
            "', which has no host home; the runtime cannot run it yet");
    C.Kind = In ? CallKind::Prefetch : CallKind::Offload;
    return llvm::Error::success();
  }
  default:
    return makeUnsupportedError("step " + llvm::Twine(S) +
                                ": training steps cannot run");
  }
  if (St.Node == NoId || St.Node >= G.Nodes.size())
    return makeInternalError("step " + llvm::Twine(S) + " runs no node");
  const Node &Nd = G.Nodes[St.Node];
  // Schedule edits replace tensor ids in place and leave omitted inputs
  // out, so the I-th present input of the node is the I-th read.
  size_t R = 0, W = 0;
  for (ValueId V : Nd.Inputs) {
    if (V == NoId) {
      C.In.push_back(TensorRef());
      continue;
    }
    if (R >= St.Reads.size())
      return makeInternalError("step " + llvm::Twine(S) +
                               " reads fewer "
                               "tensors than its node has inputs");
    C.In.push_back(ref(St.Reads[R++]));
  }
  for (ValueId V : Nd.Outputs) {
    if (V == NoId) {
      C.Out.push_back(TensorRef());
      continue;
    }
    if (W >= St.Writes.size())
      return makeInternalError("step " + llvm::Twine(S) +
                               " writes fewer "
                               "tensors than its node has outputs");
    C.Out.push_back(ref(St.Writes[W++]));
  }
  if (TensorId WS = Info.Workspace[S]; WS != NoId) {
    C.Workspace = Addr[WS];
    C.WorkspaceBytes = P.Sched.Tensors[WS].SizeBytes;
  }
  // A Constant's value was loaded with the weights (the importer keeps
  // only small constants' contents, so no kernel could rebuild it).
  if (Nd.OpType == "Constant") {
    C.Kind =
        St.Kind == StepKind::Recompute ? CallKind::Copy : CallKind::Nothing;
    return llvm::Error::success();
  }
  auto K = findKernel(G, St.Node, Kernels,
                      C.In.empty() ? ElementType::Undefined : C.In[0].Type);
  if (!K)
    return K.takeError();
  C.K = *K;
  C.Kind = CallKind::Kernel;
  for (TensorId T : St.Writes)
    if (upperBound(T)) {
      for (const TensorRef &R : C.Out)
        C.Actual.push_back(R.Dims);
      break;
    }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Executor>>
Executor::create(const Graph &G, const Plan &P, const RunInfo &Info,
                 const KernelTable &Kernels, const ExecOptions &Opts) {
  auto I = std::make_unique<Impl>(G, P, Info, Kernels, Opts);
  if (llvm::Error E = I->checkInfo())
    return E;
  // Kernels first: an unsupported op is reported before anything is
  // allocated.
  I->Calls.resize(P.Sched.Steps.size());
  I->Addr.assign(P.Sched.Tensors.size(), nullptr);
  for (uint64_t S = 0; S < P.Sched.Steps.size(); ++S)
    if (llvm::Error E = I->prepareStep(S))
      return E;
  if (llvm::Error E = I->bindTensors())
    return E;
  I->Dims = Info.Dims;
  // Again, now with addresses (cheap; keeps prepareStep one pass).
  I->Calls.assign(P.Sched.Steps.size(), StepCall());
  for (uint64_t S = 0; S < P.Sched.Steps.size(); ++S)
    if (llvm::Error E = I->prepareStep(S))
      return E;
  if (Opts.Poison)
    for (BufferId B = 0; B < P.Life.Buffers.size(); ++B) {
      const LiveBuffer &LB = P.Life.Buffers[B];
      bool Arena = Opts.Unplanned || P.RegionOf[B] == Region::Arena;
      if (Arena && LB.Kind != TensorKind::Weight &&
          LB.Kind != TensorKind::Constant && LB.EndStep > 0 &&
          LB.EndStep < P.Sched.Steps.size())
        I->Calls[LB.EndStep - 1].Dying.push_back(B);
    }
  return std::unique_ptr<Executor>(new Executor(std::move(I)));
}

Executor::Executor(std::unique_ptr<Impl> P) : I(std::move(P)) {}
Executor::~Executor() = default;

TensorRef Executor::tensor(TensorId T) const { return I->ref(T); }

llvm::Error Executor::loadWeights(llvm::StringRef ModelPath,
                                  std::optional<llvm::StringRef> Bytes) {
  Impl &X = *I;
  return loadTensorData(
      X.G, ModelPath,
      [&](ValueId V, uint64_t Bytes) {
        // Before any transform the first tensors are the graph's values.
        if (V >= X.P.Sched.Tensors.size() || X.P.Sched.Tensors[V].Value != V ||
            !X.Info.Present[V] || X.tensorBytes(V) != Bytes)
          return static_cast<void *>(nullptr);
        // A streamed weight's bytes live in its host home; prefetches copy
        // them to the device.
        if (X.HostAddr[V]) {
          X.touchHost(V);
          return static_cast<void *>(X.HostAddr[V]);
        }
        X.touch(V); // written now, whether or not a step reads it
        return static_cast<void *>(X.Addr[V]);
      },
      Bytes);
}

void Executor::Impl::touch(TensorId T) {
  if (Opts.Unplanned || !Info.Present[T])
    return;
  BufferId B = P.Life.BufferOf[T];
  unsigned R = unsigned(P.RegionOf[B]);
  HighWater[R] = std::max(HighWater[R], P.OffsetOf[B] + tensorBytes(T));
}

void Executor::Impl::touchHost(TensorId T) {
  unsigned R = unsigned(Region::Host);
  HighWater[R] = std::max(HighWater[R], P.HostOffsetOf[T] + tensorBytes(T));
}

// NaN in floating types turns any read of a dead buffer into NaN outputs;
// 0xA5 in integer types into wild indices or values.
void Executor::Impl::poison(BufferId B) {
  const LiveBuffer &LB = P.Life.Buffers[B];
  char *Base = Addr[LB.Root];
  uint64_t Bytes = LB.SizeBytes;
  switch (Info.Types[LB.Root]) {
  case ElementType::Float: {
    float NaN = std::nanf("");
    for (uint64_t I = 0; I + 4 <= Bytes; I += 4)
      std::memcpy(Base + I, &NaN, 4);
    return;
  }
  case ElementType::Double: {
    double NaN = std::nan("");
    for (uint64_t I = 0; I + 8 <= Bytes; I += 8)
      std::memcpy(Base + I, &NaN, 8);
    return;
  }
  case ElementType::Float16:
  case ElementType::BFloat16: {
    uint16_t NaN =
        Info.Types[LB.Root] == ElementType::Float16 ? 0x7E00 : 0x7FC0;
    for (uint64_t I = 0; I + 2 <= Bytes; I += 2)
      std::memcpy(Base + I, &NaN, 2);
    return;
  }
  default:
    std::memset(Base, 0xA5, Bytes);
  }
}

llvm::Error Executor::Impl::runStep(uint64_t S) {
  const Step &St = P.Sched.Steps[S];
  StepCall &C = Calls[S];
  for (TensorId T : St.Reads)
    touch(T);
  for (TensorId T : St.Writes)
    touch(T);
  switch (C.Kind) {
  case CallKind::Kernel: {
    KernelContext Ctx{G,           G.Nodes[St.Node], C.In, C.Out,
                      C.Workspace, C.WorkspaceBytes, Pool};
    for (size_t I = 0; I < C.Actual.size(); ++I)
      C.Actual[I] = C.Out[I].Dims; // inline storage: no allocation
    if (!C.Actual.empty())
      Ctx.ActualDims = C.Actual.data();
    if (llvm::Error E = C.K->Run(Ctx))
      return prependContext(std::move(E), G.SourcePath + ": ");
    if (!C.Actual.empty())
      if (llvm::Error E = takeActualDims(S))
        return E;
    break;
  }
  case CallKind::Prefetch:
    for (TensorId T : St.Writes) {
      touchHost(T);
      std::memcpy(Addr[T], HostAddr[T], tensorBytes(T));
    }
    break;
  case CallKind::Offload:
    for (TensorId T : St.Reads) {
      touchHost(T);
      std::memcpy(HostAddr[T], Addr[T], tensorBytes(T));
    }
    break;
  case CallKind::Copy: {
    // The Constant's graph value holds what the loader put there.
    TensorId From = G.Nodes[St.Node].Outputs[0];
    std::memcpy(Addr[St.Writes[0]], Addr[From], tensorBytes(From));
    break;
  }
  case CallKind::Nothing:
    break;
  }
  if (Opts.Poison)
    for (BufferId B : C.Dying)
      poison(B);
  return llvm::Error::success();
}

// The dims a kernel reported for its data-dependent outputs, checked
// against the upper bound the plan reserved.
llvm::Error Executor::Impl::takeActualDims(uint64_t S) {
  const StepCall &C = Calls[S];
  const Node &Nd = G.Nodes[P.Sched.Steps[S].Node];
  size_t W = 0;
  for (size_t I = 0; I < Nd.Outputs.size() && I < C.Actual.size(); ++I) {
    if (Nd.Outputs[I] == NoId)
      continue;
    TensorId T = P.Sched.Steps[S].Writes[W++];
    if (!C.Out[I].present())
      continue;
    TensorRef Got;
    Got.Type = C.Out[I].Type;
    Got.Dims = C.Actual[I];
    if (Got.Dims.size() != C.Out[I].Dims.size() ||
        Got.numElements() > C.Out[I].numElements() ||
        llvm::any_of(Got.Dims, [](int64_t D) { return D < 0; }))
      return makeInternalError(
          G.SourcePath + ": " + G.describeNode(P.Sched.Steps[S].Node) +
          ": the kernel reported dims for output " + llvm::Twine(I) +
          " outside the planned upper bound");
    if (upperBound(T))
      Dims[T] = Got.Dims;
  }
  return llvm::Error::success();
}

llvm::Error Executor::run() {
  // The caller wrote the inputs before the run.
  for (ValueId V : I->G.Inputs)
    if (V < I->P.Sched.Tensors.size())
      I->touch(V);
  if (!I->Opts.Profile) {
    for (uint64_t S = 0; S < I->Calls.size(); ++S)
      if (llvm::Error E = I->runStep(S))
        return E;
    return llvm::Error::success();
  }
  // Sized here, not in create(), so that a run without --profile has no
  // such vectors at all.
  I->StepSeconds.resize(I->Calls.size(), 0);
  I->StepCalls.resize(I->Calls.size(), 0);
  using Clock = std::chrono::steady_clock;
  for (uint64_t S = 0; S < I->Calls.size(); ++S) {
    Clock::time_point T0 = Clock::now();
    if (llvm::Error E = I->runStep(S))
      return E;
    I->StepSeconds[S] +=
        std::chrono::duration<double>(Clock::now() - T0).count();
    ++I->StepCalls[S];
  }
  return llvm::Error::success();
}

void Executor::resetProfile() {
  std::fill(I->StepSeconds.begin(), I->StepSeconds.end(), 0.0);
  std::fill(I->StepCalls.begin(), I->StepCalls.end(), 0);
}

std::vector<OpTime> Executor::opProfile() const {
  llvm::StringMap<OpTime> ByOp;
  for (uint64_t S = 0; S < I->StepSeconds.size(); ++S) {
    if (!I->StepCalls[S])
      continue;
    std::string Op;
    switch (I->Calls[S].Kind) {
    case CallKind::Prefetch:
      Op = "(prefetch)";
      break;
    case CallKind::Offload:
      Op = "(offload)";
      break;
    case CallKind::Copy:
      Op = "(copy)";
      break;
    default:
      Op = I->G.Nodes[I->P.Sched.Steps[S].Node].OpType;
    }
    OpTime &T = ByOp[Op];
    T.Op = Op;
    T.Seconds += I->StepSeconds[S];
    T.Calls += I->StepCalls[S];
  }
  std::vector<OpTime> Out;
  for (auto &E : ByOp)
    Out.push_back(E.second);
  llvm::sort(Out, [](const OpTime &A, const OpTime &B) {
    return A.Seconds != B.Seconds ? A.Seconds > B.Seconds : A.Op < B.Op;
  });
  return Out;
}

std::vector<RegionUse> Executor::regionUse() const {
  std::vector<RegionUse> Out;
  if (I->Opts.Unplanned)
    return Out;
  uint64_t A = I->P.AlignBytes;
  for (unsigned R = 0; R < NumRegions; ++R) {
    RegionUse U;
    U.R = Region(R);
    U.PlannedBytes = I->regionBytes(Region(R));
    U.HighWater = I->HighWater[R];
    U.HighWaterAligned = (U.HighWater + A - 1) / A * A;
    Out.push_back(U);
  }
  return Out;
}
