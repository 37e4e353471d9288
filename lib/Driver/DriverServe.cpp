//===- DriverServe.cpp - --serve: the KV cache a server gets --------------===//
//
// Reads the KV cache per token from the graph as exported (before fusion
// rewrites its attention), plans the two engine steps a server runs (a
// prefill of --max-batched-tokens tokens, a decode of --max-num-seqs
// sequences at --max-model-len) each in one arena as any plan, and hands
// the figures to lib/Serve for the capacity, the longest context and the
// levers. The KV cache's own inputs and outputs are the pool's, not a
// step's, so a step's peak is its arena and its other inputs and outputs.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Driver/Session.h"
#include "oomplan/Parallel/Layers.h"
#include "oomplan/Serve/ServeReport.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include <map>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;
using namespace oomplan::serve;

namespace {
/// The symbols an engine step sets: sequences, new tokens, cached tokens,
/// and cached + new.
struct StepRoles {
  std::vector<SymbolId> Batch, Seq, Past, Total;
};

/// One engine step's shape.
struct StepShape {
  /// Past is at least 1: shape inference bounds every symbol below by 1, so
  /// a prefill is planned after one cached token (a token more, never
  /// less).
  uint64_t Batch = 1, Tokens = 1, Past = 1;
  bool operator<(const StepShape &O) const {
    return std::tie(Batch, Tokens, Past) < std::tie(O.Batch, O.Tokens, O.Past);
  }
};

struct ServeContext {
  Session &S;
  const Graph &G;
  const ShapeInfo &Shapes;
  StepRoles Roles;
  PipelineOptions PO;
  std::map<StepShape, StepPeak> Memo;
  uint64_t WeightBytes = 0;
};
} // namespace

static StepRoles stepRoles(const Graph &G, const SymbolRoles &Roles,
                           const KVCacheLayout &KV) {
  StepRoles Out{Roles.Batch, tokenSymbols(G, Roles), KV.PastSymbols, {}};
  auto Known = [&](SymbolId S) {
    return is_contained(Out.Batch, S) || is_contained(Out.Seq, S) ||
           is_contained(Out.Past, S) || is_contained(Out.Total, S);
  };
  // The attention mask spans the cached and the new tokens.
  for (ValueId V : G.Inputs) {
    const Value &Val = G.Values[V];
    if (Val.HasDeclaredShape && Val.Shape.size() == 2 &&
        StringRef(StringRef(Val.Name).lower()).contains("mask") &&
        Val.Shape[1].K == DeclaredDim::Kind::Symbol &&
        !Known(Val.Shape[1].Symbol))
      Out.Total.push_back(Val.Shape[1].Symbol);
  }
  for (SymbolId S = 0; S < G.Symbols.size(); ++S)
    if (!Known(S) &&
        StringRef(StringRef(G.Symbols[S]).lower()).contains("total"))
      Out.Total.push_back(S);
  return Out;
}

static Expected<std::vector<std::optional<int64_t>>>
stepBindings(ServeContext &C, const StepShape &St) {
  const Graph &G = C.G;
  std::vector<std::optional<int64_t>> B(C.Shapes.SymbolNames.size());
  for (const api::SymbolValue &D : C.S.Req.Dims) {
    SymbolId Sym = G.findSymbol(D.Name);
    if (Sym == NoId)
      return makeInputError(G.SourcePath + ": --dim " + D.Name +
                            ": the model has no symbol '" + D.Name +
                            "' (its symbols: " + join(G.Symbols, ", ") + ")");
    B[Sym] = D.Value;
  }
  for (SymbolId Sym : C.Roles.Batch)
    B[Sym] = int64_t(St.Batch);
  for (SymbolId Sym : C.Roles.Seq)
    B[Sym] = int64_t(St.Tokens);
  for (SymbolId Sym : C.Roles.Past)
    B[Sym] = int64_t(St.Past);
  for (SymbolId Sym : C.Roles.Total)
    B[Sym] = int64_t(St.Past + St.Tokens);
  std::vector<std::string> Unbound;
  for (SymbolId Sym = 0; Sym < G.Symbols.size(); ++Sym)
    if (!B[Sym])
      Unbound.push_back(G.Symbols[Sym]);
  if (!Unbound.empty())
    return makeInputError(
        G.SourcePath +
        ": --serve sets the batch, sequence, past and total "
        "lengths; bind the other symbols with --dim (unbound: " +
        join(Unbound, ", ") + ")");
  return B;
}

