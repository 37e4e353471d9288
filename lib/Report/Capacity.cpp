//===- Capacity.cpp - the largest batch or sequence that fits -------------===//
//
// Exponential search then bisection over full plans, with the invariant
// "lo fits, hi does not"; and the memory sweep table. Planning GPT-2-sized
// graphs takes tens of milliseconds, so the 20 to 40 probes of a search cost
// about a second.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Capacity.h"
#include "oomplan/Report/Breakdown.h"
#include "oomplan/Report/Formulas.h"
#include "oomplan/Support/Error.h"

using namespace oomplan;
using namespace oomplan::report;

namespace {
/// One probe's device bytes (neededBytes) and verdict (fits).
struct Probe {
  uint64_t Bytes = 0;
  bool Fits = false;
};

/// The probe at one value, or std::nullopt when the sizes overflow.
struct Prober {
  const PlanFn &PlanAt;
  llvm::ArrayRef<std::optional<int64_t>> Base;
  llvm::ArrayRef<SymbolId> Syms;
  const Budget &Limit;
  unsigned NumPlans = 0;

  llvm::Expected<std::optional<Probe>> at(int64_t V) {
    ++NumPlans;
    auto P = PlanAt(withSymbols(Base, Syms, V));
    if (!P) {
      // Sizes past 64 bits mean "does not fit"; any other error is real.
      llvm::Error E = P.takeError();
      if (errorCategory(E) != ErrorCategory::Overflow)
        return std::move(E);
      llvm::consumeError(std::move(E));
      return std::nullopt;
    }
    return Probe{neededBytes(Limit, P->figures()), fits(Limit, P->figures())};
  }
};
} // namespace

static bool fitsIn(const std::optional<Probe> &P) { return P && P->Fits; }

llvm::Expected<CapacityResult>
report::findCapacity(const PlanFn &PlanAt,
                     llvm::ArrayRef<std::optional<int64_t>> Base,
                     llvm::ArrayRef<SymbolId> Syms, llvm::StringRef Role,
                     const Budget &Limit, int64_t Cap) {
  CapacityResult R;
  R.Role = Role.str();
  if (Syms.empty())
    return makeInputError("the model has no " + Role + " dimension to search");
  Prober Probe{PlanAt, Base, Syms, Limit};
  auto First = Probe.at(1);
  if (!First)
    return First.takeError();
  if (!fitsIn(*First)) {
    R.BytesAbove = *First ? (*First)->Bytes : UINT64_MAX;
    R.NumPlans = Probe.NumPlans;
    return R;
  }
  int64_t Lo = 1, Hi = 0; // Lo fits; Hi (when set) does not.
  uint64_t LoBytes = (*First)->Bytes, HiBytes = UINT64_MAX;
  while (Hi == 0) {
    if (Lo >= Cap) {
      R.Max = Lo;
      R.AtLeast = true;
      R.BytesAtMax = LoBytes;
      R.NumPlans = Probe.NumPlans;
      return R;
    }
    int64_t Next = std::min(Lo * 2, Cap);
    auto B = Probe.at(Next);
    if (!B)
      return B.takeError();
    if (fitsIn(*B)) {
      Lo = Next;
      LoBytes = (*B)->Bytes;
    } else {
      Hi = Next;
      HiBytes = *B ? (*B)->Bytes : UINT64_MAX;
    }
  }
  while (Hi - Lo > 1) {
    int64_t Mid = Lo + (Hi - Lo) / 2;
    auto B = Probe.at(Mid);
    if (!B)
      return B.takeError();
    if (fitsIn(*B)) {
      Lo = Mid;
      LoBytes = (*B)->Bytes;
    } else {
      Hi = Mid;
      HiBytes = *B ? (*B)->Bytes : UINT64_MAX;
    }
  }
  R.Max = Lo;
  R.BytesAtMax = LoBytes;
  R.BytesAbove = HiBytes;
  R.NumPlans = Probe.NumPlans;
  return R;
}

// Powers of two from From to at least To.
static std::vector<int64_t> powersOfTwo(int64_t From, int64_t To) {
  std::vector<int64_t> Out;
  for (int64_t V = From; V <= To || Out.empty(); V *= 2)
    Out.push_back(V);
  if (Out.back() < To)
    Out.push_back(To);
  return Out;
}

llvm::Expected<Sweep>
report::sweepMemory(const PlanFn &PlanAt,
                    llvm::ArrayRef<std::optional<int64_t>> Base,
                    llvm::ArrayRef<SymbolId> BatchSyms,
                    llvm::ArrayRef<SymbolId> SeqSyms, const Budget &Limit) {
  Sweep S;
  int64_t CurBatch = boundValue(Base, BatchSyms);
  int64_t CurSeq = boundValue(Base, SeqSyms);
  S.Batches = BatchSyms.empty()
                  ? std::vector<int64_t>{0}
                  : powersOfTwo(1, std::max<int64_t>(64, CurBatch));
  S.Seqs = SeqSyms.empty() ? std::vector<int64_t>{0}
                           : powersOfTwo(CurSeq > 0 && CurSeq < 128 ? 1 : 128,
                                         std::max<int64_t>(4096, CurSeq));
  for (int64_t Batch : S.Batches)
    for (int64_t Seq : S.Seqs) {
      std::vector<std::optional<int64_t>> B(Base.begin(), Base.end());
      if (Batch)
        B = withSymbols(B, BatchSyms, Batch);
      if (Seq)
        B = withSymbols(B, SeqSyms, Seq);
      Prober Probe{PlanAt, B, {}, Limit};
      auto At = Probe.at(0);
      if (!At)
        return At.takeError();
      SweepCell Cell{Batch, Seq, std::nullopt, false};
      if (*At) {
        Cell.Bytes = (*At)->Bytes;
        Cell.Fits = (*At)->Fits;
      }
      S.Cells.push_back(Cell);
    }
  return S;
}
