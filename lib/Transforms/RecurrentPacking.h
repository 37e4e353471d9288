//===- RecurrentPacking.h - the exporter's packed recurrent weights -*- C++
//-*-===//
//
// Internal to lib/Transforms. PyTorch's exporter packs a recurrent layer's
// per-gate, per-direction parameters into ONNX's W, R and B (Slice to
// reorder the gates, Unsqueeze, Concat of the directions); PyTorch runs on
// the parameters and never makes those tensors. Training counts such values
// as holding no bytes, and sends their gradients to the parameters.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_TRANSFORMS_RECURRENTPACKING_H
#define OOMPLAN_LIB_TRANSFORMS_RECURRENTPACKING_H

#include "oomplan/IR/Graph.h"
#include <vector>

namespace oomplan {
namespace training {

/// Per value of G: the weights it packs, when it is computed from weights
/// alone by data movement and read only by more such packing and by
/// recurrent nodes' W, R or B inputs; empty for every other value.
std::vector<std::vector<ValueId>> recurrentWeightPacking(const Graph &G);

} // namespace training
} // namespace oomplan

#endif
