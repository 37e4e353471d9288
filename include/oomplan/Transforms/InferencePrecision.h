//===- InferencePrecision.h - an fp32 model run in 16 bits ------*- C++ -*-===//
//
// --precision=fp16|bf16 without --train: the plan of the model converted to
// 16 bits as ONNX Runtime's float16 conversion (onnxconverter-common's
// convert_float_to_float16, keep_io_types=False) or PyTorch's model.half()
// leaves it: every fp32 tensor (weights, inputs, activations, outputs) in
// 16 bits. The ops that conversion keeps in fp32 (its default block list:
// Resize, Upsample, Range, CumSum, Min, Max, TopK, RoiAlign,
// NonMaxSuppression, RandomUniformLike) read fp32 copies of their 16-bit
// inputs and write fp32 outputs, each cast back to 16 bits by a step of its
// own, as the Cast nodes the conversion inserts. PyTorch runs those ops in
// 16 bits, so its footprint is at most this one.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TRANSFORMS_INFERENCEPRECISION_H
#define OOMPLAN_TRANSFORMS_INFERENCEPRECISION_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Schedule/Schedule.h"
#include "llvm/ADT/StringRef.h"

namespace oomplan {

/// The ops the float16 conversion keeps in fp32.
bool keptInFloat(llvm::StringRef OpType);

/// Rewrites S (a schedule of graph values whose types Shapes has) to Half
/// (Float16 or BFloat16): fp32 tensors halve, and each op kept in fp32 gets
/// its copies and casts. Returns how many ops were kept in fp32.
unsigned applyInferencePrecision(const ShapeInfo &Shapes, ElementType Half,
                                 Schedule &S);

} // namespace oomplan

#endif
