//===- Budget.cpp - the device budget and the one "does it fit" -----------===//
//
// Sums are taken in 128 bits, so that no overhead, headroom or figure near
// 2^64 wraps into a small number that would wrongly fit.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Support/Budget.h"
#include <algorithm>

using namespace oomplan;

Budget Budget::bounded() const {
  Budget B = *this;
  if (!B.CapacityBytes)
    B.CapacityBytes = DeviceBytes;
  return B;
}

Budget Budget::withHeadroom(uint64_t Bytes) const {
  Budget B = *this;
  unsigned __int128 H = (unsigned __int128)HeadroomBytes + Bytes;
  B.HeadroomBytes = H > UINT64_MAX ? UINT64_MAX : uint64_t(H);
  return B;
}

// Overhead + headroom + Figure, exactly.
static unsigned __int128 neededExactly(const Budget &B, uint64_t Figure) {
  return (unsigned __int128)Figure + B.OverheadBytes + B.HeadroomBytes;
}

std::optional<uint64_t> Budget::roomBytes() const {
  if (!CapacityBytes)
    return std::nullopt;
  unsigned __int128 Kept = neededExactly(*this, 0);
  return Kept < *CapacityBytes ? *CapacityBytes - uint64_t(Kept) : 0;
}

uint64_t oomplan::decidingBytes(const Budget &B, const Figures &F) {
  if (B.Decides == DecidingFigure::Reserved && F.ReservedBytes)
    return std::max(*F.ReservedBytes, F.TotalBytes);
  return F.TotalBytes;
}

uint64_t oomplan::neededBytes(const Budget &B, const Figures &F) {
  unsigned __int128 N = neededExactly(B, decidingBytes(B, F));
  return N > UINT64_MAX ? UINT64_MAX : uint64_t(N);
}

bool oomplan::fits(const Budget &B, const Figures &F) {
  return !B.CapacityBytes ||
         neededExactly(B, decidingBytes(B, F)) <= *B.CapacityBytes;
}

int64_t oomplan::spareBytes(const Budget &B, const Figures &F) {
  if (!B.CapacityBytes)
    return 0;
  __int128 Spare = (__int128)*B.CapacityBytes -
                   (__int128)neededExactly(B, decidingBytes(B, F));
  return Spare < INT64_MIN   ? INT64_MIN
         : Spare > INT64_MAX ? INT64_MAX
                             : int64_t(Spare);
}
