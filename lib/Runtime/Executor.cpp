//===- Executor.cpp - runs a placed plan in its planned regions -----------===//
//
// create() does everything that may allocate: the regions (one allocation
// each, or one per tensor in unplanned mode), every tensor's address, every
// step's kernel and its argument lists, and the buffers each step's end
// kills (for --poison). run() then only calls kernels and copies, so the
// memory a run touches is the plan's and nothing else.
//
// The regions live in the backend's Device (Device.h). A device whose
// memory the host cannot touch (CUDA) gets host staging: the weights are
// read into host buffers and copied once, and each graph input and output
// has a host mirror that tensor() returns and run() copies in and out.
// Steps run on the queue the launch plan gives them (LaunchPlan.h), with
// its events; run() ends with the device synchronized. Loading the weights
// is ExecutorWeights.cpp.
//
// Shape values on such a device are computed on the host (HostShapes.cpp):
// a step whose inputs are all known on the host (small weights and
// constants, earlier host results, or only the dims of its input, as
// Shape's) and whose outputs are small runs once, with the CPU kernel, on
// the host; the run then skips it, copying its result to the device only
// where a device kernel reads those bytes.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/Executor.h"
#include "ExecutorImpl.h"
#include "oomplan/Runtime/Backend.h"
#include "oomplan/Runtime/HalfInFloat.h"
#include "oomplan/Runtime/LaunchPlan.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/DenseMap.h"
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

using namespace oomplan;
using namespace oomplan::runtime;

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
  if (llvm::Error E = allocate(Region::Host, P.HostBytes, Regions[H]))
    return E;
  for (TensorId T = 0; T < NT; ++T)
    if (P.Sched.Tensors[T].HostHome)
      HostAddr[T] = Regions[H].get() + P.HostOffsetOf[T];
  if (Opts.Unplanned) {
    PerTensor.resize(NT);
    for (TensorId T = 0; T < NT; ++T) {
      if (llvm::Error E = allocate(Region::Arena, P.Sched.Tensors[T].SizeBytes,
                                   PerTensor[T]))
        return prependContext(std::move(E),
                              "tensor '" + P.Sched.Tensors[T].Name + "': ");
      Addr[T] = PerTensor[T].get();
    }
    return llvm::Error::success();
  }
  std::optional<uint64_t> FreeBefore = Dev.freeBytes();
  for (unsigned R = 0; R < NumRegions; ++R) {
    if (Region(R) == Region::Host)
      continue;
    if (llvm::Error E = allocate(Region(R), regionBytes(Region(R)), Regions[R]))
      return E;
  }
  std::optional<uint64_t> FreeAfter = Dev.freeBytes();
  if (FreeBefore && FreeAfter && *FreeBefore >= *FreeAfter)
    MeasuredBytes = *FreeBefore - *FreeAfter;
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

// A device the host cannot touch: one host buffer per graph input and
// output, for the caller to write and read.
llvm::Error Executor::Impl::makeMirrors() {
  if (Dev.hostVisible())
    return llvm::Error::success();
  auto Add = [&](ValueId V, std::vector<TensorId> &List) -> llvm::Error {
    if (V >= P.Sched.Tensors.size() || !Info.Present[V])
      return llvm::Error::success();
    List.push_back(V);
    if (Mirror.count(V))
      return llvm::Error::success();
    HostBuffer B = hostBuffer(P.Sched.Tensors[V].SizeBytes);
    if (!B)
      return makeIOError("cannot allocate a host buffer for '" +
                         P.Sched.Tensors[V].Name + "'");
    Mirror[V] = std::move(B);
    return llvm::Error::success();
  };
  for (ValueId V : G.Inputs)
    if (llvm::Error E = Add(V, MirrorIn))
      return E;
  for (ValueId V : G.Outputs)
    if (llvm::Error E = Add(V, MirrorOut))
      return E;
  return llvm::Error::success();
}

