//===- Simulate.cpp - compute stream and copy engines ---------------------===//
//
// One pass over the steps; see Simulate.h for the rules. Ready[T] is when
// tensor T's bytes are valid on the device.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/Simulate.h"
#include <algorithm>

using namespace oomplan;

static uint64_t bytesOf(const Schedule &S, llvm::ArrayRef<TensorId> Ts) {
  uint64_t B = 0;
  for (TensorId T : Ts)
    B += S.Tensors[T].SizeBytes;
  return B;
}

TimePrediction oomplan::simulate(const Schedule &S, const CostModel &Cost) {
  TimePrediction P;
  std::vector<double> Ready(S.Tensors.size(), 0);
  double Now = 0, H2DFree = 0, D2HFree = 0, HostFree = 0;
  auto WaitFor = [&](double T) {
    if (T > Now) {
      P.StallSeconds += T - Now;
      Now = T;
    }
  };
  for (const Step &St : S.Steps) {
    if (St.OnHost) {
      double Dur = Cost.stepSeconds(S, St);
      HostFree = std::max(HostFree, D2HFree) + Dur;
      P.HostSeconds += Dur;
      continue;
    }
    if (St.Kind == StepKind::Prefetch) {
      double Start = std::max({Now, H2DFree, HostFree});
      double Dur = Cost.transferSeconds(bytesOf(S, St.Writes));
      H2DFree = Start + Dur;
      P.TransferSeconds += Dur;
      for (TensorId W : St.Writes)
        Ready[W] = H2DFree;
      continue;
    }
    if (St.Kind == StepKind::Offload) {
      double Issued = 0;
      for (TensorId R : St.Reads)
        Issued = std::max(Issued, Ready[R]);
      double Start = std::max(Issued, D2HFree);
      double Dur = Cost.transferSeconds(bytesOf(S, St.Reads));
      D2HFree = Start + Dur;
      P.TransferSeconds += Dur;
      WaitFor(D2HFree);
      continue;
    }
    for (TensorId R : St.Reads)
      WaitFor(Ready[R]);
    double Dur = Cost.stepSeconds(S, St);
    Now += Dur;
    P.ComputeSeconds += Dur;
    if (St.Kind == StepKind::Recompute)
      P.RecomputeSeconds += Dur;
    for (TensorId W : St.Writes)
      Ready[W] = Now;
  }
  P.TotalSeconds = std::max({Now, H2DFree, D2HFree, HostFree});
  return P;
}
