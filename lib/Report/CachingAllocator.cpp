//===- CachingAllocator.cpp - PyTorch's CUDA caching allocator, simulated -===//
//
// The rules of DeviceCachingAllocator (c10/cuda/CUDACachingAllocator.cpp,
// PyTorch main at commit 001074d), one device and one stream:
//
//   round_size: max(512, round up to 512)
//   pool: small when the rounded size <= 1 MiB, else large
//   get_allocation_size (a new segment): small -> 2 MiB; < 10 MiB -> 20 MiB;
//     else round up to 2 MiB
//   get_free_block: the smallest cached block of the pool that is large
//     enough (ties: lowest address); refused when the request is under
//     max_split_size and the block is not, or when the request is at least
//     max_split_size and the block is 20 MiB or more larger than it
//   should_split: small pool or expandable segments: remainder >= 512;
//     large pool: request < max_split_size and remainder > 1 MiB
//   free: merge with the free neighbours in the same segment only
//   cudaMalloc failing (here: past the limit): free every cached block that
//     is a whole segment, retry once, else out of memory
//   expandable_segments: one segment per pool that grows by mapping pages
//     (2 MiB small, 20 MiB large) after its last block; the free block at its
//     end is chosen last, since it can grow
//
// Addresses are (segment creation order, offset): cudaMalloc's real
// addresses only break ties among equal sizes. Not modelled: several
// streams, CUDA graphs, garbage_collection_threshold, roundup_power2_
// divisions, and (expandable segments) unmapping free pages under pressure:
// there an allocation past the limit is out of memory, the larger answer.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/CachingAllocator.h"
#include "oomplan/Report/CudaLibraries.h"
#include "oomplan/Support/CheckedMath.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include <set>
#include <tuple>

using namespace oomplan;
using namespace oomplan::report;

static constexpr uint64_t MiB = 1048576;
static constexpr uint64_t MinBlock = 512;        // kMinBlockSize
static constexpr uint64_t SmallSize = MiB;       // kSmallSize
static constexpr uint64_t SmallBuffer = 2 * MiB; // kSmallBuffer
static constexpr uint64_t MinLargeAlloc = 10 * MiB;
static constexpr uint64_t LargeBuffer = 20 * MiB;
static constexpr uint64_t RoundLarge = 2 * MiB;

static uint64_t roundUp(uint64_t X, uint64_t To) {
  return saturatingMul(To, X / To + (X % To != 0));
}

llvm::Expected<CudaAllocConfig>
report::parseCudaAllocConf(llvm::StringRef Text) {
  CudaAllocConfig C;
  llvm::SmallVector<llvm::StringRef, 4> Items;
  Text.split(Items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef Item : Items) {
    auto [Key, Val] = Item.split(':');
    Key = Key.trim();
    Val = Val.trim();
    uint64_t N;
    if (Key == "max_split_size_mb" && !Val.getAsInteger(10, N) && N > 0 &&
        N < (UINT64_MAX >> 20)) {
      C.MaxSplitSize = N * MiB;
    } else if (Key == "expandable_segments" &&
               (Val == "True" || Val == "False")) {
      C.ExpandableSegments = Val == "True";
    } else {
      return makeInputError(
          "--cuda-alloc-conf: cannot use '" + Item +
          "' (expected max_split_size_mb:N or expandable_segments:True|False,"
          " comma-separated)");
    }
  }
  return C;
}

namespace {
struct Block {
  uint32_t Seg = 0;
  uint64_t Off = 0, Size = 0;
  int32_t Prev = -1, Next = -1;
  bool Allocated = false;
};

struct Segment {
  bool Small = false;
  bool Expandable = false;
};

using Key = std::tuple<uint64_t, uint32_t, uint64_t, uint32_t>;

class Simulator {
  const CudaAllocConfig &C;
  std::optional<uint64_t> Limit;
  std::vector<Block> Blocks;
  std::vector<Segment> Segs;
  std::set<Key> Free[2];      // per pool: small, large
  int32_t Tail[2] = {-1, -1}; // expandable: the last block per pool
  uint64_t Allocated = 0, Reserved = 0, Requested = 0;
  llvm::DenseMap<uint32_t, std::pair<uint32_t, uint64_t>> Live;

public:
  AllocatorResult R;
  Simulator(const CudaAllocConfig &C, std::optional<uint64_t> Limit)
      : C(C), Limit(Limit) {}