// The kernel of step S's node, or an unsupported error naming it.
llvm::Expected<const Kernel *> detail::findKernel(const Graph &G, NodeId N,
                                                  const KernelTable &Kernels,
                                                  ElementType InType,
                                                  llvm::StringRef Backend) {
  std::string BackendName = Backend == "cpu" ? "CPU" : Backend.upper();
  const Node &Nd = G.Nodes[N];
  const ops::OpInfo *Op = ops::lookupOp(Nd.OpType);
  bool DefaultDomain = Nd.Domain.empty() || Nd.Domain == "ai.onnx";
  if (!Op || !DefaultDomain || !Kernels.get(ops::opCode(*Op)))
    return makeUnsupportedError(G.SourcePath + ": " + G.describeNode(N) +
                                ": no " + BackendName + " kernel for op " +
                                Nd.OpType);
  // int4/uint4 (packed, two to a byte) are read by DequantizeLinear only:
  // every other kernel addresses whole bytes.
  if (Nd.OpType != "DequantizeLinear")
    for (const std::vector<ValueId> *Vs : {&Nd.Inputs, &Nd.Outputs})
      for (ValueId V : *Vs)
        if (V != NoId && isSubByte(G.Values[V].Type))
          return makeUnsupportedError(
              G.SourcePath + ": " + G.describeNode(N) + ": '" +
              G.Values[V].Name + "' is 4-bit (" +
              elementTypeName(G.Values[V].Type) +
              "): oomplan's executor reads 4-bit tensors only in "
              "DequantizeLinear (the plan sizes them all)");
  const Kernel &K = *Kernels.get(ops::opCode(*Op));
  if (!K.Types.empty() && InType != ElementType::Undefined &&
      !llvm::is_contained(K.Types, InType) && !widensHalf(K, InType))
    return makeUnsupportedError(G.SourcePath + ": " + G.describeNode(N) +
                                ": the " + BackendName + " kernel for " +
                                Nd.OpType + " has no " +
                                elementTypeName(InType) + " version");
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
      C.InIds.push_back(NoId);
      continue;
    }
    if (R >= St.Reads.size())
      return makeInternalError("step " + llvm::Twine(S) +
                               " reads fewer "
                               "tensors than its node has inputs");
    TensorId T = St.Reads[R++];
    if (dynamic(T))
      C.DynIn.push_back({unsigned(C.In.size()), T});
    C.In.push_back(ref(T));
    C.InIds.push_back(T);
  }
  for (ValueId V : Nd.Outputs) {
    if (V == NoId) {
      C.Out.push_back(TensorRef());
      C.OutIds.push_back(NoId);
      continue;
    }
    if (W >= St.Writes.size())
      return makeInternalError("step " + llvm::Twine(S) +
                               " writes fewer "
                               "tensors than its node has outputs");
    TensorId T = St.Writes[W++];
    if (dynamic(T))
      C.DynOut.push_back({unsigned(C.Out.size()), T});
    C.Out.push_back(ref(T));
    C.OutIds.push_back(T);
  }
  // The guards' conditions are the reads after the node's inputs
  // (makeDefaultSchedule); guardsHold reads them as the step comes up.
  for (size_t K = 0; K < Nd.Guards.size(); ++K) {
    if (R + K >= St.Reads.size())
      return makeInternalError("step " + llvm::Twine(S) +
                               " reads fewer tensors than its node has "
                               "inputs and guards");
    C.Guards.push_back({St.Reads[R + K], Nd.Guards[K].WhenTrue});
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
  auto Found = findKernel(G, St.Node, Kernels,
                          C.In.empty() ? ElementType::Undefined : C.In[0].Type,
                          Dev.name());
  // What the device's kernel cannot express is known now, not at the run.
  if (Found && (*Found)->Refuses) {
    std::string Why = (*Found)->Refuses(Nd, C.In, C.Out);
    if (!Why.empty())
      Found = makeUnsupportedError(
          G.SourcePath + ": " + G.describeNode(St.Node) + ": the " +
          (Dev.name() == "cpu" ? std::string("CPU") : Dev.name().upper()) +
          " kernel for " + Nd.OpType + " cannot run it: " + Why);
  }
  auto K = hostKernel(S, std::move(Found));
  if (!K)
    return K.takeError();
  C.K = *K;
  // A float kernel on a half step runs on float copies (HalfInFloat.h),
  // converted by this backend's Cast (a host step's: the CPU's).
  if (!C.In.empty() && widensHalf(**K, C.In[0].Type)) {
    const KernelTable *Table = &Kernels;
    if (C.Host) {
      auto CPU = backendKernels("cpu");
      if (!CPU)
        return CPU.takeError();
      Table = *CPU;
    }
    const auto &Cast = Table->get(ops::opCode(*ops::lookupOp("Cast")));
    if (!Cast)
      return makeUnsupportedError(G.SourcePath + ": " +
                                  G.describeNode(St.Node) + ": the " +
                                  Dev.name() +
                                  " backend has no Cast kernel "
                                  "to run " +
                                  Nd.OpType + " in float");
    C.HalfCast = &*Cast;
  }
  C.Kind = CallKind::Kernel;
  for (TensorId T : St.Writes)
    if (upperBound(T) || reported(T)) {
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
  for (const std::vector<ValueId> *Vs : {&G.Inputs, &G.Outputs})
    for (ValueId V : *Vs)
      if (isSubByte(G.Values[V].Type))
        return makeUnsupportedError(
            G.SourcePath + ": graph input or output '" + G.Values[V].Name +
            "' is 4-bit (" + elementTypeName(G.Values[V].Type) +
            "), which oomplan's executor does not read or write (4-bit "
            "weights it does)");
  if (uint64_t A = I->Dev.minAlignment(); P.AlignBytes < A)
    return makeUnsupportedError(
        "the plan aligns buffers to " + llvm::Twine(P.AlignBytes) +
        " bytes; the " + I->Dev.name() + " device needs " + llvm::Twine(A) +
        " (plan with --align " + llvm::Twine(A) + " or more)");
  // Kernels first: an unsupported op is reported before anything is
  // allocated.
  I->Calls.resize(P.Sched.Steps.size());
  I->Addr.assign(P.Sched.Tensors.size(), nullptr);
  I->findSizeReports();
  for (uint64_t S = 0; S < P.Sched.Steps.size(); ++S)
    if (llvm::Error E = I->prepareStep(S))
      return E;
  // Dims evaluated during the run are the host's business.
  if (llvm::Error E = I->checkDataDependentOnHost())
    return E;
  if (llvm::Error E = I->bindTensors())
    return E;
  if (llvm::Error E = I->makeMirrors())
    return E;
  I->Dims = Info.Dims;
  // The queues and events; checked independently before anything runs.
  // With --poison the fills are writes of their steps, ordered as such.
  auto Accesses = stepAccesses(P, Opts.Unplanned, Opts.Poison);
  I->Launch = planLaunches(P, Opts.Unplanned, Opts.Poison);
  if (llvm::Error E = verifyLaunchPlan(Accesses, I->Launch))
    return E;
  // The launch plan's events, and two more: the copy queue waits for the
  // inputs' copies (JoinIn), the copies out wait for the copy queue
  // (JoinOut); the launch plan orders steps only among themselves.
  auto Base = I->Dev.createEvents(I->Launch.NumEvents + 2);
  if (!Base)
    return Base.takeError();
  I->EventBase = *Base;
  // Timers (asynchronous devices): the steps' begin and end, and with
  // --profile two per step (after its waits, after its work).
  if (!I->Dev.hostVisible()) {
    auto Timers = I->Dev.createTimers(
        2 + (Opts.Profile ? 2 * unsigned(P.Sched.Steps.size()) : 0));
    if (!Timers)
      return Timers.takeError();
    I->TimerBase = *Timers;
  }
  // Again, now with addresses (cheap; keeps prepareStep one pass).
  I->Calls.assign(P.Sched.Steps.size(), StepCall());
  for (uint64_t S = 0; S < P.Sched.Steps.size(); ++S)
    if (llvm::Error E = I->prepareStep(S))
      return E;
  if (llvm::Error E = I->makeStaging())
    return E;
  if (Opts.Poison) {
    auto Dying = poisonedAfter(P, Opts.Unplanned);
    for (uint64_t S = 0; S < P.Sched.Steps.size(); ++S)
      I->Calls[S].Dying.assign(Dying[S].begin(), Dying[S].end());
  }
  // Only memory the sanitizer shadows; an unplanned run's tensors are
  // allocations of their own, which it sees already. Normal builds: none.
  if (OOMPLAN_ASAN && !Opts.Unplanned && I->Dev.hostMemory()) {
    char *Base[NumRegions];
    uint64_t Bytes[NumRegions];
    for (unsigned R = 0; R < NumRegions; ++R) {
      Base[R] = I->Regions[R].get();
      Bytes[R] = I->regionBytes(Region(R));
    }
    I->Shadow.init(P, Info, Base, Bytes);
  }
  return std::unique_ptr<Executor>(new Executor(std::move(I)));
}

Executor::Executor(std::unique_ptr<Impl> P) : I(std::move(P)) {}
// A recording refers to the regions: it goes first.
Executor::~Executor() {
  if (I)
    I->dropRecording();
}

TensorRef Executor::tensor(TensorId T) const {
  TensorRef R = I->hostRef(T);
  if (R.Data)
    I->Shadow.reveal(R.Data, R.bytes());
  return R;
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
llvm::Error Executor::Impl::poison(BufferId B, Queue Q) {
  const LiveBuffer &LB = P.Life.Buffers[B];
  char *Base = Addr[LB.Root];
  uint64_t Bytes = LB.SizeBytes;
  switch (Info.Types[LB.Root]) {
  case ElementType::Float:
    return Dev.fill(Base, Bytes, 0x7FC00000u, 4, Q); // quiet NaN
  case ElementType::Double:
    return Dev.fill(Base, Bytes, 0x7FF8000000000000ull, 8, Q);
  case ElementType::Float16:
    return Dev.fill(Base, Bytes, 0x7E00, 2, Q);
  case ElementType::BFloat16:
    return Dev.fill(Base, Bytes, 0x7FC0, 2, Q);
  default:
    return Dev.fill(Base, Bytes, 0xA5, 1, Q);
  }
}

llvm::Error Executor::Impl::runStep(uint64_t S) {
  const Step &St = P.Sched.Steps[S];
  StepCall &C = Calls[S];
  Shadow.beforeStep(S);
  for (TensorId T : St.Reads)
    touch(T);
  for (TensorId T : St.Writes)
    touch(T);
  const StepLaunch &L = Launch.Steps[S];
  for (unsigned E : L.Waits)
    if (llvm::Error Err = Dev.wait(EventBase + E, L.Q))
      return Err;
  // --profile on an asynchronous device: the step's own work lies between
  // these two marks (collectStepTimes).
  unsigned Timer = TimerBase + 2 + 2 * unsigned(S);
  if (TimedSteps)
    if (llvm::Error E = Dev.mark(Timer, L.Q))
      return E;
  if (C.OnHost)
    for (TensorId T : C.Upload)
      if (llvm::Error E =
              Dev.writeSmall(Addr[T], HostVal[T].get(), tensorBytes(T), L.Q))
        return E;
  bool Skip = false;
  if (!C.Guards.empty()) {
    llvm::Expected<bool> Hold = guardsHold(C, L.Q);
    if (!Hold)
      return Hold.takeError();
    Skip = !*Hold;
  }
  switch (C.OnHost || Skip ? CallKind::Nothing : C.Kind) {
  case CallKind::Kernel: {
    if (!C.DynIn.empty() || !C.DynOut.empty())
      if (llvm::Error E = refreshDims(C))
        return E;
    if (llvm::Error E = checkStepShapes(S))
      return E;
    if (C.Host) {
      if (llvm::Error E = runHostStep(S, L.Q))
        return E;
      break;
    }
    KernelContext Ctx{G,           G.Nodes[St.Node], C.In, C.Out,
                      C.Workspace, C.WorkspaceBytes, Pool};
    Ctx.HostInputs = C.HostIn;
    if (llvm::Error E = callKernel(S, Ctx))
      return E;
    break;
  }
  case CallKind::Prefetch:
    for (TensorId T : St.Writes) {
      touchHost(T);
      if (llvm::Error E = Dev.copy(Addr[T], HostAddr[T], tensorBytes(T),
                                   CopyKind::HostToDevice, L.Q))
        return E;
    }
    break;
  case CallKind::Offload:
    for (TensorId T : St.Reads) {
      touchHost(T);
      if (llvm::Error E = Dev.copy(HostAddr[T], Addr[T], tensorBytes(T),
                                   CopyKind::DeviceToHost, L.Q))
        return E;
    }
    break;
  case CallKind::Copy: {
    // The Constant's graph value holds what the loader put there.
    TensorId From = G.Nodes[St.Node].Outputs[0];
    if (llvm::Error E =
            Dev.copy(Addr[St.Writes[0]], Addr[From], tensorBytes(From),
                     CopyKind::DeviceToDevice, L.Q))
      return E;
    break;
  }
  case CallKind::Nothing:
    break;
  }
  if (TimedSteps)
    if (llvm::Error E = Dev.mark(Timer + 1, L.Q))
      return E;
  if (Opts.Poison)
    for (BufferId B : C.Dying)
      if (llvm::Error E = poison(B, L.Q))
        return E;
  Shadow.afterStep(S);
  if (L.Record >= 0)
    if (llvm::Error E = Dev.record(EventBase + unsigned(L.Record), L.Q))
      return E;
  return llvm::Error::success();
}

// Calls step S's kernel (on float copies for a half step of a float
// kernel), its data-dependent outputs' dims reported into C.Actual and
// taken from there.
llvm::Error Executor::Impl::callKernel(uint64_t S, KernelContext &Ctx) {
  StepCall &C = Calls[S];
  for (size_t I = 0; I < C.Actual.size(); ++I)
    C.Actual[I] = C.Out[I].Dims; // inline storage: no allocation
  if (!C.Actual.empty())
    Ctx.ActualDims = C.Actual.data();
  if (llvm::Error E =
          C.HalfCast ? runHalfInFloat(Ctx, *C.K, *C.HalfCast) : C.K->Run(Ctx))
    return prependContext(std::move(E), G.SourcePath + ": ");
  if (!C.Actual.empty())
    return takeActualDims(S);
  return llvm::Error::success();
}

// A condition is a bool scalar (the OomplanIf shape rule checks it),
// written by a step that ran. On a device the host cannot touch it is the
// value computed on the host (HostShapes.cpp), else a byte copied back
// after the work queued so far: a wait for the device, so a run with such
// guards is never recorded (runStepsOrReplay).
llvm::Expected<bool> Executor::Impl::guardsHold(const StepCall &C, Queue Q) {
  for (const auto &[T, WhenTrue] : C.Guards) {
    bool V = false;
    if (Dev.hostVisible()) {
      V = Addr[T] && *Addr[T] != 0;
    } else if (auto It = HostVal.find(T); It != HostVal.end()) {
      V = *It->second.get() != 0;
    } else {
      if (!GuardByte)
        GuardByte = hostBuffer(64);
      if (!GuardByte)
        return makeIOError("cannot allocate a host byte to read a condition");
      if (llvm::Error E =
              Dev.copy(GuardByte.get(), Addr[T], 1, CopyKind::DeviceToHost, Q))
        return std::move(E);
      if (llvm::Error E = Dev.synchronize())
        return std::move(E);
      V = GuardByte.get()[0] != 0;
    }
    if (V != WhenTrue)
      return false;
  }
  return true;
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
    if (upperBound(T) || reported(T))
      Dims[T] = Got.Dims;
    // A reported axis binds its size's symbol (which stands for size + 1).
    if (reported(T))
      for (const auto &[Axis, Sym] : Info.Reported[T])
        if (Axis < Got.Dims.size() && Sym < RunBindings.size())
          RunBindings[Sym] = Got.Dims[Axis] + 1;
  }
  return llvm::Error::success();
}

llvm::Error Executor::Impl::refreshDims(StepCall &C) {
  auto Eval = [&](TensorId T) -> llvm::Expected<bool> {
    llvm::SmallVector<int64_t, 6> D;
    for (const SymExpr &E : Info.SymbolicDims[T]) {
      llvm::Expected<int64_t> V = E.evaluate(RunBindings, Info.Symbols);
      if (!V) { // not reported yet: a value of the branch not taken
        llvm::consumeError(V.takeError());
        return false;
      }
      D.push_back(*V);
    }
    TensorRef R;
    R.Type = Info.Types[T];
    R.Dims = D;
    if (llvm::any_of(D, [](int64_t X) { return X < 0; }) ||
        R.bytes() > tensorBytes(T))
      return makeInternalError("tensor '" + P.Sched.Tensors[T].Name +
                               "': its data-dependent dims exceed the "
                               "planned upper bound");
    Dims[T] = D;
    return true;
  };
  for (auto [Dyn, Refs] :
       {std::make_pair(&C.DynIn, &C.In), std::make_pair(&C.DynOut, &C.Out)})
    for (auto &[Slot, T] : *Dyn) {
      llvm::Expected<bool> Ok = Eval(T);
      if (!Ok)
        return Ok.takeError();
      if (*Ok)
        (*Refs)[Slot].Dims = Dims[T];
    }
  return llvm::Error::success();
}

// Later work on To waits for the work queued so far on From.
static llvm::Error joinQueues(Device &D, unsigned Event, Queue From, Queue To) {
  if (llvm::Error E = D.record(Event, From))
    return E;
  return D.wait(Event, To);
}

llvm::Error Executor::run() {
  std::optional<uint64_t> FreeBefore;
  if (!I->Ran)
    FreeBefore = I->Dev.freeBytes();
  if (llvm::Error E = I->runOnce())
    return E;
  // Measured up to the run after the recording one: later runs replay and
  // allocate nothing, and a driver call per run would bias warm timings.
  std::optional<uint64_t> FreeAfter;
  if (I->MeasuredRuns++ < 3)
    FreeAfter = I->Dev.freeBytes();
  if (!I->Ran) {
    if (FreeBefore && FreeAfter)
      I->FirstRunDrop = *FreeBefore > *FreeAfter ? *FreeBefore - *FreeAfter : 0;
    I->FreeAfterFirst = FreeAfter;
    I->Ran = true;
  } else if (I->FreeAfterFirst && FreeAfter) {
    // Nothing but the libraries (and a recording) may take memory after
    // the first run: the plan's regions are all there is.
    uint64_t Drop =
        *I->FreeAfterFirst > *FreeAfter ? *I->FreeAfterFirst - *FreeAfter : 0;
    I->LaterRunsDrop = std::max(I->LaterRunsDrop.value_or(0), Drop);
  }
  return llvm::Error::success();
}

llvm::Error Executor::Impl::runOnce() {
  Impl *I = this;
  RunBindings = Info.Bindings;
  if (!Dev.hostVisible() && !HostShapesDone)
    planHostShapes();
  // The caller wrote the inputs before the run.
  for (ValueId V : I->G.Inputs)
    if (V < I->P.Sched.Tensors.size())
      I->touch(V);
  for (TensorId T : I->MirrorIn)
    if (llvm::Error E =
            I->Dev.copy(I->Addr[T], I->Mirror[T].get(), I->tensorBytes(T),
                        CopyKind::HostToDevice, Queue::Compute))
      return E;
  unsigned JoinIn = I->EventBase + I->Launch.NumEvents, JoinOut = JoinIn + 1;
  if (!I->MirrorIn.empty())
    if (llvm::Error E = joinQueues(I->Dev, JoinIn, Queue::Compute, Queue::Copy))
      return E;
  // The steps' own time: the device's timers where it runs asynchronously
  // (from after the inputs' copies to after both queues' steps, before the
  // outputs' copies), else this clock (the steps are done when
  // runStepsOrReplay returns).
  bool Async = !I->Dev.hostVisible();
  auto Begin = std::chrono::steady_clock::now();
  if (Async)
    if (llvm::Error E = I->Dev.mark(I->TimerBase, Queue::Compute))
      return E;
  I->Shadow.beginRun();
  llvm::Error StepsError = I->runStepsOrReplay();
  I->Shadow.endRun(); // a failed step too: the caller reads the outputs
  if (StepsError)
    return StepsError;
  I->StepsSeconds.reset();
  if (!Async)
    I->StepsSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Begin)
            .count();
  // Copies out on the compute queue, after both queues' steps; so is the
  // steps' end mark (offloads count as steps).
  if (!I->MirrorOut.empty() || Async)
    if (llvm::Error E =
            joinQueues(I->Dev, JoinOut, Queue::Copy, Queue::Compute))
      return E;
  if (Async)
    if (llvm::Error E = I->Dev.mark(I->TimerBase + 1, Queue::Compute))
      return E;
  for (TensorId T : I->MirrorOut) {
    TensorRef R = I->ref(T);
    if (llvm::Error E = I->Dev.copy(I->Mirror[T].get(), I->Addr[T], R.bytes(),
                                    CopyKind::DeviceToHost, Queue::Compute))
      return E;
  }
  if (llvm::Error E = I->Dev.synchronize())
    return E;
  if (Async) {
    I->StepsSeconds = I->Dev.secondsBetween(I->TimerBase, I->TimerBase + 1);
    I->collectStepTimes();
  }
  return llvm::Error::success();
}

