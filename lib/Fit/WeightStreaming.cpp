//===- WeightStreaming.cpp - prefetch steps for host-resident weights -----===//
//
// 1. Each weight's uses are split into clusters where two consecutive uses
//    are more than an eighth of the schedule apart; a cluster is one copy.
// 2. Copies are ordered by first use and placed as late as possible on the
//    link, working back from the last: a copy must end when its first user
//    starts (in the stall-free timeline) and before the next copy starts.
// 3. The issue step is the last one that starts by then, but no earlier than
//    the first use of the copy MaxAhead places before it.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/WeightStreaming.h"
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

static void placeIssues(std::vector<Copy> &Copies, const Schedule &S,
                        const CostModel &Cost, unsigned MaxAhead) {
  // StartAt[I]: when step I starts if nothing stalls.
  std::vector<double> StartAt(S.Steps.size() + 1, 0);
  for (size_t I = 0; I < S.Steps.size(); ++I)
    StartAt[I + 1] = StartAt[I] + Cost.stepSeconds(S, S.Steps[I]);
  double NextStart = 1e300;
  for (size_t J = Copies.size(); J-- > 0;) {
    Copy &C = Copies[J];
    double Finish = std::min(StartAt[C.FirstUse], NextStart);
    double Start = Finish - Cost.transferSeconds(S.Tensors[C.Weight].SizeBytes);
    NextStart = Start;
    // Last step starting at or before Start.
    auto It = std::upper_bound(StartAt.begin(),
                               StartAt.begin() + C.FirstUse + 1, Start);
    C.Issue = It == StartAt.begin() ? 0 : size_t(It - StartAt.begin()) - 1;
    if (MaxAhead != UINT32_MAX) {
      size_t Floor = J >= MaxAhead ? Copies[J - MaxAhead].FirstUse : 0;
      C.Issue = std::max(C.Issue, std::min(Floor, C.FirstUse));
    }
  }
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
