//===- Batching.h - slices of the batch for micro-batch passes --*- C++ -*-===//
//
// A plan fitted with micro-batches runs once per pass on batch / K. The
// whole batch's inputs and outputs stay in the caller's memory; before each
// pass its slice of every input is copied into the plan's input slot, and
// after it the plan's outputs into their slice of the whole outputs.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_BATCHING_H
#define OOMPLAN_RUNTIME_BATCHING_H

#include "oomplan/Runtime/Kernel.h"

namespace oomplan {
namespace runtime {

/// Copies slice Index (along Axis, of Part.Dims[Axis] elements) of Whole to
/// Part, or Part back into that slice when ToWhole. Axis -1: the whole
/// tensor (Whole and Part have the same dims). Types and the other dims
/// must match (the driver checked).
void copyBatchSlice(const TensorRef &Whole, const TensorRef &Part, int Axis,
                    uint64_t Index, bool ToWhole);

} // namespace runtime
} // namespace oomplan

#endif
