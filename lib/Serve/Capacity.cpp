//===- Capacity.cpp - the paged KV cache beside the model -----------------===//
//
// vLLM's start-up arithmetic (its worker's determine_available_memory and
// the KV cache manager's block count): available = total x utilization -
// (weights + profiled peak + non-torch memory), blocks = available /
// (block_size x bytes per token over all layers), and the check that one
// request of max_model_len gets its blocks. Figures are integers throughout
// so that a byte more or less is decided exactly.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Serve/Serving.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/Twine.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::serve;

Expected<Fraction> serve::parseUtilization(StringRef Text) {
  auto Bad = [&] {
    return makeInputError("--gpu-memory-utilization: '" + Text +
                          "' is not a fraction in (0, 1] (0.9 is 90%)");
  };
  auto [Int, Frac] = Text.split('.');
  if (Int.empty() && Frac.empty())
    return Bad();
  if (Frac.size() > 9)
    return Bad();
  uint64_t I = 0, F = 0, Den = 1;
  if ((!Int.empty() && Int.getAsInteger(10, I)) ||
      (!Frac.empty() && Frac.getAsInteger(10, F)) || Int.startswith("-") ||
      Frac.startswith("-") || Frac.startswith("+"))
    return Bad();
  for (size_t K = 0; K < Frac.size(); ++K)
    Den *= 10;
  if (I > 1)
    return Bad();
  uint64_t Num = I * Den + F;
  if (Num == 0 || Num > Den)
    return Bad();
  Fraction Out;
  Out.Num = Num;
  Out.Den = Den;
  Out.Text = Text.str();
  return Out;
}

uint64_t serve::scaleBytes(uint64_t Bytes, const Fraction &F) {
  return uint64_t((unsigned __int128)Bytes * F.Num / F.Den);
}

static uint64_t ceilDiv(uint64_t A, uint64_t B) { return (A + B - 1) / B; }

uint64_t serve::blocksPerSequence(const ServeConfig &C, uint64_t Len,
                                  std::optional<uint64_t> Window) {
  if (!Window)
    return ceilDiv(Len, C.BlockSize);
  // A sliding-window layer keeps the last window - 1 tokens and the chunk
  // being computed, and one block more: the window need not start at a
  // block's start.
  uint64_t Kept = std::min(*Window - 1 + C.MaxBatchedTokens, Len);
  return ceilDiv(Kept, C.BlockSize) + 1;
}

Capacity serve::computeCapacity(const ServeConfig &C, const ServeFigures &F) {
  Capacity Cap;
  Cap.UsableBytes = scaleBytes(C.deviceBytes(), C.Utilization);
  // The server's allocator takes its share of the device; the weights, the
  // step and the overhead come off it, and the KV cache gets what is left.
  Budget Usable = C.Limit;
  Usable.CapacityBytes = Cap.UsableBytes;
  Figures Model{F.WeightBytes + F.StepBytes, {}};
  int64_t KV = spareBytes(Usable, Model);
  Cap.KVCacheBytes = KV;
  Cap.BlockBytes = C.BlockSize * F.KVBytesPerToken;
  Cap.Blocks = KV > 0 && Cap.BlockBytes ? uint64_t(KV / Cap.BlockBytes) : 0;
  Cap.Tokens = Cap.Blocks * C.BlockSize;
  Cap.BlocksPerSequence = blocksPerSequence(C, C.MaxModelLen, F.Window);
  Cap.Sequences = Cap.Blocks / Cap.BlocksPerSequence;
  Cap.MaxConcurrency = double(Cap.Blocks) / double(Cap.BlocksPerSequence);
  if (KV <= 0)
    Cap.Why = "no memory for the KV cache blocks: weights, the step's "
              "activations and the overhead take " +
              std::to_string(neededBytes(Usable, Model)) + " of the " +
              std::to_string(Cap.UsableBytes) +
              " bytes usable (device x gpu-memory-utilization)";
  else if (Cap.Blocks < Cap.BlocksPerSequence)
    Cap.Why = "--max-model-len " + std::to_string(C.MaxModelLen) + " needs " +
              std::to_string(Cap.BlocksPerSequence) +
              " blocks for one sequence; the KV cache holds " +
              std::to_string(Cap.Blocks) + " (" + std::to_string(Cap.Tokens) +
              " tokens)";
  Cap.Starts = Cap.Why.empty();
  return Cap;
}

Expected<std::optional<uint64_t>>
serve::longestContext(const ServeConfig &Config, ServeFigures F,
                      const std::function<Expected<uint64_t>(uint64_t)> &StepAt,
                      bool *Unbounded) {
  *Unbounded = false;
  auto Fits = [&](uint64_t Len) -> Expected<bool> {
    auto Step = StepAt(Len);
    if (!Step) {
      // A step whose sizes pass 2^63 bytes does not fit any device.
      Error E = Step.takeError();
      E = handleErrors(std::move(E), [](const OverflowError &) {});
      if (E)
        return std::move(E);
      return false;
    }
    ServeConfig C = Config;
    C.MaxModelLen = Len;
    ServeFigures G = F;
    G.StepBytes = *Step;
    return computeCapacity(C, G).Starts;
  };
  auto One = Fits(1);
  if (!One)
    return One.takeError();
  if (!*One)
    return std::optional<uint64_t>();
  // Without any step the cache is largest: no length past its tokens fits.
  ServeConfig C1 = Config;
  C1.MaxModelLen = 1;
  ServeFigures NoStep = F;
  NoStep.StepBytes = 0;
  Capacity Cap1 = computeCapacity(C1, NoStep);
  uint64_t Lo = 1, Hi = Cap1.Tokens;
  if (F.Window) {
    // Past window - 1 + chunk tokens a sequence needs no more blocks: if
    // that fits, only the step's growth with the context can stop it, and
    // a context of 2^20 tokens that still fits is called unbounded.
    const uint64_t Far = uint64_t(1) << 20;
    uint64_t Sat = *F.Window - 1 + Config.MaxBatchedTokens;
    auto AtSat = Fits(Sat);
    if (!AtSat)
      return AtSat.takeError();
    if (*AtSat) {
      auto AtFar = Fits(std::max(Sat, Far));
      if (!AtFar)
        return AtFar.takeError();
      if (*AtFar) {
        *Unbounded = true;
        return std::optional<uint64_t>();
      }
      Lo = Sat;
      Hi = std::max(Sat, Far);
    } else {
      Hi = std::min(Hi, Sat);
    }
  }
  // Largest Len in [Lo, Hi] that fits: a longer context needs as many
  // blocks or more, and a step that grows with the context leaves fewer.
  while (Lo < Hi) {
    uint64_t Mid = Lo + (Hi - Lo + 1) / 2;
    auto M = Fits(Mid);
    if (!M)
      return M.takeError();
    if (*M)
      Lo = Mid;
    else
      Hi = Mid - 1;
  }
  return std::optional<uint64_t>(Lo);
}
