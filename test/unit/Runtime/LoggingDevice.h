//===- LoggingDevice.h - a device the host must not touch, logged -*- C++
//-*-===//
//
// Shared by the executor tests (ExecutorTest.cpp, HostStepsTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TEST_UNIT_RUNTIME_LOGGINGDEVICE_H
#define OOMPLAN_TEST_UNIT_RUNTIME_LOGGINGDEVICE_H

#include "oomplan/Runtime/Device.h"
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace oomplan {
namespace runtime {
namespace unit {

// A device the host is not to touch (as CUDA's): host memory underneath, so
// kernels still run, but hostVisible() is false, so the executor must stage
// weights and mirror inputs and outputs. It logs each queue operation.
class LoggingDevice final : public Device {
public:
  std::vector<std::string> Log;
  std::vector<std::pair<char *, uint64_t>> Regions;
  unsigned Events = 0;
  uint64_t Alignment = 1;

  llvm::StringRef name() const override { return "logging"; }
  bool hostVisible() const override { return false; }
  uint64_t minAlignment() const override { return Alignment; }
  llvm::Expected<void *> allocate(Region R, uint64_t Bytes) override {
    auto P = hostDevice().allocate(R, Bytes);
    if (P) {
      std::memset(*P, 0xFF, Bytes); // what was asked for, no more
      Regions.push_back(
          {static_cast<char *>(*P), std::max<uint64_t>(Bytes, 64)});
    }
    return P;
  }
  void release(Region R, void *P) override { hostDevice().release(R, P); }
  llvm::Error copy(void *Dst, const void *Src, uint64_t Bytes, CopyKind K,
                   Queue Q) override {
    Log.push_back(std::string(K == CopyKind::HostToDevice   ? "h2d"
                              : K == CopyKind::DeviceToHost ? "d2h"
                                                            : "d2d") +
                  (Q == Queue::Copy ? "@copy" : "@compute"));
    return hostDevice().copy(Dst, Src, Bytes, K, Q);
  }
  llvm::Error fill(void *D, uint64_t B, uint64_t P, unsigned W,
                   Queue Q) override {
    return hostDevice().fill(D, B, P, W, Q);
  }
  llvm::Expected<unsigned> createEvents(unsigned N) override {
    unsigned Base = Events;
    Events += N;
    return Base;
  }
  // "record3@copy": an operation, its event or timer, its queue.
  llvm::Error logOn(const char *What, unsigned Id, Queue Q) {
    Log.push_back(What + std::to_string(Id) +
                  (Q == Queue::Copy ? "@copy" : "@compute"));
    return llvm::Error::success();
  }
  llvm::Error record(unsigned E, Queue Q) override {
    return logOn("record", E, Q);
  }
  llvm::Error wait(unsigned E, Queue Q) override { return logOn("wait", E, Q); }
  llvm::Error synchronize() override {
    Log.push_back("sync");
    return llvm::Error::success();
  }
  unsigned Timers = 0;
  llvm::Expected<unsigned> createTimers(unsigned N) override {
    unsigned Base = Timers;
    Timers += N;
    return Base;
  }
  llvm::Error mark(unsigned T, Queue Q) override {
    return logOn("timer", T, Q);
  }
  // Made-up times that say which two marks a time was taken between:
  // 0.25 To - 0.125 From seconds (0 to 1: 0.25; 2 to 3: 0.5; 4 to 5: 0.75).
  std::optional<double> secondsBetween(unsigned From, unsigned To) override {
    return 0.25 * double(To) - 0.125 * double(From);
  }
  DeviceOverhead overhead() const override { return {}; }
  std::optional<uint64_t> freeBytes() override { return std::nullopt; }
  bool inRegion(const void *P) const {
    for (auto &[Base, Bytes] : Regions)
      if (P >= Base && P < Base + Bytes)
        return true;
    return false;
  }
};

} // namespace unit
} // namespace runtime
} // namespace oomplan

#endif
