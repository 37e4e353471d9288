//===- ConvertProto.h - ModelProto to Graph (internal) ----------*- C++ -*-===//
#ifndef OOMPLAN_LIB_FRONTEND_ONNX_CONVERTPROTO_H
#define OOMPLAN_LIB_FRONTEND_ONNX_CONVERTPROTO_H

#include "onnx/onnx_pb.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/IR/Graph.h"
#include "llvm/Support/Error.h"

namespace oomplan {

/// Converts a parsed model. Name is the file name used in messages. May throw
/// ONNX exceptions; the caller catches them.
llvm::Expected<std::unique_ptr<Graph>>
convertModelProto(const onnx::ModelProto &Model, llvm::StringRef Name,
                  std::string &CurrentNode, const ImportOptions &Opts);

/// The importer's rule for external data: true when Loc is absolute or
/// climbs out of the model's folder (the weight loader applies it too).
bool locationEscapesModelDir(llvm::StringRef Loc);

} // namespace oomplan

#endif
