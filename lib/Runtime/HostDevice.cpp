//===- HostDevice.cpp - the CPU backend's device: host memory -------------===//
//
// Regions are 64-byte-aligned host allocations; both queues run at once
// (copies are memcpy), so events have nothing to order.
//
//===----------------------------------------------------------------------===//
#include "ArenaShadow.h"
#include "oomplan/Runtime/Device.h"
#include "oomplan/Support/Error.h"
#include <cstdlib>
#include <cstring>

using namespace oomplan;
using namespace oomplan::runtime;

Device::~Device() = default;

namespace {
class HostDevice : public Device {
public:
  llvm::StringRef name() const override { return "cpu"; }
  bool hostVisible() const override { return true; }
  bool hostMemory() const override { return true; }
  // At least 64 bytes, so that even an empty region has a distinct,
  // aligned, non-null base (a zero-sized tensor must still look present).
  llvm::Expected<void *> allocate(Region R, uint64_t Bytes) override {
    uint64_t Size = std::max<uint64_t>(64, (Bytes + 63) / 64 * 64);
    if (Size < Bytes)
      return makeIOError("cannot allocate " + llvm::Twine(Bytes) +
                         " bytes for the " + regionName(R) + " region");
    void *P = std::aligned_alloc(64, Size);
    if (!P)
      return makeIOError("cannot allocate the " + regionName(R) + " region (" +
                         llvm::Twine(Bytes) + " bytes)");
    // The rounding up is ours, not the caller's: under AddressSanitizer a
    // read past Bytes is reported as one past a malloc of Bytes would be.
    detail::poisonBytes(static_cast<char *>(P) + Bytes, Size - Bytes);
    return P;
  }
  void release(Region, void *P) override { std::free(P); }
  llvm::Error copy(void *Dst, const void *Src, uint64_t Bytes, CopyKind,
                   Queue) override {
    if (Bytes)
      std::memmove(Dst, Src, Bytes);
    return llvm::Error::success();
  }
  llvm::Error fill(void *Dst, uint64_t Bytes, uint64_t Pattern,
                   unsigned PatternBytes, Queue) override {
    char *P = static_cast<char *>(Dst);
    if (PatternBytes == 1) {
      std::memset(P, int(Pattern & 0xFF), Bytes);
      return llvm::Error::success();
    }
    for (uint64_t I = 0; I + PatternBytes <= Bytes; I += PatternBytes)
      std::memcpy(P + I, &Pattern, PatternBytes); // little-endian low bytes
    return llvm::Error::success();
  }
  llvm::Expected<unsigned> createEvents(unsigned) override { return 0; }
  llvm::Error record(unsigned, Queue) override {
    return llvm::Error::success();
  }
  llvm::Error wait(unsigned, Queue) override { return llvm::Error::success(); }
  llvm::Error synchronize() override { return llvm::Error::success(); }
  DeviceOverhead overhead() const override { return {}; }
  std::optional<uint64_t> freeBytes() override { return std::nullopt; }
};
// Host memory the executor treats as a device's (hostVisible false): it
// stages weights, mirrors inputs and outputs, computes shape values on the
// host and runs host steps as for CUDA, with the CPU's synchronous queues
// underneath. Its alignment is CUDA's, so plans are laid out alike.
class StagedHostDevice final : public HostDevice {
public:
  llvm::StringRef name() const override { return "cuda-on-cpu"; }
  bool hostVisible() const override { return false; }
  uint64_t minAlignment() const override { return 16; }
};
} // namespace

Device &runtime::hostDevice() {
  static HostDevice D;
  return D;
}

Device &runtime::stagedHostDevice() {
  static StagedHostDevice D;
  return D;
}
