//===- ContribOps.h - the ONNX Runtime contrib ops oomplan reads -*- C++
//-*-===//
//
// ONNX Runtime's tools write ops of their own domain, com.microsoft, into
// the models they produce: the transformer optimizer fuses LayerNorm, GELU
// and bias adds (SkipLayerNormalization, FastGelu, BiasGelu, ...), and the
// weight-only quantizer and the GenAI model builder write MatMulNBits, a
// MatMul with 4-bit (or 2-/8-bit) blocked weights. ONNX 1.12 knows none of
// them. This table gives, per op oomplan reads, its arity (ONNX Runtime's
// schema, docs/ContribOperators.md) and how it is imported: as a body of
// standard ops (ContribFunctions.cpp), or as a node of its own
// (MatMulNBits, whose packed weights must stay packed to be counted at
// their size). SimplifiedLayerNormalization is listed too: ONNX Runtime
// registers it in the default domain, where ONNX itself has no such op.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_FRONTEND_ONNX_CONTRIBOPS_H
#define OOMPLAN_LIB_FRONTEND_ONNX_CONTRIBOPS_H

#include "NewerOpsets.h"
#include <string>

namespace oomplan {

/// The domain of ONNX Runtime's contrib ops.
constexpr const char *ContribDomain = "com.microsoft";

/// The row of contrib op Op of Domain, or null when oomplan reads no such
/// op. Since is 1 (ONNX Runtime's contrib domain has one version); Function
/// says the op is imported as a body of standard ops.
const NewerOpVersion *contribOp(llvm::StringRef Domain, llvm::StringRef Op);

/// The names of every op contribOp knows, comma-separated (for errors).
std::string contribOpNames();

/// Every row, sorted by op (for the tests).
llvm::ArrayRef<NewerOpVersion> contribOps();

} // namespace oomplan

#endif
