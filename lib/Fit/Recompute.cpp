//===- Recompute.cpp - inserting Recompute steps before backward reads ----===//
//
// One pass over the steps after the forward pass. For each read of a tensor
// whose producer is marked, ensure() makes a copy if none is live yet: it
// first ensures the producer's own marked inputs (depth first, so the
// inserted steps are in a valid order), then emits the Recompute step. A
// copy is made once and serves every later reader.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/Recompute.h"
#include <cstdint>

using namespace oomplan;

static constexpr TensorId NoTensor = UINT32_MAX;

size_t oomplan::forwardEnd(const Schedule &S) {
  for (size_t I = 0; I < S.Steps.size(); ++I)
    if (S.Steps[I].Kind == StepKind::Backward)
      return I;
  return S.Steps.size();
}

std::vector<size_t> oomplan::producerSteps(const Schedule &S) {
  std::vector<size_t> P(S.Tensors.size(), SIZE_MAX);
  for (size_t I = 0; I < S.Steps.size(); ++I)
    for (TensorId W : S.Steps[I].Writes)
      if (P[W] == SIZE_MAX)
        P[W] = I;
  return P;
}

namespace {
struct Rewriter {
  const Schedule &In;
  const std::vector<bool> &Marked;
  std::vector<size_t> Producer;
  std::vector<TensorId> CopyOf;
  Schedule Out;

  Rewriter(const Schedule &S, const std::vector<bool> &M)
      : In(S), Marked(M), Producer(producerSteps(S)),
        CopyOf(S.Tensors.size(), NoTensor) {
    Out.Tensors = S.Tensors;
  }

  bool isMarked(TensorId T) const {
    size_t P = Producer[T];
    return P != SIZE_MAX && P < Marked.size() && Marked[P];
  }

  // The tensor a post-forward step should read in place of T.
  TensorId ensure(TensorId T) {
    if (!isMarked(T))
      return T;
    if (CopyOf[T] != NoTensor)
      return CopyOf[T];
    const Step &F = In.Steps[Producer[T]];
    Step R = F;
    R.Kind = StepKind::Recompute;
    for (TensorId &Rd : R.Reads)
      Rd = ensure(Rd);
    for (TensorId &W : R.Writes) {
      ScheduleTensor Copy = In.Tensors[W];
      Copy.Name = "recompute(" + Copy.Name + ")";
      Copy.Value = NoId;
      if (Copy.Kind != TensorKind::Gradient)
        Copy.Kind = TensorKind::Activation;
      Out.Tensors.push_back(std::move(Copy));
      CopyOf[W] = static_cast<TensorId>(Out.Tensors.size() - 1);
      W = CopyOf[W];
    }
    Out.Steps.push_back(std::move(R));
    return CopyOf[T];
  }

  void run() {
    size_t End = forwardEnd(In);
    Out.Steps.reserve(In.Steps.size() * 5 / 4);
    for (size_t I = 0; I < In.Steps.size(); ++I) {
      Step St = In.Steps[I];
      if (I >= End)
        for (TensorId &Rd : St.Reads)
          Rd = ensure(Rd);
      Out.Steps.push_back(std::move(St));
    }
  }
};
} // namespace

Schedule oomplan::applyRecompute(const Schedule &S,
                                 const std::vector<bool> &Recompute) {
  Rewriter R(S, Recompute);
  R.run();
  return std::move(R.Out);
}
