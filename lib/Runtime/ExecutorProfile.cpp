//===- ExecutorProfile.cpp - --profile: each step's time, per op ----------===//
//
// What --profile measured: each step's time and calls since construction or
// resetProfile (Impl::StepSeconds, StepCalls; runSteps times a step on the
// host's clock where the host runs it, and marks two device timers around
// it otherwise, read here after the run), per step in schedule order and
// summed per op type, over the runs that were timed.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::runtime;

// --profile on an asynchronous device: runStep marked a timer on the
// step's queue after its waits and another after its work, so a step's
// time is its own work on the device: not the other queue's steps it waited
// for, nor a wait for the device after every step.
void Executor::Impl::collectStepTimes() {
  if (!TimedSteps)
    return;
  TimedSteps = false;
  // With a recording this run replayed it (runStepsOrReplay), and the step
  // timers are the recording's (CUDA: external event record nodes of the
  // graph). A device that does not set them there leaves them as an
  // earlier run set them, before this run's begin mark, or unset: then the
  // recording goes and later runs go step by step.
  if (Recording && !Calls.empty()) {
    std::optional<double> Lead = Dev.secondsBetween(TimerBase, TimerBase + 2);
    if (!Lead || *Lead < 0) {
      dropRecording();
      RecordFailed = true;
      return;
    }
  }
  for (uint64_t S = 0; S < Calls.size(); ++S) {
    unsigned Start = TimerBase + 2 + 2 * unsigned(S);
    if (std::optional<double> T = Dev.secondsBetween(Start, Start + 1))
      StepSeconds[S] += std::max(0.0, *T);
    ++StepCalls[S];
  }
  ++ProfiledRuns;
}

void Executor::resetProfile() {
  std::fill(I->StepSeconds.begin(), I->StepSeconds.end(), 0.0);
  std::fill(I->StepCalls.begin(), I->StepCalls.end(), 0);
  I->ProfiledRuns = 0;
}

unsigned Executor::profiledRuns() const { return I->ProfiledRuns; }

std::vector<StepTime> Executor::stepProfile() const {
  std::vector<StepTime> Out;
  for (uint64_t S = 0; S < I->StepSeconds.size(); ++S) {
    if (!I->StepCalls[S])
      continue;
    StepTime T;
    T.Index = S;
    switch (I->Calls[S].Kind) {
    case CallKind::Prefetch:
      T.Op = "(prefetch)";
      break;
    case CallKind::Offload:
      T.Op = "(offload)";
      break;
    case CallKind::Copy:
      T.Op = "(copy)";
      break;
    default: {
      const Node &N = I->G.Nodes[I->P.Sched.Steps[S].Node];
      T.Op = N.OpType;
      T.Node = N.Name;
    }
    }
    T.Seconds = I->StepSeconds[S];
    T.Calls = I->StepCalls[S];
    Out.push_back(std::move(T));
  }
  return Out;
}

std::vector<OpTime> Executor::opProfile() const {
  llvm::StringMap<OpTime> ByOp;
  for (const StepTime &S : stepProfile()) {
    OpTime &T = ByOp[S.Op];
    T.Op = S.Op;
    T.Seconds += S.Seconds;
    T.Calls += S.Calls;
  }
  std::vector<OpTime> Out;
  for (auto &E : ByOp)
    Out.push_back(E.second);
  llvm::sort(Out, [](const OpTime &A, const OpTime &B) {
    return A.Seconds != B.Seconds ? A.Seconds > B.Seconds : A.Op < B.Op;
  });
  return Out;
}
