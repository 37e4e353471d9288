//===- HostSteps.cpp - steps a device cannot run, run on the host ---------===//
//
// On a device the host cannot touch (CUDA), two kinds of step run on the
// host with the CPU kernel instead (ExecOptions::HostSteps):
// - a step whose op, or whose input type, has no kernel on the device
//   (NonMaxSuppression, Unique, Det... on CUDA), or whose node the
//   device's kernel refuses (Kernel::Refuses);
// - a step whose kernel decides a data-dependent size (Unique, Compress,
//   NonMaxSuppression, TopK with a run-time k): later steps are sized by
//   what it reports, so the host must know it before it queues them. A
//   device kernel that reads the size back itself (Kernel::ReportsSizes:
//   CUDA's NonZero, Compress, TopK) runs on the device instead, with a
//   wait of its own but no copy of its operands.
// This is what other runtimes do with an op their device lacks (ONNX
// Runtime's CUDA provider places it on the CPU provider with copies
// around it): the graph runs whole, slower by a wait per host step,
// rather than not at all.
//
// A host step at each run: its inputs are copied from the device into one
// host staging buffer (a value already known on the host, HostShapes.cpp,
// is used as it is), the device is synchronized (both queues: the launch
// plan's waits then need nothing more), the CPU kernel runs on the host
// copies with its scratch in the same buffer, and its outputs (the dims it
// reported, for a data-dependent one) are copied back to their planned
// device bytes on the step's queue. The plan is unchanged: the step's
// tensors keep their device offsets, and no device memory is added.
// Staging is host memory, allocated once when the executor is created, at
// the largest host step's need; a run allocates nothing. A weight or
// constant a host step reads is not copied back at each run: loadWeights
// keeps its host copy (HostWeight), since no run writes it.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "oomplan/Runtime/Backend.h"
#include "oomplan/Runtime/HalfInFloat.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/DenseSet.h"

using namespace oomplan;
using namespace oomplan::runtime;

namespace {
// Each operand starts on a 64-byte boundary of the staging buffer, as
// hostBuffer's own allocations do (the CPU kernels' vector loads).
uint64_t staged(uint64_t Bytes) { return (Bytes + 63) / 64 * 64; }
} // namespace

llvm::Expected<const Kernel *>
Executor::Impl::hostKernel(uint64_t S, llvm::Expected<const Kernel *> DeviceK) {
  StepCall &C = Calls[S];
  const Step &St = P.Sched.Steps[S];
  if (Dev.hostVisible() || !Opts.HostSteps)
    return DeviceK;
  if (DeviceK && (!ReportsSize[S] || (*DeviceK)->ReportsSizes))
    return DeviceK;
  auto CPU = backendKernels("cpu");
  if (!CPU)
    return CPU.takeError();
  auto HostK =
      findKernel(G, St.Node, **CPU,
                 C.In.empty() ? ElementType::Undefined : C.In[0].Type, "cpu");
  if (!HostK) {
    // The device's kernel (checkDataDependentOnHost then decides whether
    // its reported sizes can be left to it), or its error: neither has one.
    llvm::consumeError(HostK.takeError());
    return DeviceK;
  }
  if (!DeviceK)
    llvm::consumeError(DeviceK.takeError());
  C.Host = true;
  // The CPU kernel's scratch (float copies of half operands included), at
  // the planned dims: a data-dependent operand is smaller at a run.
  C.HostWorkspaceBytes =
      kernelWorkspace(**HostK, G.Nodes[St.Node], C.In, C.Out);
  return *HostK;
}

// Every tensor whose dims hold a data-dependent size's symbol reports it
// (takeActualDims binds it again, to the same value, after each later
// writer); the first writer of a symbol is the step whose kernel decides it.
// A data-dependent graph output nothing reads (RunInfo::UpperBound) whose
// dims have no formula is sized by its own step's kernel (with a formula,
// the sizes it uses are decided before it).
void Executor::Impl::findSizeReports() {
  ReportsSize.assign(P.Sched.Steps.size(), false);
  llvm::DenseSet<SymbolId> Seen;
  for (uint64_t S = 0; S < P.Sched.Steps.size(); ++S)
    for (TensorId T : P.Sched.Steps[S].Writes) {
      if (upperBound(T) && !dynamic(T))
        ReportsSize[S] = true;
      if (reported(T))
        for (const auto &AxisSym : Info.Reported[T])
          if (Seen.insert(AxisSym.second).second)
            ReportsSize[S] = true;
    }
}

