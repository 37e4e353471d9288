//===- DriverCSV.cpp - a MiniMalloc CSV instance through the planner ------===//
//
// Planner-only input: buffers with fixed lifetimes and sizes (MiniMalloc's
// id,lower,upper,size). Places them with the requested algorithm, verifies
// the placement, and prints the arena against the lower bound, or the
// instance with offsets (--emit=csv).
//
//===----------------------------------------------------------------------===//
#include "oomplan/Driver/Session.h"
#include "oomplan/Placement/LowerBound.h"
#include "oomplan/Placement/MiniMallocCSV.h"
#include "oomplan/Placement/Registry.h"
#include "oomplan/Support/Error.h"
#include "oomplan/Verify/PlacementVerifier.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

Expected<int> driver::runCSV(Session &S) {
  const api::Request &R = S.Req;
  std::unique_ptr<MemoryBuffer> Owned;
  StringRef Text;
  if (R.ModelBytes) {
    Text = *R.ModelBytes;
  } else {
    auto Buf = MemoryBuffer::getFile(R.ModelPath);
    if (!Buf)
      return makeIOError(R.ModelPath + ": " + Buf.getError().message());
    Owned = std::move(*Buf);
    Text = Owned->getBuffer();
  }
  auto Req =
      planner::parseMiniMallocCSV(Text, R.ModelPath, R.AlignBytes.value_or(1));
  if (!Req)
    return Req.takeError();
  planner::PlannerOptions PO;
  PO.TimeLimitSeconds = R.TimeLimitSeconds;
  PO.CapacityBytes = S.Limit.CapacityBytes.value_or(0);
  auto P = planner::runAlgorithm(R.Algorithm, *Req, PO);
  if (!P)
    return P.takeError();
  if (Error E = verify::verifyPlacement(*Req, P->Offsets, P->ArenaBytes))
    return E;
  uint64_t LB = planner::lowerBound(*Req);
  S.Res.TotalBytes = P->ArenaBytes;
  if (R.Emit == api::EmitKind::CSV) {
    planner::writeMiniMallocCSV(S.OS, *Req, *P);
  } else {
    S.OS << "instance " << R.ModelPath << ": " << Req->size() << " buffers\n"
         << "algorithm: " << P->Algorithm << "\narena: " << P->ArenaBytes
         << " bytes, lower bound: " << LB << " bytes, arena/lower bound: "
         << format("%.4f", LB ? double(P->ArenaBytes) / LB : 1.0) << "\n";
  }
  // A placement instance is no model on a device: its arena alone is judged,
  // with no overhead.
  Budget Arena;
  Arena.CapacityBytes = S.Limit.CapacityBytes;
  if (!fits(Arena, Figures{P->ArenaBytes, {}})) {
    S.note("arena " + Twine(P->ArenaBytes) + " bytes exceeds the budget of " +
           Twine(*Arena.CapacityBytes) + " bytes");
    return 2;
  }
  return 0;
}
