//===- RematChooser.cpp - greedy chains and sqrt(n) checkpoints -----------===//
//
// See RematChooser.h. The greedy keeps, per tensor, whether it is "kept": an
// arena tensor written by a forward step that is not recomputed and read
// after the forward pass (by a backward step) or by a recomputed step.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/RematChooser.h"
#include "oomplan/Cost/CostModel.h"
#include "oomplan/Fit/Recompute.h"
#include "llvm/ADT/StringSwitch.h"
#include <cmath>
#include <queue>

using namespace oomplan;

static bool isResidentOrIO(TensorKind K) {
  return K == TensorKind::Weight || K == TensorKind::Constant ||
         K == TensorKind::GraphInput || K == TensorKind::GraphOutput ||
         K == TensorKind::OptimizerState;
}

bool oomplan::isRecomputable(const Schedule &S, size_t I) {
  const Step &St = S.Steps[I];
  if (St.Kind != StepKind::Compute || St.Writes.empty())
    return false;
  if (llvm::StringSwitch<bool>(St.Op)
          .Cases("Constant", "Dropout", "RandomNormal", "RandomUniform", true)
          .Cases("RandomNormalLike", "RandomUniformLike", "Multinomial", true)
          .Case("Bernoulli", true)
          .Default(false))
    return false;
  for (TensorId W : St.Writes)
    if (isResidentOrIO(S.Tensors[W].Kind) || S.Tensors[W].HostHome)
      return false;
  return true;
}

// PyTorch's partitioner rule, with one generalisation: a product whose
// output is larger than everything it reads is cheap per byte recomputed.
static bool isRestricted(const Schedule &S, size_t I) {
  const Step &St = S.Steps[I];
  uint64_t In = 0, Out = 0;
  for (TensorId R : St.Reads)
    In += S.Tensors[R].SizeBytes;
  for (TensorId W : St.Writes)
    Out += S.Tensors[W].SizeBytes;
  llvm::StringRef Op = St.Op;
  if (isComputeIntensiveOp(Op))
    return Out <= In;
  if (Op.startswith("Reduce") || Op == "ArgMax" || Op == "ArgMin" ||
      Op == "GlobalAveragePool" || Op == "GlobalMaxPool")
    return In > 4 * Out;
  return false;
}

namespace {
constexpr size_t MaxChainSteps = 64;

struct Greedy {
  const Schedule &S;
  const std::vector<double> &Secs;
  size_t End;
  std::vector<size_t> Producer;
  std::vector<bool> ReadPost, InR;
  std::vector<unsigned> RReads;
  bool Tier2 = false;

  Greedy(const Schedule &S, const std::vector<double> &Secs)
      : S(S), Secs(Secs), End(forwardEnd(S)), Producer(producerSteps(S)),
        ReadPost(S.Tensors.size(), false), InR(S.Steps.size(), false),
        RReads(S.Tensors.size(), 0) {
    for (size_t I = End; I < S.Steps.size(); ++I)
      for (TensorId R : S.Steps[I].Reads)
        ReadPost[R] = true;
  }

  // An arena tensor written by a forward step.
  bool isForwardArena(TensorId T) const {
    return !isResidentOrIO(S.Tensors[T].Kind) && Producer[T] < End;
  }
  bool kept(TensorId T) const {
    return isForwardArena(T) && !InR[Producer[T]] &&
           (ReadPost[T] || RReads[T] > 0);
  }
  bool allowed(size_t I) const {
    return I < End && !InR[I] && isRecomputable(S, I) &&
           (Tier2 || !isRestricted(S, I));
  }

  RematChain chainFrom(size_t Seed, std::vector<TensorId> &Penalty) const {
    RematChain C;
    std::vector<size_t> Work{Seed};
    std::vector<bool> InC(S.Steps.size(), false); // cheap enough per chain
    InC[Seed] = true;
    while (!Work.empty()) {
      size_t G = Work.back();
      Work.pop_back();
      C.Steps.push_back(G);
      C.Seconds += Secs[G];
      C.Restricted |= isRestricted(S, G);
      for (TensorId W : S.Steps[G].Writes)
        if (kept(W))
          C.GainBytes += static_cast<int64_t>(S.Tensors[W].SizeBytes);
      for (TensorId Y : S.Steps[G].Reads) {
        if (!isForwardArena(Y) || InR[Producer[Y]] || InC[Producer[Y]] ||
            kept(Y))
          continue;
        size_t P = Producer[Y];
        if (allowed(P) && C.Steps.size() + Work.size() < MaxChainSteps) {
          InC[P] = true;
          Work.push_back(P);
        } else if (std::find(Penalty.begin(), Penalty.end(), Y) ==
                   Penalty.end()) {
          Penalty.push_back(Y);
          C.GainBytes -= static_cast<int64_t>(S.Tensors[Y].SizeBytes);
        }
      }
    }
    return C;
  }

