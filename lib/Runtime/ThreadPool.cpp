//===- ThreadPool.cpp - fixed workers for parallel kernels ------*- C++ -*-===//
//
// Kernels split loops with parallelFor. The workers are created once per
// pool (per run), never per call, since most kernels are short. A call hands
// out chunks through one atomic counter, and the caller works too, so a pool
// of N threads has N-1 workers.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/Kernel.h"
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sched.h>
#include <set>
#include <thread>
#include <vector>

namespace oomplan {
namespace runtime {

struct ThreadPool::Impl {
  std::vector<std::thread> Workers;
  std::mutex M;
  std::condition_variable Wake, Done;
  bool Stop = false;
  uint64_t Generation = 0; ///< Bumped per parallelFor call.
  // The current call.
  llvm::function_ref<void(int64_t, int64_t)> Fn;
  int64_t N = 0, Chunk = 1;
  std::atomic<int64_t> Next{0};
  unsigned Active = 0; ///< Workers still inside the current call.

  void work() {
    for (;;) {
      int64_t Begin = Next.fetch_add(Chunk);
      if (Begin >= N)
        return;
      Fn(Begin, std::min(N, Begin + Chunk));
    }
  }

  void workerLoop() {
    uint64_t Seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> L(M);
        Wake.wait(L, [&] { return Stop || Generation != Seen; });
        if (Stop)
          return;
        Seen = Generation;
      }
      work();
      std::lock_guard<std::mutex> L(M);
      if (--Active == 0)
        Done.notify_one();
    }
  }
};

ThreadPool::ThreadPool(unsigned Threads) : NumThreads(std::max(1u, Threads)) {
  if (NumThreads == 1)
    return;
  P = new Impl();
  for (unsigned I = 1; I < NumThreads; ++I)
    P->Workers.emplace_back([this] { P->workerLoop(); });
}

ThreadPool::~ThreadPool() {
  if (!P)
    return;
  {
    std::lock_guard<std::mutex> L(P->M);
    P->Stop = true;
  }
  P->Wake.notify_all();
  for (std::thread &T : P->Workers)
    T.join();
  delete P;
}

void ThreadPool::parallelFor(int64_t N, int64_t Grain,
                             llvm::function_ref<void(int64_t, int64_t)> Fn) {
  if (N <= 0)
    return;
  Grain = std::max<int64_t>(1, Grain);
  if (!P || N <= Grain) {
    Fn(0, N);
    return;
  }
  // About four chunks per thread balances uneven rows without paying the
  // counter on every item.
  int64_t Chunk = std::max(Grain, (N + 4 * NumThreads - 1) / (4 * NumThreads));
  {
    std::lock_guard<std::mutex> L(P->M);
    P->Fn = Fn;
    P->N = N;
    P->Chunk = Chunk;
    P->Next.store(0);
    P->Active = unsigned(P->Workers.size());
    ++P->Generation;
  }
  P->Wake.notify_all();
  P->work();
  std::unique_lock<std::mutex> L(P->M);
  P->Done.wait(L, [&] { return P->Active == 0; });
}

unsigned physicalCores() {
  // The CPUs of our affinity mask (a container's or taskset's limit), each
  // named by its package and core id: two hyper-threads share both.
  cpu_set_t Mask;
  CPU_ZERO(&Mask);
  const bool HaveMask = sched_getaffinity(0, sizeof(Mask), &Mask) == 0;
  std::set<std::pair<int, int>> Cores;
  unsigned Allowed = 0;
  for (int Cpu = 0; Cpu < CPU_SETSIZE; ++Cpu) {
    if (HaveMask && !CPU_ISSET(Cpu, &Mask))
      continue;
    const std::string Dir =
        "/sys/devices/system/cpu/cpu" + std::to_string(Cpu) + "/topology/";
    std::ifstream Pkg(Dir + "physical_package_id"), Core(Dir + "core_id");
    int P = 0, C = 0;
    if (!(Pkg >> P) || !(Core >> C)) {
      if (!HaveMask)
        break;   // past the last CPU
      ++Allowed; // allowed but no topology: count it as a core
      Cores.insert({-1, Cpu});
      continue;
    }
    ++Allowed;
    Cores.insert({P, C});
  }
  if (!Cores.empty())
    return unsigned(Cores.size());
  return std::max(1u, Allowed ? Allowed : std::thread::hardware_concurrency());
}

} // namespace runtime
} // namespace oomplan
