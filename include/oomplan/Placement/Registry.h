//===- Registry.h - the table of placement algorithms -----------*- C++ -*-===//
//
// Every placement algorithm is a pure function of the request list, listed
// once in the table behind algorithms() and selected by name (`--algo=NAME`).
// Adding an algorithm means writing one file and adding one row to
// lib/Placement/Registry.cpp; tests and the bench pick it up from the table.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PLACEMENT_REGISTRY_H
#define OOMPLAN_PLACEMENT_REGISTRY_H

#include "oomplan/Placement/BufferRequest.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace oomplan::planner {

/// Signature shared by all algorithms: offsets for every request, or an
/// error for invalid requests (bad alignment, reversed lifetime, overflow).
using PlanFunction = llvm::Expected<Placement> (*)(
    llvm::ArrayRef<BufferRequest>, const PlannerOptions &);

/// One row of the registry. Name and Description point to static strings.
struct AlgorithmInfo {
  llvm::StringRef Name;
  llvm::StringRef Description;
  PlanFunction Run;
};

/// Name of the algorithm used when none is asked for.
inline constexpr llvm::StringLiteral DefaultAlgorithm = "auto";

/// All registered algorithms, in a fixed order (the default first).
llvm::ArrayRef<AlgorithmInfo> algorithms();

/// The algorithm called Name, or null if there is none.
const AlgorithmInfo *findAlgorithm(llvm::StringRef Name);

/// Runs the algorithm called Name; an unknown name gives an error that lists
/// the valid ones.
llvm::Expected<Placement> runAlgorithm(llvm::StringRef Name,
                                       llvm::ArrayRef<BufferRequest> Requests,
                                       const PlannerOptions &Options);

} // namespace oomplan::planner

#endif
