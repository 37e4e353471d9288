//===- ConstantFold.h - contents of small constant subgraphs ----*- C++ -*-===//
//
// Private to lib/Analysis: the shape-inference driver folds small constant
// subgraphs (Concat, Cast, views and arithmetic of Constants) so that rules
// needing constant inputs (Resize's scales) accept a training export, which
// is never constant-folded.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_ANALYSIS_CONSTANTFOLD_H
#define OOMPLAN_LIB_ANALYSIS_CONSTANTFOLD_H

#include "oomplan/Analysis/ShapeInference.h"
#include "llvm/ADT/ArrayRef.h"
#include <memory>

namespace oomplan {
namespace shapes {

/// Contents of node Id's output 0 when every input it needs has known
/// contents (stored: ConstData; or computed: constant IntValues) and the op
/// is one that folds; else null. S holds the node's inferred output shape.
std::shared_ptr<const TensorData>
foldConstant(const Graph &G, NodeId Id, const ShapeInfo &S,
             llvm::ArrayRef<std::shared_ptr<const TensorData>> ConstData);

} // namespace shapes
} // namespace oomplan

#endif
