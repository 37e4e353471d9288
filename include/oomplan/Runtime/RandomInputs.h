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
#include <cstdint>

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

/// Seeded values for a weight whose bytes are absent (oomplan-run
/// --random-weights on a model shipped without its weights): floats of
/// rank >= 2 uniform in +-sqrt(6 / F), F the larger of dims[0] and the
/// product of the other dims (He's bound for either layout of a matrix, so
/// that activations neither blow up nor vanish through deep stacks); floats
/// of rank <= 1 (biases, norm scales, variances) uniform in [0.5, 1.5), so
/// that a variance is positive; int8 and uint8 (quantized weights) every
/// byte value; other types zero.
void fillRandomWeight(const TensorRef &T, uint64_t Seed, uint64_t Salt);

} // namespace runtime
} // namespace oomplan

#endif
