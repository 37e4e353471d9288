//===- Reorder.cpp - greedy list scheduling for a lower peak --------------===//
//
// Buffers come from the liveness of the original order (views and in-place
// writes share one). Score of a ready step: bytes of buffers it starts minus
// bytes of arena buffers whose last pending read it is.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/Reorder.h"
#include <algorithm>
#include <random>
#include <set>

using namespace oomplan;

namespace {
struct Deps {
  std::vector<std::vector<size_t>> Succ;
  std::vector<unsigned> NumPred;
};
} // namespace

static Deps buildDeps(const Schedule &S) {
  Deps D;
  size_t N = S.Steps.size();
  D.Succ.resize(N);
  D.NumPred.assign(N, 0);
  std::vector<size_t> LastWriter(S.Tensors.size(), SIZE_MAX);
  std::vector<std::vector<size_t>> ReadersSince(S.Tensors.size());
  auto Edge = [&](size_t A, size_t B) {
    if (A == SIZE_MAX || A == B)
      return;
    D.Succ[A].push_back(B);
    ++D.NumPred[B];
  };
  for (size_t I = 0; I < N; ++I) {
    for (TensorId R : S.Steps[I].Reads) {
      Edge(LastWriter[R], I);
      ReadersSince[R].push_back(I);
    }
    for (TensorId W : S.Steps[I].Writes) {
      Edge(LastWriter[W], I);
      for (size_t Rd : ReadersSince[W])
        Edge(Rd, I);
      ReadersSince[W].clear();
      LastWriter[W] = I;
    }
  }
  return D;
}

static std::vector<size_t> listSchedule(const Schedule &S, const Lifetimes &L,
                                        const Deps &D, unsigned Seed) {
  size_t N = S.Steps.size();
  std::vector<unsigned> Pending(L.Buffers.size(), 0), Preds = D.NumPred;
  for (const Step &St : S.Steps)
    for (TensorId R : St.Reads)
      ++Pending[L.BufferOf[R]];
  std::vector<bool> Started(L.Buffers.size(), false);
  auto Score = [&](size_t I) {
    int64_t Net = 0;
    for (TensorId W : S.Steps[I].Writes) {
      BufferId B = L.BufferOf[W];
      if (!Started[B] && L.Buffers[B].Kind == TensorKind::Activation)
        Net += static_cast<int64_t>(L.Buffers[B].SizeBytes);
    }
    for (TensorId R : S.Steps[I].Reads) {
      BufferId B = L.BufferOf[R];
      if (Pending[B] == 1 && L.Buffers[B].Kind == TensorKind::Activation)
        Net -= static_cast<int64_t>(L.Buffers[B].SizeBytes);
    }
    return Net;
  };
  // The ready step of least score (ties: the lowest index) is taken
  // next. Ready steps sit in an ordered set, and a step's key is updated
  // only when an event changes its score: a buffer it writes gets started,
  // or one it reads is down to its last pending read. Both happen once
  // per buffer, so a graph with many steps ready at once (the Constants of
  // an unrolled Loop) costs N log N, not N times the ready steps. A
  // randomized try scales each step's score by a factor drawn once.
  std::mt19937_64 Rng(Seed);
  std::vector<double> Factor(N, 1.0);
  if (Seed)
    for (double &F : Factor)
      F = std::uniform_real_distribution<double>(0.5, 1.5)(Rng);
  std::vector<std::vector<size_t>> Readers(L.Buffers.size()),
      Writers(L.Buffers.size());
  for (size_t I = 0; I < N; ++I) {
    for (TensorId R : S.Steps[I].Reads)
      Readers[L.BufferOf[R]].push_back(I);
    for (TensorId W : S.Steps[I].Writes)
      Writers[L.BufferOf[W]].push_back(I);
  }
  std::set<std::pair<double, size_t>> Ready;
  std::vector<double> Key(N, 0);
  std::vector<bool> IsReady(N, false);
  auto Push = [&](size_t I) {
    Key[I] = static_cast<double>(Score(I)) * Factor[I];
    Ready.insert({Key[I], I});
    IsReady[I] = true;
  };
  auto Update = [&](size_t I) {
    if (!IsReady[I])
      return;
    double K = static_cast<double>(Score(I)) * Factor[I];
    if (K == Key[I])
      return;
    Ready.erase({Key[I], I});
    Key[I] = K;
    Ready.insert({K, I});
  };
  std::vector<size_t> Order;
  for (size_t I = 0; I < N; ++I)
    if (!Preds[I])
      Push(I);
  std::vector<BufferId> Changed;
  while (!Ready.empty()) {
    size_t I = Ready.begin()->second;
    Ready.erase(Ready.begin());
    IsReady[I] = false;
    Order.push_back(I);
    Changed.clear();
    for (TensorId W : S.Steps[I].Writes) {
      BufferId B = L.BufferOf[W];
      if (!Started[B]) {
        Started[B] = true;
        Changed.push_back(B);
      }
    }
    for (TensorId R : S.Steps[I].Reads) {
      BufferId B = L.BufferOf[R];
      if (--Pending[B] == 1)
        Changed.push_back(B);
    }
    for (BufferId B : Changed) {
      if (L.Buffers[B].Kind != TensorKind::Activation)
        continue;
      for (size_t J : Writers[B])
        Update(J);
      for (size_t J : Readers[B])
        Update(J);
    }
    for (size_t J : D.Succ[I])
      if (--Preds[J] == 0)
        Push(J);
  }
  return Order;
}

Schedule oomplan::reorderForMemory(const Schedule &S,
                                   const EstimateOptions &Opts,
                                   unsigned Tries) {
  Lifetimes L = computeLifetimes(S, Opts.Liveness);
  Deps D = buildDeps(S);
  Schedule Best = S;
  uint64_t BestBytes = estimateMemory(S, L, Opts).totalBytes();
  for (unsigned T = 0; T <= Tries; ++T) {
    std::vector<size_t> Order = listSchedule(S, L, D, T);
    if (Order.size() != S.Steps.size())
      continue; // a cycle cannot happen in a valid schedule; be safe
    Schedule C;
    C.Tensors = S.Tensors;
    for (size_t I : Order)
      C.Steps.push_back(S.Steps[I]);
    uint64_t Bytes = estimateMemory(C, Opts).totalBytes();
    if (Bytes < BestBytes) {
      BestBytes = Bytes;
      Best = std::move(C);
    }
  }
  return Best;
}
