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
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sched.h>
#include <set>
#include <thread>
#include <vector>

namespace oomplan {
namespace runtime {

/// How long a worker waiting for the next call, and a caller waiting for
/// its workers, spin before sleeping on a condition variable. A network's
/// steps come microseconds apart; waking a sleeping thread takes tens of
/// microseconds (a futex round trip, more in a VM), and every call paid it
/// twice (the worker's wake-up, then the caller's), which made a mobile
/// network's hundreds of short steps slower at two threads than their
/// work. The bound keeps an idle pool from holding its cores for longer
/// than a step's gap.
constexpr std::chrono::microseconds SpinFor{200};

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Spins until Ready() or SpinFor has passed; returns Ready().
template <typename Pred> bool spinUntil(Pred Ready) {
  const auto Start = std::chrono::steady_clock::now();
  for (unsigned I = 1;; ++I) {
    if (Ready())
      return true;
    cpuRelax();
    if (I % 64 == 0 && std::chrono::steady_clock::now() - Start > SpinFor)
      return Ready();
  }
}

struct ThreadPool::Impl {
  std::vector<std::thread> Workers;
  std::mutex M;
  std::condition_variable Wake, Done;
  std::atomic<bool> Stop{false};
  /// Bumped per parallelFor call, after the call's fields are set.
  std::atomic<uint64_t> Generation{0};
  // The current call.
  llvm::function_ref<void(int64_t, int64_t)> Fn;
  int64_t N = 0, Chunk = 1;
  std::atomic<int64_t> Next{0};
  std::atomic<unsigned> Active{0}; ///< Workers still inside the current call.
  /// Threads asleep on Wake, and whether the caller is asleep on Done
  /// (both under M): a notification is a system call, paid only for them.
  unsigned Sleepers = 0;
  bool CallerAsleep = false;

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
    auto Called = [&] {
      return Stop.load(std::memory_order_acquire) ||
             Generation.load(std::memory_order_acquire) != Seen;
    };
    for (;;) {
      if (!spinUntil(Called)) {
        std::unique_lock<std::mutex> L(M);
        ++Sleepers;
        Wake.wait(L, Called);
        --Sleepers;
      }
      if (Stop.load(std::memory_order_acquire))
        return;
      Seen = Generation.load(std::memory_order_acquire);
      work();
      if (Active.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        // Taking the lock orders this with a caller between its check and
        // its wait, so the notification cannot fall in between.
        std::lock_guard<std::mutex> L(M);
        if (CallerAsleep)
          Done.notify_one();
      }
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
    P->Stop.store(true, std::memory_order_release);
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
  P->Fn = Fn;
  P->N = N;
  P->Chunk = Chunk;
  P->Next.store(0, std::memory_order_relaxed);
  P->Active.store(unsigned(P->Workers.size()), std::memory_order_relaxed);
  bool Asleep;
  {
    // Under the lock, so that a worker between its check and its wait
    // cannot miss the call; the release publishes the fields above to
    // workers that see the new generation while spinning.
    std::lock_guard<std::mutex> L(P->M);
    P->Generation.fetch_add(1, std::memory_order_release);
    Asleep = P->Sleepers != 0;
  }
  if (Asleep)
    P->Wake.notify_all();
  P->work();
  auto Finished = [&] {
    return P->Active.load(std::memory_order_acquire) == 0;
  };
  if (!spinUntil(Finished)) {
    std::unique_lock<std::mutex> L(P->M);
    P->CallerAsleep = true;
    P->Done.wait(L, Finished);
    P->CallerAsleep = false;
  }
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
