//===- RandomInstance.cpp - reproducible random request lists -------------===//
//
// Lifetimes: 70% short (1-4 steps), 25% medium (1-32), 5% long (up to
// MaxLongLifetimeSteps). Sizes: log-uniform from 1 byte to MaxSizeBytes.
// SplitMix64 makes the sequence identical on every platform.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Placement/RandomInstance.h"
#include "SplitMix64.h"

namespace oomplan::planner {

std::vector<BufferRequest>
makeRandomRequests(const RandomInstanceOptions &Options) {
  SplitMix64 R(Options.Seed);
  std::vector<BufferRequest> Requests;
  Requests.reserve(Options.NumBuffers);
  unsigned MaxLog = 0;
  while (MaxLog < 63 && (2ull << MaxLog) <= Options.MaxSizeBytes)
    ++MaxLog;
  for (uint64_t I = 0; I < Options.NumBuffers; ++I) {
    BufferRequest B;
    B.Id = I;
    uint64_t Kind = R.between(0, 99);
    uint64_t MaxLife =
        Kind < 70   ? 4
        : Kind < 95 ? 32
                    : std::max<uint64_t>(1, Options.MaxLongLifetimeSteps);
    B.StartStep = I;
    B.EndStep = I + R.between(1, MaxLife);
    if (R.between(0, 99) >= Options.ZeroSizePercent) {
      uint64_t Log = R.between(0, MaxLog);
      uint64_t Low = 1ull << Log;
      uint64_t High = Log >= 63 ? UINT64_MAX : (Low << 1) - 1;
      B.SizeBytes = std::min(R.between(Low, High), Options.MaxSizeBytes);
    }
    B.AlignBytes =
        Options.AlignBytes ? Options.AlignBytes : 1ull << R.between(0, 8);
    Requests.push_back(B);
  }
  return Requests;
}

} // namespace oomplan::planner