static uint64_t alignUp(uint64_t V, uint64_t A) {
  return A ? (V + A - 1) / A * A : V;
}

static Expected<StepPeak> planStep(ServeContext &C, const StepShape &St) {
  auto It = C.Memo.find(St);
  if (It != C.Memo.end())
    return It->second;
  auto B = stepBindings(C, St);
  if (!B)
    return B.takeError();
  auto P = planGraph(C.G, C.Shapes, *B, C.PO);
  if (!P)
    return P.takeError();
  auto VB = evaluateValueBytes(C.G, C.Shapes, *B);
  if (!VB)
    return VB.takeError();
  StepPeak Peak;
  Peak.ArenaBytes = P->ArenaBytes;
  std::vector<ValueId> IO(C.G.Inputs.begin(), C.G.Inputs.end());
  IO.insert(IO.end(), C.G.Outputs.begin(), C.G.Outputs.end());
  llvm::sort(IO);
  IO.erase(std::unique(IO.begin(), IO.end()), IO.end());
  for (ValueId V : IO)
    if (!isCacheValue(C.G, V) && C.G.Values[V].Kind != ValueKind::Weight)
      Peak.IOBytes += alignUp((*VB)[V], C.PO.Placement.AlignBytes);
  C.WeightBytes = P->WeightBytes;
  C.Memo[St] = Peak;
  return Peak;
}

// The prefill step: the chunk as one sequence, or as sequences of
// --max-model-len when the chunk is longer than one.
static StepShape prefillShape(uint64_t Chunk, uint64_t Len) {
  StepShape St;
  St.Tokens = std::min(Chunk, Len);
  St.Batch = (Chunk + St.Tokens - 1) / St.Tokens;
  return St;
}

// The decode step: one new token for each sequence after Len - 1 cached (a
// graph without a cache input ignores the past).
static StepShape decodeShape(uint64_t Seqs, uint64_t Len) {
  StepShape St;
  St.Batch = Seqs;
  St.Tokens = 1;
  St.Past = std::max<uint64_t>(1, Len - 1);
  return St;
}

static Expected<int64_t> positive(StringRef Flag, std::optional<int64_t> V,
                                  int64_t Default) {
  int64_t X = V.value_or(Default);
  if (X < 1 || X > (int64_t(1) << 40))
    return makeInputError(Flag + "=" + Twine(X) +
                          " is out of range (1 to 2^40)");
  return X;
}

static Expected<ServeConfig> resolveConfig(Session &S) {
  const api::ServeRequest &R = S.Req.Serve;
  if (!R.MaxModelLen)
    return makeInputError("--serve needs --max-model-len (the longest "
                          "prompt plus output a request may have)");
  if (!S.Limit.given())
    return makeInputError("--serve needs --device or --budget (the memory of "
                          "one device)");
  ServeConfig C;
  auto Len = positive("--max-model-len", R.MaxModelLen, 0);
  auto Chunk = positive("--max-batched-tokens", R.MaxBatchedTokens, 2048);
  auto Seqs = positive("--max-num-seqs", R.MaxNumSeqs, 256);
  auto Block = positive("--block-size", R.BlockSize, 16);
  auto Util = parseUtilization(R.GpuMemoryUtilization.value_or("0.9"));
  if (!Len || !Chunk || !Seqs || !Block || !Util) {
    Error E = joinErrors(Len.takeError(), Chunk.takeError());
    E = joinErrors(std::move(E), Seqs.takeError());
    E = joinErrors(std::move(E), Block.takeError());
    return joinErrors(std::move(E), Util.takeError());
  }
  C.MaxModelLen = uint64_t(*Len);
  C.MaxBatchedTokens = uint64_t(*Chunk);
  C.MaxNumSeqs = uint64_t(*Seqs);
  C.BlockSize = uint64_t(*Block);
  C.Utilization = *Util;
  C.Limit = S.Limit;
  return C;
}

