//===- Search.cpp - the configuration that fits, fastest ------------------===//
//
// --parallel=auto enumerates the configurations of N devices (tp in 1, 2, 4,
// 8 within a node, with sequence parallelism; pp over the divisors of N / tp
// up to the number of layers, with 4P micro-batches so that the 1F1B bubble
// is small; ZeRO 0-3 where the data-parallel group has two or more devices,
// at most stage 1 with pp as DeepSpeed's pipeline engine allows; recompute
// none, selective or full; no offload, which trades device memory for host
// memory and time and is asked for with an explicit --parallel),
// screens each by its liveness lower bound, ranks those that fit by
// predicted time per sample, and places and verifies the best ones until
// one fits after placement. --devices=auto repeats for 1, 2, 4, 8, 16, 24,
// ... devices and stops at the first count where something fits.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Parallel/Parallel.h"
#include "oomplan/Support/ByteSize.h"
#include <algorithm>
#include <cstdio>

using namespace oomplan;
using namespace oomplan::parallel;

// Tensor parallelism only where it can split the model (a CNN has no
// Megatron column/row linears; a degree must divide the split weights):
// the search skips the others instead of refusing the model.
static std::vector<ParallelSpec>
candidates(unsigned N, const ParallelPlanner &PP,
           const std::function<bool(const ParallelSpec &)> &Allowed) {
  const LayerStructure &L = PP.layers();
  const EngineOptions &E = PP.input().Engine;
  std::vector<ParallelSpec> Out;
  for (unsigned TP : {1u, 2u, 4u, 8u}) {
    if (TP > N || N % TP || TP > E.DevicesPerNode || (TP > 1 && !L.Found))
      continue;
    if (llvm::Error Why = PP.checkTP(TP)) {
      llvm::consumeError(std::move(Why));
      continue;
    }
    for (unsigned PP = 1; PP <= N / TP; ++PP) {
      if ((N / TP) % PP || (PP > 1 && (!L.Found || PP > L.NumBlocks)))
        continue;
      unsigned DP = N / (TP * PP);
      for (unsigned Zero = 0; Zero <= 3; ++Zero) {
        if ((DP == 1 && Zero > 0) || (PP > 1 && Zero > 1))
          continue;
        for (RecomputeKind R : {RecomputeKind::None, RecomputeKind::Selective,
                                RecomputeKind::Full}) {
          if (R != RecomputeKind::None && !L.Found)
            continue;
          ParallelSpec S;
          S.DP = DP, S.TP = TP, S.PP = PP, S.Zero = Zero, S.SP = TP > 1;
          S.MicroBatches = PP > 1 ? 4 * PP : 1;
          S.Recompute = R;
          if (!Allowed || Allowed(S))
            Out.push_back(S);
        }
      }
    }
  }
  return Out;
}

static std::string gib(uint64_t Bytes) { return formatBytes(Bytes); }

// Candidates of N devices, screened by their lower bounds; those that fit
// first, fastest first, then the rest, smallest peak first.
static llvm::Expected<std::vector<Candidate>>
screen(ParallelPlanner &PP, unsigned N, unsigned &Tried,
       const std::function<bool(const ParallelSpec &)> &Allowed) {
  std::vector<Candidate> Out;
  for (const ParallelSpec &S : candidates(N, PP, Allowed)) {
    auto P = PP.plan(S, /*Place=*/false);
    if (!P)
      return P.takeError();
    ++Tried;
    Out.push_back({S, P->peakBytes(), P->Fits, P->SampleSeconds, ""});
  }
  std::stable_sort(Out.begin(), Out.end(),
                   [](const Candidate &A, const Candidate &B) {
                     if (A.Fits != B.Fits)
                       return A.Fits;
                     return A.Fits ? A.SampleSeconds < B.SampleSeconds
                                   : A.PeakBytes < B.PeakBytes;
                   });
  return Out;
}

