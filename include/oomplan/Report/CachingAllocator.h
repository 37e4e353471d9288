//===- CachingAllocator.h - PyTorch's CUDA caching allocator, simulated -*-
// C++ -*-===//
//
// What a PyTorch user sees is torch.cuda.max_memory_reserved (and
// nvidia-smi), not live tensor bytes: the caching allocator rounds every
// request to 512 bytes, carves small ones (<= 1 MiB) from 2 MiB segments and
// requests under 10 MiB from 20 MiB segments, rounds larger ones to 2 MiB,
// picks the best-fitting cached block, splits blocks but merges them only
// within their segment, and never returns memory unless a cudaMalloc fails.
// This simulates those rules (read from c10/cuda/CUDACachingAllocator.cpp,
// PyTorch main at commit 001074d, the 2.x allocator; 1.13's has the same
// constants and best-fit/split rules but no expandable segments) over a
// sequence of allocations and frees, including PYTORCH_CUDA_ALLOC_CONF's
// max_split_size_mb and expandable_segments. allocationEvents turns a plan
// into that sequence. docs/training.md ("Runtime and the caching allocator").
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_REPORT_CACHINGALLOCATOR_H
#define OOMPLAN_REPORT_CACHINGALLOCATOR_H

#include "oomplan/Plan/Plan.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <vector>

namespace oomplan {
namespace report {

struct LibraryAllocation;

/// PYTORCH_CUDA_ALLOC_CONF's settings that shape fragmentation.
struct CudaAllocConfig {
  /// max_split_size_mb in bytes; blocks this large or larger are never split.
  uint64_t MaxSplitSize = UINT64_MAX;
  bool ExpandableSegments = false;
};

/// Parses "max_split_size_mb:128,expandable_segments:True" (PyTorch's
/// syntax; other keys, such as garbage_collection_threshold, are errors).
llvm::Expected<CudaAllocConfig> parseCudaAllocConf(llvm::StringRef Text);

struct AllocEvent {
  bool Free = false; ///< false: allocate Bytes as Id; true: free Id.
  uint32_t Id = 0;   ///< Names an allocation; a Free names a live one.
  uint64_t Bytes = 0;
};

struct AllocatorResult {
  uint64_t PeakAllocated = 0; ///< torch.cuda.max_memory_allocated.
  uint64_t PeakReserved = 0;  ///< torch.cuda.max_memory_reserved.
  uint64_t PeakRequested = 0; ///< Peak of the bytes asked for, unrounded.
  uint64_t Segments = 0;      ///< cudaMalloc calls (or mappings).
  /// With a limit: the index of the first allocation that could not be
  /// served after releasing every free segment (PyTorch's OOM).
  std::optional<size_t> OOMEvent;
  uint64_t AllocatedAtOOM = 0, ReservedAtOOM = 0;
};

/// Runs Events through the allocator's rules. LimitBytes: the memory the
/// allocator may reserve (the budget less the CUDA context); past it a
/// cudaMalloc fails and the allocator frees its unsplit cached segments and
/// retries, as PyTorch does, before giving up.
AllocatorResult
simulateCachingAllocator(llvm::ArrayRef<AllocEvent> Events,
                         const CudaAllocConfig &Config,
                         std::optional<uint64_t> LimitBytes = std::nullopt);

/// The allocations and frees of running P's schedule Iterations times, the
/// way PyTorch's tensors come and go: weights and inputs first, once; each
/// step allocates the buffers it starts and then frees those whose last
/// step it is. Optimizer state is allocated where it is first used in the
/// first iteration (PyTorch creates it lazily in the first optimizer step)
/// and kept. Id of buffer B in iteration I is I * buffers + B. Library
/// allocations (CudaLibraries.h) come after the step's own: a kept one in
/// the first iteration only, a transient one freed at once.
std::vector<AllocEvent>
allocationEvents(const Plan &P, unsigned Iterations,
                 llvm::ArrayRef<struct LibraryAllocation> Libraries = {});

} // namespace report
} // namespace oomplan

#endif
