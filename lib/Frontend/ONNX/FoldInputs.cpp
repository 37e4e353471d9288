//===- FoldInputs.cpp - graph inputs made initializers --------------------===//
//
// For oomplan-run --fold-inputs: a model whose shapes depend on the values
// of small inputs (a Reshape target, Slice starts, Resize scales fed as
// graph inputs, as ONNX's node tests do) cannot be planned before those
// values are known. Given the values, the input becomes an initializer with
// raw data (allowed without a graph input since IR version 4), so the
// importer keeps its contents and shape inference reads them.
//
//===----------------------------------------------------------------------===//
#include "onnx/onnx_pb.h"
#include "oomplan/Frontend/WeightLoader.h"
#include "oomplan/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include <climits>

using namespace oomplan;

static llvm::Error fold(onnx::ModelProto &M, llvm::StringRef Path,
                        llvm::ArrayRef<std::pair<std::string, TensorFile>> In) {
  onnx::GraphProto &G = *M.mutable_graph();
  for (const auto &Entry : In) {
    // Not a structured binding: C++17 lambdas cannot capture those (clang).
    const std::string &Name = Entry.first;
    const TensorFile &T = Entry.second;
    auto *Inputs = G.mutable_input();
    auto It = std::find_if(
        Inputs->begin(), Inputs->end(),
        [&](const onnx::ValueInfoProto &V) { return V.name() == Name; });
    if (It == Inputs->end())
      return makeInputError(Path + ": no graph input '" + Name + "' to fold");
    Inputs->erase(It);
    onnx::TensorProto *Init = G.add_initializer();
    Init->set_name(Name);
    Init->set_data_type(static_cast<int32_t>(T.Type));
    for (int64_t D : T.Dims)
      Init->add_dims(D);
    Init->set_raw_data(T.Bytes);
  }
  if (M.ir_version() < 4)
    M.set_ir_version(4); // initializers without a graph input
  return llvm::Error::success();
}

llvm::Expected<std::string> oomplan::foldInputsIntoModel(
    llvm::StringRef Path,
    llvm::ArrayRef<std::pair<std::string, TensorFile>> Inputs) {
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!Buf)
    return makeIOError(Path + ": cannot read: " + Buf.getError().message());
  llvm::StringRef Bytes = (*Buf)->getBuffer();
  if (Bytes.size() > size_t(INT_MAX))
    return makeUnsupportedError(Path + ": larger than protobuf's 2 GiB limit");
  try {
    onnx::ModelProto M;
    if (!M.ParseFromArray(Bytes.data(), int(Bytes.size())) || !M.has_graph())
      return makeInputError(Path + ": not a binary ONNX model (--fold-inputs "
                                   "needs a .onnx file)");
    if (llvm::Error E = fold(M, Path, Inputs))
      return E;
    std::string Out;
    if (!M.SerializeToString(&Out))
      return makeInternalError(Path + ": cannot serialize the folded model");
    return Out;
  } catch (const std::exception &E) {
    return makeInputError(Path + ": ONNX error: " + E.what());
  }
}
