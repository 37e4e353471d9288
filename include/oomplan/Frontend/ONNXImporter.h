//===- ONNXImporter.h - ONNX models into the oomplan IR ---------*- C++ -*-===//
//
// Reads binary .onnx files (up to protobuf's 2 GiB limit) and the ONNX text
// format (.onnxtxt), and builds a checked Graph. External weight files are
// recorded, never opened: only dims and types matter for planning. Every ONNX
// and protobuf failure, exception or not, becomes an llvm::Error naming the
// file and, where there is one, the node. ONNX headers stay inside this
// library.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FRONTEND_ONNXIMPORTER_H
#define OOMPLAN_FRONTEND_ONNXIMPORTER_H

#include "oomplan/IR/Graph.h"
#include "llvm/Support/Error.h"

namespace oomplan {

/// Highest default-domain opset we accept (ONNX 1.12 defines 1..17).
constexpr int64_t MaxSupportedOpset = 17;

/// Loads Path; the format is the ONNX text format when the file name ends in
/// .onnxtxt/.onnxtext/.txt or the content starts like text, binary otherwise.
llvm::Expected<std::unique_ptr<Graph>> importModelFile(llvm::StringRef Path);

/// Parses ONNX text. Name is used in messages; external-data locations are
/// resolved against ModelDir.
llvm::Expected<std::unique_ptr<Graph>> importModelText(llvm::StringRef Text,
                                                       llvm::StringRef Name);

/// Parses a binary ModelProto held in memory.
llvm::Expected<std::unique_ptr<Graph>> importModelBinary(llvm::StringRef Bytes,
                                                         llvm::StringRef Name);

} // namespace oomplan

#endif