  Key key(uint32_t B) const {
    const Block &Bk = Blocks[B];
    return {Bk.Size, Bk.Seg, Bk.Off, B};
  }
  unsigned poolOf(uint32_t B) const {
    return Segs[Blocks[B].Seg].Small ? 0 : 1;
  }
  void insertFree(uint32_t B) { Free[poolOf(B)].insert(key(B)); }
  void eraseFree(uint32_t B) { Free[poolOf(B)].erase(key(B)); }

  uint32_t newBlock(uint32_t Seg, uint64_t Off, uint64_t Size) {
    Block Bk;
    Bk.Seg = Seg, Bk.Off = Off, Bk.Size = Size;
    Blocks.push_back(Bk);
    return static_cast<uint32_t>(Blocks.size() - 1);
  }

  bool isTail(uint32_t B) const {
    return Segs[Blocks[B].Seg].Expandable && Tail[poolOf(B)] == int32_t(B);
  }

  // get_free_block: best fit, with the max_split_size refusals.
  std::optional<uint32_t> findFree(unsigned Pool, uint64_t Size) const {
    auto It = Free[Pool].lower_bound(Key{Size, 0, 0, 0});
    if (It == Free[Pool].end())
      return std::nullopt;
    // The block at an expandable segment's end can grow: any other fit is
    // smaller in "expandable size", so it is taken first.
    if (isTail(std::get<3>(*It)) && std::next(It) != Free[Pool].end())
      ++It;
    uint64_t Found = std::get<0>(*It);
    if (Size < C.MaxSplitSize && Found >= C.MaxSplitSize)
      return std::nullopt;
    if (Size >= C.MaxSplitSize && Found >= saturatingAdd(Size, LargeBuffer))
      return std::nullopt;
    return std::get<3>(*It);
  }

  bool shouldSplit(uint32_t B, uint64_t Size) const {
    uint64_t Remaining = Blocks[B].Size - Size;
    if (poolOf(B) == 0 || C.ExpandableSegments)
      return Remaining >= MinBlock;
    return Size < C.MaxSplitSize && Remaining > SmallSize;
  }

  // alloc_found_block: the front of B serves the request; a split leaves
  // the rest as a free block after it.
  uint32_t take(uint32_t B, uint64_t Size) {
    eraseFree(B);
    if (shouldSplit(B, Size)) {
      Block Rest = Blocks[B];
      uint32_t RB = newBlock(Rest.Seg, Rest.Off + Size, Rest.Size - Size);
      Blocks[RB].Prev = int32_t(B);
      Blocks[RB].Next = Blocks[B].Next;
      if (Blocks[B].Next >= 0)
        Blocks[Blocks[B].Next].Prev = int32_t(RB);
      Blocks[B].Next = int32_t(RB);
      Blocks[B].Size = Size;
      unsigned Pool = poolOf(B);
      if (Tail[Pool] == int32_t(B))
        Tail[Pool] = int32_t(RB);
      insertFree(RB);
    }
    Blocks[B].Allocated = true;
    return B;
  }

  // release_cached_blocks: every cached block that is a whole segment.
  void releaseCached() {
    for (unsigned Pool = 0; Pool < 2; ++Pool)
      for (auto It = Free[Pool].begin(); It != Free[Pool].end();) {
        const Block &Bk = Blocks[std::get<3>(*It)];
        if (Bk.Prev < 0 && Bk.Next < 0 && !Segs[Bk.Seg].Expandable) {
          Reserved -= Bk.Size;
          It = Free[Pool].erase(It);
        } else
          ++It;
      }
  }

  bool withinLimit(uint64_t More) const {
    return !Limit || saturatingAdd(Reserved, More) <= *Limit;
  }