// Float weights read by matrix products: what 4-bit quantization and tensor
// parallelism split. Embeddings (Gather) and norms stay whole.
static void productWeights(const Graph &G, uint64_t &Bytes, uint64_t &Elems) {
  std::vector<bool> Seen(G.Values.size());
  Bytes = Elems = 0;
  for (const Node &N : G.Nodes) {
    if (N.OpType != "MatMul" && N.OpType != "Gemm")
      continue;
    for (ValueId In : N.Inputs) {
      ValueId W = parallel::weightBehind(G, In);
      if (W == NoId || Seen[W] || elementBits(G.Values[W].Type) < 16)
        continue;
      Seen[W] = true;
      uint64_t E = 1;
      for (const DeclaredDim &D : G.Values[W].Shape)
        E *= D.K == DeclaredDim::Kind::Static ? uint64_t(D.Size) : 0;
      Elems += E;
      Bytes += E * elementBits(G.Values[W].Type) / 8;
    }
  }
}

static Error
addLevers(ServeContext &Ctx, ServeReport &R,
          const std::function<Expected<uint64_t>(uint64_t)> &Step) {
  const ServeConfig &C = R.Config;
  auto Add = [&](std::string Name, std::string Setting, std::string Note,
                 const ServeConfig &Cfg, const ServeFigures &F) {
    R.Levers.push_back({std::move(Name), std::move(Setting), std::move(Note),
                        Cfg.MaxModelLen, computeCapacity(Cfg, F)});
  };
  if (R.KVBits > 8) {
    ServeFigures F = R.Figures;
    F.KVBytesPerToken = R.KV.bytesPerToken(8);
    Add("fp8 KV cache", "--kv-dtype fp8",
        "1 byte a value (int8 likewise); per-layer scales not counted", C, F);
  }
  uint64_t ProdBytes, ProdElems;
  productWeights(Ctx.G, ProdBytes, ProdElems);
  if (ProdBytes) {
    // AWQ/GPTQ's layout: 4 bits a weight, an fp16 scale and a 4-bit zero
    // point per group of 128.
    uint64_t Q = (ProdElems + 1) / 2 + (ProdElems + 127) / 128 * 2 +
                 (ProdElems + 255) / 256;
    ServeFigures F = R.Figures;
    F.WeightBytes = R.WeightBytes - ProdBytes + Q;
    Add("4-bit weights", "an AWQ/GPTQ export",
        "matrix weights " + std::to_string(ProdBytes) + " -> " +
            std::to_string(Q) + " bytes (group 128)",
        C, F);
  }
  {
    uint64_t Len = C.MaxModelLen / 2;
    if (R.Longest && !R.Cap.Starts)
      Len = *R.Longest;
    if (Len >= 1 && Len < C.MaxModelLen) {
      ServeConfig Cfg = C;
      Cfg.MaxModelLen = Len;
      ServeFigures F = R.Figures;
      auto S = Step(Len);
      if (!S)
        return S.takeError();
      F.StepBytes = *S;
      Add("shorter context", "--max-model-len " + std::to_string(Len), "", Cfg,
          F);
    }
  }
  if (R.Prefill.total() > R.Decode.total() && C.MaxBatchedTokens >= 2) {
    ServeConfig Cfg = C;
    Cfg.MaxBatchedTokens = C.MaxBatchedTokens / 2;
    auto P = planStep(Ctx, prefillShape(Cfg.MaxBatchedTokens, C.MaxModelLen));
    if (!P)
      return P.takeError();
    ServeFigures F = R.Figures;
    F.StepBytes = std::max(P->total(), R.Decode.total());
    Add("smaller prefill chunk",
        "--max-batched-tokens " + std::to_string(Cfg.MaxBatchedTokens),
        "prefill step " + std::to_string(P->total()) + " bytes", Cfg, F);
  }
  if (R.Decode.total() > R.Prefill.total() && C.MaxNumSeqs >= 2) {
    ServeConfig Cfg = C;
    Cfg.MaxNumSeqs = C.MaxNumSeqs / 2;
    auto D = planStep(Ctx, decodeShape(Cfg.MaxNumSeqs, C.MaxModelLen));
    if (!D)
      return D.takeError();
    ServeFigures F = R.Figures;
    F.StepBytes = std::max(R.Prefill.total(), D->total());
    Add("fewer sequences a step",
        "--max-num-seqs " + std::to_string(Cfg.MaxNumSeqs),
        "decode step " + std::to_string(D->total()) + " bytes", Cfg, F);
  }
  const KVLayer &First = R.KV.Layers.front();
  bool Uniform =
      First.KVHeads && all_of(R.KV.Layers, [&](const KVLayer &L) {
        return L.KVHeads == First.KVHeads && L.HeadSize == First.HeadSize;
      });
  for (unsigned N : {2u, 4u, 8u}) {
    if (!Uniform || !ProdBytes ||
        (First.KVHeads % N != 0 && N % First.KVHeads != 0))
      continue;
    // vLLM gives each device KV heads / N, and replicates them when there
    // are fewer heads than devices.
    uint64_t Heads = std::max<uint64_t>(1, First.KVHeads / N);
    ServeConfig Cfg = C;
    Cfg.TensorParallel = N;
    ServeFigures F = R.Figures;
    F.KVBytesPerToken =
        (2 * R.KV.Layers.size() * Heads * First.HeadSize * R.KVBits + 7) / 8;
    F.WeightBytes = R.WeightBytes - ProdBytes + (ProdBytes + N - 1) / N;
    Add("tensor parallel over " + std::to_string(N) + " devices",
        "--tensor-parallel-size " + std::to_string(N),
        "per device: " + std::to_string(Heads) +
            " KV heads, matrix weights / " + std::to_string(N) +
            ", the step's activations whole (an upper bound)",
        Cfg, F);
  }
  return Error::success();
}

