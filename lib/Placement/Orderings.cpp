//===- Orderings.cpp - buffer orders for greedy placement -----------------===//
//
// Sort keys for the orderings in Orderings.h. Greedy by breadth is computed
// without materialising per-section buffer lists: a buffer is taken at the
// first section (in processing order) of its lifetime, which is the section
// of largest breadth in its range, ties to the earliest. A range-maximum
// segment tree over sections finds it in O(log S).
//
//===----------------------------------------------------------------------===//
#include "Orderings.h"
#include "llvm/ADT/STLExtras.h"
#include <tuple>

using namespace llvm;

namespace oomplan::planner {

template <typename KeyFn>
static std::vector<uint32_t> sortedBy(const Problem &P, KeyFn Key) {
  std::vector<uint32_t> Order(P.Active);
  llvm::stable_sort(Order, [&](uint32_t A, uint32_t B) {
    auto KA = Key(A), KB = Key(B);
    if (KA != KB)
      return KA < KB;
    return P.Requests[A].Id < P.Requests[B].Id;
  });
  return Order;
}

// Keys are ascending, so descending quantities are negated by using
// (UINT64_MAX - x).
static uint64_t desc(uint64_t X) { return UINT64_MAX - X; }

std::vector<uint32_t> orderBySize(const Problem &P) {
  return sortedBy(P, [&](uint32_t I) {
    return std::make_tuple(desc(P.Footprint[I]), desc(P.duration(I)));
  });
}

std::vector<uint32_t> orderBySizeTimesDuration(const Problem &P) {
  return sortedBy(P, [&](uint32_t I) {
    unsigned __int128 Area =
        (unsigned __int128)P.Footprint[I] * (unsigned __int128)P.duration(I);
    return std::make_tuple(~Area, desc(P.Footprint[I]));
  });
}

std::vector<uint32_t> orderByDuration(const Problem &P) {
  return sortedBy(P, [&](uint32_t I) {
    return std::make_tuple(desc(P.duration(I)), desc(P.Footprint[I]));
  });
}

std::vector<uint32_t> orderByStart(const Problem &P) {
  return sortedBy(P, [&](uint32_t I) {
    return std::make_tuple(P.Requests[I].StartStep, desc(P.Footprint[I]));
  });
}

namespace {
/// Range maximum over sections of (breadth, -index), bottom-up segment tree.
class BreadthMax {
public:
  explicit BreadthMax(const std::vector<uint64_t> &Breadth)
      : N(Breadth.size()), Tree(2 * N) {
    for (size_t S = 0; S < N; ++S)
      Tree[N + S] = {Breadth[S], S};
    for (size_t K = N - 1; K > 0; --K)
      Tree[K] = better(Tree[2 * K], Tree[2 * K + 1]);
  }
  /// (max breadth, earliest section with it) over [Lo, Hi), Lo < Hi.
  std::pair<uint64_t, size_t> query(size_t Lo, size_t Hi) const {
    std::pair<uint64_t, size_t> Best{0, SIZE_MAX};
    for (Lo += N, Hi += N; Lo < Hi; Lo /= 2, Hi /= 2) {
      if (Lo & 1)
        Best = better(Best, Tree[Lo++]);
      if (Hi & 1)
        Best = better(Best, Tree[--Hi]);
    }
    return Best;
  }

private:
  static std::pair<uint64_t, size_t> better(std::pair<uint64_t, size_t> A,
                                            std::pair<uint64_t, size_t> B) {
    if (A.first != B.first)
      return A.first > B.first ? A : B;
    return A.second < B.second ? A : B;
  }
  size_t N;
  std::vector<std::pair<uint64_t, size_t>> Tree;
};
} // namespace

std::vector<uint32_t> orderByBreadth(const Problem &P) {
  if (P.Active.empty())
    return {};
  // Breadth per section from a difference array; sums stay below
  // SafeTotalBytes, so they cannot overflow.
  std::vector<uint64_t> Breadth(P.NumSections + 1, 0);
  for (uint32_t I : P.Active) {
    Breadth[P.Lo[I]] += P.Footprint[I];
    Breadth[P.Hi[I]] -= P.Footprint[I];
  }
  for (size_t S = 1; S < Breadth.size(); ++S)
    Breadth[S] += Breadth[S - 1];
  Breadth.pop_back();
  BreadthMax Max(Breadth);
  std::vector<std::pair<uint64_t, size_t>> Key(P.Requests.size());
  for (uint32_t I : P.Active)
    Key[I] = Max.query(P.Lo[I], P.Hi[I]);
  return sortedBy(P, [&](uint32_t I) {
    return std::make_tuple(desc(Key[I].first), Key[I].second,
                           desc(P.Footprint[I]));
  });
}

ArrayRef<Ordering> allOrderings() {
  static const Ordering Table[] = {
      {"size", orderBySize},
      {"size*duration", orderBySizeTimesDuration},
      {"duration", orderByDuration},
      {"start", orderByStart},
      {"breadth", orderByBreadth},
  };
  return Table;
}

} // namespace oomplan::planner
