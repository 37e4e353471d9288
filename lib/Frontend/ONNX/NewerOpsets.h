//===- NewerOpsets.h - the ops ONNX changed after opset 17 ------*- C++ -*-===//
//
// The frontend checks nodes against ONNX 1.12's schemas, which end at opset
// 17, while exporters write newer opsets (torch.onnx.export writes 18 since
// PyTorch 2.9). For an op ONNX left alone after 17, 1.12's schema at a newer
// opset is still the one in force. For an op ONNX changed or added after 17
// it is not: this table says, per such version, how many inputs and outputs
// it takes, or that only its allowed types grew (bfloat16, float8, int4:
// then 1.12's schema still gives the arity, but not the types), or why
// oomplan refuses it. What a change means (an attribute become an input, a
// new mode) is read by the shape rules and kernels from the node itself
// (attributes, input count), as for every other version.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_FRONTEND_ONNX_NEWEROPSETS_H
#define OOMPLAN_LIB_FRONTEND_ONNX_NEWEROPSETS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>

namespace oomplan {

/// One version of a default-domain op introduced after opset 17.
struct NewerOpVersion {
  const char *Op;
  int Since;        ///< the opset that introduced this version
  int MinIn, MaxIn; ///< inputs (the first MinIn required); -1: 1.12's schema
  int MinOut, MaxOut;
  const char *Refused; ///< null, or why oomplan does not read this version
  /// A function op (Attention, RMSNormalization, ...): imported as its ONNX
  /// function body (StandardFunctions.cpp), never as a node of its own.
  bool Function = false;
};

/// The version of default-domain Op in force at Opset when ONNX introduced
/// it after opset 17; null when ONNX 1.12's schema for Op is in force.
const NewerOpVersion *newerOpVersion(llvm::StringRef Op, int64_t Opset);

/// Every row, sorted by op and then version (for the tests).
llvm::ArrayRef<NewerOpVersion> newerOpVersions();

} // namespace oomplan

#endif
