//===- Budget.h - the device budget and the one "does it fit" ---*- C++ -*-===//
//
// A plan fits when the figure its runtime runs out of, plus the memory the
// device loses before the run starts (the CUDA context, library handles),
// is at most the device's memory. That sum is decided here and nowhere
// else: the verdict, the exit code, the JSON, the remedies, the capacity
// searches, the fitter, the parallel planner and the server's KV cache all
// judge figures with fits() against the one Budget the driver builds from
// --budget, --device, --overhead and the runtime. The lowest layer holds it
// so that every layer above can take a Budget and none re-derives its sums.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SUPPORT_BUDGET_H
#define OOMPLAN_SUPPORT_BUDGET_H

#include <cstdint>
#include <optional>

namespace oomplan {

/// The figure of a plan that runs out first on the runtime it is made for.
enum class DecidingFigure : uint8_t {
  /// Our own executor allocates exactly the plan's regions: the total.
  Total,
  /// PyTorch's CUDA caching allocator: its reserved bytes (never below the
  /// total) where they were simulated, else the total.
  Reserved,
};

/// What one plan needs, as a budget judges it (bytes).
struct Figures {
  uint64_t TotalBytes = 0; ///< Weights + inputs/outputs + arena.
  /// The caching allocator's reserved bytes for the plan, when simulated.
  std::optional<uint64_t> ReservedBytes;
};

/// The device memory a run may use and what comes off it before the plan's
/// own figure counts. Built once by the driver; every layer receives it.
struct Budget {
  /// Device memory available (bytes): --budget, else the named --device's
  /// memory. None: no budget given; everything fits.
  std::optional<uint64_t> CapacityBytes;
  /// The device profile's memory (bytes): what a fit aims at when no
  /// budget is given (a transform still needs a bound).
  uint64_t DeviceBytes = 0;
  /// Taken before the run (bytes): --overhead, else a named device's
  /// measured context and library handles.
  uint64_t OverheadBytes = 0;
  /// Kept free of tensors for what the runtime's allocator reserves beyond
  /// them (bytes); only a fit's target has any.
  uint64_t HeadroomBytes = 0;
  DecidingFigure Decides = DecidingFigure::Total;
  /// CapacityBytes is the --device's memory (no --budget given).
  bool CapacityFromDevice = false;
  /// OverheadBytes is the --device's measured one (no --overhead given).
  bool OverheadFromDevice = false;

  bool given() const { return CapacityBytes.has_value(); }
  /// This budget, with the device's memory as the capacity when none was
  /// given: the bound a fit works within.
  Budget bounded() const;
  /// This budget with Bytes more kept free of tensors.
  Budget withHeadroom(uint64_t Bytes) const;
  /// What the plan's deciding figure may reach: the capacity less the
  /// overhead and the headroom, 0 when they take all of it. None without a
  /// capacity.
  std::optional<uint64_t> roomBytes() const;
};

/// The figure of F that B's runtime runs out of (bytes).
uint64_t decidingBytes(const Budget &B, const Figures &F);

/// The deciding figure plus the overhead and the headroom: the device
/// memory the run needs (bytes), UINT64_MAX when the sum overflows.
uint64_t neededBytes(const Budget &B, const Figures &F);

/// True when F fits B: the deciding figure + overhead + headroom is at most
/// the capacity, with an overflowing sum never fitting. Always true without
/// a capacity.
bool fits(const Budget &B, const Figures &F);

/// The capacity less what F needs (bytes), negative when F does not fit,
/// computed without wrapping and clamped to int64_t. 0 without a capacity.
int64_t spareBytes(const Budget &B, const Figures &F);

} // namespace oomplan

#endif