static Expected<unsigned> kvBits(const api::ServeRequest &R, KVCacheLayout &KV,
                                 std::string &Name,
                                 std::optional<ElementType> Half) {
  std::string D = R.KVDtype.value_or("auto");
  // --precision=fp16|bf16 plans the fp32 export in 16 bits, its cache too.
  if (Half && KV.Type == ElementType::Float)
    KV.Type = *Half;
  if (D == "auto") {
    Name = elementTypeName(KV.Type).str();
    unsigned Bits = elementBits(KV.Type);
    if (!Bits)
      return makeUnsupportedError("--kv-dtype auto: the cache's element type "
                                  "is unknown; give --kv-dtype");
    if (KV.Type == ElementType::Float16)
      Name = "fp16";
    else if (KV.Type == ElementType::BFloat16)
      Name = "bf16";
    else if (KV.Type == ElementType::Float)
      Name = "fp32";
    return Bits;
  }
  Name = D;
  if (D == "fp16" || D == "bf16")
    return 16u;
  if (D == "fp8" || D == "int8")
    return 8u;
  return makeInputError("--kv-dtype: '" + D +
                        "' is not one of auto, fp16, bf16, fp8, int8");
}

// The step peak of a server configured for a context of Len tokens (the
// larger of its prefill and its decode), for the longest-context search and
// the levers. A decode step whose activations do not grow with the context
// (fused attention over a cache) is the same at every length: two lengths
// far apart are planned and, when they agree, none between.
static Expected<std::function<Expected<uint64_t>(uint64_t)>>
stepAtLength(ServeContext &Ctx, const ServeReport &R) {
  const ServeConfig &C = R.Config;
  const uint64_t Far = uint64_t(1) << 20;
  auto D1 = planStep(Ctx, decodeShape(C.MaxNumSeqs, 1));
  if (!D1)
    return D1.takeError();
  auto DFar = planStep(Ctx, decodeShape(C.MaxNumSeqs, Far));
  // A probe past 2^63 bytes only says the step grows.
  bool Flat = DFar && D1->total() == DFar->total();
  if (!DFar)
    consumeError(DFar.takeError());
  if (!Flat && R.Decode.ArenaBytes > D1->ArenaBytes)
    Ctx.S.note("the decode step's activations grow with the context (arena " +
               Twine(D1->ArenaBytes) + " bytes at 1 token, " +
               Twine(R.Decode.ArenaBytes) + " at " + Twine(C.MaxModelLen) +
               "): the export's attention copies the cache (a transpose, "
               "repeated grouped-query heads), which a paged-attention "
               "kernel does not");
  uint64_t FlatDecode = D1->total();
  std::function<Expected<uint64_t>(uint64_t)> StepAt =
      [&Ctx, C, Flat, FlatDecode, Far](uint64_t Len) -> Expected<uint64_t> {
    auto P = planStep(Ctx, prefillShape(C.MaxBatchedTokens, Len));
    if (!P)
      return P.takeError();
    uint64_t D = FlatDecode;
    if (!Flat || Len > Far) {
      auto Dec = planStep(Ctx, decodeShape(C.MaxNumSeqs, Len));
      if (!Dec)
        return Dec.takeError();
      D = Dec->total();
    }
    return std::max(P->total(), D);
  };
  return StepAt;
}

