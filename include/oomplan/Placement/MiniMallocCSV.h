//===- MiniMallocCSV.h - MiniMalloc's CSV instance format -------*- C++ -*-===//
//
// MiniMalloc (Moffitt, ASPLOS 2023) publishes allocation problems as CSV:
// a header `id,lower,upper,size` and one buffer per row, live over the
// half-open range [lower, upper); solutions add a fifth column `offset`.
// Reading them lets the planner be measured on the same hard instances.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PLACEMENT_MINIMALLOCCSV_H
#define OOMPLAN_PLACEMENT_MINIMALLOCCSV_H

#include "oomplan/Placement/BufferRequest.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <vector>

namespace oomplan::planner {

/// Parses a MiniMalloc CSV (an `offset` column is accepted and ignored).
/// Every buffer gets AlignBytes (MiniMalloc instances use 1). Errors name
/// FileName:line for a bad header, a malformed or non-numeric row,
/// upper <= lower, or a duplicate id.
llvm::Expected<std::vector<BufferRequest>>
parseMiniMallocCSV(llvm::StringRef Text, llvm::StringRef FileName,
                   uint64_t AlignBytes);

/// Writes `id,lower,upper,size,offset`, one row per request, in order.
void writeMiniMallocCSV(llvm::raw_ostream &OS,
                        llvm::ArrayRef<BufferRequest> Requests,
                        const Placement &Result);

} // namespace oomplan::planner

#endif
