//===- ActivationOffload.cpp - Offload and Prefetch steps for saved values ===//
//
// See ActivationOffload.h. Times come from the cost model's stall-free
// timeline of S (StartAt); the copy engines are modelled as in Simulate.cpp,
// one per direction, first come first served. Prefetches are placed by the
// scheduler weight streaming uses too (TransferSchedule.h).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/ActivationOffload.h"
#include "oomplan/Fit/Recompute.h"
#include "oomplan/Fit/TransferSchedule.h"
#include <algorithm>

using namespace oomplan;

namespace {
struct Use {
  size_t Producer = SIZE_MAX, LastFwd = 0, FirstPost = SIZE_MAX;
  unsigned Writers = 0;
  bool ViewOut = false;
};

std::vector<Use> usesOf(const Schedule &S, size_t End) {
  std::vector<Use> U(S.Tensors.size());
  for (size_t I = 0; I < S.Steps.size(); ++I) {
    const Step &St = S.Steps[I];
    for (TensorId R : St.Reads) {
      if (I < End)
        U[R].LastFwd = I;
      else
        U[R].FirstPost = std::min(U[R].FirstPost, I);
    }
    for (size_t J = 0; J < St.Writes.size(); ++J) {
      Use &W = U[St.Writes[J]];
      if (W.Producer == SIZE_MAX)
        W.Producer = I;
      ++W.Writers;
      W.ViewOut |= J == 0 && St.ViewOf >= 0;
    }
  }
  return U;
}
} // namespace

std::vector<TensorId> oomplan::offloadableActivations(const Schedule &S) {
  size_t End = forwardEnd(S);
  std::vector<Use> U = usesOf(S, End);
  std::vector<std::pair<double, TensorId>> C;
  for (TensorId T = 0; T < S.Tensors.size(); ++T) {
    const ScheduleTensor &X = S.Tensors[T];
    const Use &W = U[T];
    if ((X.Kind != TensorKind::Activation && X.Kind != TensorKind::Gradient) ||
        X.HostHome || X.SizeBytes == 0 || W.Producer >= End || W.Writers != 1 ||
        W.ViewOut || W.FirstPost == SIZE_MAX)
      continue;
    size_t Off = std::max(W.LastFwd, W.Producer);
    C.push_back({static_cast<double>(X.SizeBytes) *
                     static_cast<double>(W.FirstPost - Off),
                 T});
  }
  std::stable_sort(C.begin(), C.end(),
                   [](auto &A, auto &B) { return A.first > B.first; });
  std::vector<TensorId> Out;
  for (auto &P : C)
    Out.push_back(P.second);
  return Out;
}

namespace {
struct Copy {
  TensorId T, Back = 0;
  size_t OffloadAt = 0, PrefetchAt = 0, FirstPost = 0;
};

// Offload positions: each copy starts when its tensor is written (after
// the earlier copies), its step is the first that starts after the copy
// ends, not before the last forward read + 1, not after End. Eager: right
// after the last forward read (compute waits for the link if it is behind:
// memory traded for time, for when the link cannot keep up).
void placeOffloads(std::vector<Copy> &Cs, const std::vector<Use> &U,
                   const std::vector<double> &StartAt, const Schedule &S,
                   const CostModel &Cost, size_t End, bool Eager) {
  std::stable_sort(Cs.begin(), Cs.end(), [&](const Copy &A, const Copy &B) {
    return U[A.T].Producer < U[B.T].Producer;
  });
  double Free = 0;
  for (Copy &C : Cs) {
    const Use &W = U[C.T];
    double Done = std::max(StartAt[W.Producer + 1], Free) +
                  Cost.transferSeconds(S.Tensors[C.T].SizeBytes);
    Free = Done;
    size_t At =
        std::lower_bound(StartAt.begin(), StartAt.begin() + End + 1, Done) -
        StartAt.begin();
    size_t Earliest = std::max(W.LastFwd, W.Producer) + 1;
    C.OffloadAt = Eager ? Earliest : std::clamp(At, Earliest, End);
  }
}

// Prefetch positions: the shared host-to-device scheduler (as late as the
// link allows, never before End, the loss step).
void placePrefetches(std::vector<Copy> &Cs, const std::vector<double> &StartAt,
                     const Schedule &S, const CostModel &Cost, size_t End,
                     unsigned MaxAhead) {
  std::stable_sort(Cs.begin(), Cs.end(), [](const Copy &A, const Copy &B) {
    return A.FirstPost < B.FirstPost;
  });
  std::vector<HostToDeviceCopy> H;
  for (const Copy &C : Cs)
    H.push_back({S.Tensors[C.T].SizeBytes, C.FirstPost});
  std::vector<size_t> Issue =
      scheduleHostToDevice(H, StartAt, Cost, End, MaxAhead);
  for (size_t J = 0; J < Cs.size(); ++J)
    Cs[J].PrefetchAt = Issue[J];
}
} // namespace

Schedule oomplan::offloadActivations(const Schedule &S,
                                     llvm::ArrayRef<TensorId> Ts,
                                     const CostModel &Cost, unsigned MaxAhead) {
  size_t End = forwardEnd(S);
  std::vector<Use> U = usesOf(S, End);
  std::vector<double> StartAt = stallFreeStartTimes(S, Cost);
  Schedule Out;
  Out.Tensors = S.Tensors;
  std::vector<Copy> Cs;
  std::vector<TensorId> BackOf(S.Tensors.size(), UINT32_MAX);
  for (TensorId T : Ts) {
    ScheduleTensor Back = S.Tensors[T];
    Back.Name = "prefetched(" + Back.Name + ")";
    Back.Value = NoId;
    Back.Kind = TensorKind::Activation;
    Back.HostHome = true;
    Out.Tensors.push_back(std::move(Back));
    BackOf[T] = static_cast<TensorId>(Out.Tensors.size() - 1);
    Cs.push_back({T, BackOf[T], 0, 0, U[T].FirstPost});
  }
  placeOffloads(Cs, U, StartAt, S, Cost, End, MaxAhead != UINT32_MAX);
  placePrefetches(Cs, StartAt, S, Cost, End, MaxAhead);
  // Inserted before step I: offloads (in production order), then prefetches.
  std::vector<std::vector<Step>> Before(S.Steps.size() + 1);
  for (const Copy &C : Cs) {
    Step O;
    O.Kind = StepKind::Offload;
    O.Op = "Offload";
    O.Reads = {C.T};
    Before[C.OffloadAt].push_back(std::move(O));
  }
  for (const Copy &C : Cs) {
    Step P;
    P.Kind = StepKind::Prefetch;
    P.Op = "Prefetch";
    P.Writes = {C.Back};
    Before[C.PrefetchAt].push_back(std::move(P));
  }
  for (size_t I = 0; I <= S.Steps.size(); ++I) {
    for (Step &X : Before[I])
      Out.Steps.push_back(std::move(X));
    if (I == S.Steps.size())
      break;
    Step St = S.Steps[I];
    if (I >= End)
      for (TensorId &R : St.Reads)
        if (BackOf[R] != UINT32_MAX)
          R = BackOf[R];
    Out.Steps.push_back(std::move(St));
  }
  return Out;
}