// The answer for programs and the output asked for.
static Expected<int> emitServe(Session &S, const ServeReport &R) {
  api::ServeAnswer A;
  A.KVBytesPerToken = R.Figures.KVBytesPerToken;
  A.KVBlocks = R.Cap.Blocks;
  A.KVCapacityTokens = R.Cap.Tokens;
  A.MaxConcurrency = R.Cap.MaxConcurrency;
  A.LongestContext = R.Longest;
  A.Unbounded = R.LongestUnbounded;
  S.Res.Serve = A;
  S.Res.TotalBytes = R.WeightBytes + R.Figures.StepBytes;
  if (S.Req.Emit == api::EmitKind::JSON)
    printServeJSON(S.OS, R);
  else if (S.Req.Emit == api::EmitKind::VLLM) {
    auto Text = vllmArguments(R);
    if (!Text)
      return Text.takeError();
    S.OS << *Text;
  } else
    printServeText(S.OS, R);
  return R.Cap.Starts ? 0 : 2;
}

Expected<int> driver::runServe(Session &S, std::unique_ptr<Graph> &G,
                               ShapeInfo &Shapes) {
  const api::Request &Req = S.Req;
  auto Config = resolveConfig(S);
  if (!Config)
    return Config.takeError();
  // The attention as exported: fusion below rewrites it.
  auto KV = findKVCache(*G, Shapes, S.Roles);
  if (!KV)
    return KV.takeError();
  if (Error E = prepareModel(S, G, Shapes))
    return E;
  ServeContext Ctx{
      S, *G, Shapes, stepRoles(*G, S.Roles, *KV), S.pipelineOptions(), {}, 0};
  Ctx.PO.Placement.IOInArena = false;
  Ctx.PO.Placement.Limit.CapacityBytes.reset();
  if (Ctx.Roles.Seq.empty())
    return makeUnsupportedError(
        G->SourcePath +
        ": no sequence symbol (the token input's second dim): --serve plans "
        "steps of different lengths");
  ServeReport R;
  R.Model = Req.ModelPath;
  R.Device = Req.Device ? S.Device.Name : "--budget " + *Req.Budget;
  R.Config = *Config;
  R.KV = std::move(*KV);
  auto Bits = kvBits(Req.Serve, R.KV, R.KVDtype, S.InferenceHalf);
  if (!Bits)
    return Bits.takeError();
  R.KVBits = *Bits;
  R.KVDtypeAuto = Req.Serve.KVDtype.value_or("auto") == "auto";
  R.Figures.KVBytesPerToken = R.KV.bytesPerToken(R.KVBits);
  R.Figures.Window = R.KV.window();
  const ServeConfig &C = R.Config;
  auto Prefill = planStep(Ctx, prefillShape(C.MaxBatchedTokens, C.MaxModelLen));
  if (!Prefill)
    return Prefill.takeError();
  auto Decode = planStep(Ctx, decodeShape(C.MaxNumSeqs, C.MaxModelLen));
  if (!Decode)
    return Decode.takeError();
  R.Prefill = *Prefill;
  R.Decode = *Decode;
  R.WeightBytes = R.Figures.WeightBytes = Ctx.WeightBytes;
  R.Figures.StepBytes = std::max(R.Prefill.total(), R.Decode.total());
  R.Cap = computeCapacity(C, R.Figures);
  if (Ctx.Roles.Past.empty())
    S.note("the export has no KV cache input: the decode step is planned as "
           "one new token per sequence, without its attention over the past");
  auto StepAt = stepAtLength(Ctx, R);
  if (!StepAt)
    return StepAt.takeError();
  auto Longest = longestContext(C, R.Figures, *StepAt, &R.LongestUnbounded);
  if (!Longest)
    return Longest.takeError();
  R.Longest = *Longest;
  if (Error E = addLevers(Ctx, R, *StepAt))
    return E;
  for (ValueId V : Ctx.G.Outputs)
    if (!isCacheValue(Ctx.G, V) &&
        StringRef(StringRef(Ctx.G.Values[V].Name).lower()).contains("logits")) {
      S.note("the export computes '" + Ctx.G.Values[V].Name +
             "' for every token of the prefill (counted); vLLM computes "
             "logits for each sequence's last token only");
      break;
    }
  return emitServe(S, R);
}