  static double ratio(const RematChain &C) {
    return static_cast<double>(C.GainBytes) / std::max(C.Seconds, 1e-12);
  }

  void accept(const RematChain &C) {
    for (size_t G : C.Steps)
      InR[G] = true;
    for (size_t G : C.Steps)
      for (TensorId Y : S.Steps[G].Reads)
        if (isForwardArena(Y) && !InR[Producer[Y]])
          ++RReads[Y];
  }

  void runTier(std::vector<RematChain> &Order) {
    using Entry = std::pair<double, size_t>;
    std::priority_queue<Entry> Q;
    auto Push = [&](size_t I) {
      std::vector<TensorId> Pen;
      RematChain C = chainFrom(I, Pen);
      if (C.GainBytes > 0)
        Q.push({ratio(C), I});
    };
    for (size_t I = 0; I < End; ++I)
      if (allowed(I))
        for (TensorId W : S.Steps[I].Writes)
          if (kept(W)) {
            Push(I);
            break;
          }
    while (!Q.empty()) {
      auto [Old, I] = Q.top();
      Q.pop();
      if (!allowed(I))
        continue;
      std::vector<TensorId> Pen;
      RematChain C = chainFrom(I, Pen);
      if (C.GainBytes <= 0)
        continue;
      double R = ratio(C);
      if (!Q.empty() && R < Q.top().first * (1 - 1e-9)) {
        Q.push({R, I}); // stale: re-queue at its true ratio
        continue;
      }
      accept(C);
      Order.push_back(std::move(C));
      for (TensorId Y : Pen) // newly kept: their producers may now pay off
        if (allowed(Producer[Y]))
          Push(Producer[Y]);
    }
  }
};
} // namespace

std::vector<RematChain>
oomplan::greedyRematOrder(const Schedule &S,
                          const std::vector<double> &StepSeconds) {
  Greedy G(S, StepSeconds);
  std::vector<RematChain> Order;
  G.runTier(Order);
  G.Tier2 = true;
  G.runTier(Order);
  return Order;
}

std::vector<bool> oomplan::marksOfPrefix(const Schedule &S,
                                         const std::vector<RematChain> &Order,
                                         size_t K) {
  std::vector<bool> M(S.Steps.size(), false);
  for (size_t I = 0; I < K && I < Order.size(); ++I)
    for (size_t St : Order[I].Steps)
      M[St] = true;
  return M;
}

std::vector<bool> oomplan::sqrtCheckpoints(const Schedule &S,
                                           unsigned Segments) {
  size_t End = forwardEnd(S);
  std::vector<bool> ReadPost(S.Tensors.size(), false);
  for (size_t I = End; I < S.Steps.size(); ++I)
    for (TensorId R : S.Steps[I].Reads)
      ReadPost[R] = true;
  std::vector<size_t> F;
  std::vector<uint64_t> KeptBytes;
  uint64_t Total = 0;
  for (size_t I = 0; I < End; ++I)
    if (isRecomputable(S, I)) {
      uint64_t B = 0;
      for (TensorId W : S.Steps[I].Writes)
        B += ReadPost[W] ? S.Tensors[W].SizeBytes : 0;
      F.push_back(I);
      KeptBytes.push_back(B);
      Total += B;
    }
  std::vector<bool> M(S.Steps.size(), false);
  if (F.empty())
    return M;
  unsigned K = Segments ? Segments
                        : static_cast<unsigned>(std::ceil(
                              std::sqrt(static_cast<double>(F.size()))));
  double PerSegment = static_cast<double>(Total) / std::max(K, 1u);
  double Acc = 0;
  for (size_t J = 0; J < F.size(); ++J) {
    Acc += static_cast<double>(KeptBytes[J]);
    if (Acc >= PerSegment && KeptBytes[J] > 0) {
      Acc = 0; // a checkpoint: kept
      continue;
    }
    M[F[J]] = true;
  }
  return M;
}
