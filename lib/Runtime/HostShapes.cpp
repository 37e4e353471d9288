//===- HostShapes.cpp - shape values computed on the host -----------------===//
//
// On a device the host cannot touch (CUDA), the graph's shape arithmetic
// (Shape, Gather, Unsqueeze, Concat, Cast... on a few int64s) would be
// hundreds of tiny kernel launches per run, and some results (Slice's
// starts) are read back by the host, each a wait for the device. Every
// such value is fixed for a plan: its inputs are constants, small weights
// or only dims, which the bindings fix. So each step whose inputs are all
// known on the host and whose outputs are small (MaxHostValueBytes) runs
// once, with the CPU kernel, before the first run; the run skips it, and
// copies a result to the device (Device::writeSmall, no wait) only where a
// device kernel reads its bytes (an input without its Kernel::DeviceUnread
// bit, an offload, a graph output). Kernels get the host values of their
// inputs in KernelContext::HostInputs.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "oomplan/Runtime/Backend.h"
#include <cstring>

using namespace oomplan;
using namespace oomplan::runtime;

// Which steps run on the host, and which of their results the device needs
// (see the header comment). Done once, before the first run on a device
// the host cannot touch, after the weights are loaded.
void Executor::Impl::planHostShapes() {
  HostShapesDone = true;
  const Schedule &Sc = P.Sched;
  std::vector<int64_t> HostProducer(Sc.Tensors.size(), -1);
  for (uint64_t S = 0; S < Calls.size(); ++S) {
    StepCall &C = Calls[S];
    C.OnHost = false;
    C.Upload.clear();
    if (C.Kind == CallKind::Copy) { // a recomputed Constant
      TensorId From = G.Nodes[Sc.Steps[S].Node].Outputs[0];
      auto It = HostVal.find(From);
      if (It != HostVal.end() && tensorBytes(From) <= MaxHostValueBytes) {
        HostBuffer B = hostBuffer(tensorBytes(From));
        std::memcpy(B.get(), It->second.get(), tensorBytes(From));
        HostVal[Sc.Steps[S].Writes[0]] = std::move(B);
      }
      continue;
    }
    if (C.Kind == CallKind::Kernel && evaluateOnHost(S)) {
      C.OnHost = true;
      for (TensorId T : Sc.Steps[S].Writes)
        HostProducer[T] = int64_t(S);
    }
  }
  // A host result goes to the device where a device step reads its bytes:
  // a kernel input without its DeviceUnread bit, an offload, a graph
  // output (copied out after the run).
  std::vector<bool> Needed(Sc.Tensors.size(), false);
  for (uint64_t S = 0; S < Calls.size(); ++S) {
    const StepCall &C = Calls[S];
    const Step &St = Sc.Steps[S];
    // A host step reads a host value where there is one (runHostStep).
    if (C.OnHost || C.Host)
      continue;
    if (C.Kind != CallKind::Kernel) {
      for (TensorId T : St.Reads)
        Needed[T] = true;
      continue;
    }
    size_t R = 0;
    const Node &Nd = G.Nodes[St.Node];
    for (size_t I = 0; I < Nd.Inputs.size(); ++I) {
      if (Nd.Inputs[I] == NoId)
        continue;
      TensorId T = St.Reads[R++];
      if (I >= 32 || !(C.K->DeviceUnread & (1u << I)))
        Needed[T] = true;
    }
  }
  for (ValueId V : G.Outputs)
    if (V < Needed.size())
      Needed[V] = true;
  for (TensorId T = 0; T < Sc.Tensors.size(); ++T)
    if (HostProducer[T] >= 0 && Needed[T])
      Calls[HostProducer[T]].Upload.push_back(T);
  // Kernels read the host values of their inputs (KernelContext::HostInputs).
  for (uint64_t S = 0; S < Calls.size(); ++S) {
    StepCall &C = Calls[S];
    C.HostIn.clear();
    if (C.Kind != CallKind::Kernel || C.OnHost)
      continue;
    const Step &St = Sc.Steps[S];
    const Node &Nd = G.Nodes[St.Node];
    size_t R = 0;
    bool Any = false;
    for (size_t I = 0; I < Nd.Inputs.size(); ++I) {
      TensorRef H;
      if (Nd.Inputs[I] != NoId) {
        TensorId T = St.Reads[R++];
        auto It = HostVal.find(T);
        if (It != HostVal.end()) {
          H = ref(T);
          H.Data = It->second.get();
          Any = true;
        }
      }
      C.HostIn.push_back(H);
    }
    if (!Any)
      C.HostIn.clear();
  }
}

