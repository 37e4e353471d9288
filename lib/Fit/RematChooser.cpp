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
#include "oomplan/IR/OpTable.h"
#include <cmath>
#include <queue>

using namespace oomplan;

static bool isResidentOrIO(TensorKind K) {
  return K == TensorKind::Weight || K == TensorKind::Constant ||
         K == TensorKind::GraphInput || K == TensorKind::GraphOutput ||
         K == TensorKind::OptimizerState;
}

// Dropout is recomputable: like torch.utils.checkpoint (preserve_rng_state),
// the Recompute step replays the generator state its forward step used, so
// the mask and output are the same bits. The generators themselves are not
// re-run (their outputs are cheap to keep and rarely large).
bool oomplan::isRecomputable(const Schedule &S, size_t I) {
  const Step &St = S.Steps[I];
  if (St.Kind != StepKind::Compute || St.Writes.empty())
    return false;
  const ops::OpInfo *Op = ops::lookupOp(St.Op);
  if (Op && Op->Cost.NeverRecompute)
    return false;
  for (TensorId W : St.Writes)
    if (isResidentOrIO(S.Tensors[W].Kind) || S.Tensors[W].HostHome)
      return false;
  // A view of a weight (the transposed Linear weight) holds no bytes of its
  // own: nothing to free.
  if (St.ViewOf >= 0 && static_cast<size_t>(St.ViewOf) < St.Reads.size() &&
      isResidentOrIO(S.Tensors[St.Reads[St.ViewOf]].Kind))
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
  // Reductions: the op table counts their work per input element.
  const ops::OpInfo *Info = ops::lookupOp(Op);
  if (Info && Info->Cost.Flops == ops::FlopsClass::PerInputElement)
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
  std::vector<bool> ReadPost, InR, Banned;
  std::vector<unsigned> RReads;
  /// First step after the forward pass that reads each tensor, or SIZE_MAX.
  std::vector<size_t> FirstPost;
  /// Forward steps reading each tensor.
  std::vector<std::vector<size_t>> FwdReaders;
  size_t Slack;
  bool Tier2 = false;

  Greedy(const Schedule &S, const std::vector<double> &Secs)
      : S(S), Secs(Secs), End(forwardEnd(S)), Producer(producerSteps(S)),
        ReadPost(S.Tensors.size(), false), InR(S.Steps.size(), false),
        Banned(S.Steps.size(), false), RReads(S.Tensors.size(), 0),
        FirstPost(S.Tensors.size(), SIZE_MAX), FwdReaders(S.Tensors.size()) {
    for (size_t I = End; I < S.Steps.size(); ++I)
      for (TensorId R : S.Steps[I].Reads) {
        ReadPost[R] = true;
        FirstPost[R] = std::min(FirstPost[R], I);
      }
    for (size_t I = 0; I < End; ++I)
      for (TensorId R : S.Steps[I].Reads)
        if (FwdReaders[R].empty() || FwdReaders[R].back() != I)
          FwdReaders[R].push_back(I);
    // A few steps of the backward pass: about a layer's backward is much
    // more (tens of steps), the steps between a kernel's backward and its
    // neighbours' are fewer.
    Slack = std::max<size_t>(8, (S.Steps.size() - End) / 128);
  }

  // Recompute copies are made on demand (Recompute.h): a marked step's copy
  // is born at the first backward read of its outputs or when a marked
  // reader's copy is born, whichever is first. A chain that makes a copy
  // born much earlier than its own backward readers need it (the residual
  // stream recomputed layer after layer) only moves the bytes into the
  // backward pass, so such sets are refused.
  bool birthsOk(const std::vector<size_t> &Extra) {
    for (size_t G : Extra)
      InR[G] = true;
    std::vector<size_t> Birth(End, SIZE_MAX);
    bool Ok = true;
    for (size_t G = End; Ok && G-- > 0;) {
      if (!InR[G])
        continue;
      size_t Anchor = SIZE_MAX, B = SIZE_MAX;
      for (TensorId W : S.Steps[G].Writes) {
        Anchor = std::min(Anchor, FirstPost[W]);
        for (size_t Y : FwdReaders[W])
          if (InR[Y])
            B = std::min(B, Birth[Y]);
      }
      Birth[G] = std::min(B, Anchor);
      Ok = Anchor == SIZE_MAX || Birth[G] + Slack >= Anchor;
    }
    for (size_t G : Extra)
      InR[G] = false;
    return Ok;
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
    return I < End && !InR[I] && !Banned[I] && isRecomputable(S, I) &&
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
      // A view's output shares its input's bytes: freeing it frees nothing.
      for (size_t J = S.Steps[G].ViewOf >= 0 ? 1 : 0;
           J < S.Steps[G].Writes.size(); ++J)
        if (kept(S.Steps[G].Writes[J]))
          C.GainBytes +=
              static_cast<int64_t>(S.Tensors[S.Steps[G].Writes[J]].SizeBytes);
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
      if (!birthsOk(C.Steps)) {
        Banned[I] = true;
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

// Bytes of forward arena tensors crossing each boundary (after step B, before
// B + 1): written at or before B, read by a forward step after it.
static std::vector<uint64_t> crossingBytes(const Schedule &S, size_t End,
                                           const std::vector<size_t> &Prod) {
  std::vector<size_t> LastFwd(S.Tensors.size(), 0);
  for (size_t I = 0; I < End; ++I)
    for (TensorId R : S.Steps[I].Reads)
      LastFwd[R] = I;
  std::vector<int64_t> Delta(End + 1, 0);
  for (TensorId T = 0; T < S.Tensors.size(); ++T)
    if (!isResidentOrIO(S.Tensors[T].Kind) && Prod[T] < End &&
        LastFwd[T] > Prod[T]) {
      Delta[Prod[T]] += static_cast<int64_t>(S.Tensors[T].SizeBytes);
      Delta[LastFwd[T]] -= static_cast<int64_t>(S.Tensors[T].SizeBytes);
    }
  std::vector<uint64_t> Cross(End, 0);
  int64_t Live = 0;
  for (size_t B = 0; B < End; ++B)
    Cross[B] = static_cast<uint64_t>(Live += Delta[B]);
  return Cross;
}

std::vector<bool> oomplan::sqrtCheckpoints(const Schedule &S,
                                           unsigned Segments) {
  size_t End = forwardEnd(S);
  std::vector<size_t> Prod = producerSteps(S);
  std::vector<bool> ReadPost(S.Tensors.size(), false);
  for (size_t I = End; I < S.Steps.size(); ++I)
    for (TensorId R : S.Steps[I].Reads)
      ReadPost[R] = true;
  // Cumulative kept bytes (what the backward pass reads) after each step;
  // n = the forward steps that keep something ("layers").
  std::vector<double> Cum(End, 0);
  double Acc = 0;
  size_t N = 0;
  for (size_t I = 0; I < End; ++I) {
    uint64_t B = 0;
    for (TensorId W : S.Steps[I].Writes)
      if (ReadPost[W] && !isResidentOrIO(S.Tensors[W].Kind))
        B += S.Tensors[W].SizeBytes;
    N += B > 0;
    Cum[I] = Acc += static_cast<double>(B);
  }
  std::vector<bool> M(S.Steps.size(), false);
  if (End == 0 || Acc == 0)
    return M;
  unsigned K =
      Segments
          ? Segments
          : static_cast<unsigned>(std::ceil(std::sqrt(static_cast<double>(N))));
  // Cut k: the boundary with the fewest crossing bytes among those whose
  // cumulative kept bytes are within half a segment of k/K of the total
  // (Chen's segments, cut where the graph is narrow).
  std::vector<uint64_t> Cross = crossingBytes(S, End, Prod);
  std::vector<bool> Cut(End, false);
  size_t B = 0;
  for (unsigned Kk = 1; Kk < K; ++Kk) {
    double Lo = (Kk - 0.5) * Acc / K, Hi = (Kk + 0.5) * Acc / K;
    while (B < End && Cum[B] < Lo)
      ++B;
    size_t Best = SIZE_MAX;
    for (size_t J = B; J < End && Cum[J] <= Hi; ++J)
      if (Best == SIZE_MAX || Cross[J] <= Cross[Best])
        Best = J;
    if (Best != SIZE_MAX)
      Cut[Best] = true;
  }
  // Everything recomputable is recomputed except the producers of tensors
  // crossing a cut: recomputation then never reaches past a cut.
  for (size_t I = 0; I < End; ++I)
    M[I] = isRecomputable(S, I);
  std::vector<size_t> LastFwd(S.Tensors.size(), 0);
  for (size_t I = 0; I < End; ++I)
    for (TensorId R : S.Steps[I].Reads)
      LastFwd[R] = I;
  for (TensorId T = 0; T < S.Tensors.size(); ++T) {
    size_t P = Prod[T];
    if (P >= End)
      continue;
    for (size_t J = P; J < LastFwd[T]; ++J)
      if (Cut[J]) {
        M[P] = false;
        break;
      }
  }
  return M;
}
