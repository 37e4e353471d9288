//===- LaunchPlan.cpp - queues and events for a plan's steps --------------===//
//
// One forward pass over the steps (LaunchPlan.h states the rule). Each queue
// keeps the accesses of the other queue's steps that it is not yet ordered
// after; a step scans that list for conflicts, waits for the latest
// conflicting step, and drops every entry that wait orders. The copy queue
// runs few steps, so the compute queue's list stays short; the copy
// queue's list holds the compute steps since its last wait.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/LaunchPlan.h"

using namespace oomplan;
using namespace oomplan::runtime;

Queue runtime::stepQueue(StepKind K) {
  return K == StepKind::Prefetch || K == StepKind::Offload ? Queue::Copy
                                                           : Queue::Compute;
}

std::vector<llvm::SmallVector<BufferId, 2>>
runtime::poisonedAfter(const Plan &P, bool Unplanned) {
  std::vector<llvm::SmallVector<BufferId, 2>> Out(P.Sched.Steps.size());
  for (BufferId B = 0; B < P.Life.Buffers.size(); ++B) {
    const LiveBuffer &LB = P.Life.Buffers[B];
    bool Arena = Unplanned || P.RegionOf[B] == Region::Arena;
    if (Arena && LB.Kind != TensorKind::Weight &&
        LB.Kind != TensorKind::Constant && LB.EndStep > 0 &&
        LB.EndStep < P.Sched.Steps.size())
      Out[LB.EndStep - 1].push_back(B);
  }
  return Out;
}

std::vector<llvm::SmallVector<Access, 6>>
runtime::stepAccesses(const Plan &P, bool Unplanned, bool Poison) {
  const Schedule &S = P.Sched;
  std::vector<llvm::SmallVector<Access, 6>> Out(S.Steps.size());
  auto Device = [&](TensorId T, bool Write) {
    Access A;
    A.Write = Write;
    if (Unplanned) {
      A.Begin = T;
      A.End = uint64_t(T) + 1;
      return A;
    }
    BufferId B = P.Life.BufferOf[T];
    A.R = P.RegionOf[B];
    A.Begin = P.OffsetOf[B];
    A.End = A.Begin + P.Life.Buffers[B].SizeBytes;
    return A;
  };
  auto Home = [&](TensorId T, bool Write) {
    Access A;
    A.R = Region::Host;
    A.Write = Write;
    A.Begin = P.HostOffsetOf.size() > T ? P.HostOffsetOf[T] : 0;
    A.End = A.Begin + S.Tensors[T].SizeBytes;
    return A;
  };
  for (size_t I = 0; I < S.Steps.size(); ++I) {
    const Step &St = S.Steps[I];
    for (TensorId T : St.Reads) {
      Out[I].push_back(Device(T, false));
      if (St.Kind == StepKind::Offload && S.Tensors[T].HostHome)
        Out[I].push_back(Home(T, true));
    }
    for (TensorId T : St.Writes) {
      Out[I].push_back(Device(T, true));
      if (St.Kind == StepKind::Prefetch && S.Tensors[T].HostHome)
        Out[I].push_back(Home(T, false));
    }
  }
  // The executor fills with the buffer's root tensor and its bytes
  // (Executor::Impl::poison), as Device() places the root.
  if (Poison) {
    auto Dying = poisonedAfter(P, Unplanned);
    for (size_t I = 0; I < S.Steps.size(); ++I)
      for (BufferId B : Dying[I])
        Out[I].push_back(Device(P.Life.Buffers[B].Root, true));
  }
  return Out;
}

static bool conflict(const Access &A, const Access &B) {
  return (A.Write || B.Write) && A.R == B.R && A.Begin < B.End &&
         B.Begin < A.End;
}

LaunchPlan
runtime::planLaunches(llvm::ArrayRef<llvm::SmallVector<Access, 6>> Accesses,
                      llvm::ArrayRef<Queue> Queues) {
  LaunchPlan L;
  L.Steps.resize(Accesses.size());
  struct Pending {
    uint64_t Step;
    Access A;
  };
  // Pend[Q]: accesses of the other queue's steps that Q is not yet ordered
  // after, in step order.
  std::vector<Pending> Pend[NumQueues];
  for (uint64_t S = 0; S < Accesses.size(); ++S) {
    unsigned Q = unsigned(Queues[S]), Other = 1 - Q;
    L.Steps[S].Q = Queues[S];
    int64_t Latest = -1;
    for (const Pending &E : Pend[Q])
      if (int64_t(E.Step) > Latest)
        for (const Access &A : Accesses[S])
          if (conflict(A, E.A)) {
            Latest = int64_t(E.Step);
            break;
          }
    if (Latest >= 0) {
      StepLaunch &Src = L.Steps[Latest];
      if (Src.Record < 0)
        Src.Record = int(L.NumEvents++);
      L.Steps[S].Waits.push_back(unsigned(Src.Record));
      llvm::erase_if(
          Pend[Q], [&](const Pending &E) { return int64_t(E.Step) <= Latest; });
    }
    for (const Access &A : Accesses[S])
      Pend[Other].push_back({S, A});
  }
  return L;
}

LaunchPlan runtime::planLaunches(const Plan &P, bool Unplanned, bool Poison) {
  std::vector<Queue> Queues;
  for (const Step &St : P.Sched.Steps)
    Queues.push_back(stepQueue(St.Kind));
  return planLaunches(stepAccesses(P, Unplanned, Poison), Queues);
}