llvm::Expected<SearchResult>
parallel::searchParallel(ParallelPlanner &PP, std::optional<unsigned> Devices,
                         unsigned MaxDevices,
                         std::function<bool(const ParallelSpec &)> Allowed) {
  SearchResult R;
  std::vector<unsigned> Counts;
  if (Devices)
    Counts.push_back(*Devices);
  else
    for (unsigned N = 1; N <= MaxDevices; N = N < 8 ? 2 * N : N + 8)
      Counts.push_back(N);
  std::optional<Candidate>
      ClosestBelow; // the closest of the counts that failed
  unsigned Stalled = 0;
  for (unsigned N : Counts) {
    R.Devices = N;
    auto C = screen(PP, N, R.Tried, Allowed);
    if (!C)
      return C.takeError();
    // Place the fitting candidates, fastest first, until one fits placed.
    size_t Winner = C->size();
    for (size_t I = 0; I < C->size() && (*C)[I].Fits; ++I) {
      auto P = PP.plan((*C)[I].Spec, /*Place=*/true);
      if (!P)
        return P.takeError();
      (*C)[I].PeakBytes = P->peakBytes();
      (*C)[I].Fits = P->Fits;
      if (P->Fits) {
        Winner = I;
        R.Best = std::move(*P);
        break;
      }
      (*C)[I].Why = "fits before placement but not placed (fragmentation): " +
                    gib((*C)[I].PeakBytes);
    }
    if (!R.Best) {
      // Stop when more devices stopped helping: the closest peak has not
      // dropped by 1% for four device counts (a part that does not shrink).
      if (!C->empty()) {
        if (ClosestBelow &&
            C->front().PeakBytes / 99 * 100 >= ClosestBelow->PeakBytes) {
          if (++Stalled >= 4)
            break;
        } else {
          Stalled = 0;
        }
        if (!ClosestBelow || C->front().PeakBytes < ClosestBelow->PeakBytes)
          ClosestBelow = C->front();
      }
      continue;
    }
    const Candidate &W = (*C)[Winner];
    for (size_t I = 0; I < C->size() && R.RunnersUp.size() < 6; ++I) {
      if (I == Winner)
        continue;
      Candidate X = (*C)[I];
      if (X.Why.empty()) {
        char Buf[200];
        // Equal times: the candidates' order (less ZeRO sharding, less
        // recompute first) decided, not speed.
        if (X.Fits && X.SampleSeconds <= W.SampleSeconds)
          std::snprintf(Buf, sizeof(Buf),
                        "fits (%s), predicted as fast (%.3g s per "
                        "micro-batch sample): ties go to the simpler "
                        "configuration",
                        gib(X.PeakBytes).c_str(), X.SampleSeconds);
        else if (X.Fits)
          std::snprintf(Buf, sizeof(Buf),
                        "fits (%s) but slower: %.3g s per micro-batch "
                        "sample against %.3g",
                        gib(X.PeakBytes).c_str(), X.SampleSeconds,
                        W.SampleSeconds);
        else
          std::snprintf(Buf, sizeof(Buf), "does not fit: %s per device",
                        gib(X.PeakBytes).c_str());
        X.Why = Buf;
      }
      R.RunnersUp.push_back(std::move(X));
    }
    // One candidate of each losing kind is enough: keep the list short but
    // show a non-fitting one when all shown fit.
    if (ClosestBelow) {
      Candidate X = *ClosestBelow;
      X.Why = "fewer devices (" + std::to_string(X.Spec.devices()) +
              "): the closest does not fit, " + gib(X.PeakBytes) +
              " per device";
      R.RunnersUp.push_back(std::move(X));
    }
    return R;
  }
  if (ClosestBelow) {
    Candidate X = *ClosestBelow;
    X.Why = "closest: " + gib(X.PeakBytes) + " per device";
    R.RunnersUp.push_back(std::move(X));
  }
  return R;
}
