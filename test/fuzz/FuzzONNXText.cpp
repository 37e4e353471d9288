//===- FuzzONNXText.cpp - libFuzzer target: ONNX text models --------------===//
//
// Feeds the bytes to the ONNX text importer, with the shape oracle the tools
// pass (driver::importOptions; onnx::OnnxParser and the IR
// conversion), then through the whole planning pipeline (FuzzModel.h).
// Seeds: the .onnxtxt files under test/ (utils/ci/fuzz.sh).
//
//===----------------------------------------------------------------------===//
#include "FuzzModel.h"
#include "oomplan/Driver/Import.h"
#include "oomplan/Frontend/ONNXImporter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size > oomplan::fuzz::MaxInputBytes)
    return -1;
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  oomplan::fuzz::fuzzModel(oomplan::importModelText(
      Text, "fuzz.onnxtxt", oomplan::driver::importOptions()));
  return 0;
}