llvm::Error Executor::Impl::checkDataDependentOnHost() const {
  if (Dev.hostVisible() ||
      llvm::none_of(Info.SymbolicDims,
                    [](const std::vector<SymExpr> &D) { return !D.empty(); }))
    return llvm::Error::success();
  for (uint64_t S = 0; S < Calls.size(); ++S) {
    const Step &St = P.Sched.Steps[S];
    if (Calls[S].Host || St.Node == NoId || !ReportsSize[S] ||
        (Calls[S].K && Calls[S].K->ReportsSizes))
      continue;
    return makeUnsupportedError(
        G.SourcePath + ": " + G.describeNode(St.Node) +
        ": its output has a data-dependent size that later steps read, and " +
        (Opts.HostSteps ? "the CPU has no kernel to run it on the host"
                        : "host steps are off") +
        "; the " + Dev.name() +
        " backend cannot run this plan (the CPU "
        "backend can)");
  }
  return llvm::Error::success();
}

bool Executor::Impl::hostStepReads(TensorId T) const {
  for (uint64_t S = 0; S < Calls.size(); ++S)
    if (Calls[S].Host && llvm::is_contained(P.Sched.Steps[S].Reads, T))
      return true;
  return false;
}

llvm::Error Executor::Impl::makeStaging() {
  StagingBytes = 0;
  bool Any = false;
  for (const StepCall &C : Calls) {
    if (!C.Host)
      continue;
    Any = true;
    uint64_t Need = staged(C.HostWorkspaceBytes);
    for (const TensorRef &R : C.In)
      if (R.present())
        Need += staged(R.bytes());
    for (const TensorRef &R : C.Out)
      if (R.present())
        Need += staged(R.bytes());
    StagingBytes = std::max(StagingBytes, Need);
  }
  Staging.reset();
  if (!Any)
    return llvm::Error::success();
  // Never null, even when every operand is empty: a null Data would read
  // as an omitted operand (TensorRef::present()).
  Staging = hostBuffer(StagingBytes);
  if (!Staging)
    return makeIOError("cannot allocate " + llvm::Twine(StagingBytes) +
                       " bytes of host memory for the steps that run on the "
                       "host");
  return llvm::Error::success();
}

llvm::Error Executor::Impl::runHostStep(uint64_t S, Queue Q) {
  StepCall &C = Calls[S];
  const Node &Nd = G.Nodes[P.Sched.Steps[S].Node];
  char *Next = Staging.get();
  auto Take = [&](uint64_t Bytes) {
    char *At = Next;
    Next += staged(Bytes);
    return At;
  };
  // The host copies, at the dims of this run (refreshDims): never more
  // than the planned dims makeStaging sized them by.
  llvm::SmallVector<TensorRef, 4> In(C.In.begin(), C.In.end()),
      Out(C.Out.begin(), C.Out.end());
  const Step &St = P.Sched.Steps[S];
  size_t Read = 0; // St.Reads holds the node's present inputs in order
  for (size_t I = 0; I < In.size(); ++I) {
    TensorId T =
        I < Nd.Inputs.size() && Nd.Inputs[I] != NoId && Read < St.Reads.size()
            ? St.Reads[Read++]
            : NoId;
    if (!In[I].present())
      continue;
    if (I < C.HostIn.size() && C.HostIn[I].present()) {
      In[I].Data = C.HostIn[I].Data; // known on the host already
      continue;
    }
    auto W = T == NoId ? HostWeight.end() : HostWeight.find(T);
    if (W != HostWeight.end()) {
      In[I].Data = W->second.get(); // a weight, as loadWeights read it
      continue;
    }
    char *H = Take(In[I].bytes());
    if (llvm::Error E =
            Dev.copy(H, In[I].Data, In[I].bytes(), CopyKind::DeviceToHost, Q))
      return E;
    In[I].Data = H;
  }
  for (TensorRef &R : Out)
    if (R.present())
      R.Data = Take(R.bytes());
  void *Scratch = C.HostWorkspaceBytes ? Take(C.HostWorkspaceBytes) : nullptr;
  // Everything queued so far is done, so the copies above are, and no
  // queued device work still reads the bytes the outputs go to.
  if (llvm::Error E = Dev.synchronize())
    return E;
  KernelContext Ctx{G, Nd, In, Out, Scratch, C.HostWorkspaceBytes, Pool};
  if (llvm::Error E = callKernel(S, Ctx))
    return E;
  // Back to the device: a data-dependent output only as far as its kernel
  // wrote (dense for the dims it reported).
  for (size_t I = 0; I < Out.size(); ++I) {
    if (!Out[I].present())
      continue;
    TensorRef Wrote = Out[I];
    if (I < C.Actual.size())
      Wrote.Dims = C.Actual[I];
    if (llvm::Error E = Dev.copy(C.Out[I].Data, Out[I].Data, Wrote.bytes(),
                                 CopyKind::HostToDevice, Q))
      return E;
  }
  return llvm::Error::success();
}
