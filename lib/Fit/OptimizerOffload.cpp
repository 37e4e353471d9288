//===- OptimizerOffload.cpp - optimizer state and update on the host ------===//
//
// The device optimizer step reads, per parameter, P, grad(P) and then P's
// state tensors (Training.cpp's buildOptimizer); that grouping is recovered
// from the tensor kinds and each group becomes Offload, host update,
// Prefetch (OptimizerOffload.h).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/OptimizerOffload.h"
#include <algorithm>

using namespace oomplan;

namespace {
struct ParamGroup {
  TensorId Param = 0;
  TensorId Grad = UINT32_MAX;
  std::vector<TensorId> State;
  size_t GradFinal = 0; ///< Last step writing the gradient.
};
} // namespace

static bool isDeviceOptimizerStep(const Schedule &S, const Step &St) {
  if (St.Kind != StepKind::Optimizer || St.OnHost)
    return false;
  return std::any_of(St.Reads.begin(), St.Reads.end(), [&](TensorId T) {
    return S.Tensors[T].Kind == TensorKind::OptimizerState;
  });
}

bool oomplan::hasOptimizerState(const Schedule &S) {
  return std::any_of(S.Steps.begin(), S.Steps.end(), [&](const Step &St) {
    return isDeviceOptimizerStep(S, St);
  });
}

static std::vector<ParamGroup> groupsOf(const Schedule &S, const Step &Opt) {
  std::vector<ParamGroup> Groups;
  for (TensorId R : Opt.Reads) {
    TensorKind K = S.Tensors[R].Kind;
    if (K == TensorKind::OptimizerState && !Groups.empty())
      Groups.back().State.push_back(R);
    else if (K == TensorKind::Gradient && !Groups.empty())
      Groups.back().Grad = R;
    else
      Groups.push_back(ParamGroup{R, UINT32_MAX, {}, 0});
  }
  std::vector<size_t> LastWrite(S.Tensors.size(), 0);
  for (size_t I = 0; I < S.Steps.size(); ++I)
    for (TensorId W : S.Steps[I].Writes)
      LastWrite[W] = I;
  for (ParamGroup &G : Groups)
    G.GradFinal = G.Grad == UINT32_MAX ? 0 : LastWrite[G.Grad];
  // The backward pass finishes the last layers' gradients first; copying in
  // that order lets the first updates start while later copies run.
  std::stable_sort(Groups.begin(), Groups.end(),
                   [](const ParamGroup &A, const ParamGroup &B) {
                     return A.GradFinal < B.GradFinal;
                   });
  return Groups;
}

static TensorId addHostTensor(Schedule &Out, const std::string &Name,
                              uint64_t Bytes, TensorKind Kind) {
  ScheduleTensor T;
  T.Name = Name;
  T.SizeBytes = Bytes;
  T.Kind = Kind;
  T.HostHome = true;
  Out.Tensors.push_back(std::move(T));
  return static_cast<TensorId>(Out.Tensors.size() - 1);
}

// Offload, host update, Prefetch for one parameter, appended to Out.
static void hostUpdate(Schedule &Out, const ParamGroup &G,
                       const std::string &Op) {
  Step Host;
  Host.Kind = StepKind::Optimizer;
  Host.Op = "Host" + Op;
  Host.OnHost = true;
  if (G.Grad != UINT32_MAX) {
    Step Down;
    Down.Kind = StepKind::Offload;
    Down.Op = "Offload";
    Down.Reads = {G.Grad};
    Out.Steps.push_back(std::move(Down));
    const ScheduleTensor &Gr = Out.Tensors[G.Grad];
    Host.Reads.push_back(addHostTensor(Out, "host(" + Gr.Name + ")",
                                       Gr.SizeBytes, TensorKind::Gradient));
  }
  bool HasMaster = std::any_of(G.State.begin(), G.State.end(), [&](TensorId T) {
    return Out.Tensors[T].Name.rfind("master(", 0) == 0;
  });
  if (!HasMaster) {
    const ScheduleTensor &P = Out.Tensors[G.Param];
    Host.Reads.push_back(addHostTensor(Out, "host(" + P.Name + ")", P.SizeBytes,
                                       TensorKind::OptimizerState));
  }
  for (TensorId T : G.State) {
    Out.Tensors[T].HostHome = true;
    Host.Reads.push_back(T);
  }
  Out.Steps.push_back(std::move(Host));
  Step Up;
  Up.Kind = StepKind::Prefetch;
  Up.Op = "Prefetch";
  Up.Writes = {G.Param};
  Out.Steps.push_back(std::move(Up));
}

Schedule oomplan::offloadOptimizerState(const Schedule &S) {
  Schedule Out;
  Out.Tensors = S.Tensors;
  for (const Step &St : S.Steps) {
    if (!isDeviceOptimizerStep(S, St)) {
      Out.Steps.push_back(St);
      continue;
    }
    for (const ParamGroup &G : groupsOf(S, St))
      hostUpdate(Out, G, St.Op);
    // The step's scratch (Adam's temporaries) is host memory now; no step
    // writes it, so the device does not hold it.
    for (TensorId W : St.Writes)
      Out.Tensors[W].HostHome = true;
  }
  return Out;
}