std::optional<double> Executor::lastStepsSeconds() const {
  return I->StepsSeconds;
}

// The first run goes step by step (libraries load their kernels lazily);
// the second records its steps where the device can (ExecOptions::Record)
// and then replays the recording, as does every later run. A recording
// that fails (some kernel waits for the device: a value read back) is
// dropped, and that run and all later ones go step by step.
llvm::Error Executor::Impl::runStepsOrReplay() {
  if (Recording) {
    // --profile: the recording marks each step's timers again.
    TimedSteps = Opts.Profile && !Dev.hostVisible();
    return Dev.replay(*Recording);
  }
  // Data-dependent dims and conditions read back are decided on the host
  // during the run, and a host step waits for the device: nothing a replay
  // could repeat.
  bool Upper = llvm::any_of(Calls, [](const StepCall &C) {
    return !C.Actual.empty() || !C.Guards.empty() || C.Host;
  });
  if (!Ran || !Opts.Record || RecordFailed || Upper || !Dev.canRecord())
    return runSteps();
  if (llvm::Error E = Dev.beginRecording()) {
    llvm::consumeError(std::move(E));
    RecordFailed = true;
    return runSteps();
  }
  llvm::Error StepError = runSteps();
  auto Id = Dev.endRecording();
  // The steps' begin mark again, outside the capture: the device was idle
  // while the host recorded (and instantiated) the steps, and that time is
  // not the steps'.
  if (llvm::Error E = Dev.mark(TimerBase, Queue::Compute)) {
    llvm::consumeError(std::move(StepError));
    if (!Id)
      llvm::consumeError(Id.takeError());
    else
      Dev.dropRecording(*Id);
    return E;
  }
  if (StepError || !Id) {
    llvm::consumeError(std::move(StepError));
    if (!Id)
      llvm::consumeError(Id.takeError());
    else
      Dev.dropRecording(*Id); // recorded, but a step failed while it did
    RecordFailed = true;
    return runSteps(); // nothing ran while recording
  }
  Recording = *Id; // runSteps left TimedSteps set under --profile
  return Dev.replay(*Id);
}

