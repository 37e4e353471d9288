//===- TrainingAutocast.h - torch.autocast's types in a training step -*- C++
//-*-===//
//
// Internal to lib/Transforms. --precision=bf16-autocast|fp16-autocast: an
// fp32 model under torch.autocast (CUDA). Products and convolutions run in
// 16 bits on 16-bit copies of their fp32 operands; the ops of autocast's
// fp32 list write fp32; every other op writes its inputs' widest type
// (PyTorch's autocast_mode.cpp lists the ops; docs/training.md "Autocast").
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_TRANSFORMS_TRAININGAUTOCAST_H
#define OOMPLAN_LIB_TRANSFORMS_TRAININGAUTOCAST_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Schedule/Schedule.h"
#include <vector>

namespace oomplan {
namespace training {

/// Halves the 16-bit tensors of S (the schedule of G's nodes, step N running
/// node N, before any step is inserted) and adds autocast's copies: a
/// weight's (GradRoot maps a weight's views to it) once, written by its
/// first product and read by the later ones; an fp32 activation's per
/// product. Returns, per node and input, the copy that node computes on
/// (its backward keeps it in the input's place), or UINT32_MAX.
std::vector<std::vector<TensorId>>
applyAutocastTypes(const Graph &G, const ShapeInfo &Shapes,
                   llvm::ArrayRef<ValueId> GradRoot, ElementType Half,
                   Schedule &S);

} // namespace training
} // namespace oomplan

#endif
