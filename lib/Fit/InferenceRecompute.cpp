//===- InferenceRecompute.cpp - dropping and re-making cheap values -------===//
//
// One candidate per value: its reads split at the longest gap (at least two
// steps, or nothing is freed for long). Reads before the gap use the
// original, which then dies; the first read after it gets a Recompute step
// just before it, and every later read uses that copy.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/InferenceRecompute.h"
#include "oomplan/Cost/CostModel.h"
#include "oomplan/Fit/Recompute.h"
#include "oomplan/Fit/RematChooser.h"
#include <algorithm>

using namespace oomplan;

namespace {
// Per tensor: the steps that read it, in order, without repeats.
std::vector<std::vector<size_t>> readSteps(const Schedule &S) {
  std::vector<std::vector<size_t>> R(S.Tensors.size());
  for (size_t I = 0; I < S.Steps.size(); ++I)
    for (TensorId T : S.Steps[I].Reads)
      if (R[T].empty() || R[T].back() != I)
        R[T].push_back(I);
  return R;
}

bool cheapProducer(const Schedule &S, size_t P) {
  const Step &St = S.Steps[P];
  // A view holds no bytes of its own; a product is not cheap to redo.
  return isRecomputable(S, P) && St.Writes.size() == 1 && St.ViewOf < 0 &&
         !isComputeIntensiveOp(St.Op);
}
} // namespace

std::vector<InferenceRemat>
oomplan::inferenceRematCandidates(const Schedule &S,
                                  const std::vector<double> &StepSeconds,
                                  bool InputsResident) {
  std::vector<std::vector<size_t>> Reads = readSteps(S);
  std::vector<InferenceRemat> Out;
  for (size_t P = 0; P < S.Steps.size(); ++P) {
    if (!cheapProducer(S, P))
      continue;
    TensorId T = S.Steps[P].Writes[0];
    const std::vector<size_t> &U = Reads[T];
    // The longest gap between two reads (the first read stays the
    // original's: recomputing before it would only move the producer).
    size_t Gap = 0;
    for (size_t J = 1; J < U.size(); ++J)
      if (U[J] - U[J - 1] > (Gap ? U[Gap] - U[Gap - 1] : 1))
        Gap = J;
    if (!Gap || U[Gap] - U[Gap - 1] < 2)
      continue;
    size_t From = U[Gap];
    // What the producer reads must still be live at From, or the copy
    // would keep it alive instead.
    bool Live = std::all_of(
        S.Steps[P].Reads.begin(), S.Steps[P].Reads.end(), [&](TensorId R) {
          TensorKind K = S.Tensors[R].Kind;
          if (K == TensorKind::Weight || K == TensorKind::Constant ||
              (InputsResident && K == TensorKind::GraphInput))
            return !S.Tensors[R].HostHome;
          return !Reads[R].empty() && Reads[R].back() >= From;
        });
    if (!Live)
      continue;
    Out.push_back({T, P, From, From - U[Gap - 1], S.Tensors[T].SizeBytes,
                   StepSeconds[P]});
  }
  auto Key = [](const InferenceRemat &C) {
    return static_cast<double>(C.Bytes) * static_cast<double>(C.Span) /
           std::max(C.Seconds, 1e-12);
  };
  std::stable_sort(Out.begin(), Out.end(),
                   [&](const InferenceRemat &A, const InferenceRemat &B) {
                     return Key(A) > Key(B);
                   });
  return Out;
}

Schedule
oomplan::applyInferenceRecompute(const Schedule &S,
                                 llvm::ArrayRef<InferenceRemat> Chosen) {
  constexpr size_t None = SIZE_MAX;
  std::vector<size_t> From(S.Tensors.size(), None);
  std::vector<size_t> ProducerOf(S.Tensors.size(), None);
  std::vector<bool> Input(S.Tensors.size(), false);
  for (const InferenceRemat &C : Chosen) {
    const std::vector<TensorId> &In = S.Steps[C.Producer].Reads;
    bool Clash = Input[C.Value] ||
                 std::any_of(In.begin(), In.end(),
                             [&](TensorId R) { return From[R] != None; });
    if (Clash || From[C.Value] != None)
      continue;
    From[C.Value] = C.From;
    ProducerOf[C.Value] = C.Producer;
    for (TensorId R : In)
      Input[R] = true;
  }
  Schedule Out;
  Out.Tensors = S.Tensors;
  std::vector<TensorId> Copy(S.Tensors.size(), UINT32_MAX);
  for (size_t I = 0; I < S.Steps.size(); ++I) {
    Step St = S.Steps[I];
    for (TensorId &R : St.Reads) {
      if (From[R] == None || I < From[R])
        continue;
      if (Copy[R] == UINT32_MAX) {
        Step Re = S.Steps[ProducerOf[R]];
        Re.Kind = StepKind::Recompute;
        ScheduleTensor T = S.Tensors[R];
        T.Name = "recompute(" + T.Name + ")";
        T.Value = NoId;
        T.Kind = TensorKind::Activation;
        Out.Tensors.push_back(std::move(T));
        Copy[R] = static_cast<TensorId>(Out.Tensors.size() - 1);
        Re.Writes = {Copy[R]};
        Out.Steps.push_back(std::move(Re));
      }
      R = Copy[R];
    }
    Out.Steps.push_back(std::move(St));
  }
  return Out;
}
