//===- ONNXImporter.cpp - reading and parsing ONNX files ------------------===//
//
// File handling and the exception boundary: protobuf and ONNX may throw, the
// library must not, so everything ONNX-related runs inside one try block here
// and any exception becomes an error naming the file and the node reached.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Frontend/ONNXImporter.h"
#include "ConvertProto.h"
#include "google/protobuf/io/coded_stream.h"
#include "onnx/defs/parser.h"
#include "oomplan/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <climits>

using namespace oomplan;

// Runs Convert; turns any exception into an error naming file and node.
template <typename Fn>
static llvm::Expected<std::unique_ptr<Graph>> guarded(llvm::StringRef Name,
                                                      Fn &&Convert) {
  std::string CurrentNode;
  try {
    return Convert(CurrentNode);
  } catch (const std::exception &E) {
    std::string Where = CurrentNode.empty() ? "" : CurrentNode + ": ";
    return makeInputError(Name + ": " + Where + "ONNX error: " + E.what());
  } catch (...) {
    return makeInternalError(Name + ": unknown ONNX exception");
  }
}

llvm::Expected<std::unique_ptr<Graph>>
oomplan::importModelBinary(llvm::StringRef Bytes, llvm::StringRef Name,
                           const ImportOptions &Opts) {
  if (Bytes.empty())
    return makeInputError(Name + ": the file is empty, not an ONNX model");
  if (Bytes.size() > static_cast<size_t>(INT_MAX))
    return makeUnsupportedError(
        Name + ": " + llvm::Twine(Bytes.size()) +
        " bytes exceeds protobuf's 2 GiB message limit; store "
        "the weights as external data");
  return guarded(
      Name,
      [&](std::string &CurrentNode) -> llvm::Expected<std::unique_ptr<Graph>> {
        onnx::ModelProto Model;
        google::protobuf::io::CodedInputStream Stream(
            reinterpret_cast<const uint8_t *>(Bytes.data()),
            static_cast<int>(Bytes.size()));
        Stream.SetTotalBytesLimit(INT_MAX);
        if (!Model.ParseFromCodedStream(&Stream) ||
            !Stream.ConsumedEntireMessage())
          return makeInputError(Name +
                                ": not a valid ONNX model (protobuf parse "
                                "failed: truncated or corrupt file?)");
        if (!Model.has_graph() || Model.ir_version() <= 0)
          return makeInputError(Name + ": not an ONNX model (no graph or no "
                                       "ir_version in the protobuf message)");
        return convertModelProto(Model, Name, CurrentNode, Opts);
      });
}

llvm::Expected<std::unique_ptr<Graph>>
oomplan::importModelText(llvm::StringRef Text, llvm::StringRef Name,
                         const ImportOptions &Opts) {
  return guarded(
      Name,
      [&](std::string &CurrentNode) -> llvm::Expected<std::unique_ptr<Graph>> {
        onnx::ModelProto Model;
        std::string Owned =
            Text.str(); // the parser needs a NUL-terminated string
        onnx::Status S = onnx::OnnxParser::Parse(Model, Owned.c_str());
        if (!S.IsOK())
          return makeInputError(Name + ": ONNX text syntax error: " +
                                llvm::StringRef(S.ErrorMessage()).trim());
        if (!Model.has_graph())
          return makeInputError(Name + ": the ONNX text has no graph");
        return convertModelProto(Model, Name, CurrentNode, Opts);
      });
}

static bool looksLikeText(llvm::StringRef Path, llvm::StringRef Bytes) {
  if (Path.endswith(".onnxtxt") || Path.endswith(".onnxtext") ||
      Path.endswith(".txt"))
    return true;
  llvm::StringRef Start = Bytes.ltrim();
  return Start.startswith("<") || Start.startswith("#");
}

llvm::Expected<std::unique_ptr<Graph>>
oomplan::importModelFile(llvm::StringRef Path, const ImportOptions &Opts) {
  if (!llvm::sys::fs::exists(Path))
    return makeIOError(Path + ": no such file");
  if (llvm::sys::fs::is_directory(Path))
    return makeIOError(Path + ": is a directory, not an ONNX model file");
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!Buf)
    return makeIOError(Path + ": cannot read: " + Buf.getError().message());
  llvm::StringRef Bytes = (*Buf)->getBuffer();
  if (looksLikeText(Path, Bytes))
    return importModelText(Bytes, Path, Opts);
  return importModelBinary(Bytes, Path, Opts);
}
