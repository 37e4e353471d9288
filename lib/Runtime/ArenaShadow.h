//===- ArenaShadow.h - arena bytes poisoned for AddressSanitizer -*- C++
//-*-===//
//
// Each region is one allocation, so AddressSanitizer sees a kernel that
// reads past its operand, or a buffer after its last read, as a read of
// live memory: the bytes belong to the next buffer or to a dead one. In an
// AddressSanitizer build ArenaShadow uses the sanitizer's manual poisoning
// interface to tell it which region bytes are alive:
//   - weights and IO buffers are addressable from create() on (the caller
//     and the weight loader write them); the padding between and after
//     them is poisoned;
//   - an arena buffer is addressable from just before the step that first
//     writes it (LiveBuffer::StartStep) to just after the last step that
//     reads it (EndStep - 1); every other arena byte is poisoned;
//   - between runs, the arena's graph inputs (the caller writes them next)
//     and the buffers that live to the last step (the outputs the caller
//     reads) are addressable.
// A buffer's addressable bytes are its tensors' bytes at the run's dims,
// not the plan's rounded size, so that a read one element past a tensor is
// caught even where alignment leaves room after it.
//
// In a normal build every member is an empty inline function: no state and
// no cost. Unplanned mode (a tensor per allocation) needs none of this.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_ARENASHADOW_H
#define OOMPLAN_LIB_RUNTIME_ARENASHADOW_H

#include "oomplan/Plan/Plan.h"
#include <cstdint>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOMPLAN_ASAN 1
#endif
#endif
#if !defined(OOMPLAN_ASAN) && defined(__SANITIZE_ADDRESS__)
#define OOMPLAN_ASAN 1
#endif
#ifndef OOMPLAN_ASAN
#define OOMPLAN_ASAN 0
#endif

#if OOMPLAN_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace oomplan {
namespace runtime {
struct RunInfo;
namespace detail {

/// Marks [P, P + Bytes) unaddressable (AddressSanitizer builds only).
inline void poisonBytes(const void *P, uint64_t Bytes) {
#if OOMPLAN_ASAN
  if (Bytes)
    ASAN_POISON_MEMORY_REGION(P, Bytes);
#else
  (void)P;
  (void)Bytes;
#endif
}
/// Marks [P, P + Bytes) addressable again.
inline void unpoisonBytes(const void *P, uint64_t Bytes) {
#if OOMPLAN_ASAN
  if (Bytes)
    ASAN_UNPOISON_MEMORY_REGION(P, Bytes);
#else
  (void)P;
  (void)Bytes;
#endif
}

class ArenaShadow {
public:
#if OOMPLAN_ASAN
  /// Poisons the regions at Base[R] (RegionBytes[R] each; a null base is
  /// skipped) but for what is alive between runs.
  void init(const Plan &P, const RunInfo &Info, char *const *Base,
            const uint64_t *RegionBytes);
  /// Before the first step: every arena byte poisoned.
  void beginRun();
  void beforeStep(uint64_t S) { set(Born, BornSpan, S, false); }
  void afterStep(uint64_t S) { set(Dying, DyingSpan, S, true); }
  /// After the last step, or a failed one: the state between runs.
  void endRun();
  /// Bytes the caller asked for by name (Executor::tensor): a dead
  /// tensor's bytes are its to inspect until the next run.
  void reveal(const void *P, uint64_t Bytes) const;
  ArenaShadow() = default;
  ArenaShadow(const ArenaShadow &) = delete;
  ArenaShadow &operator=(const ArenaShadow &) = delete;
  /// Leaves the regions addressable for whoever allocates their bytes next.
  ~ArenaShadow();

private:
  struct Span {
    char *P;
    uint64_t Bytes;
  };
  /// Poisons or unpoisons step S's spans: Spans[Ids[Off[S]..Off[S+1])].
  void set(const std::vector<uint64_t> &Off, const std::vector<uint32_t> &Ids,
           uint64_t S, bool Poison);
  std::vector<Span> Spans; ///< Per arena buffer.
  /// Per step, as offsets into BornSpan and DyingSpan (NumSteps + 1 each):
  /// the buffers alive from its start, and those dead after it.
  std::vector<uint64_t> Born, Dying;
  std::vector<uint32_t> BornSpan, DyingSpan;
  std::vector<Span> BetweenRuns; ///< Arena spans alive between runs.
  std::vector<Span> Regions;     ///< Every region poisoned, to unpoison.
  Span Arena{nullptr, 0};
#else
  void init(const Plan &, const RunInfo &, char *const *, const uint64_t *) {}
  void beginRun() {}
  void beforeStep(uint64_t) {}
  void afterStep(uint64_t) {}
  void endRun() {}
  void reveal(const void *, uint64_t) const {}
#endif
};

} // namespace detail
} // namespace runtime
} // namespace oomplan

#endif