llvm::Error Executor::Impl::runSteps() {
  if (!Opts.Profile) {
    for (uint64_t S = 0; S < Calls.size(); ++S)
      if (llvm::Error E = runStep(S))
        return E;
    return llvm::Error::success();
  }
  // Sized here, not in create(), so that a run without --profile has no
  // such vectors at all.
  StepSeconds.resize(Calls.size(), 0);
  StepCalls.resize(Calls.size(), 0);
  // An asynchronous device: runStep marks two timers around each step's
  // work, read once the run is done (collectStepTimes).
  if (!Dev.hostVisible()) {
    TimedSteps = true; // runStep marks the timers
    for (uint64_t S = 0; S < Calls.size(); ++S)
      if (llvm::Error E = runStep(S))
        return E;
    return llvm::Error::success();
  }
  using Clock = std::chrono::steady_clock;
  for (uint64_t S = 0; S < Calls.size(); ++S) {
    Clock::time_point T0 = Clock::now();
    if (llvm::Error E = runStep(S))
      return E;
    StepSeconds[S] += std::chrono::duration<double>(Clock::now() - T0).count();
    ++StepCalls[S];
  }
  ++ProfiledRuns;
  return llvm::Error::success();
}

DeviceUse Executor::deviceUse() const {
  DeviceUse U;
  U.Device = I->Dev.name().str();
  U.Overhead = I->Dev.overhead();
  U.AllocatedBytes = I->DeviceBytes;
  U.MeasuredBytes = I->MeasuredBytes;
  U.HostBytes = I->P.HostBytes;
  U.FirstRunDropBytes = I->FirstRunDrop;
  U.LaterRunsDropBytes = I->LaterRunsDrop;
  std::map<std::string, unsigned> Host;
  for (uint64_t S = 0; S < I->Calls.size(); ++S)
    if (I->Calls[S].Host && !I->Calls[S].OnHost) // not shape arithmetic
      ++Host[I->G.Nodes[I->P.Sched.Steps[S].Node].OpType];
  U.HostOps.assign(Host.begin(), Host.end());
  U.HostStagingBytes = I->StagingBytes;
  U.HostWeightBytes = I->HostWeightBytes;
  return U;
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
