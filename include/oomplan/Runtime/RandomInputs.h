//===- RandomInputs.h - seeded values for inputs not given ------*- C++ -*-===//
//
// oomplan-run fills each graph input it is not given with values from a
// seeded generator, the same for the same seed on every machine. Floats are
// uniform in [-1, 1); bools 0 or 1; an integer input that a Gather uses as
// indices (token ids into an embedding) stays within the gathered axis, so
// the run is valid; other integers are small and non-negative.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_RUNTIME_RANDOMINPUTS_H
#define OOMPLAN_RUNTIME_RANDOMINPUTS_H

#include "oomplan/Runtime/Kernel.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace oomplan {
namespace runtime {

/// Exclusive upper bound for the integers of graph input V: the smallest
/// gathered-axis size of the Gathers that index with it, else 8. TensorOf
/// gives any value's dims.
int64_t integerInputBound(const Graph &G, ValueId V,
                          llvm::function_ref<TensorRef(ValueId)> TensorOf);

/// Fills T from Seed (mixed with Salt, the input's index, so inputs
/// differ). Bound is used for integer types.
void fillRandom(const TensorRef &T, uint64_t Seed, uint64_t Salt,
                int64_t Bound);

} // namespace runtime
} // namespace oomplan

#endif
