//===- Partition.cpp - pipeline stages and the step-time estimate ---------===//
//
// partitionStages splits the blocks into P contiguous stages by dynamic
// programming over the largest stage cost, where a stage's cost is the larger
// of its share of the time and its share of the memory (model state plus
// saved activations times its in-flight micro-batches under 1F1B, so early
// stages, which hold more micro-batches, get fewer blocks when memory
// binds). The prologue (embeddings) goes to the first stage, the epilogue
// (LM head, loss) to the last.
//
// estimateStepSeconds is a first-order model for ranking configurations:
// the slowest stage's compute (per micro-batch, / T) over M + P - 1 slots of
// the 1F1B schedule, four all-reduces of the hidden state per block per
// micro-batch under tensor parallelism (their volume is the same with
// sequence parallelism's reduce-scatter/all-gather pairs), the data-parallel
// gradient reduction once per step and, with ZeRO-3, two parameter gathers
// per micro-batch; ring collectives at the group's bandwidth (NVLink within
// a node, InfiniBand across). Offloaded optimizer steps run at the host's
// memory bandwidth after the gradients cross the host link.
//
//===----------------------------------------------------------------------===//
#include "ParallelInternal.h"
#include <algorithm>
#include <limits>

using namespace oomplan;
using namespace oomplan::parallel;

std::vector<std::pair<int, int>>
parallel::partitionStages(const Base &B, const LayerStructure &L,
                          const ParallelSpec &Spec) {
  int N = int(L.NumBlocks), P = int(Spec.PP);
  if (P <= 1 || N < P)
    return {{0, N + 1}};
  // Prefix sums over blocks 1..N.
  std::vector<double> T(N + 1, 0), Act(N + 1, 0), St(N + 1, 0);
  double TotT = 0, TotM = 0;
  for (int I = 1; I <= N; ++I) {
    T[I] = T[I - 1] + B.PosSeconds[I];
    Act[I] = Act[I - 1] + double(B.PosSavedBytes[I]);
    St[I] = St[I - 1] + double(B.PosStateBytes[I]);
  }
  for (size_t I = 0; I < B.PosSeconds.size(); ++I) {
    TotT += B.PosSeconds[I];
    TotM += double(B.PosSavedBytes[I]) *
                std::min<unsigned>(Spec.PP, Spec.MicroBatches) / 2 +
            double(B.PosStateBytes[I]);
  }
  double MeanT = std::max(TotT / P, 1e-30), MeanM = std::max(TotM / P, 1.0);
  auto Cost = [&](int S, int A, int Bk) { // stage S holds blocks A..Bk
    double Time = T[Bk] - T[A - 1], Mem = St[Bk] - St[A - 1];
    unsigned K = std::min<unsigned>(P - S, Spec.MicroBatches);
    Mem += (Act[Bk] - Act[A - 1]) * K;
    int Edge = S == 0 ? 0 : S == P - 1 ? N + 1 : -1;
    if (Edge >= 0) {
      Time += B.PosSeconds[Edge];
      Mem += double(B.PosStateBytes[Edge]) + double(B.PosSavedBytes[Edge]) * K;
    }
    return std::max(Time / MeanT, Mem / MeanM);
  };
  const double Inf = std::numeric_limits<double>::infinity();
  // Best[S][Bk]: the least largest cost of stages 0..S holding blocks 1..Bk.
  std::vector<std::vector<double>> Best(P, std::vector<double>(N + 1, Inf));
  std::vector<std::vector<int>> Cut(P, std::vector<int>(N + 1, 0));
  for (int Bk = 1; Bk <= N; ++Bk)
    Best[0][Bk] = Cost(0, 1, Bk);
  for (int S = 1; S < P; ++S)
    for (int Bk = S + 1; Bk <= N; ++Bk)
      for (int A = S + 1; A <= Bk; ++A) {
        double C = std::max(Best[S - 1][A - 1], Cost(S, A, Bk));
        if (C < Best[S][Bk])
          Best[S][Bk] = C, Cut[S][Bk] = A;
      }
  std::vector<std::pair<int, int>> Out(P);
  int Bk = N;
  for (int S = P - 1; S >= 0; --S) {
    int A = S == 0 ? 1 : Cut[S][Bk];
    Out[S] = {A, Bk};
    Bk = A - 1;
  }
  Out.front().first = 0;
  Out.back().second = N + 1;
  return Out;
}

// Seconds of a ring collective moving Bytes per device over a group of G.
static double ringSeconds(double Bytes, unsigned G, double Bandwidth) {
  return G <= 1 ? 0 : 2.0 * (G - 1) / G * Bytes / Bandwidth;
}

double parallel::estimateStepSeconds(
    const Base &B, const LayerStructure &L, const ParallelSpec &Spec,
    const std::vector<std::pair<int, int>> &Stages,
    uint64_t StateBytesPerDevice, const ParallelInput &In) {
  const EngineOptions &E = In.Engine;
  double Slowest = 0;
  for (auto [First, Last] : Stages) {
    double S = 0;
    for (int P = First; P <= Last; ++P)
      S += B.PosSeconds[P];
    Slowest = std::max(Slowest, S / Spec.TP);
  }
  unsigned M = Spec.MicroBatches;
  double Step = Slowest * (M + Spec.PP - 1);
  double TPBw =
      Spec.TP <= E.DevicesPerNode ? E.IntraNodeBandwidth : E.InterNodeBandwidth;
  double DPBw = Spec.TP * Spec.DP <= E.DevicesPerNode ? E.IntraNodeBandwidth
                                                      : E.InterNodeBandwidth;
  unsigned BlocksPerStage = (L.NumBlocks + Spec.PP - 1) / Spec.PP;
  double Recompute = Spec.Recompute == RecomputeKind::Full ? 1.5 : 1.0;
  Step += 4.0 * BlocksPerStage * M * Recompute *
          ringSeconds(double(B.HiddenBytes), Spec.TP, TPBw);
  // Gradients (and ZeRO-3's parameters) of one stage, split by T.
  double Half = B.Mixed ? 2 : 4;
  double StageParams = 0;
  for (auto [First, Last] : Stages) {
    double S = 0;
    for (int P = First; P <= Last; ++P)
      S += double(B.PosStateBytes[P]);
    StageParams = std::max(StageParams, S);
  }
  // PosStateBytes holds weights, gradients and optimizer state: bytes per
  // parameter are 2 + 2 + 12 under mixed Adam, 4 + 4 + 8 in fp32.
  StageParams = StageParams / 16 / Spec.TP;
  Step += ringSeconds(StageParams * Half, Spec.DP, DPBw);
  if (Spec.Zero == 3)
    Step += M * ringSeconds(StageParams * Half, Spec.DP, DPBw);
  if (Spec.OffloadOptimizer) {
    double Local = StageParams / std::max(1u, Spec.DP);
    Step += Local * 16 * 2 / In.Device.HostMemBandwidth +
            Local * 2 * Half / In.Device.HostLinkBandwidth;
  } else {
    Step += B.OptimizerSeconds /
            (Spec.TP * Spec.PP * (Spec.Zero >= 1 ? Spec.DP : 1));
  }
  if (Spec.OffloadParams)
    Step += M * 2 * StageParams * Half / std::max(1u, Spec.DP) /
            In.Device.HostLinkBandwidth;
  (void)StateBytesPerDevice;
  return Step;
}
