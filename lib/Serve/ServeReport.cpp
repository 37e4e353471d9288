//===- ServeReport.cpp - --serve's answer, as text, JSON or vLLM args -----===//
//
// The text shows each figure beside the arithmetic that made it, so that a
// reader can redo the capacity by hand from the lines above it.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Serve/ServeReport.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::serve;

static std::string bytes(uint64_t B) {
  return std::to_string(B) + " (" + formatBytes(B) + ")";
}

// "2 x 32 layers x 8 KV heads x 128 head size x 2 bytes" when every layer
// says its heads and size alike; else the layers' width.
static std::string formula(const ServeReport &R) {
  const KVCacheLayout &KV = R.KV;
  const KVLayer &First = KV.Layers.front();
  bool Uniform = true;
  for (const KVLayer &L : KV.Layers)
    Uniform &= L.KElemsPerToken == First.KElemsPerToken &&
               L.VElemsPerToken == First.VElemsPerToken &&
               L.KVHeads == First.KVHeads && L.HeadSize == First.HeadSize;
  std::string Elem =
      R.KVBits % 8 == 0
          ? std::to_string(R.KVBits / 8) + " bytes (" + R.KVDtype + ")"
          : std::to_string(R.KVBits) + " bits (" + R.KVDtype + ")";
  if (Uniform && First.KElemsPerToken == First.VElemsPerToken) {
    std::string Width =
        First.KVHeads
            ? std::to_string(First.KVHeads) + " KV heads x " +
                  std::to_string(First.HeadSize) + " head size"
            : std::to_string(First.KElemsPerToken) + " (KV heads x head size)";
    if (KV.Source == KVSource::CacheInputs)
      return "2 x " + std::to_string(First.KElemsPerToken) +
             " elements over all layers (the cache inputs) x " + Elem;
    return "2 x " + std::to_string(KV.Layers.size()) + " layers x " + Width +
           " x " + Elem;
  }
  return std::to_string(KV.elementsPerToken()) + " K and V elements over " +
         std::to_string(KV.Layers.size()) + " layers x " + Elem;
}

// "29.59x": two decimals, as vLLM logs its maximum concurrency.
static std::string ratio(double X) { return formatv("{0:F2}x", X).str(); }

static const char *sequences(uint64_t N) {
  return N == 1 ? "sequence" : "sequences";
}

static void printCapacityLine(raw_ostream &OS, const Capacity &C,
                              uint64_t Len) {
  OS << C.Blocks << " blocks, " << C.Tokens << " tokens, " << C.Sequences << " "
     << sequences(C.Sequences) << " of " << Len << " (concurrency "
     << ratio(C.MaxConcurrency) << ")";
}

