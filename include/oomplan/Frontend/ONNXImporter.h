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
#include <functional>
#include <vector>

namespace oomplan {

/// Highest default-domain opset we accept: ONNX 1.20's. The schemas we
/// build on (ONNX 1.12) end at 17; the versions after it are in
/// lib/Frontend/ONNX/NewerOpsets.cpp.
constexpr int64_t MaxSupportedOpset = 25;

/// What the shape pass says of one value of a graph the importer has built
/// so far (a prefix of the model: every node converted yet).
struct PrefixValue {
  /// The constant dims, -1 for the others; empty where the rank is unknown.
  std::vector<int64_t> Dims;
  /// The element type; Undefined where the pass could not tell.
  ElementType Type = ElementType::Undefined;
};

/// What the shape pass says of every value of a prefix, by ValueId. The
/// importer asks when a count it must know while importing is a dim of an
/// intermediate value, not of a graph input or initializer: how many
/// tensors a SplitToSequence without a constant split makes (torch's
/// repeat_interleave), how long a Scan over a computed value is; and when
/// the expansion of a standard function op depends on an input's rank or
/// type (Attention's mask: bool or additive). The shape pass answers (a
/// layer above this one: the driver passes driver::importOptions());
/// without an oracle such nodes are refused. An error (the prefix's shapes
/// do not infer) is quoted in the refusal.
/// The oracle's answer: the values from ValueId From on (element I is value
/// From + I; the importer asks again only about values it has not seen), and
/// how many nodes it inferred to answer (all of them, or only those added
/// since its last answer), which the importer's budget counts.
struct PrefixAnswer {
  std::vector<PrefixValue> Values;
  uint64_t NodesInferred = 0;
};
using DimOracle = std::function<llvm::Expected<PrefixAnswer>(
    const Graph &Prefix, ValueId From)>;

struct ImportOptions {
  DimOracle Dims;
};

/// Loads Path; the format is the ONNX text format when the file name ends in
/// .onnxtxt/.onnxtext/.txt or the content starts like text, binary otherwise.
llvm::Expected<std::unique_ptr<Graph>>
importModelFile(llvm::StringRef Path, const ImportOptions &Opts = {});

/// Parses ONNX text. Name is used in messages; external-data locations are
/// resolved against ModelDir.
llvm::Expected<std::unique_ptr<Graph>>
importModelText(llvm::StringRef Text, llvm::StringRef Name,
                const ImportOptions &Opts = {});

/// Parses a binary ModelProto held in memory.
llvm::Expected<std::unique_ptr<Graph>>
importModelBinary(llvm::StringRef Bytes, llvm::StringRef Name,
                  const ImportOptions &Opts = {});

} // namespace oomplan

#endif
