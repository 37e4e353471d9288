//===- SplitMix64.h - the planner's pseudo-random numbers (internal) -----===//
//
// SplitMix64: tiny, fast, and identical on every platform, so searches and
// random instances are reproducible from their seed.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_PLANNER_SPLITMIX64_H
#define OOMPLAN_LIB_PLANNER_SPLITMIX64_H

#include <cstddef>
#include <cstdint>

namespace oomplan::planner {

class SplitMix64 {
public:
  explicit SplitMix64(uint64_t Seed) : State(Seed) {}
  uint64_t next() {
    uint64_t Z = (State += 0x9e3779b97f4a7c15ull);
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
    return Z ^ (Z >> 31);
  }
  /// Uniform-enough value in [0, N), N > 0.
  size_t below(size_t N) { return next() % N; }
  /// In [Lo, Hi], Lo <= Hi.
  uint64_t between(uint64_t Lo, uint64_t Hi) {
    return Lo + next() % (Hi - Lo + 1);
  }

private:
  uint64_t State;
};

} // namespace oomplan::planner

#endif
