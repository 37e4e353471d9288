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
  std::mt19937_64 Rng(Seed);
  std::vector<size_t> Ready, Order;
  for (size_t I = 0; I < N; ++I)
    if (!Preds[I])
      Ready.push_back(I);
  while (!Ready.empty()) {
    size_t Pick = 0;
    double Best = 0;
    for (size_t K = 0; K < Ready.size(); ++K) {
      double Sc = static_cast<double>(Score(Ready[K]));
      if (Seed)
        Sc *= std::uniform_real_distribution<double>(0.5, 1.5)(Rng);
      if (K == 0 || Sc < Best || (Sc == Best && Ready[K] < Ready[Pick])) {
        Best = Sc;
        Pick = K;
      }
    }
    size_t I = Ready[Pick];
    Ready.erase(Ready.begin() + Pick);
    Order.push_back(I);
    for (TensorId W : S.Steps[I].Writes)
      Started[L.BufferOf[W]] = true;
    for (TensorId R : S.Steps[I].Reads)
      --Pending[L.BufferOf[R]];
    for (size_t J : D.Succ[I])
      if (--Preds[J] == 0)
        Ready.push_back(J);
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