  std::optional<uint32_t> newSegment(unsigned Pool, uint64_t Size) {
    uint64_t Seg = Pool == 0              ? SmallBuffer
                   : Size < MinLargeAlloc ? LargeBuffer
                                          : roundUp(Size, RoundLarge);
    if (!withinLimit(Seg))
      releaseCached();
    if (!withinLimit(Seg))
      return std::nullopt;
    Segs.push_back({Pool == 0, false});
    Reserved = saturatingAdd(Reserved, Seg);
    ++R.Segments;
    uint32_t B = newBlock(static_cast<uint32_t>(Segs.size() - 1), 0, Seg);
    insertFree(B);
    return B;
  }

  // Expandable: map pages after the pool's segment's last block so that a
  // free block at its end reaches Size.
  std::optional<uint32_t> grow(unsigned Pool, uint64_t Size) {
    uint64_t Page = Pool == 0 ? SmallBuffer : LargeBuffer;
    if (Tail[Pool] < 0) {
      Segs.push_back({Pool == 0, true});
      uint32_t B = newBlock(static_cast<uint32_t>(Segs.size() - 1), 0, 0);
      Tail[Pool] = int32_t(B);
      Blocks[B].Allocated = true; // an empty placeholder, never handed out
    }
    uint32_t T = static_cast<uint32_t>(Tail[Pool]);
    // A free tail that findFree refused (max_split_size_mb) although it is
    // large enough is not extended: Size - Have would wrap. Map a new block
    // of Size after it instead, the larger (never lower) reservation.
    bool Extend = !Blocks[T].Allocated && Blocks[T].Size < Size;
    uint64_t Map = roundUp(Extend ? Size - Blocks[T].Size : Size, Page);
    if (!withinLimit(Map))
      return std::nullopt;
    Reserved = saturatingAdd(Reserved, Map);
    ++R.Segments;
    if (!Extend) {
      const Block &Last = Blocks[T];
      uint32_t B = newBlock(Last.Seg, Last.Off + Last.Size, Map);
      Blocks[B].Prev = int32_t(T);
      Blocks[T].Next = int32_t(B);
      Tail[Pool] = int32_t(B);
      insertFree(B);
      return B;
    }
    eraseFree(T);
    Blocks[T].Size += Map;
    insertFree(T);
    return T;
  }

  bool malloc(uint32_t Id, uint64_t Bytes, size_t Index) {
    uint64_t Size = Bytes < MinBlock ? MinBlock : roundUp(Bytes, MinBlock);
    unsigned Pool = Size <= SmallSize ? 0 : 1;
    std::optional<uint32_t> B = findFree(Pool, Size);
    if (!B)
      B = C.ExpandableSegments ? grow(Pool, Size) : newSegment(Pool, Size);
    if (!B) {
      R.OOMEvent = Index;
      R.AllocatedAtOOM = Allocated;
      R.ReservedAtOOM = Reserved;
      return false;
    }
    uint32_t Got = take(*B, Size);
    Live[Id] = {Got, Bytes};
    Allocated += Blocks[Got].Size;
    Requested += Bytes;
    R.PeakAllocated = std::max(R.PeakAllocated, Allocated);
    R.PeakReserved = std::max(R.PeakReserved, Reserved);
    R.PeakRequested = std::max(R.PeakRequested, Requested);
    return true;
  }

  // free_block: merge with free neighbours (always in the same segment).
  void free(uint32_t Id) {
    auto It = Live.find(Id);
    if (It == Live.end())
      return;
    uint32_t B = It->second.first;
    Requested -= It->second.second;
    Live.erase(It);
    Allocated -= Blocks[B].Size;
    Blocks[B].Allocated = false;
    unsigned Pool = poolOf(B);
    int32_t P = Blocks[B].Prev, N = Blocks[B].Next;
    if (N >= 0 && !Blocks[N].Allocated) {
      eraseFree(N);
      Blocks[B].Size += Blocks[N].Size;
      Blocks[B].Next = Blocks[N].Next;
      if (Blocks[N].Next >= 0)
        Blocks[Blocks[N].Next].Prev = int32_t(B);
      if (Tail[Pool] == N)
        Tail[Pool] = int32_t(B);
    }
    if (P >= 0 && !Blocks[P].Allocated) {
      eraseFree(uint32_t(P));
      Blocks[P].Size += Blocks[B].Size;
      Blocks[P].Next = Blocks[B].Next;
      if (Blocks[B].Next >= 0)
        Blocks[Blocks[B].Next].Prev = P;
      if (Tail[Pool] == int32_t(B))
        Tail[Pool] = P;
      B = uint32_t(P);
    }
    insertFree(B);
  }
};
} // namespace

