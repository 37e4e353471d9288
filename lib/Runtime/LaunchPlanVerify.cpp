//===- LaunchPlanVerify.cpp - the launch plan's independent checker -------===//
//
// Does not reuse the planner's pending lists: it replays the launch plan
// with vector clocks (per queue, the last step of each queue known to be
// done before the queue's next step starts), then checks every pair of
// steps on different queues that touch the same bytes, one writing, in
// schedule order: the later must know the earlier is done. Pairs are taken
// between each copy-queue step and every other step, which covers every
// cross-queue pair; copy steps are few, so this is about (copy steps) x
// (steps) x accesses.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/LaunchPlan.h"
#include "oomplan/Support/Error.h"

using namespace oomplan;
using namespace oomplan::runtime;

namespace {
// Clock[Q]: the last step of queue Q ordered before this point, or -1.
struct Clock {
  int64_t Last[NumQueues] = {-1, -1};
  void join(const Clock &O) {
    for (unsigned Q = 0; Q < NumQueues; ++Q)
      Last[Q] = std::max(Last[Q], O.Last[Q]);
  }
};
} // namespace

llvm::Error
runtime::verifyLaunchPlan(llvm::ArrayRef<llvm::SmallVector<Access, 6>> Accesses,
                          const LaunchPlan &L) {
  if (L.Steps.size() != Accesses.size())
    return makeInternalError("launch plan: " + llvm::Twine(L.Steps.size()) +
                             " steps for a schedule of " +
                             llvm::Twine(Accesses.size()));
  Clock Queues[NumQueues];
  std::vector<Clock> Before(L.Steps.size()); // known done when S starts
  std::vector<std::optional<Clock>> Events(L.NumEvents);
  for (uint64_t S = 0; S < L.Steps.size(); ++S) {
    const StepLaunch &St = L.Steps[S];
    unsigned Q = unsigned(St.Q);
    for (unsigned E : St.Waits) {
      if (E >= L.NumEvents || !Events[E])
        return makeInternalError("launch plan: step " + llvm::Twine(S) +
                                 " waits for event " + llvm::Twine(E) +
                                 ", which no earlier step records");
      Queues[Q].join(*Events[E]);
    }
    Before[S] = Queues[Q];
    Queues[Q].Last[Q] = int64_t(S); // done before the queue's next step
    if (St.Record >= 0) {
      if (unsigned(St.Record) >= L.NumEvents)
        return makeInternalError("launch plan: step " + llvm::Twine(S) +
                                 " records event " + llvm::Twine(St.Record) +
                                 " of " + llvm::Twine(L.NumEvents));
      Events[St.Record] = Queues[Q];
    }
  }
  auto Conflict = [&](uint64_t A, uint64_t B) {
    for (const Access &X : Accesses[A])
      for (const Access &Y : Accesses[B])
        if ((X.Write || Y.Write) && X.R == Y.R && X.Begin < Y.End &&
            Y.Begin < X.End)
          return true;
    return false;
  };
  for (uint64_t C = 0; C < L.Steps.size(); ++C) {
    if (L.Steps[C].Q != Queue::Copy)
      continue;
    for (uint64_t S = 0; S < L.Steps.size(); ++S) {
      if (L.Steps[S].Q == Queue::Copy || !Conflict(C, S))
        continue;
      uint64_t First = std::min(C, S), Second = std::max(C, S);
      unsigned FirstQ = unsigned(L.Steps[First].Q);
      if (Before[Second].Last[FirstQ] < int64_t(First))
        return makeInternalError(
            "launch plan: steps " + llvm::Twine(First) + " and " +
            llvm::Twine(Second) +
            " touch the same bytes on different queues and no event orders "
            "them");
    }
  }
  return llvm::Error::success();
}
