//===- Registry.cpp - the one table of placement algorithms ---------------===//
//
// The only list of algorithms. Tests, the bench and the CLI iterate over it,
// so a new algorithm is covered by the property tests as soon as it has a
// row here.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Placement/Registry.h"
#include "oomplan/Placement/Algorithms.h"
#include "oomplan/Support/Error.h"
#include <string>

using namespace llvm;

namespace oomplan::planner {

static const AlgorithmInfo Table[] = {
    {"auto",
     "default: multi-ordering, then exact and hill-climb with fixed budgets "
     "if not at the lower bound",
     planAuto},
    {"naive", "no reuse: each buffer after the previous (baseline)", planNaive},
    {"greedy-by-size", "largest first, best fit (TFLite/TVM/XLA baseline)",
     planGreedyBySize},
    {"greedy-by-breadth",
     "steps by decreasing breadth, their buffers largest first, best fit "
     "(Pisarchyk & Lee 2020)",
     planGreedyByBreadth},
    {"multi-ordering",
     "best fit under five orderings, keep the best (XLA heap simulator)",
     planMultiOrdering},
    {"hill-climb", "local search over the placement order (TVM USMP)",
     planHillClimb},
    {"exact", "branch and bound over canonical placements (MiniMalloc-style)",
     planExact},
};

ArrayRef<AlgorithmInfo> algorithms() { return Table; }

const AlgorithmInfo *findAlgorithm(StringRef Name) {
  for (const AlgorithmInfo &A : Table)
    if (A.Name == Name)
      return &A;
  return nullptr;
}

Expected<Placement> runAlgorithm(StringRef Name,
                                 ArrayRef<BufferRequest> Requests,
                                 const PlannerOptions &Options) {
  if (const AlgorithmInfo *A = findAlgorithm(Name))
    return A->Run(Requests, Options);
  std::string Valid;
  for (const AlgorithmInfo &A : Table)
    Valid += (Valid.empty() ? "" : ", ") + A.Name.str();
  return makeInputError("unknown placement algorithm '" + Name +
                        "' (valid: " + Valid + ")");
}

} // namespace oomplan::planner