AllocatorResult
report::simulateCachingAllocator(llvm::ArrayRef<AllocEvent> Events,
                                 const CudaAllocConfig &Config,
                                 std::optional<uint64_t> LimitBytes) {
  Simulator S(Config, LimitBytes);
  for (size_t I = 0; I < Events.size(); ++I) {
    if (Events[I].Free)
      S.free(Events[I].Id);
    else if (!S.malloc(Events[I].Id, Events[I].Bytes, I))
      break;
  }
  return S.R;
}

// Kinds PyTorch keeps across steps: the model, the batch, optimizer state.
static bool persists(TensorKind K) {
  return K == TensorKind::Weight || K == TensorKind::Constant ||
         K == TensorKind::GraphInput || K == TensorKind::OptimizerState;
}

std::vector<AllocEvent>
report::allocationEvents(const Plan &P, unsigned Iterations,
                         llvm::ArrayRef<LibraryAllocation> Libraries) {
  const Lifetimes &L = P.Life;
  uint32_t NB = static_cast<uint32_t>(L.Buffers.size());
  uint64_t NS = L.NumSteps;
  // Optimizer state: first used at the optimizer step; starts and ends by
  // step, for the others.
  std::vector<uint64_t> FirstUse(NB, NS);
  for (uint64_t I = 0; I < P.Sched.Steps.size(); ++I) {
    const Step &St = P.Sched.Steps[I];
    for (const std::vector<TensorId> *Ts : {&St.Reads, &St.Writes})
      for (TensorId T : *Ts) {
        BufferId B = L.BufferOf[T];
        FirstUse[B] = std::min(FirstUse[B], I);
      }
  }
  std::vector<std::vector<uint32_t>> Starts(NS + 1), Ends(NS + 1);
  std::vector<AllocEvent> Out;
  for (BufferId B = 0; B < NB; ++B) {
    const LiveBuffer &Buf = L.Buffers[B];
    if (!Buf.SizeBytes)
      continue;
    if (Buf.Kind == TensorKind::OptimizerState)
      Starts[std::min(FirstUse[B], NS)].push_back(B);
    else if (persists(Buf.Kind))
      Out.push_back({false, B, Buf.SizeBytes}); // before the first step
    else {
      Starts[std::min(Buf.StartStep, NS)].push_back(B);
      Ends[std::min(Buf.EndStep, NS)].push_back(B);
    }
  }
  std::vector<std::vector<uint32_t>> LibAt(NS + 1);
  for (uint32_t I = 0; I < Libraries.size(); ++I)
    LibAt[std::min(Libraries[I].Step, NS)].push_back(I);
  // Ids past every buffer's in every iteration.
  uint32_t LibBase = Iterations * NB;
  for (unsigned It = 0; It < Iterations; ++It)
    for (uint64_t S = 0; S <= NS; ++S) {
      for (uint32_t B : Starts[S])
        if (L.Buffers[B].Kind != TensorKind::OptimizerState || It == 0)
          Out.push_back({false, It * NB + B, L.Buffers[B].SizeBytes});
      for (uint32_t I : LibAt[S]) {
        const LibraryAllocation &A = Libraries[I];
        uint32_t Id = LibBase + I * Iterations + It;
        if (A.Kept && It > 0)
          continue;
        Out.push_back({false, Id, A.Bytes});
        if (!A.Kept)
          Out.push_back({true, Id, 0});
      }
      // A buffer whose range ends at S was last needed by step S - 1.
      if (S + 1 <= NS)
        for (uint32_t B : Ends[S + 1])
          Out.push_back({true, It * NB + B, 0});
    }
  return Out;
}
