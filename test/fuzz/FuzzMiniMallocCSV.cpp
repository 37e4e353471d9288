//===- FuzzMiniMallocCSV.cpp - libFuzzer target: MiniMalloc CSV -----------===//
//
// Parses the bytes as a MiniMalloc CSV instance, then runs every algorithm of
// the planner registry on it and checks each placement with the independent
// verifier and against the lower bound. The first byte of the input picks the
// alignment (1, 2, ..., 256; byte % 9) and, with its top bit, a capacity goal
// at the lower bound (the searches' other path), so these get fuzzed without
// a second target; the rest is the CSV text. Parse errors are expected; an
// algorithm may reject requests only with an error, never with a placement
// that fails verification.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Placement/LowerBound.h"
#include "oomplan/Placement/MiniMallocCSV.h"
#include "oomplan/Placement/Registry.h"
#include "oomplan/Support/Error.h"
#include "oomplan/Verify/PlacementVerifier.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>

using namespace oomplan;

/// Only the first MaxBuffers buffers are planned: the searches are
/// superlinear per step (hill-climb re-places every buffer per iteration),
/// bugs show on small instances, and truncating rather than skipping keeps
/// the structure of the large MiniMalloc seeds.
static constexpr size_t MaxBuffers = 48;

static void fail(const llvm::Twine &Msg) {
  llvm::errs() << "fuzz: " << Msg << '\n';
  abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size < 1 || Size > 16 * 1024)
    return -1;
  uint64_t Align = uint64_t(1) << (Data[0] % 9);
  llvm::StringRef Text(reinterpret_cast<const char *>(Data + 1), Size - 1);
  auto Req = planner::parseMiniMallocCSV(Text, "fuzz.csv", Align);
  if (!Req) {
    llvm::consumeError(Req.takeError());
    return 0;
  }
  if (Req->size() > MaxBuffers)
    Req->resize(MaxBuffers);
  uint64_t LB = planner::lowerBound(*Req);
  planner::PlannerOptions PO;
  PO.TimeLimitSeconds = 5;
  // Small fixed budgets keep the searches (hill-climb re-places every buffer
  // per iteration) at milliseconds per input under ASan, so the fuzzer
  // explores inputs instead of search trees, and the wall-clock limit, which
  // would make runs irreproducible, is never what stops them.
  PO.EffortBudget = 64;
  if (Data[0] & 0x80)
    PO.CapacityBytes = LB;
  for (const planner::AlgorithmInfo &A : planner::algorithms()) {
    auto P = A.Run(*Req, PO);
    if (!P) {
      // By category: the text may quote the input.
      llvm::Error E = P.takeError();
      bool Internal = errorCategory(E) == ErrorCategory::Internal;
      std::string Msg = llvm::toString(std::move(E));
      if (Internal || Msg.empty())
        fail(A.Name + ": " + Msg);
      continue;
    }
    if (P->Offsets.size() != Req->size())
      fail(A.Name + ": wrong number of offsets");
    if (llvm::Error E =
            verify::verifyPlacement(*Req, P->Offsets, P->ArenaBytes))
      fail(A.Name + ": " + llvm::toString(std::move(E)));
    if (P->ArenaBytes < LB)
      fail(A.Name + ": arena " + llvm::Twine(P->ArenaBytes) +
           " below the lower bound " + llvm::Twine(LB));
  }
  return 0;
}