// Runs step S's node with the CPU kernel on host values, when every input
// is known on the host (or only its dims matter: Shape, Size) and every
// output is small; keeps the outputs in HostVal. False: S runs on the
// device as planned.
bool Executor::Impl::evaluateOnHost(uint64_t S) {
  const Step &St = P.Sched.Steps[S];
  const StepCall &C = Calls[S];
  const Node &Nd = G.Nodes[St.Node];
  if (St.Kind != StepKind::Compute && St.Kind != StepKind::Recompute)
    return false;
  // A step of an If branch runs here only when its conditions are known
  // here and hold (a branch not taken may be invalid for these values).
  for (const auto &[T, WhenTrue] : C.Guards) {
    auto It = HostVal.find(T);
    if (It == HostVal.end() || (*It->second.get() != 0) != WhenTrue)
      return false;
  }
  // Nothing of data-dependent size, read or written: its dims, and so a
  // Shape of it, are known only during a run.
  for (TensorId T : St.Writes)
    if (upperBound(T) || reported(T) || dynamic(T) || !Info.Present[T] ||
        tensorBytes(T) > MaxHostValueBytes)
      return false;
  for (TensorId T : St.Reads)
    if (dynamic(T) || reported(T) || upperBound(T))
      return false;
  bool DimsOnly = Nd.OpType == "Shape" || Nd.OpType == "Size";
  static const char Dummy[64] = {};
  llvm::SmallVector<TensorRef, 4> In;
  size_t R = 0;
  for (size_t I = 0; I < Nd.Inputs.size(); ++I) {
    TensorRef H;
    if (Nd.Inputs[I] != NoId) {
      TensorId T = St.Reads[R++];
      H = ref(T);
      auto It = HostVal.find(T);
      if (It != HostVal.end())
        H.Data = It->second.get();
      else if (DimsOnly && I == 0)
        H.Data = const_cast<char *>(Dummy); // never read: dims only
      else
        return false;
    }
    In.push_back(H);
  }
  auto CPU = backendKernels("cpu");
  if (!CPU) {
    llvm::consumeError(CPU.takeError());
    return false;
  }
  const ops::OpInfo *Op = ops::lookupOp(Nd.OpType);
  if (!Op || !(*CPU)->get(ops::opCode(*Op)))
    return false;
  const Kernel &K = *(*CPU)->get(ops::opCode(*Op));
  if (!K.Types.empty() && !In.empty() && In[0].present() &&
      !llvm::is_contained(K.Types, In[0].Type))
    return false;
  llvm::SmallVector<TensorRef, 2> Out;
  llvm::SmallVector<HostBuffer, 2> Bufs;
  size_t W = 0;
  for (ValueId V : Nd.Outputs) {
    TensorRef O;
    if (V != NoId) {
      O = ref(St.Writes[W++]);
      Bufs.push_back(hostBuffer(O.bytes()));
      O.Data = Bufs.back().get();
    }
    Out.push_back(O);
  }
  HostBuffer Scratch;
  uint64_t ScratchBytes = K.Workspace ? K.Workspace(Nd, In, Out) : 0;
  if (ScratchBytes) {
    if (ScratchBytes > (uint64_t(1) << 20))
      return false;
    Scratch = hostBuffer(ScratchBytes);
  }
  KernelContext Ctx{G, Nd, In, Out, Scratch.get(), ScratchBytes, Pool};
  llvm::Error E = K.Run(Ctx);
  if (E) {
    llvm::consumeError(std::move(E)); // the device kernel will run it
    return false;
  }
  W = 0;
  size_t B = 0;
  for (ValueId V : Nd.Outputs)
    if (V != NoId)
      HostVal[St.Writes[W++]] = std::move(Bufs[B++]);
  return true;
}
