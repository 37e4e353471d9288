//===- Plan.cpp - placing buffers and verifying the result ----------------===//
//
// Weights and IO regions are laid out one buffer after another (they are
// resident or caller-owned, so reuse would be wrong); the arena goes to the
// planner registry. Every region is then checked by the independent verifier
// before anyone can print or run the plan.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Plan/Plan.h"
#include "oomplan/Placement/LowerBound.h"
#include "oomplan/Placement/Registry.h"
#include "oomplan/Schedule/LiveProfile.h"
#include "oomplan/Schedule/ScheduleVerifier.h"
#include "oomplan/Support/CheckedMath.h"
#include "oomplan/Support/Error.h"
#include "oomplan/Verify/PlacementVerifier.h"
#include <algorithm>

using namespace oomplan;

// The name of buffer B's tensor, for errors.
static std::string bufferName(const Schedule &S, const Lifetimes &L,
                              BufferId B) {
  TensorId T = L.Buffers[B].Root;
  return T < S.Tensors.size() ? S.Tensors[T].Name : "#" + std::to_string(B);
}

// Lays out Ids one after another; the region's size goes to Size. Sizes
// past MaxSizeBytes are errors naming the tensor that crosses the limit.
static llvm::Error layOutSequentially(const Schedule &S, const Lifetimes &L,
                                      llvm::ArrayRef<BufferId> Ids,
                                      uint64_t Align, Region R,
                                      std::vector<uint64_t> &OffsetOf,
                                      uint64_t &Size) {
  Size = 0;
  for (BufferId B : Ids) {
    uint64_t Rounded;
    if (!checkedAlignUp(L.Buffers[B].SizeBytes, Align, Rounded) ||
        Rounded > MaxSizeBytes)
      return makeOverflowError("tensor '" + bufferName(S, L, B) + "' needs " +
                               llvm::Twine(L.Buffers[B].SizeBytes) +
                               " bytes, more than 2^63 - 1");
    OffsetOf[B] = Size;
    if (!checkedAdd(Size, Rounded, Size) || Size > MaxSizeBytes)
      return makeOverflowError("the " + regionName(R) +
                               " region needs more than 2^63 - 1 bytes "
                               "(reached at tensor '" +
                               bufferName(S, L, B) + "')");
  }
  return llvm::Error::success();
}

// Weights + IO + arena, which reports print as a signed 64-bit number: a
// wrapped sum would make a 20 EiB plan "fit" a 4 EiB budget.
static llvm::Error checkTotal(const Plan &P) {
  uint64_t Total;
  if (!checkedAdd(P.WeightBytes, P.IOBytes, Total) ||
      !checkedAdd(Total, P.ArenaBytes, Total) || Total > MaxSizeBytes)
    return makeOverflowError(
        "the plan needs more than 2^63 - 1 bytes in all: weights " +
        llvm::Twine(P.WeightBytes) + " + io " + llvm::Twine(P.IOBytes) +
        " + arena " + llvm::Twine(P.ArenaBytes) + " bytes");
  return llvm::Error::success();
}

static std::vector<planner::BufferRequest>
requestsFor(const Lifetimes &L, llvm::ArrayRef<BufferId> Ids, uint64_t Align,
            bool Resident) {
  std::vector<planner::BufferRequest> R;
  R.reserve(Ids.size());
  for (BufferId B : Ids) {
    const LiveBuffer &Buf = L.Buffers[B];
    uint64_t End = std::max<uint64_t>(L.NumSteps, 1);
    R.push_back({B, Buf.SizeBytes, Align, Resident ? 0 : Buf.StartStep,
                 Resident ? End : Buf.EndStep});
  }
  return R;
}

std::vector<planner::BufferRequest>
oomplan::arenaRequests(const Lifetimes &L, uint64_t AlignBytes, bool IOInArena,
                       std::vector<BufferId> *Ids) {
  std::vector<BufferId> Arena;
  for (BufferId B = 0; B < L.Buffers.size(); ++B)
    if (regionFor(L.Buffers[B].Kind, IOInArena) == Region::Arena)
      Arena.push_back(B);
  std::vector<planner::BufferRequest> R =
      requestsFor(L, Arena, AlignBytes, /*Resident=*/false);
  if (Ids)
    *Ids = std::move(Arena);
  return R;
}

