//===- WeightLoader.h - tensor bytes for the runtime ------------*- C++ -*-===//
//
// The importer keeps only small tensors' contents (IR/Graph.h,
// MaxKeptElements); planning needs dims and types alone. A run needs every
// byte, so this reads them on demand: the initializers and Constant nodes of
// a model file (raw_data, the typed fields, or external data under the same
// folder rules the importer applies), and the TensorProto .pb files of
// ONNX's test data, which oomplan-run reads as inputs and writes as outputs.
// Bytes go straight into memory the caller owns (the plan's weight region),
// so a loaded model costs no second copy once loading returns. ONNX headers
// stay inside the frontend library.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_FRONTEND_WEIGHTLOADER_H
#define OOMPLAN_FRONTEND_WEIGHTLOADER_H

#include "oomplan/IR/Graph.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <vector>

namespace oomplan {

/// Where the bytes of value V go: a pointer to Bytes writable bytes, or null
/// when the caller has no slot of that size (the loader then fails, naming
/// the tensor).
using TensorDestination = llvm::function_ref<void *(ValueId V, uint64_t Bytes)>;

/// Reads every initializer and every Constant node's value of the model at
/// ModelPath (the file G was imported from; .onnx or ONNX text) and copies
/// each, little-endian and densely packed, to Dest(V, Bytes). Values of G
/// without data in the file are an error, as are string and sparse tensors.
/// Bytes, when given, is the model's contents (ModelPath then only names it
/// and locates its external data).
///
/// Missing, when given, fills instead of failing an initializer whose
/// external data file does not exist (a model shipped with its weights
/// stripped, as test/models): it gets the tensor's type, dims and Dest's
/// pointer. A location that escapes the model's folder is still an error.
using MissingTensorFill = llvm::function_ref<void(
    ValueId V, ElementType Type, llvm::ArrayRef<int64_t> Dims, void *Dst)>;
llvm::Error loadTensorData(const Graph &G, llvm::StringRef ModelPath,
                           TensorDestination Dest,
                           std::optional<llvm::StringRef> Bytes = {},
                           MissingTensorFill Missing = nullptr);

/// The binary model at ModelPath, serialized again with the raw_data of
/// every initializer of more than 8 KiB replaced by an external-data
/// reference (location: the model file's own name, offset and length of
/// those bytes in it), so that planning parses kilobytes instead of the
/// weights (which the importer does not keep anyway) and loadTensorData
/// then reads each tensor straight from the file. nullopt: nothing to
/// replace (a text model, or no large raw_data). The model file must stay
/// where it is (next to itself) until the weights are loaded.
llvm::Expected<std::optional<std::string>>
referenceWeightsInPlace(llvm::StringRef ModelPath);

/// A tensor read from a TensorProto file: its name (may be empty), type,
/// dims and packed little-endian bytes.
struct TensorFile {
  std::string Name;
  ElementType Type = ElementType::Undefined;
  std::vector<int64_t> Dims;
  std::string Bytes;
};

/// Reads one serialized TensorProto (ONNX test data's input_0.pb).
llvm::Expected<TensorFile> readTensorFile(llvm::StringRef Path);

/// The binary model at ModelPath with each named graph input turned into an
/// initializer holding the given tensor (its type and dims must be the
/// input's), serialized as a binary ModelProto: ONNX's node tests feed
/// Reshape targets, axes, pads and scales as inputs, which shape inference
/// needs as constants to plan (oomplan-run --fold-inputs).
llvm::Expected<std::string>
foldInputsIntoModel(llvm::StringRef ModelPath,
                    llvm::ArrayRef<std::pair<std::string, TensorFile>> Inputs);

/// Writes a TensorProto with raw_data (what onnx.numpy_helper reads).
llvm::Error writeTensorFile(llvm::StringRef Path, llvm::StringRef Name,
                            ElementType Type, llvm::ArrayRef<int64_t> Dims,
                            const void *Data, uint64_t Bytes);

} // namespace oomplan

#endif
