//===- ServeReport.h - --serve's answer: text, JSON, vLLM -------*- C++ -*-===//
//-*-===//
//
// Everything --serve found, gathered by the driver, and its three
// printings: the report a person reads (each figure with the arithmetic
// that made it), the JSON a program reads, and the vLLM engine arguments
// that reproduce the plan.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SERVE_SERVEREPORT_H
#define OOMPLAN_SERVE_SERVEREPORT_H

#include "oomplan/Serve/KVCache.h"
#include "oomplan/Serve/Serving.h"
#include "llvm/Support/raw_ostream.h"

namespace oomplan {
namespace serve {

/// One engine step's peak: the arena and the step's own inputs and outputs
/// (token ids, masks, logits; not the KV cache, which is the pool's).
struct StepPeak {
  uint64_t ArenaBytes = 0, IOBytes = 0;
  uint64_t total() const { return ArenaBytes + IOBytes; }
};

struct ServeReport {
  std::string Model;
  std::string Device; ///< Profile name, or "--budget".
  ServeConfig Config;
  KVCacheLayout KV;
  unsigned KVBits = 16;
  std::string KVDtype;     ///< "fp16", "fp8", ...
  bool KVDtypeAuto = true; ///< The export's type (--kv-dtype auto).
  uint64_t WeightBytes = 0;
  StepPeak Prefill, Decode;
  ServeFigures Figures;
  Capacity Cap;
  std::optional<uint64_t> Longest;
  bool LongestUnbounded = false;
  std::vector<Lever> Levers;
};

void printServeText(llvm::raw_ostream &OS, const ServeReport &R);
void printServeJSON(llvm::raw_ostream &OS, const ServeReport &R);
/// `vllm serve` arguments; an error for a setting vLLM has no spelling
/// for (an int8 KV cache).
llvm::Expected<std::string> vllmArguments(const ServeReport &R);

} // namespace serve
} // namespace oomplan

#endif
