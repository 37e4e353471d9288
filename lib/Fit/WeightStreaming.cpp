//===- WeightStreaming.cpp - prefetch steps for host-resident weights -----===//
//
// 1. Each weight's uses are split into clusters where two consecutive uses
//    are more than an eighth of the schedule apart; a cluster is one copy.
// 2. Copies are ordered by first use and issued by the host-to-device
//    scheduler that activation offload shares (TransferSchedule.h): as late
//    as the link allows, no more than MaxAhead copies early.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/WeightStreaming.h"
#include "oomplan/Fit/TransferSchedule.h"
#include <algorithm>
#include <map>

using namespace oomplan;

std::vector<TensorId> oomplan::streamableWeights(const Schedule &S) {
  std::vector<bool> Read(S.Tensors.size(), false);
  for (const Step &St : S.Steps)
    for (TensorId R : St.Reads)
      Read[R] = true;
  std::vector<TensorId> W;
  for (TensorId T = 0; T < S.Tensors.size(); ++T)
    if (S.Tensors[T].Kind == TensorKind::Weight && Read[T] &&
        S.Tensors[T].SizeBytes > 0)
      W.push_back(T);
  std::stable_sort(W.begin(), W.end(), [&](TensorId A, TensorId B) {
    return S.Tensors[A].SizeBytes > S.Tensors[B].SizeBytes;
  });
  return W;
}

namespace {
struct Copy {
  TensorId Weight, Tensor;
  size_t FirstUse, LastUse;
  size_t Issue = 0;
};
} // namespace

static std::vector<Copy> clusterUses(Schedule &Out, const Schedule &S,
                                     llvm::ArrayRef<TensorId> Weights) {
  std::map<TensorId, std::vector<size_t>> Uses;
  for (TensorId W : Weights)
    Uses[W];
  for (size_t I = 0; I < S.Steps.size(); ++I)
    for (TensorId R : S.Steps[I].Reads)
      if (Uses.count(R) && (Uses[R].empty() || Uses[R].back() != I))
        Uses[R].push_back(I);
  size_t Gap = std::max<size_t>(S.Steps.size() / 8, 16);
  std::vector<Copy> Copies;
  for (TensorId W : Weights) {
    const std::vector<size_t> &U = Uses[W];
    if (U.empty())
      continue;
    Out.Tensors[W].Kind = TensorKind::Activation;
    Out.Tensors[W].HostHome = true;
    Copy C{W, W, U[0], U[0]};
    for (size_t I = 1; I < U.size(); ++I) {
      if (U[I] - C.LastUse > Gap) {
        Copies.push_back(C);
        ScheduleTensor T = Out.Tensors[W];
        T.Name += "#" + std::to_string(Copies.size() + 1);
        Out.Tensors.push_back(T);
        C = Copy{W, static_cast<TensorId>(Out.Tensors.size() - 1), U[I], U[I]};
      }
      C.LastUse = U[I];
    }
    Copies.push_back(C);
  }
  std::stable_sort(
      Copies.begin(), Copies.end(),
      [](const Copy &A, const Copy &B) { return A.FirstUse < B.FirstUse; });
  return Copies;
}

// Issue steps: the shared host-to-device scheduler, from step 0.
static void placeIssues(std::vector<Copy> &Copies, const Schedule &S,
                        const CostModel &Cost, unsigned MaxAhead) {
  std::vector<HostToDeviceCopy> H;
  for (const Copy &C : Copies)
    H.push_back({S.Tensors[C.Weight].SizeBytes, C.FirstUse});
  std::vector<size_t> Issue =
      scheduleHostToDevice(H, stallFreeStartTimes(S, Cost), Cost, 0, MaxAhead);
  for (size_t J = 0; J < Copies.size(); ++J)
    Copies[J].Issue = Issue[J];
}

Schedule oomplan::streamWeights(const Schedule &S,
                                llvm::ArrayRef<TensorId> Weights,
                                const CostModel &Cost, unsigned MaxAhead) {
  Schedule Out;
  Out.Tensors = S.Tensors;
  std::vector<Copy> Copies = clusterUses(Out, S, Weights);
  placeIssues(Copies, S, Cost, MaxAhead);
  std::vector<std::vector<size_t>> IssuedAt(S.Steps.size());
  for (size_t J = 0; J < Copies.size(); ++J)
    IssuedAt[Copies[J].Issue].push_back(J);
  for (size_t I = 0; I < S.Steps.size(); ++I) {
    for (size_t J : IssuedAt[I]) {
      Step P;
      P.Kind = StepKind::Prefetch;
      P.Op = "Prefetch";
      P.Writes = {Copies[J].Tensor};
      Out.Steps.push_back(std::move(P));
    }
    Step St = S.Steps[I];
    for (TensorId &R : St.Reads) {
      auto It = std::find_if(Copies.begin(), Copies.end(), [&](const Copy &C) {
        return C.Weight == R && C.FirstUse <= I && I <= C.LastUse;
      });
      if (It != Copies.end())
        R = It->Tensor;
    }
    Out.Steps.push_back(std::move(St));
  }
  return Out;
}