void serve::printServeText(raw_ostream &OS, const ServeReport &R) {
  const ServeConfig &C = R.Config;
  const Capacity &Cap = R.Cap;
  OS << "serving: " << R.Model << " on " << R.Device;
  if (C.TensorParallel > 1)
    OS << " x " << C.TensorParallel;
  OS << "; max-model-len " << C.MaxModelLen << ", max-batched-tokens "
     << C.MaxBatchedTokens << ", max-num-seqs " << C.MaxNumSeqs
     << ", block-size " << C.BlockSize << "\n";
  OS << "attention blocks: " << R.KV.Layers.size() << " (from the "
     << kvSourceName(R.KV.Source) << ")";
  if (R.KV.Branches > 1)
    OS << " in one of the export's " << R.KV.Branches
       << " branches (an If runs one)";
  if (R.KV.CacheInputBytesPerToken && R.KV.Source != KVSource::CacheInputs)
    OS << "; the " << R.KV.CacheInputs << " cache inputs agree ("
       << *R.KV.CacheInputBytesPerToken << " bytes per token at the export's "
       << "type)";
  OS << "\n";
  if (auto W = R.KV.window())
    OS << "sliding window: " << *W
       << " tokens in every layer (a sequence keeps at most window - 1 + "
          "max-batched-tokens tokens, and a block more)\n";
  OS << "kv cache per token: " << formula(R) << " = "
     << R.Figures.KVBytesPerToken << " bytes"
     << (R.KVDtypeAuto ? " (--kv-dtype auto: the export's type)" : "") << "\n";
  OS << "usable memory: " << C.deviceBytes() << " x " << C.Utilization.Text
     << " = " << bytes(Cap.UsableBytes) << "\n";
  OS << "weights: " << bytes(R.WeightBytes) << "\n";
  OS << "prefill step (" << C.MaxBatchedTokens
     << " tokens): " << bytes(R.Prefill.total()) << " = arena "
     << R.Prefill.ArenaBytes << " + inputs/outputs " << R.Prefill.IOBytes
     << "\n";
  OS << "decode step (" << C.MaxNumSeqs << " sequences at " << C.MaxModelLen
     << " tokens): " << bytes(R.Decode.total()) << " = arena "
     << R.Decode.ArenaBytes << " + inputs/outputs " << R.Decode.IOBytes << "\n";
  OS << "overhead: " << bytes(C.Limit.OverheadBytes) << "\n";
  OS << "kv cache: " << Cap.UsableBytes << " - " << R.WeightBytes << " - "
     << R.Figures.StepBytes << " - " << C.Limit.OverheadBytes << " = "
     << Cap.KVCacheBytes << " bytes"
     << (Cap.KVCacheBytes > 0 ? " (" + formatBytes(Cap.KVCacheBytes) + ")"
                              : std::string())
     << "\n";
  OS << "blocks: " << (Cap.KVCacheBytes > 0 ? Cap.KVCacheBytes : 0) << " / "
     << Cap.BlockBytes << " (" << C.BlockSize << " tokens x "
     << R.Figures.KVBytesPerToken << " bytes) = " << Cap.Blocks
     << " blocks = " << Cap.Tokens << " tokens\n";
  OS << "max concurrency: " << Cap.Blocks << " / " << Cap.BlocksPerSequence
     << " blocks a sequence of " << C.MaxModelLen
     << " tokens = " << ratio(Cap.MaxConcurrency) << " (" << Cap.Sequences
     << " whole " << sequences(Cap.Sequences) << ")\n";
  OS << "longest max-model-len that starts: ";
  if (R.LongestUnbounded)
    OS << "unbounded (the sliding window caps each sequence's cache)\n";
  else if (R.Longest)
    OS << *R.Longest << " tokens\n";
  else
    OS << "none (not even one token)\n";
  if (!R.Levers.empty()) {
    OS << "levers:\n";
    for (const Lever &L : R.Levers) {
      OS << "  " << L.Name << " (" << L.Setting << "): ";
      printCapacityLine(OS, L.Cap, L.MaxModelLen);
      if (!L.Cap.Starts)
        OS << "; does not start";
      if (!L.Note.empty())
        OS << "; " << L.Note;
      OS << "\n";
    }
  }
  if (Cap.Starts)
    OS << "verdict: starts; " << Cap.Tokens << " tokens of KV cache\n";
  else
    OS << "verdict: does not start: " << Cap.Why << "\n";
}

