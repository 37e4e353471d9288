//===- Device.h - where a backend's regions live ----------------*- C++ -*-===//
//
// The executor is backend-neutral: a backend is a kernel table (Backend.h)
// plus a Device, which owns the memory the plan's regions live in and the
// two queues steps run on: compute steps on one, the
// plan's offloads and prefetches on the other, ordered with events where
// the launch plan (LaunchPlan.h) says one must wait for the other.
//
// The CPU device is host memory with both queues synchronous, so events
// are no-ops there. The CUDA device allocates device memory (one cudaMalloc
// per region, pinned host memory for the host region), runs the compute
// queue on one stream and copies on a second, and measures what the CUDA
// context, the library handles and the run's allocations take.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_DEVICE_H
#define OOMPLAN_RUNTIME_DEVICE_H

#include "oomplan/Schedule/Region.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>

namespace oomplan {
namespace runtime {

/// The two queues of a run. Compute runs kernels (and recompute); Copy runs
/// the plan's offloads and prefetches, so that they overlap compute.
enum class Queue : uint8_t { Compute = 0, Copy = 1 };
constexpr unsigned NumQueues = 2;

enum class CopyKind : uint8_t { HostToDevice, DeviceToHost, DeviceToDevice };

/// What a device takes before any region is allocated, measured when it
/// was opened (CUDA: the drop in cudaMemGetInfo's free bytes). Absent:
/// not measurable on this device.
struct DeviceOverhead {
  /// Creating the context (before any handle or allocation).
  std::optional<uint64_t> ContextBytes;
  /// The kernel libraries' handles (cuBLAS, cuDNN) and the two streams.
  std::optional<uint64_t> HandleBytes;
};

class Device {
public:
  virtual ~Device();
  /// "cpu", "cuda".
  virtual llvm::StringRef name() const = 0;
  /// True when region memory is host memory the caller may read and write
  /// directly (CPU). Otherwise the executor stages weights, inputs and
  /// outputs through host buffers and copies.
  virtual bool hostVisible() const = 0;
  /// The least buffer alignment the device's kernels accept (CUDA: 16, its
  /// kernels read 8-byte elements and vectors; a misaligned access is a
  /// sticky error that ends the context). The executor refuses plans with
  /// less.
  virtual uint64_t minAlignment() const { return 1; }
  /// True when the regions are host memory from the host's allocator (CPU,
  /// cuda-on-cpu): in an AddressSanitizer build the executor then poisons
  /// the bytes no live buffer owns (ArenaShadow.h). A device's memory the
  /// sanitizer has no shadow for must never be poisoned.
  virtual bool hostMemory() const { return false; }

  /// One allocation of Bytes for region R (Region::Host: host memory the
  /// device can copy from asynchronously). A zero-byte request returns a
  /// non-null address that no kernel dereferences. Errors: out of memory.
  virtual llvm::Expected<void *> allocate(Region R, uint64_t Bytes) = 0;
  virtual void release(Region R, void *P) = 0;

  /// Copies Bytes on queue Q; it may complete later (synchronize()).
  virtual llvm::Error copy(void *Dst, const void *Src, uint64_t Bytes,
                           CopyKind K, Queue Q) = 0;
  /// Copies a few host bytes (a shape value computed on the host) to the
  /// device on queue Q, without waiting for the queue: Src may change once
  /// this returns. The default is copy(); CUDA passes up to 512 bytes as a
  /// kernel argument, since a copy from pageable memory would wait.
  virtual llvm::Error writeSmall(void *Dst, const void *Src, uint64_t Bytes,
                                 Queue Q) {
    return copy(Dst, Src, Bytes, CopyKind::HostToDevice, Q);
  }
  /// Fills Bytes with the PatternBytes-wide (1, 2, 4 or 8) Pattern, on
  /// queue Q (--poison: the queue of the step after which the buffer dies,
  /// so that an offload still reading it finishes first).
  virtual llvm::Error fill(void *Dst, uint64_t Bytes, uint64_t Pattern,
                           unsigned PatternBytes, Queue Q) = 0;

  /// Events: createEvents(N) makes N events and returns the id of the
  /// first (the others follow it; they live as long as the device);
  /// record(E, Q) marks the point after the work queued so far on Q;
  /// wait(E, Q) makes later work on Q wait for that point.
  virtual llvm::Expected<unsigned> createEvents(unsigned N) = 0;
  virtual llvm::Error record(unsigned Event, Queue Q) = 0;
  virtual llvm::Error wait(unsigned Event, Queue Q) = 0;
  /// Waits until all queued work on both queues is done; reports a kernel
  /// failure that happened asynchronously.
  virtual llvm::Error synchronize() = 0;

  /// Recording a run's steps once and replaying them (CUDA graphs): the
  /// same kernels and copies at the same addresses, one launch instead of
  /// one per step. Between beginRecording() and endRecording() work queued
  /// on either queue is recorded, not run (the copy queue is forked from
  /// and joined back to the compute queue); replay(Id) queues it all on
  /// the compute queue. A device that cannot record says so.
  virtual bool canRecord() const { return false; }
  virtual llvm::Error beginRecording() {
    return llvm::make_error<llvm::StringError>("recording is not supported",
                                               llvm::inconvertibleErrorCode());
  }
  /// Ends the recording; an error when something in it could not be
  /// recorded (a kernel that waited for the device), and then nothing
  /// was recorded or run.
  virtual llvm::Expected<unsigned> endRecording() {
    return llvm::make_error<llvm::StringError>("recording is not supported",
                                               llvm::inconvertibleErrorCode());
  }
  /// Frees recording Id (endRecording's); it is not replayed again.
  virtual void dropRecording(unsigned) {}
  virtual llvm::Error replay(unsigned) {
    return llvm::make_error<llvm::StringError>("recording is not supported",
                                               llvm::inconvertibleErrorCode());
  }

  /// Timers: device time between two points of the queues, for a device
  /// whose queues run asynchronously (CUDA: timing events), so that a run's
  /// steps, and with --profile each step, are timed on the device without
  /// waiting for it after every step. createTimers(N) makes N and returns
  /// the first's id (the others follow it); mark(T, Q) records T after the
  /// work queued so far on Q; after synchronize(), secondsBetween(A, B) is
  /// the time from mark A to mark B, or none where it cannot tell. A device
  /// whose queues are synchronous (CPU) is timed by the executor's clock
  /// instead; the defaults are for it.
  virtual llvm::Expected<unsigned> createTimers(unsigned) { return 0u; }
  virtual llvm::Error mark(unsigned /*Timer*/, Queue) {
    return llvm::Error::success();
  }
  virtual std::optional<double> secondsBetween(unsigned /*From*/,
                                               unsigned /*To*/) {
    return std::nullopt;
  }

  virtual DeviceOverhead overhead() const = 0;
  /// Free device memory now (CUDA: cudaMemGetInfo), or none (CPU).
  virtual std::optional<uint64_t> freeBytes() = 0;
};

/// Host memory, synchronous queues: the CPU backend's device. Stateless,
/// shared by every CPU executor.
Device &hostDevice();

/// Host memory behind the interface of a device the host cannot touch
/// (hostVisible() false, CUDA's 16-byte alignment, synchronous queues), so
/// that the executor's device path (staged weights, mirrored inputs and
/// outputs, shape values computed on the host, host steps) runs and is
/// checked on any machine: the cuda-on-cpu backend's device (CUDA.h).
Device &stagedHostDevice();

} // namespace runtime
} // namespace oomplan

#endif
