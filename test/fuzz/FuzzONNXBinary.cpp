//===- FuzzONNXBinary.cpp - libFuzzer target: binary ONNX models ----------===//
//
// Feeds the bytes to the binary importer, with the shape oracle the tools
// pass (driver::importOptions; protobuf parsing, the checker and
// the IR conversion), then through the whole planning pipeline (FuzzModel.h).
// Seeds: test/ and Debian's libonnx-testdata models (utils/ci/fuzz.sh).
//
//===----------------------------------------------------------------------===//
#include "FuzzModel.h"
#include "oomplan/Driver/Import.h"
#include "oomplan/Frontend/ONNXImporter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size > oomplan::fuzz::MaxInputBytes)
    return -1;
  llvm::StringRef Bytes(reinterpret_cast<const char *>(Data), Size);
  oomplan::fuzz::fuzzModel(oomplan::importModelBinary(
      Bytes, "fuzz.onnx", oomplan::driver::importOptions()));
  return 0;
}
