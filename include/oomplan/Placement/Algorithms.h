//===- Algorithms.h - entry points of the placement algorithms --*- C++ -*-===//
//
// One function per algorithm, each defined in its own file under lib/Placement
// and listed in the registry. Callers normally go through runAlgorithm(); the
// functions are public so that one algorithm can reuse another.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PLACEMENT_ALGORITHMS_H
#define OOMPLAN_PLACEMENT_ALGORITHMS_H

#include "oomplan/Placement/BufferRequest.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace oomplan::planner {

/// No reuse: every buffer after the previous one (the baseline).
llvm::Expected<Placement> planNaive(llvm::ArrayRef<BufferRequest>,
                                    const PlannerOptions &);
/// Largest first, best fit among gaps of time-overlapping placed buffers.
llvm::Expected<Placement> planGreedyBySize(llvm::ArrayRef<BufferRequest>,
                                           const PlannerOptions &);
/// Steps by decreasing breadth, their buffers largest first, best fit.
llvm::Expected<Placement> planGreedyByBreadth(llvm::ArrayRef<BufferRequest>,
                                              const PlannerOptions &);
/// Best fit under several orderings; keeps the smallest arena.
llvm::Expected<Placement> planMultiOrdering(llvm::ArrayRef<BufferRequest>,
                                            const PlannerOptions &);
/// Local search over the placement order, seeded by multi-ordering.
llvm::Expected<Placement> planHillClimb(llvm::ArrayRef<BufferRequest>,
                                        const PlannerOptions &);
/// Branch and bound over canonical placements (lowest offsets first).
llvm::Expected<Placement> planExact(llvm::ArrayRef<BufferRequest>,
                                    const PlannerOptions &);
/// The default: cheap greedy orderings, then searches if they are not tight.
llvm::Expected<Placement> planAuto(llvm::ArrayRef<BufferRequest>,
                                   const PlannerOptions &);

} // namespace oomplan::planner

#endif
