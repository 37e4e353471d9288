//===- Serving.h - an LLM server's KV cache capacity ------------*- C++ -*-===//
//
// What vLLM computes at start-up from a profile run on the GPU, computed
// from the plan instead: the memory the server may use (device memory x
// --gpu-memory-utilization), less the weights, the larger activation peak
// of one engine step (a prefill of --max-batched-tokens tokens, a decode of
// --max-num-seqs sequences) and the overhead, is the paged KV cache; in
// blocks of --block-size tokens it says how many tokens and how many
// sequences of --max-model-len fit, and whether the server starts at all.
// Pure arithmetic on figures the driver plans; no graph here.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SERVE_SERVING_H
#define OOMPLAN_SERVE_SERVING_H

#include "oomplan/Support/Budget.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace oomplan {
namespace serve {

/// --gpu-memory-utilization as an exact fraction (0.9 is 9/10), so that
/// usable memory is floor(device x Num / Den) with no rounding of a double.
struct Fraction {
  uint64_t Num = 9, Den = 10;
  std::string Text = "0.9";
};

/// Parses a decimal in (0, 1] with at most 9 digits after the point.
llvm::Expected<Fraction> parseUtilization(llvm::StringRef Text);

/// floor(Bytes x F), exactly.
uint64_t scaleBytes(uint64_t Bytes, const Fraction &F);

/// The server's settings, resolved.
struct ServeConfig {
  uint64_t MaxModelLen = 0;
  uint64_t MaxBatchedTokens = 0;
  uint64_t MaxNumSeqs = 0;
  uint64_t BlockSize = 16;
  Fraction Utilization;
  /// The driver's budget: the capacity is --budget, else the --device's
  /// memory; the overhead --overhead (CUDA context, NCCL, ...).
  Budget Limit;
  uint64_t deviceBytes() const { return Limit.CapacityBytes.value_or(0); }
  unsigned TensorParallel = 1;
};

/// The figures one capacity is computed from.
struct ServeFigures {
  uint64_t WeightBytes = 0;
  uint64_t StepBytes = 0; ///< The larger engine step's peak.
  uint64_t KVBytesPerToken = 0;
  /// Tokens a sliding-window layer keeps (every layer the same), if any.
  std::optional<uint64_t> Window;
};

struct Capacity {
  uint64_t UsableBytes = 0; ///< floor(device x utilization).
  /// Usable - weights - step - overhead; negative when they do not fit.
  int64_t KVCacheBytes = 0;
  uint64_t BlockBytes = 0; ///< block size x KV bytes per token.
  uint64_t Blocks = 0;     ///< floor(KV cache / block bytes), 0 if negative.
  uint64_t Tokens = 0;     ///< Blocks x block size.
  /// Blocks one sequence of --max-model-len needs (vLLM's rule: ceil(len /
  /// block); with a window, ceil(min(window - 1 + chunk, len) / block) + 1).
  uint64_t BlocksPerSequence = 0;
  uint64_t Sequences = 0;    ///< floor(Blocks / BlocksPerSequence).
  double MaxConcurrency = 0; ///< Blocks / BlocksPerSequence (vLLM's).
  bool Starts = false;       ///< One sequence of --max-model-len fits.
  std::string Why;           ///< Why the server does not start.
};

/// The capacity of Figures under Config.
Capacity computeCapacity(const ServeConfig &Config, const ServeFigures &F);

/// Blocks one sequence of Len tokens needs.
uint64_t blocksPerSequence(const ServeConfig &Config, uint64_t Len,
                           std::optional<uint64_t> Window);

/// The longest --max-model-len with which the server starts; StepAt(L) is
/// the step peak when the server is configured for L (a decode step's
/// activations may grow with it). None: not even 1 token. Unbounded (set
/// in *Unbounded) when a sliding window caps every sequence's cache below
/// what fits.
llvm::Expected<std::optional<uint64_t>>
longestContext(const ServeConfig &Config, ServeFigures F,
               const std::function<llvm::Expected<uint64_t>(uint64_t)> &StepAt,
               bool *Unbounded);

/// One lever: a change of setting and the capacity it gives.
struct Lever {
  std::string Name;         ///< "fp8 KV cache".
  std::string Setting;      ///< "--kv-dtype fp8".
  std::string Note;         ///< What it assumes.
  uint64_t MaxModelLen = 0; ///< The sequence length its concurrency counts.
  Capacity Cap;
};

} // namespace serve
} // namespace oomplan

#endif