llvm::Expected<Plan> oomplan::buildPlan(Schedule S, Lifetimes L,
                                        const PlanOptions &Opts) {
  if (Opts.AlignBytes == 0 || (Opts.AlignBytes & (Opts.AlignBytes - 1)))
    return makeInputError("alignment must be a power of two, got " +
                          llvm::Twine(Opts.AlignBytes));
  // Every plan is checked before it is placed, whoever built the schedule:
  // a transform's bug must not reach an executor as a valid-looking plan.
  if (llvm::Error E = verifySchedule(S))
    return makeInternalError("internal error: the schedule to place is "
                             "malformed: " +
                             llvm::toString(std::move(E)));
  Plan P;
  P.AlignBytes = Opts.AlignBytes;
  P.IOInArena = Opts.IOInArena;
  P.Limit = Opts.Limit;
  P.RegionOf.resize(L.Buffers.size());
  P.OffsetOf.assign(L.Buffers.size(), 0);
  std::vector<BufferId> ByRegion[3];
  for (BufferId B = 0; B < L.Buffers.size(); ++B) {
    P.RegionOf[B] = regionFor(L.Buffers[B].Kind, Opts.IOInArena);
    ByRegion[static_cast<int>(P.RegionOf[B])].push_back(B);
  }
  const auto &Weights = ByRegion[0], &IO = ByRegion[1], &Arena = ByRegion[2];
  if (llvm::Error E =
          layOutSequentially(S, L, Weights, Opts.AlignBytes, Region::Weights,
                             P.OffsetOf, P.WeightBytes))
    return E;
  if (llvm::Error E = layOutSequentially(S, L, IO, Opts.AlignBytes, Region::IO,
                                         P.OffsetOf, P.IOBytes))
    return E;

  std::vector<planner::BufferRequest> Req =
      requestsFor(L, Arena, Opts.AlignBytes, false);
  planner::PlannerOptions PO;
  PO.TimeLimitSeconds = Opts.TimeLimitSeconds;
  auto Placed = planner::runAlgorithm(Opts.Algorithm, Req, PO);
  if (!Placed)
    return Placed.takeError();
  P.ArenaBytes = Placed->ArenaBytes;
  if (llvm::Error E = checkTotal(P))
    return E;
  P.Algorithm = Placed->Algorithm.empty() ? Opts.Algorithm : Placed->Algorithm;
  for (size_t I = 0; I < Arena.size(); ++I)
    P.OffsetOf[Arena[I]] = Placed->Offsets[I];
  P.ArenaLowerBound = planner::lowerBound(Req);

  // The independent check, region by region.
  auto Verify = [&](llvm::ArrayRef<BufferId> Ids, uint64_t Size, bool Resident,
                    llvm::StringRef Name) -> llvm::Error {
    std::vector<planner::BufferRequest> R =
        requestsFor(L, Ids, Opts.AlignBytes, Resident);
    std::vector<uint64_t> Offsets;
    for (BufferId B : Ids)
      Offsets.push_back(P.OffsetOf[B]);
    if (llvm::Error E = verify::verifyPlacement(R, Offsets, Size))
      return makeInternalError(
          "internal error: the " + Name +
          " placement failed verification: " + llvm::toString(std::move(E)));
    return llvm::Error::success();
  };
  if (llvm::Error E = Verify(Weights, P.WeightBytes, true, "weights"))
    return E;
  if (llvm::Error E = Verify(IO, P.IOBytes, true, "io"))
    return E;
  if (llvm::Error E = Verify(Arena, P.ArenaBytes, false, "arena"))
    return E;

  // The peak step comes from the live-bytes profile, which the estimates
  // and the timeline use too; the planner's own sweep over its requests
  // must agree with it, or one of the two is wrong.
  ProfileOptions ProfOpts;
  ProfOpts.AlignBytes = Opts.AlignBytes;
  ProfOpts.IOInArena = Opts.IOInArena;
  LiveProfile Profile = computeLiveProfile(L, ProfOpts);
  if (Profile.Peak != P.ArenaLowerBound)
    return makeInternalError(
        "internal error: the live-bytes profile's arena peak (" +
        llvm::Twine(Profile.Peak) +
        " bytes) differs from the planner's "
        "lower bound (" +
        llvm::Twine(P.ArenaLowerBound) + " bytes)");
  P.PeakStep = Profile.PeakStep;
  P.Sched = std::move(S);
  P.Life = std::move(L);
  if (llvm::Error E = layOutHostRegion(P))
    return E;
  return P;
}

std::vector<BufferId> Plan::buffersLiveAt(uint64_t Step) const {
  std::vector<BufferId> Out;
  for (BufferId B = 0; B < Life.Buffers.size(); ++B) {
    const LiveBuffer &Buf = Life.Buffers[B];
    if (RegionOf[B] == Region::Arena && Buf.StartStep <= Step &&
        Step < Buf.EndStep)
      Out.push_back(B);
  }
  std::stable_sort(Out.begin(), Out.end(), [&](BufferId A, BufferId B) {
    return Life.Buffers[A].SizeBytes > Life.Buffers[B].SizeBytes;
  });
  return Out;
}