void serve::printServeJSON(raw_ostream &OS, const ServeReport &R) {
  const ServeConfig &C = R.Config;
  const Capacity &Cap = R.Cap;
  json::OStream J(OS, 2);
  auto Num = [&](StringRef Key, uint64_t V) {
    J.attribute(Key, int64_t(std::min<uint64_t>(V, INT64_MAX)));
  };
  J.object([&] {
    J.attribute("model", R.Model);
    J.attribute("device", R.Device);
    J.attribute("starts", Cap.Starts);
    if (!Cap.Starts)
      J.attribute("reason", Cap.Why);
    Num("max_model_len", C.MaxModelLen);
    Num("max_num_batched_tokens", C.MaxBatchedTokens);
    Num("max_num_seqs", C.MaxNumSeqs);
    Num("block_size", C.BlockSize);
    J.attribute("kv_dtype", R.KVDtype);
    J.attribute("gpu_memory_utilization", C.Utilization.Text);
    Num("tensor_parallel_size", C.TensorParallel);
    Num("kv_layers", R.KV.Layers.size());
    const KVLayer &First = R.KV.Layers.front();
    if (First.KVHeads) {
      Num("kv_heads", First.KVHeads);
      Num("head_size", First.HeadSize);
    }
    if (auto W = R.KV.window())
      Num("sliding_window", *W);
    Num("kv_bytes_per_token", R.Figures.KVBytesPerToken);
    Num("device_bytes", C.deviceBytes());
    Num("usable_bytes", Cap.UsableBytes);
    Num("weights_bytes", R.WeightBytes);
    Num("prefill_step_bytes", R.Prefill.total());
    Num("decode_step_bytes", R.Decode.total());
    Num("overhead_bytes", C.Limit.OverheadBytes);
    J.attribute("kv_cache_bytes", Cap.KVCacheBytes);
    Num("block_bytes", Cap.BlockBytes);
    Num("kv_blocks", Cap.Blocks);
    Num("kv_capacity_tokens", Cap.Tokens);
    Num("blocks_per_sequence", Cap.BlocksPerSequence);
    J.attribute("max_concurrency", Cap.MaxConcurrency);
    Num("max_sequences", Cap.Sequences);
    if (R.Longest)
      Num("longest_context", *R.Longest);
    else
      J.attribute("longest_context", nullptr);
    J.attribute("longest_context_unbounded", R.LongestUnbounded);
    J.attributeArray("levers", [&] {
      for (const Lever &L : R.Levers)
        J.object([&] {
          J.attribute("name", L.Name);
          J.attribute("setting", L.Setting);
          if (!L.Note.empty())
            J.attribute("note", L.Note);
          J.attribute("starts", L.Cap.Starts);
          Num("kv_blocks", L.Cap.Blocks);
          Num("kv_capacity_tokens", L.Cap.Tokens);
          Num("max_model_len", L.MaxModelLen);
          J.attribute("max_concurrency", L.Cap.MaxConcurrency);
        });
    });
  });
  OS << "\n";
}

Expected<std::string> serve::vllmArguments(const ServeReport &R) {
  const ServeConfig &C = R.Config;
  std::string KV = "auto";
  if (!R.KVDtypeAuto) {
    if (R.KVDtype == "int8")
      return makeUnsupportedError(
          "--emit=vllm: vLLM has no int8 KV cache (--kv-cache-dtype takes "
          "auto, bfloat16 and the fp8 kinds); use --kv-dtype fp8");
    if (R.KVDtype == "fp8")
      KV = "fp8";
    else if (R.KVDtype == "bf16")
      KV = "bfloat16";
  }
  std::string Out;
  raw_string_ostream OS(Out);
  OS << "vllm serve " << R.Model << " \\\n"
     << "  --gpu-memory-utilization " << C.Utilization.Text << " \\\n"
     << "  --max-model-len " << C.MaxModelLen << " \\\n"
     << "  --max-num-seqs " << C.MaxNumSeqs << " \\\n"
     << "  --max-num-batched-tokens " << C.MaxBatchedTokens << " \\\n"
     << "  --kv-cache-dtype " << KV << " \\\n"
     << "  --block-size " << C.BlockSize << " \\\n"
     << "  --tensor-parallel-size " << C.TensorParallel << "\n";
  OS << "# predicted: " << R.Cap.Blocks << " KV blocks, " << R.Cap.Tokens
     << " tokens, concurrency " << ratio(R.Cap.MaxConcurrency) << " at "
     << C.MaxModelLen << " tokens a sequence\n";
  if (!R.Cap.Starts)
    OS << "# does not start: " << R.Cap.Why << "\n";
  return OS.str();
}
