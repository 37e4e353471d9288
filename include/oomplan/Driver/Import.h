//===- Import.h - the importer with the shape pass to ask -------*- C++ -*-===//
//
// The frontend sits below the shape pass, yet a few counts it must fix
// while importing are dims of computed values (ONNXImporter.h's
// DimOracle). The driver, above both, gives it the shape pass: every path
// that imports a model for planning or running goes through here, so they
// all accept the same models.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_DRIVER_IMPORT_H
#define OOMPLAN_DRIVER_IMPORT_H

#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/oomplan.h"

namespace oomplan {
namespace driver {

/// Import options whose DimOracle runs the shape pass over the prefix
/// (free symbols stay symbols: only dims that are constants whatever the
/// bindings are answered).
ImportOptions importOptions();

/// R's model with importOptions(): the file R.ModelPath, or R.ModelBytes
/// when set (ONNX text when the path ends in .onnxtxt, binary otherwise).
llvm::Expected<std::unique_ptr<Graph>> importModel(const api::Request &R);

/// The model at Path with importOptions(), or Bytes when given (ONNX text
/// when the path ends in .onnxtxt, binary otherwise).
llvm::Expected<std::unique_ptr<Graph>>
importModel(llvm::StringRef Path, std::optional<llvm::StringRef> Bytes);

} // namespace driver
} // namespace oomplan

#endif
